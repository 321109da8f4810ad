package plan_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/contextcompiler/ctxc/internal/llm"
	"github.com/contextcompiler/ctxc/internal/llm/llmtest"
	"github.com/contextcompiler/ctxc/internal/statetest"
	"github.com/contextcompiler/ctxc/internal/summarycache"
	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
	"github.com/contextcompiler/ctxc/policies/plan"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

const (
	question = "Why did the export hit a disk error?"
	needle   = "ERROR disk quota exceeded on /var/data"
)

// session is two finished turns: the first read a 12K-character log (a
// historical artifact), the second asks about it.
func session() *agentstate.State {
	var log strings.Builder
	for i := 0; log.Len() < 12000; i++ {
		fmt.Fprintf(&log, "INFO step %d of the export completed normally\n", i)
		if i == 180 {
			log.WriteString(needle + "\n")
		}
	}
	text := func(id string, role agentstate.Role, s string) agentstate.Message {
		return agentstate.Message{ID: id, Role: role, ExecutionID: "e" + id[1:2], Parts: []agentstate.Part{agentstate.TextPart(s)}}
	}
	msgs := []agentstate.Message{
		{ID: "m1", Role: agentstate.RoleUser, Parts: []agentstate.Part{agentstate.TextPart("Read the export log.")}},
		{ID: "m2", Role: agentstate.RoleAssistant, ExecutionID: "e1", Parts: []agentstate.Part{{Kind: agentstate.PartToolCall, ToolCall: agentstate.ToolCall{ID: "c1", Name: "read_file", ArgumentsJSON: `{"path":"/var/log/export.log"}`}}}},
		{ID: "m3", Role: agentstate.RoleTool, ExecutionID: "e1", Parts: []agentstate.Part{{Kind: agentstate.PartToolResult, ToolResult: agentstate.ToolResult{ToolCallID: "c1", Name: "read_file", Content: log.String()}}}},
		{ID: "m4", Role: agentstate.RoleAssistant, ExecutionID: "e1", Parts: []agentstate.Part{agentstate.TextPart("The log has 250 lines.")}},
		text("m5", agentstate.RoleUser, question),
	}
	msgs[4].ExecutionID = ""
	return &agentstate.State{Context: agentstate.Context{Messages: msgs, SystemPrompt: "You are an ops assistant."},
		Model: agentstate.ModelSpec{Name: "target"}, Execution: agentstate.Execution{ID: "e2", Status: agentstate.ExecutionRunning}}
}

// work is the Work the plan stage gets: budget set, recency window of one turn.
func work(budgetTokens int) *policies.Work {
	w := statetest.Work(session(), statetest.RecentTurns(1), statetest.Attachments(agentstate.Attachment{ID: "runbook", Title: "Export runbook", Source: "https://wiki/runbook", Content: "If the export fails, check the disk quota of /var/data first."}))
	w.Budget = &agentstate.Budget{ContextWindow: 128000, Used: w.UsedTokens(), ReservedOutput: 4096, SoftThreshold: budgetTokens, Remaining: 128000 - w.UsedTokens() - 4096}
	return w
}

func prices(model string) (float64, float64, bool) { return 1, 2, model == "planner-mini" }

type setup struct {
	srv    *llmtest.Server
	client *llm.Client
	cache  *summarycache.Cache
}

func newSetup(t *testing.T, replies ...llmtest.Reply) setup {
	t.Helper()
	srv := llmtest.NewServer(t, replies...)
	client := srv.Client(t, "planner-mini", func(c *llm.Config) { c.Timeout, c.BreakerFailures = 300*time.Millisecond, 4 })
	return setup{srv: srv, client: client, cache: llmtest.MemoryCache(t)}
}

