package server_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contextcompiler/ctxc/client"
	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
	"github.com/contextcompiler/ctxc/server"
)

// shoutConfig is the settings of the test's own policy.
type shoutConfig struct {
	// Suffix ends every tool result it rewrites.
	Suffix string `yaml:"suffix" json:"suffix"`
}

func (c *shoutConfig) Validate() error {
	if len(c.Suffix) > 3 {
		return errors.New("suffix: at most 3 bytes")
	}
	return nil
}

// shoutFactory builds a policy of the program's own, of type name in stage
// in: it writes every tool result in upper case, followed by the suffix.
func shoutFactory(name string, in policies.Stage) policies.Factory {
	return policies.TypedFactory[shoutConfig, *shoutConfig]{Name: name, In: in,
		Defaults: func() *shoutConfig { return &shoutConfig{Suffix: "!"} },
		New:      func(c *shoutConfig) (policies.Policy, error) { return shout{suffix: c.Suffix}, nil }}
}

type shout struct{ suffix string }

func (s shout) Apply(_ context.Context, w *policies.Work) error {
	for i := range w.Entries {
		m := &w.Entries[i].Message
		if m.Role != agentstate.RoleTool {
			continue
		}
		m.Parts = slices.Clone(m.Parts) // the log's parts are shared: never write them
		for j := range m.Parts {
			if p := &m.Parts[j]; p.Kind == agentstate.PartToolResult {
				p.ToolResult.Content = strings.ToUpper(p.ToolResult.Content) + s.suffix
			}
		}
		w.Touch(i)
	}
	return nil
}

// TestProgramsOwnPolicies: a factory in Config.Policies serves beside the
// built-in ones, named in a profile's step with its settings, in the project
// stage and in the normalize stage, where it may rewrite a pinned message
// (the later stages keep to the log as that stage left it).
func TestProgramsOwnPolicies(t *testing.T) {
	for _, tt := range []struct {
		name   string
		stage  policies.Stage
		pinned bool
	}{{"project", policies.StageProject, false}, {"normalize", policies.StageNormalize, false}, {"normalize, pinned", policies.StageNormalize, true}} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := server.ParseConfig([]byte(`
default_profile: loud
profiles:
  - name: loud
    stages:
      - policy: normalize
      - policy: shout
        settings: {suffix: "?!"}
      - policy: project
      - policy: render
`))
			if err != nil {
				t.Fatal(err)
			}
			cfg.Logger = slog.New(slog.DiscardHandler)
			cfg.Policies = []policies.Factory{shoutFactory("shout", tt.stage)}
			if tt.stage == policies.StageProject { // after the built-in project policy, as the order wants
				cfg.Profiles[0].Stages[1], cfg.Profiles[0].Stages[2] = cfg.Profiles[0].Stages[2], cfg.Profiles[0].Stages[1]
			}
			svc := engineService(t, cfg)
			result := client.Tool("t1", client.ToolResult("c1", "ls", "a.txt b.txt", false))
			result.Pinned = tt.pinned
			state := client.State("gpt-4o", "", client.User("u1", "List the files."),
				client.Assistant("a1", client.ToolCall("c1", "ls", "{}")), result, client.Assistant("a2", client.Text("Two files.")))
			resp, err := svc.Compile(context.Background(), &ctxcv1.CompileRequest{State: state})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range resp.GetMessages() {
				for _, p := range m.GetParts() {
					got = append(got, p.GetText()+p.GetToolResult().GetContent())
				}
			}
			want := []string{"List the files.", "", "A.TXT B.TXT?!", "Two files."}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("compiled parts (-want +got):\n%s", diff)
			}
		})
	}
}

