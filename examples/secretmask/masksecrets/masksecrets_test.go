package masksecrets

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"

	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

var update = flag.Bool("update", false, "write testdata/*.want from what the policy masks now")

// toolLog is a log of one tool call per output, each answered with it.
func toolLog(outputs ...string) []agentstate.Message {
	log := []agentstate.Message{{ID: "u1", Role: agentstate.RoleUser, Parts: []agentstate.Part{agentstate.TextPart("Look around; password=not-a-tool-output")}}}
	for i, out := range outputs {
		id := string(rune('a' + i))
		log = append(log,
			agentstate.Message{ID: "call-" + id, Role: agentstate.RoleAssistant, Parts: []agentstate.Part{{Kind: agentstate.PartToolCall, ToolCall: agentstate.ToolCall{ID: id, Name: "shell", ArgumentsJSON: `{}`}}}},
			agentstate.Message{ID: "out-" + id, Role: agentstate.RoleTool, Parts: []agentstate.Part{{Kind: agentstate.PartToolResult, ToolResult: agentstate.ToolResult{ToolCallID: id, Name: "shell", Content: out}}}})
	}
	return log
}

// run applies the policy built from settings (YAML, decoded over the
// defaults as a profile's step is) to log, and returns the work.
func run(t *testing.T, settings string, log []agentstate.Message) *policies.Work {
	t.Helper()
	f := NewFactory()
	cfg := f.CreateDefaultConfig()
	if err := yaml.Unmarshal([]byte(settings), cfg); err != nil {
		t.Fatal(err)
	}
	p, err := f.Create(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w, _ := policies.NewWork(policies.Input{State: &agentstate.State{Context: agentstate.Context{Messages: log}}})
	if err := p.Apply(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	return w
}

// TestMasksTheOutputs: each testdata/*.in, a tool output, is masked with
// the defaults into its .want (go test -update writes them); clean.in has
// no secret and stays as it is.
func TestMasksTheOutputs(t *testing.T) {
	ins, err := filepath.Glob("testdata/*.in")
	if err != nil || len(ins) == 0 {
		t.Fatalf("no testdata/*.in: %v", err)
	}
	for _, in := range ins {
		t.Run(filepath.Base(in), func(t *testing.T) {
			raw, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			w := run(t, "", toolLog(string(raw)))
			got := w.Entries[2].Message.Parts[0].ToolResult.Content
			wantFile := strings.TrimSuffix(in, ".in") + ".want"
			if *update {
				if err := os.WriteFile(wantFile, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(wantFile)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("masked output (-want +got):\n%s", diff)
			}
			if changed := got != string(raw); w.Entries[2].Changed != changed {
				t.Errorf("entry Changed = %v, want %v (Touch on a change only)", w.Entries[2].Changed, changed)
			}
		})
	}
}

// TestSettings: which patterns apply, patterns of the profile's own (a
// secret group masks only the value), the replacement, and what is never
// touched: the user's text and the log the request holds.
func TestSettings(t *testing.T) {
	const out = "AKIAIOSFODNN7EXAMPLE token=ab12cd34 Bearer abcdefgh12345678 ticket SEC-4412"
	tests := []struct {
		name, settings, want, note string
	}{
		{"defaults", "", "[masked aws_access_key_id] token=ab12cd34 Bearer [masked bearer_token] ticket SEC-4412",
			"masked 1 aws_access_key_id, 1 bearer_token"},
		{"one built-in", "builtin: [bearer_token]", "AKIAIOSFODNN7EXAMPLE token=ab12cd34 Bearer [masked bearer_token] ticket SEC-4412",
			"masked 1 bearer_token"},
		{"own pattern, its secret group", "builtin: []\npatterns:\n  - {name: ticket, regexp: 'ticket (?P<secret>SEC-\\d+)'}\n  - {name: token, regexp: 'token=\\w+'}",
			"AKIAIOSFODNN7EXAMPLE [masked token] Bearer abcdefgh12345678 ticket [masked ticket]", "masked 1 ticket, 1 token"},
		{"replacement", "replacement: '***'", "*** token=ab12cd34 Bearer *** ticket SEC-4412", "masked 1 aws_access_key_id, 1 bearer_token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := toolLog(out)
			w := run(t, tt.settings, log)
			if diff := cmp.Diff(tt.want, w.Entries[2].Message.Parts[0].ToolResult.Content); diff != "" {
				t.Errorf("masked (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.note, w.Notes().Detail); diff != "" {
				t.Errorf("the step's note (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(toolLog(out), log); diff != "" {
				t.Errorf("the request's log was written (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(log[0], w.Entries[0].Message); diff != "" {
				t.Errorf("the user's message changed (-want +got):\n%s", diff)
			}
		})
	}
}

// TestValidate: every problem at once, each naming its key.
func TestValidate(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Builtin = append(cfg.Builtin, "bearer_token", "slack_token")
	cfg.Patterns = []Pattern{{Name: "Ticket", Regexp: "SEC-("}, {Name: "private_key", Regexp: "x*"}, {Name: "ok"}}
	cfg.Replacement = ""
	err := cfg.Validate()
	if err == nil {
		t.Fatal("Validate accepted a bad config")
	}
	want := []string{
		`builtin[7]: "bearer_token" is named again (builtin[4])`,
		`builtin[8]: "slack_token" is not a built-in pattern (known: private_key, aws_access_key_id, aws_secret_access_key, github_token, bearer_token, url_credentials, password_assignment)`,
		`patterns[0].name: "Ticket" must be lower_snake_case`,
		"patterns[0].regexp: error parsing regexp: missing closing ): `SEC-(`",
		`patterns[1].name: "private_key" is already the name of builtin[0]`,
		`patterns[1].regexp: "x*" matches the empty text`,
		`patterns[2].regexp: empty`,
		`replacement: empty (a secret must be replaced by something the model can see was there)`,
	}
	if diff := cmp.Diff(want, strings.Split(err.Error(), "\n")); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Errorf("the defaults: %v", err)
	}
	if err := (&Config{Replacement: "x"}).Validate(); err == nil || !strings.Contains(err.Error(), "nothing would be masked") {
		t.Errorf("no pattern at all: %v", err)
	}
}
