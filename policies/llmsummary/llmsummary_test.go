package llmsummary_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"

	"github.com/contextcompiler/ctxc/internal/llm"
	"github.com/contextcompiler/ctxc/internal/llm/llmtest"
	"github.com/contextcompiler/ctxc/internal/statetest"
	"github.com/contextcompiler/ctxc/internal/summarycache"
	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
	"github.com/contextcompiler/ctxc/policies/llmsummary"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

const goodSummary = "## Goal\nFix the build of ./cmd/server.\n## User constraints\n\"keep the public API unchanged\"\n## Decisions\nconfig.Load is an alias of config.Read.\n## Files and resources\ncmd/server/main.go\n## Open errors\nnone\n## Next steps\nnone"

func prices(model string) (float64, float64, bool) {
	if model == "mini" {
		return 0.15, 0.60, true
	}
	return 0, 0, false
}

type setup struct {
	srv    *llmtest.Server
	client *llm.Client
	cache  *summarycache.Cache
}

func newSetup(t *testing.T, change func(*llm.Config), replies ...llmtest.Reply) setup {
	t.Helper()
	srv := llmtest.NewServer(t, replies...)
	return setup{srv: srv, client: srv.Client(t, "mini", change), cache: llmtest.MemoryCache(t)}
}

func newPolicy(t *testing.T, deps llmsummary.Deps, settings string) policies.Policy {
	t.Helper()
	f := llmsummary.NewFactory(deps)
	cfg := f.CreateDefaultConfig()
	if settings != "" {
		dec := yaml.NewDecoder(strings.NewReader(settings))
		dec.KnownFields(true)
		if err := dec.Decode(cfg); err != nil {
			t.Fatal(err)
		}
	}
	p, err := f.Create(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// work loads a testdata state ready for compaction, as the runner leaves it.
func work(t *testing.T, name string) *policies.Work {
	st := statetest.LoadJSON(t, filepath.Join("testdata", name+".json"))
	w, ctl := statetest.WorkControl(st, statetest.RecentTurns(1))
	ctl.SetCompactionTarget(100)
	return w
}

func apply(p policies.Policy, w *policies.Work) error {
	err := p.Apply(context.Background(), w)
	statetest.Recount(w.Entries, w.Counter())
	return err
}

func summaryText(w *policies.Work) string {
	for _, e := range w.Entries {
		if e.Message.Kind == agentstate.KindSummary {
			return e.Message.Text()
		}
	}
	return ""
}

// TestGolden shows what the model is sent (system and user prompt) and what
// the view becomes, for a first and an iterative summary.
func TestGolden(t *testing.T) {
	for _, name := range []string{"session", "iterative"} {
		t.Run(name, func(t *testing.T) {
			s := newSetup(t, nil, llmtest.Reply{Content: goodSummary, InputTokens: 1000, OutputTokens: 100})
			w := work(t, name)
			if err := apply(newPolicy(t, llmsummary.Deps{Client: s.client, Cache: s.cache, Prices: prices}, ""), w); err != nil {
				t.Fatal(err)
			}
			if w.Notes().Degraded {
				t.Fatalf("degraded: %s", w.Notes().DegradedReason)
			}
			got := s.srv.Received()
			if len(got) != 1 {
				t.Fatalf("%d calls", len(got))
			}
			var b strings.Builder
			fmt.Fprintf(&b, "# llm_summarize on %s.json; model sees max_tokens %d\n## system\n%s\n## user\n%s\n## view\n", name, got[0].MaxTokens, got[0].System, got[0].User)
			b.WriteString(statetest.Format(w))
			fmt.Fprintf(&b, "model usage: %+v\ncache: %+v\n", w.Report().ModelUsage, w.Report().Cache)
			statetest.Golden(t, filepath.Join("testdata", "prompt_"+name+".golden"), b.String(), *update)
		})
	}
}

func TestOutcomes(t *testing.T) {
	slow := llmtest.Reply{Delay: 10 * time.Second, Content: goodSummary}
	tests := []struct {
		name      string
		replies   []llmtest.Reply
		noClient  bool
		settings  string
		wantCalls int
		// wantDegraded is a substring of the degraded reason, "" for none.
		wantDegraded string
		wantLLMText  bool
		wantErr      bool
	}{
		{name: "good summary", replies: []llmtest.Reply{{Content: goodSummary}}, wantCalls: 1, wantLLMText: true},
		{name: "500 then good is retried", replies: []llmtest.Reply{{Status: 500}, {Content: goodSummary}}, wantCalls: 2, wantLLMText: true},
		{name: "500s fall back", replies: []llmtest.Reply{{Status: 500}, {Status: 500}}, wantCalls: 2, wantDegraded: "server_error after 2 attempt(s)"},
		{name: "slow answer falls back", replies: []llmtest.Reply{slow}, wantCalls: 1, wantDegraded: "timeout"},
		{name: "oversized summary is rejected", replies: []llmtest.Reply{{Content: strings.Repeat("word ", 400)}}, wantCalls: 1, wantDegraded: "over its budget"},
		{name: "no model configured", noClient: true, wantDegraded: "no summarizer model configured"},
		{name: "strict fails the request", replies: []llmtest.Reply{{Status: 500}, {Status: 500}}, settings: "{strict: true}", wantCalls: 2, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSetup(t, func(c *llm.Config) { c.Timeout = 300 * time.Millisecond }, tc.replies...)
			deps := llmsummary.Deps{Client: s.client, Cache: s.cache, Prices: prices}
			if tc.noClient {
				deps.Client = nil
			}
			w := work(t, "session")
			err := apply(newPolicy(t, deps, tc.settings), w)
			if tc.wantErr {
				var unavailable *agentstate.UnavailableError
				if !errors.As(err, &unavailable) {
					t.Fatalf("err %v, want *agentstate.UnavailableError", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.srv.Calls() != tc.wantCalls {
				t.Errorf("%d calls, want %d", s.srv.Calls(), tc.wantCalls)
			}
			if (tc.wantDegraded == "") == w.Notes().Degraded || !strings.Contains(w.Notes().DegradedReason, tc.wantDegraded) {
				t.Errorf("degraded %v %q, want %q", w.Notes().Degraded, w.Notes().DegradedReason, tc.wantDegraded)
			}
			text := summaryText(w)
			if gotLLM := strings.Contains(text, "written by ctxc with mini"); gotLLM != tc.wantLLMText || text == "" {
				t.Errorf("summary %q: from the model %v, want %v", text, gotLLM, tc.wantLLMText)
			}
			if problems := statetest.Check(w); len(problems) > 0 {
				t.Errorf("view problems: %v", problems)
			}
			for _, r := range w.Dispositions() {
				if r.Policy != llmsummary.Type {
					t.Errorf("disposition of %s by %q, want %q", r.MessageID, r.Policy, llmsummary.Type)
				}
			}
		})
	}
}

// TestSecondCompileHitsTheCache runs the policy twice on the same input: the
// second run makes no model call.
func TestSecondCompileHitsTheCache(t *testing.T) {
	s := newSetup(t, nil, llmtest.Reply{Content: goodSummary, InputTokens: 2000, OutputTokens: 100})
	p := newPolicy(t, llmsummary.Deps{Client: s.client, Cache: s.cache, Prices: prices}, "")
	var texts []string
	var reports []string
	for i := 0; i < 2; i++ {
		w := work(t, "session")
		if err := apply(p, w); err != nil {
			t.Fatal(err)
		}
		texts = append(texts, summaryText(w))
		reports = append(reports, fmt.Sprintf("usage %+v cache %+v", w.Report().ModelUsage, w.Report().Cache))
	}
	if s.srv.Calls() != 1 {
		t.Errorf("%d model calls, want 1", s.srv.Calls())
	}
	want := []string{
		"usage [{Task:summarizer Model:mini Calls:1 InputTokens:2000 OutputTokens:100 CostUSD:0.00036}] cache {Hits:0 Misses:1 Errors:0}",
		"usage [] cache {Hits:1 Misses:0 Errors:0}",
	}
	if diff := cmp.Diff(want, reports); diff != "" {
		t.Errorf("reports (-want +got):\n%s", diff)
	}
	if texts[0] != texts[1] {
		t.Errorf("cached summary differs:\n%s\n%s", texts[0], texts[1])
	}
}

// TestLargeInputIsChunkedAndFolded gives the model a window smaller than the
// span: the history goes in several calls, each merging the summary so far.
func TestLargeInputIsChunkedAndFolded(t *testing.T) {
	s := newSetup(t, func(c *llm.Config) { c.ContextWindow = 1600 })
	s.srv.Script(func(r llmtest.Received) llmtest.Reply {
		return llmtest.Reply{Content: fmt.Sprintf("## Goal\npart %d", strings.Count(r.User, "[m"))}
	})
	st := statetest.Generate(newRand(), largeOptions())
	w, ctl := statetest.WorkControl(st, statetest.RecentTurns(1))
	ctl.SetCompactionTarget(100)
	if err := apply(newPolicy(t, llmsummary.Deps{Client: s.client, Prices: prices}, "{max_summary_tokens: 200}"), w); err != nil {
		t.Fatal(err)
	}
	got := s.srv.Received()
	if len(got) < 2 || w.Notes().Degraded {
		t.Fatalf("%d calls, degraded %q: want several chunks", len(got), w.Notes().DegradedReason)
	}
	for i, r := range got {
		if i > 0 && !strings.Contains(r.User, "<previous_summary>\n## Goal\npart") {
			t.Errorf("call %d does not merge the summary so far:\n%s", i, r.User)
		}
		if n := (statetest.FakeCounter{}).CountText(r.System + r.User); n > 1600-200 {
			t.Errorf("call %d sends %d tokens, over the window less the answer", i, n)
		}
	}
	if w.Report().ModelUsage[0].Calls != len(got) {
		t.Errorf("usage %+v, want %d calls", w.Report().ModelUsage, len(got))
	}
}

func TestConfigValidate(t *testing.T) {
	c := &llmsummary.Config{ToolOutputChars: 5}
	err := c.Validate()
	if err == nil || !strings.Contains(err.Error(), "max_summary_ratio: 0 must be in (0, 2]") || !strings.Contains(err.Error(), "tool_output_chars: 5 is less than 100") {
		t.Errorf("errors %v", err)
	}
}