// TestProgramsOwnPoliciesChecked: a factory whose type is taken, empty or
// nil is a configuration error naming the entry and the factory that has
// the type; every problem is listed at once.
func TestProgramsOwnPoliciesChecked(t *testing.T) {
	cfg := server.NewConfig()
	cfg.Logger = slog.New(slog.DiscardHandler)
	cfg.Policies = []policies.Factory{
		shoutFactory("shout", policies.StageProject),
		shoutFactory("normalize", policies.StageNormalize),
		shoutFactory("shout", policies.StageRender),
		shoutFactory("", policies.StageProject),
		nil,
		shoutFactory("whisper", policies.Stage(99)),
	}
	_, err := server.NewEngine(cfg)
	if err == nil {
		t.Fatal("NewEngine accepted taken, empty and nil policy types")
	}
	factory := "policies.TypedFactory[github.com/contextcompiler/ctxc/server_test.shoutConfig,*github.com/contextcompiler/ctxc/server_test.shoutConfig]"
	want := []string{
		`Config.Policies[1]: policy type "normalize" of ` + factory + ` is taken by the built-in policy "normalize" (normalize.factory)`,
		`Config.Policies[2]: policy type "shout" of ` + factory + ` is taken by Config.Policies[0] (` + factory + `)`,
		`Config.Policies[3]: the factory (` + factory + `) has an empty type`,
		`Config.Policies[4]: the factory is nil`,
		`Config.Policies[5]: policy type "whisper" has stage(99), not a stage of the stage table (` + policies.StageOrder() + `)`,
	}
	if diff := cmp.Diff(want, strings.Split(err.Error(), "\n")); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

// redactConfig is the settings of the test's redacting policy: none.
type redactConfig struct{}

func (*redactConfig) Validate() error { return nil }

// redact is a normalize-stage policy of the program's own that replaces
// SECRET123 in every tool result.
type redact struct{}

func (redact) Apply(_ context.Context, w *policies.Work) error {
	for i := range w.Entries {
		m := &w.Entries[i].Message
		if m.Role != agentstate.RoleTool {
			continue
		}
		m.Parts = slices.Clone(m.Parts)
		for j := range m.Parts {
			m.Parts[j].ToolResult.Content = strings.ReplaceAll(m.Parts[j].ToolResult.Content, "SECRET123", "[redacted]")
		}
		w.Touch(i)
	}
	return nil
}

// TestCompactionReadsTheNormalizedLog: what a normalize-stage policy took
// out of the log does not come back when a later policy describes an output
// "as the log holds it": observation masking's placeholders (a preview and
// the error lines), summaries and truncation's notes read the log as the
// normalize stage left it.
func TestCompactionReadsTheNormalizedLog(t *testing.T) {
	cfg, err := server.ParseConfig([]byte(`
profiles:
  - name: masking
    stages:
      - policy: normalize
      - policy: redact
      - policy: project
      - policy: estimate
      - policy: token_budget
      - policy: threshold
      - policy: mask_observations
        settings: {protect_recent_tokens: 0, min_prunable_tokens: 0}
      - policy: summarize
      - policy: truncate
      - policy: repair
      - policy: render
`))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Logger = slog.New(slog.DiscardHandler)
	cfg.Policies = []policies.Factory{policies.TypedFactory[redactConfig, *redactConfig]{Name: "redact", In: policies.StageNormalize,
		Defaults: func() *redactConfig { return &redactConfig{} },
		New:      func(*redactConfig) (policies.Policy, error) { return redact{}, nil }}}
	svc := engineService(t, cfg)
	log := []*ctxcv1.Message{client.User("u1", "Deploy the services.")}
	for i := range 8 {
		id := string(rune('a' + i))
		out := "key SECRET123 loaded\n" + strings.Repeat("step ok: pulled image, started container\n", 60) + "error: rejected SECRET123\n"
		log = append(log, client.Assistant("call-"+id, client.ToolCall(id, "shell", `{}`)), client.Tool("out-"+id, client.ToolResult(id, "shell", out, i%2 == 0)),
			client.Assistant("say-"+id, client.Text("Done.")), client.User("next-"+id, "Next."))
	}
	for _, window := range []uint32{1500, 3000, 6000} {
		resp, err := svc.Compile(context.Background(), &ctxcv1.CompileRequest{State: client.State("gpt-4o", "", log...), Profile: "masking",
			Options: &ctxcv1.CompileOptions{MaxContextTokenCount: &window, Render: ctxcv1.RenderFormat_RENDER_FORMAT_OPENAI}})
		if err != nil {
			t.Fatal(err)
		}
		compacted := false
		for _, m := range resp.GetReport().GetMessages() {
			compacted = compacted || m.GetDisposition() != ctxcv1.Disposition_DISPOSITION_KEPT
		}
		text := resp.GetRendered()
		for _, m := range resp.GetMessages() {
			text += m.String()
		}
		if !compacted || strings.Contains(text, "SECRET123") || !strings.Contains(text, "[redacted]") {
			t.Errorf("window %d: compacted %v; the secret is back: %v; redacted shown: %v", window, compacted, strings.Contains(text, "SECRET123"), strings.Contains(text, "[redacted]"))
		}
	}
}

// engineService is the in-process service of an engine built from cfg,
// closed when the test ends.
func engineService(t *testing.T, cfg *server.Config) ctxcv1.ContextCompilerServiceServer {
	t.Helper()
	eng, err := server.NewEngine(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	svc, err := eng.Service()
	if err != nil {
		t.Fatal(err)
	}
	return svc
}