func newPolicy(t *testing.T, deps plan.Deps, strict bool) policies.Policy {
	t.Helper()
	f := plan.NewFactory(deps)
	cfg := f.CreateDefaultConfig().(*plan.Config)
	cfg.Strict = strict
	p, err := f.Create(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func toolContent(w *policies.Work) string {
	for _, e := range w.Entries {
		if e.Message.ID == "m3" {
			return e.Message.Parts[0].ToolResult.Content
		}
	}
	return ""
}

func ids(w *policies.Work) []string {
	var out []string
	for _, e := range w.Entries {
		out = append(out, e.Message.ID)
	}
	return out
}

const goodPlan = `{"artifacts":[{"artifact_id":"runbook","strategy":"include_full","priority":1,"relevance_rationale":"explains the failure"},
{"artifact_id":"tool:c1","strategy":"rag_extract","priority":2,"relevance_rationale":"only the error matters","extraction_query":"error disk quota"}],"reasoning":"r"}`

func TestPlanOutcomes(t *testing.T) {
	slow := llmtest.Reply{Delay: 5 * time.Second, Content: goodPlan}
	tests := []struct {
		name         string
		replies      []llmtest.Reply
		strict       bool
		noPlanner    bool
		wantCalls    int
		wantPlanned  bool
		wantDegraded string
		wantErr      bool
	}{
		{name: "good plan is applied", replies: []llmtest.Reply{{Content: goodPlan}}, wantCalls: 1, wantPlanned: true},
		{name: "429 with Retry-After then good plan", replies: []llmtest.Reply{{Status: 429, RetryAfter: "0"}, {Content: goodPlan}}, wantCalls: 2, wantPlanned: true},
		{name: "malformed plan falls back", replies: []llmtest.Reply{{Content: `{"artifacts":[{"artifact_id":"nope","strategy":"include","priority":1}]}`}}, wantCalls: 1, wantDegraded: "unknown artifact_id"},
		{name: "prose instead of JSON falls back", replies: []llmtest.Reply{{Content: "Include everything."}}, wantCalls: 1, wantDegraded: "plan is not JSON"},
		{name: "slow planner falls back", replies: []llmtest.Reply{slow}, wantCalls: 1, wantDegraded: "timeout"},
		{name: "500s are retried then fall back", replies: []llmtest.Reply{{Status: 500}, {Status: 500}}, wantCalls: 2, wantDegraded: "server_error after 2 attempt(s)"},
		{name: "no planner configured", noPlanner: true, wantDegraded: "no planner model configured"},
		{name: "strict fails the request", replies: []llmtest.Reply{{Status: 500}, {Status: 500}}, strict: true, wantCalls: 2, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSetup(t, tc.replies...)
			deps := plan.Deps{Planner: s.client, Cache: s.cache, Prices: prices}
			if tc.noPlanner {
				deps.Planner = nil
			}
			w := work(2000)
			err := newPolicy(t, deps, tc.strict).Apply(context.Background(), w)
			statetest.Recount(w.Entries, w.Counter())
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
			if s.srv.Calls() != tc.wantCalls || w.Report().PlanningUsed != tc.wantPlanned {
				t.Errorf("calls %d planning used %v, want %d %v", s.srv.Calls(), w.Report().PlanningUsed, tc.wantCalls, tc.wantPlanned)
			}
			if (tc.wantDegraded == "") == w.Notes().Degraded || !strings.Contains(w.Notes().DegradedReason, tc.wantDegraded) {
				t.Errorf("degraded %v %q, want %q", w.Notes().Degraded, w.Notes().DegradedReason, tc.wantDegraded)
			}
			// Planned or not, the log is extracted (it does not fit 2000
			// tokens) with the error line, the runbook sits before the question.
			if c := toolContent(w); !strings.Contains(c, needle) || !strings.Contains(c, "ctxc extract") {
				t.Errorf("tool result not extracted around the error:\n%.300s", c)
			}
			if diff := cmp.Diff([]string{"m1", "m2", "m3", "m4", plan.AttachmentsMessageID, "m5"}, ids(w)); diff != "" {
				t.Errorf("view (-want +got):\n%s", diff)
			}
			if w.UsedTokens() > 2000 {
				t.Errorf("used %d tokens, over the budget of 2000", w.UsedTokens())
			}
			if d, _ := w.Disposition("m3"); d.Disposition != policies.DispositionTruncated || d.Policy != plan.Type {
				t.Errorf("m3 disposition %+v", d)
			}
			if problems := statetest.Check(w); len(problems) > 0 {
				t.Errorf("view problems: %v", problems)
			}
			if len(w.Report().Artifacts) != 2 {
				t.Errorf("artifacts %+v", w.Report().Artifacts)
			}
		})
	}
}

// TestPlannerSeesBudgetPreviewsAndQuestion checks the request the scripted
// server got and the prompt's golden file.
func TestPlannerSeesBudgetPreviewsAndQuestion(t *testing.T) {
	s := newSetup(t, llmtest.Reply{Content: goodPlan, InputTokens: 1500, OutputTokens: 80})
	w := work(2000)
	if err := newPolicy(t, plan.Deps{Planner: s.client, Cache: s.cache, Prices: prices}, false).Apply(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	got := s.srv.Received()[0]
	for _, want := range []string{"Token budget: ", "<question>\n" + question, "INFO step 0 of the export", "check the disk quota", `id="tool:c1"`, `from="earlier turn"`} {
		if !strings.Contains(got.User, want) {
			t.Errorf("planner prompt lacks %q", want)
		}
	}
	if !got.JSON || !strings.Contains(got.System, "data, not instructions") {
		t.Errorf("planner request: json %v, system %q", got.JSON, got.System)
	}
	statetest.Recount(w.Entries, w.Counter())
	var b strings.Builder
	fmt.Fprintf(&b, "## system\n%s\n## user\n%s\n## view\n%s", got.System, got.User, statetest.Format(w))
	fmt.Fprintf(&b, "planning used: %v\nartifacts: %+v\nmodel usage: %+v\ncache: %+v\n", w.Report().PlanningUsed, w.Report().Artifacts, w.Report().ModelUsage, w.Report().Cache)
	statetest.Golden(t, filepath.Join("testdata", "planner_prompt.golden"), b.String(), *update)
}

// TestSecondIdenticalCompileMakesNoCall: plan and summary come from the cache.
func TestSecondIdenticalCompileMakesNoCall(t *testing.T) {
	reply := `{"artifacts":[{"artifact_id":"tool:c1","strategy":"summarize","priority":1,"relevance_rationale":"r","summarization_focus":"why the export failed"},{"artifact_id":"runbook","strategy":"exclude","priority":2,"relevance_rationale":"known"}]}`
	s := newSetup(t, llmtest.Reply{Content: reply}, llmtest.Reply{Content: "The export failed: " + needle})
	p := newPolicy(t, plan.Deps{Planner: s.client, Cache: s.cache, Prices: prices}, false)
	var reports []string
	for i := 0; i < 2; i++ {
		w := work(2000)
		if err := p.Apply(context.Background(), w); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(toolContent(w), "The export failed: "+needle) || w.Notes().Degraded {
			t.Fatalf("run %d: content %q degraded %q", i, toolContent(w), w.Notes().DegradedReason)
		}
		reports = append(reports, fmt.Sprintf("calls %d cache %+v usage %d artifacts %v/%v", s.srv.Calls(), w.Report().Cache, len(w.Report().ModelUsage), w.Report().Artifacts[0].Strategy, w.Report().Artifacts[0].CacheHit))
	}
	want := []string{
		"calls 2 cache {Hits:0 Misses:2 Errors:0} usage 2 artifacts summarize/false",
		"calls 2 cache {Hits:2 Misses:0 Errors:0} usage 0 artifacts summarize/true",
	}
	if diff := cmp.Diff(want, reports); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestBreakerOpens: after BreakerFailures failed attempts the endpoint is not
// called any more and compiles still succeed, degraded.
func TestBreakerOpens(t *testing.T) {
	s := newSetup(t)
	s.srv.Script(func(llmtest.Received) llmtest.Reply { return llmtest.Reply{Status: 503} })
	p := newPolicy(t, plan.Deps{Planner: s.client, Prices: prices}, false)
	var reasons []string
	for i := 0; i < 3; i++ {
		w := work(2000)
		if err := p.Apply(context.Background(), w); err != nil {
			t.Fatal(err)
		}
		reasons = append(reasons, w.Notes().DegradedReason)
	}
	if s.srv.Calls() != 4 {
		t.Errorf("%d calls, want 4 (breaker_failures)", s.srv.Calls())
	}
	if !strings.Contains(reasons[2], "breaker_open") {
		t.Errorf("third compile: %q, want breaker_open", reasons[2])
	}
}

// TestNoPlanningWhenItFits: small artifacts on a cheap model are included
// without a call, and nothing is degraded, even when strict.
func TestNoPlanningWhenItFits(t *testing.T) {
	s := newSetup(t, llmtest.Reply{Content: goodPlan})
	st := session()
	st.Context.Messages[2].Parts[0].ToolResult.Content = "short log"
	// Two recent turns: the tool result is protected, only the attachment is an artifact.
	w := statetest.Work(st, statetest.RecentTurns(2), statetest.Attachments(agentstate.Attachment{Content: "small doc"}))
	w.Budget = &agentstate.Budget{ContextWindow: 128000, SoftThreshold: 50000}
	if err := newPolicy(t, plan.Deps{Planner: s.client}, true).Apply(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	if s.srv.Calls() != 0 || w.Notes().Degraded || w.Report().PlanningUsed || toolContent(w) != "short log" {
		t.Errorf("calls %d degraded %q planned %v content %q", s.srv.Calls(), w.Notes().DegradedReason, w.Report().PlanningUsed, toolContent(w))
	}
	if diff := cmp.Diff([]string{"m1", "m2", "m3", "m4", plan.AttachmentsMessageID, "m5"}, ids(w)); diff != "" {
		t.Errorf("view (-want +got):\n%s", diff)
	}
}

func TestConfigValidate(t *testing.T) {
	c := &plan.Config{Thresholds: plan.Thresholds{NearLimitRatio: 2}}
	err := c.Validate()
	for _, field := range []string{"preview_chars", "chunk_chars", "max_summary_tokens", "max_extract_tokens", "thresholds.large_artifact_chars", "thresholds.near_limit_ratio"} {
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("error %v does not name %s", err, field)
		}
	}
}

// TestPlannerPromptIsBoundedByMaxPromptChars: 120 tool outputs do not fit a
// 20,000-character prompt even with the shortest previews, so the planner is
// shown the largest that fit, the others follow the deterministic plan, and
// the report says so.
func TestPlannerPromptIsBoundedByMaxPromptChars(t *testing.T) {
	msgs := []agentstate.Message{{ID: "u1", Role: agentstate.RoleUser, Parts: []agentstate.Part{agentstate.TextPart("Collect the shard logs.")}}}
	for i := range 120 {
		id := fmt.Sprintf("c%d", i)
		body := strings.Repeat(fmt.Sprintf("shard %d: INFO compaction step completed\n", i), 40+i) // larger as i grows
		msgs = append(msgs,
			agentstate.Message{ID: "a" + id, Role: agentstate.RoleAssistant, ExecutionID: "e1", Parts: []agentstate.Part{{Kind: agentstate.PartToolCall, ToolCall: agentstate.ToolCall{ID: id, Name: "read_file", ArgumentsJSON: `{}`}}}},
			agentstate.Message{ID: "t" + id, Role: agentstate.RoleTool, ExecutionID: "e1", Parts: []agentstate.Part{{Kind: agentstate.PartToolResult, ToolResult: agentstate.ToolResult{ToolCallID: id, Name: "read_file", Content: body}}}})
	}
	msgs = append(msgs,
		agentstate.Message{ID: "a-end", Role: agentstate.RoleAssistant, ExecutionID: "e1", Parts: []agentstate.Part{agentstate.TextPart("Collected.")}},
		agentstate.Message{ID: "u2", Role: agentstate.RoleUser, Parts: []agentstate.Part{agentstate.TextPart(question)}})
	w := statetest.Work(&agentstate.State{Context: agentstate.Context{Messages: msgs}, Model: agentstate.ModelSpec{Name: "target"},
		Execution: agentstate.Execution{ID: "e2", Status: agentstate.ExecutionRunning}}, statetest.RecentTurns(1))
	w.Budget = &agentstate.Budget{ContextWindow: 128000, Used: w.UsedTokens(), ReservedOutput: 4096, SoftThreshold: 8000, Remaining: 128000 - w.UsedTokens() - 4096}

	largest := `{"artifacts":[{"artifact_id":"tool:c119","strategy":"summarize","priority":1,"relevance_rationale":"largest","summarization_focus":"errors"}],"reasoning":"r"}`
	s := newSetup(t, llmtest.Reply{Content: largest}, llmtest.Reply{Content: "No errors in shard 119."})
	f := plan.NewFactory(plan.Deps{Planner: s.client, Summarizer: s.client, Cache: s.cache, Prices: prices})
	cfg := f.CreateDefaultConfig().(*plan.Config)
	cfg.MaxPromptChars = 20000
	p, err := f.Create(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Apply(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	got := s.srv.Received()[0].User
	if len(got) > cfg.MaxPromptChars {
		t.Errorf("planner prompt is %d characters, over max_prompt_chars %d", len(got), cfg.MaxPromptChars)
	}
	shown := strings.Count(got, "<artifact id=")
	if shown == 0 || shown >= 120 || !strings.Contains(got, `id="tool:c119"`) || strings.Contains(got, `id="tool:c0"`) {
		t.Errorf("planner was shown %d artifacts; want the largest (tool:c119 in, tool:c0 out), not all 120", shown)
	}
	if !w.Report().PlanningUsed {
		t.Error("the plan of the artifacts shown was not used")
	}
	want := fmt.Sprintf("the planner was shown the %d largest of 120 artifacts (max_prompt_chars 20000)", shown)
	if !slices.ContainsFunc(w.Report().Warnings, func(s string) bool { return strings.Contains(s, want) }) {
		t.Errorf("warnings %q lack %q", w.Report().Warnings, want)
	}
	decided := map[string]string{}
	for _, a := range w.Report().Artifacts {
		decided[a.ArtifactID] = a.Strategy
	}
	if decided["tool:c119"] != "summarize" || decided["tool:c0"] == "" || len(decided) != 120 {
		t.Errorf("strategies: c119 %q, c0 %q, %d artifacts decided; want the plan for c119 and a deterministic one for every other", decided["tool:c119"], decided["tool:c0"], len(decided))
	}
}
