package compaction

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"

	"github.com/contextcompiler/ctxc/internal/statetest"
	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// newPolicy decodes YAML settings over a factory's defaults, as profiles do.
func newPolicy(t testing.TB, f policies.Factory, settings string) policies.Policy {
	t.Helper()
	cfg := f.CreateDefaultConfig()
	if settings != "" {
		dec := yaml.NewDecoder(strings.NewReader(settings))
		dec.KnownFields(true)
		if err := dec.Decode(cfg); err != nil {
			t.Fatalf("decode %q: %v", settings, err)
		}
	}
	p, err := f.Create(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// run applies p and recounts the entries it touched, as the runner does.
func run(p policies.Policy, w *policies.Work) error {
	err := p.Apply(context.Background(), w)
	statetest.Recount(w.Entries, w.Counter())
	return err
}

// TestGolden runs each transform on a small hand-written state. The golden
// files show the tokens before and after, then the view, the dispositions,
// the masks and the warnings (statetest.Format).
func TestGolden(t *testing.T) {
	tests := []struct {
		name     string
		state    string
		factory  policies.Factory
		settings string
		recent   int
		target   int
	}{
		{name: "truncate_fit", state: "session", factory: NewTruncateFactory(Deps{}), recent: 1, target: 260},
		{name: "truncate_message_limit", state: "session", factory: NewTruncateFactory(Deps{}), settings: "{mode: message_limit, max_messages: 6}", recent: 1, target: 10000},
		{name: "truncate_token_limit", state: "session", factory: NewTruncateFactory(Deps{}), settings: "{mode: token_limit, target_ratio: 0.5}", recent: 1, target: 500},
		{name: "clamp", state: "session", factory: NewClampFactory(), settings: "{max_part_tokens: 20, head_ratio: 0.5}", recent: 1, target: 100},
		{name: "dedupe", state: "session", factory: NewDedupeFactory(), recent: 1, target: 100},
		{name: "mask_observations", state: "session", factory: NewMaskObservationsFactory(Deps{}), settings: "{preview_chars: 16, protect_recent_tokens: 0, min_prunable_tokens: 0}", recent: 1, target: 350},
		{name: "drop_low_importance", state: "session", factory: NewDropLowImportanceFactory(), recent: 1, target: 300},
		{name: "drop_low_importance_tool_rounds", state: "session", factory: NewDropLowImportanceFactory(), settings: "{min_importance_threshold: 61, keep_recent_messages: 0}", recent: 1, target: 300},
		{name: "summarize", state: "session", factory: NewSummarizeFactory(Deps{}), recent: 1, target: 100},
		{name: "summarize_iterative", state: "iterative", factory: NewSummarizeFactory(Deps{}), recent: 1, target: 50},
		// Summaries over their budget merge: the new one covers the earlier
		// summary's messages too, and its label says so.
		{name: "summarize_merge", state: "iterative", factory: NewSummarizeFactory(Deps{}), settings: "{max_summary_ratio: 1, min_summary_tokens: 80}", recent: 1, target: 50},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := statetest.LoadJSON(t, filepath.Join("testdata", tc.state+".json"))
			w, ctl := statetest.WorkControl(st, statetest.RecentTurns(tc.recent))
			ctl.SetCompactionTarget(tc.target)
			before := w.UsedTokens()
			err := run(newPolicy(t, tc.factory, tc.settings), w)
			var b strings.Builder
			fmt.Fprintf(&b, "# %s on %s.json: %s, recent_turns %d, target %d\n", tc.factory.Type(), tc.state, orDefaults(tc.settings), tc.recent, tc.target)
			fmt.Fprintf(&b, "# tokens %d -> %d\n", before, w.UsedTokens())
			if err != nil {
				fmt.Fprintf(&b, "# error: %v\n", err)
			}
			b.WriteString(statetest.Format(w))
			for _, m := range w.Appended {
				fmt.Fprintf(&b, "appended %s, full text:\n%s\n", m.ID, m.Text())
			}
			statetest.Golden(t, filepath.Join("testdata", tc.name+".golden"), b.String(), *update)
			if problems := append(statetest.Check(w), statetest.CheckPreserved(st, w)...); len(problems) > 0 {
				t.Errorf("problems:\n%s", strings.Join(problems, "\n"))
			}
		})
	}
}

func orDefaults(s string) string {
	if s == "" {
		return "defaults"
	}
	return s
}

func TestFactories(t *testing.T) {
	factories := []policies.Factory{NewClampFactory(), NewDedupeFactory(), NewMaskObservationsFactory(Deps{}), NewDropLowImportanceFactory(), NewSummarizeFactory(Deps{}), NewTruncateFactory(Deps{})}
	want := []string{"clamp", "dedupe", "mask_observations", "drop_low_importance", "summarize", "truncate"}
	for i, f := range factories {
		if f.Type() != want[i] {
			t.Errorf("factory %d: type %q, want %q", i, f.Type(), want[i])
		}
		if f.Stage() != policies.StageCompact {
			t.Errorf("%s: stage %s", f.Type(), f.Stage())
		}
		if err := f.CreateDefaultConfig().Validate(); err != nil {
			t.Errorf("%s: defaults invalid: %v", f.Type(), err)
		}
		other := factories[(i+1)%len(factories)].CreateDefaultConfig()
		if _, err := f.Create(other); err == nil {
			t.Errorf("%s: Create accepted a %T", f.Type(), other)
		}
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  policies.Config
		want string
	}{
		{"clamp", &ClampConfig{MaxPartTokens: 0, HeadRatio: 1.5}, "max_part_tokens: 0 is less than 1\nhead_ratio: 1.5 must be in [0, 1]"},
		{"dedupe", &DedupeConfig{ResourceKeys: []string{"path", ""}, MinSavingRatio: -1}, "resource_keys[1]: empty key\nmin_saving_ratio: -1 must be in [0, 1]"},
		{"drop", &DropLowImportanceConfig{MinImportanceThreshold: 0}, "min_importance_threshold: 0 must be in [1, 101]"},
		{"summarize", &SummarizeConfig{MaxSummaryRatio: 0, MaxSummaryTokens: -1, MinSummaryTokens: 0, MergeFillRatio: 1.5, MinSpanMessages: 0},
			"max_summary_ratio: 0 must be in (0, 2]\nmax_summary_tokens: -1 is negative\nmin_summary_tokens: 0 is less than 1\nmerge_fill_ratio: 1.5 must be in (0, 1]\nmin_span_messages: 0 is less than 1"},
		{"truncate", &TruncateConfig{Mode: "all", MaxMessages: 0, TargetTokens: -1, TargetRatio: 0}, `mode: "all" must be "fit", "message_limit" or "token_limit"` + "\nmax_messages: 0 is less than 1\ntarget_tokens: -1 is negative\ntarget_ratio: 0 must be in (0, 1]"},
		{"mask", &MaskObservationsConfig{}, ""},
	}
	for _, tc := range tests {
		err := tc.cfg.Validate()
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%s: Validate() = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// Messages for table tests, counted by statetest.FakeCounter: ceil(bytes/4) + 3.
func userMsg(id, text string) agentstate.Message {
	return agentstate.Message{ID: id, Role: agentstate.RoleUser, Parts: []agentstate.Part{agentstate.TextPart(text)}}
}

func assistantMsg(id, text string) agentstate.Message {
	return agentstate.Message{ID: id, Role: agentstate.RoleAssistant, Parts: []agentstate.Part{agentstate.TextPart(text)}}
}

// toolRound is an assistant call and its successful result.
func toolRound(callID, resultID, call, output string) []agentstate.Message {
	return []agentstate.Message{
		{ID: callID, Role: agentstate.RoleAssistant, Parts: []agentstate.Part{{Kind: agentstate.PartToolCall, ToolCall: agentstate.ToolCall{ID: call, Name: "read_file", ArgumentsJSON: "{}"}}}},
		{ID: resultID, Role: agentstate.RoleTool, Parts: []agentstate.Part{{Kind: agentstate.PartToolResult, ToolResult: agentstate.ToolResult{ToolCallID: call, Name: "read_file", Content: output}}}},
	}
}

func ids(w *policies.Work) []string {
	out := make([]string, len(w.Entries))
	for i := range w.Entries {
		out[i] = w.Entries[i].Message.ID
	}
	return out
}

// TestTruncateGreedyFitKeepsContiguousTail is the greedy-fit bug: with
// [m1, m2, huge m3, m4] a greedy fit would skip m3 and keep m2; the
// contiguous-recency rule stops at m3 and keeps only m4 (plus the protected
// first task m1).
func TestTruncateGreedyFitKeepsContiguousTail(t *testing.T) {
	st := &agentstate.State{Context: agentstate.Context{Messages: []agentstate.Message{
		userMsg("m1", strings.Repeat("a", 40)),       // 13 tokens, the first task
		assistantMsg("m2", strings.Repeat("b", 40)),  // 13
		assistantMsg("m3", strings.Repeat("c", 400)), // 103
		userMsg("m4", strings.Repeat("d", 40)),       // 13
	}}}
	w, ctl := statetest.WorkControl(st, statetest.RecentTurns(0))
	ctl.SetCompactionTarget(50) // m1 + m4 + m2 = 39 would fit; m3 never does
	if err := run(newPolicy(t, NewTruncateFactory(Deps{}), ""), w); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(ids(w), ","), "m1,m4"; got != want {
		t.Errorf("kept %s, want %s", got, want)
	}
	for _, id := range []string{"m2", "m3"} {
		if d, _ := w.Disposition(id); d.Disposition != policies.DispositionDropped {
			t.Errorf("%s: disposition %s, want dropped", id, d.Disposition)
		}
	}
}

func TestTruncateIrreducibleInOneCall(t *testing.T) {
	st := &agentstate.State{Context: agentstate.Context{SystemPrompt: strings.Repeat("s", 400), Messages: []agentstate.Message{
		userMsg("m1", strings.Repeat("a", 400)), // 103, the first task
		assistantMsg("m2", "ok"),                // 4
		userMsg("m3", strings.Repeat("b", 400)), // 103, the latest turn
	}}}
	w, ctl := statetest.WorkControl(st, statetest.RecentTurns(1)) // system prompt: 100 + 3
	ctl.SetHardLimit(250)
	ctl.SetHardLimitExceeded(true)
	calls := 0
	p := newPolicy(t, NewTruncateFactory(Deps{}), "")
	err := run(policyFunc(func(ctx context.Context, w *policies.Work) error { calls++; return p.Apply(ctx, w) }), w)
	var irr *agentstate.IrreducibleError
	if !errors.As(err, &irr) {
		t.Fatalf("error %v, want *agentstate.IrreducibleError", err)
	}
	if irr.NeededTokens != 103+103+103 || irr.AvailableTokens != 250 {
		t.Errorf("needed %d available %d, want 309 and 250", irr.NeededTokens, irr.AvailableTokens)
	}
	if calls != 1 || len(w.Entries) != 3 {
		t.Errorf("calls %d, entries %d: want one call that changes nothing", calls, len(w.Entries))
	}
}

type policyFunc func(context.Context, *policies.Work) error

func (f policyFunc) Apply(ctx context.Context, w *policies.Work) error { return f(ctx, w) }

func TestDedupeBelowMinSavingDoesNothing(t *testing.T) {
	st := statetest.LoadJSON(t, "testdata/session.json")
	// m3 and m11 read the same 266-byte file: masking m3 saves 67 - 13 = 54 of
	// 366 used tokens, 15%.
	for _, tc := range []struct {
		ratio  string
		masked bool
	}{{"0.1", true}, {"0.2", false}} {
		w := statetest.Work(st, statetest.RecentTurns(1))
		if err := run(newPolicy(t, NewDedupeFactory(), "{min_saving_ratio: "+tc.ratio+"}"), w); err != nil {
			t.Fatal(err)
		}
		_, masked := w.Masks["m3"]
		if masked != tc.masked || (w.Notes().Touches > 0) != tc.masked {
			t.Errorf("min_saving_ratio %s: masked %v, touches %d; want masked %v", tc.ratio, masked, w.Notes().Touches, tc.masked)
		}
	}
}

func TestClampMultiByte(t *testing.T) {
	text := strings.Repeat("日本語✓é", 100) // 12 bytes a repetition, 3+3+3+3... runes of 2 and 3 bytes
	tests := []struct {
		name      string
		headRatio string
	}{{"half", "0.5"}, {"head only", "1"}, {"tail only", "0"}, {"odd", "0.37"}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := &agentstate.State{Context: agentstate.Context{Messages: []agentstate.Message{
				userMsg("m1", "task"),
				assistantMsg("m2", text),
				userMsg("m3", "next"),
			}}}
			w := statetest.Work(st, statetest.RecentTurns(1))
			if err := run(newPolicy(t, NewClampFactory(), "{max_part_tokens: 25, head_ratio: "+tc.headRatio+"}"), w); err != nil {
				t.Fatal(err)
			}
			got := w.Entries[1].Message.Parts[0].Text
			if !strings.Contains(got, "tokens cut by ctxc clamp; full content in log message m2") {
				t.Fatalf("no marker in %q", got)
			}
			if !utfValid(got) {
				t.Errorf("clamped text is not valid UTF-8: %q", got)
			}
			i := strings.Index(got, "\n[... ")
			j := strings.Index(got, "...]\n")
			head, tail := got[:i], got[j+len("...]\n"):]
			if !strings.HasPrefix(text, head) || !strings.HasSuffix(text, tail) {
				t.Errorf("head %q / tail %q are not the text's own head and tail", head, tail)
			}
			if n := len(head) + len(tail); n > 100 || n < 80 {
				t.Errorf("kept %d bytes, want about 25 tokens (100 bytes)", n)
			}
			if st.Context.Messages[1].Parts[0].Text != text {
				t.Error("the log message was modified")
			}
			if d, _ := w.Disposition("m2"); d.Disposition != policies.DispositionTruncated {
				t.Errorf("disposition %s, want truncated", d.Disposition)
			}
		})
	}
}

func utfValid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

func TestClampLeavesToolCallArgumentsWhole(t *testing.T) {
	args := `{"content":"` + strings.Repeat("x", 800) + `"}`
	st := &agentstate.State{Context: agentstate.Context{Messages: []agentstate.Message{
		userMsg("m1", "task"),
		{ID: "m2", Role: agentstate.RoleAssistant, Parts: []agentstate.Part{{Kind: agentstate.PartToolCall, ToolCall: agentstate.ToolCall{ID: "c1", Name: "write_file", ArgumentsJSON: args}}}},
		{ID: "m3", Role: agentstate.RoleTool, Parts: []agentstate.Part{{Kind: agentstate.PartToolResult, ToolResult: agentstate.ToolResult{ToolCallID: "c1", Name: "write_file", Content: "ok"}}}},
		userMsg("m4", "next"),
	}}}
	w := statetest.Work(st, statetest.RecentTurns(1))
	if err := run(newPolicy(t, NewClampFactory(), "{max_part_tokens: 10}"), w); err != nil {
		t.Fatal(err)
	}
	if w.Notes().Touches != 0 || w.Entries[1].Message.Parts[0].ToolCall.ArgumentsJSON != args {
		t.Error("clamp changed tool call arguments")
	}
}

// TestDropLowImportanceDefaults: under the defaults (threshold 30, the
// newest 10 messages kept) tool rounds and decisions stay, reasoning-only
// output older than the newest 10 messages goes, and so does a message given
// an explicit importance under 30.
func TestDropLowImportanceDefaults(t *testing.T) {
	big := strings.Repeat("x", 200)
	thinking := func(id string) agentstate.Message {
		return agentstate.Message{ID: id, Role: agentstate.RoleAssistant, Parts: []agentstate.Part{{Kind: agentstate.PartReasoning, Reasoning: agentstate.Reasoning{Text: big}}}}
	}
	log := []agentstate.Message{userMsg("m1", big), thinking("m2")}
	log = append(log, toolRound("m3", "m4", "c1", big)...)
	log = append(log, assistantMsg("m5", big), userMsg("m6", big), thinking("m7"))
	log = append(log, agentstate.Message{ID: "m8", Role: agentstate.RoleAssistant, Importance: 29, Parts: []agentstate.Part{agentstate.TextPart(big)}})
	log = append(log, userMsg("m9", big), thinking("m10"), assistantMsg("m11", big), userMsg("m12", big), thinking("m13"), assistantMsg("m14", big), userMsg("m15", big))
	w, ctl := statetest.WorkControl(&agentstate.State{Context: agentstate.Context{Messages: log}}, statetest.RecentTurns(1))
	ctl.SetCompactionTarget(1) // drop all it may
	if err := run(newPolicy(t, NewDropLowImportanceFactory(), ""), w); err != nil {
		t.Fatal(err)
	}
	// m2 is older than the newest 10 (m6 to m15); m7, m10 and m13 are among them.
	if got, want := strings.Join(ids(w), ","), "m1,m3,m4,m5,m6,m7,m8,m9,m10,m11,m12,m13,m14,m15"; got != want {
		t.Errorf("kept %s, want %s", got, want)
	}
	w, ctl = statetest.WorkControl(&agentstate.State{Context: agentstate.Context{Messages: log}}, statetest.RecentTurns(1))
	ctl.SetCompactionTarget(1)
	if err := run(newPolicy(t, NewDropLowImportanceFactory(), "{keep_recent_messages: 3}"), w); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(ids(w), ","), "m1,m3,m4,m5,m6,m9,m11,m12,m13,m14,m15"; got != want {
		t.Errorf("keep_recent_messages 3: kept %s, want %s", got, want)
	}
}

func TestDropLowImportanceOrder(t *testing.T) {
	big := strings.Repeat("x", 200) // 53 tokens a message
	st := &agentstate.State{Context: agentstate.Context{Messages: []agentstate.Message{
		userMsg("m1", big), // first task
		{ID: "m2", Role: agentstate.RoleAssistant, Parts: []agentstate.Part{{Kind: agentstate.PartReasoning, Reasoning: agentstate.Reasoning{Text: big}}}}, // 10
		assistantMsg("m3", big), // 30: another assistant message follows
		assistantMsg("m4", big), // 65: closes its turn
		userMsg("m5", big),      // 70
		{ID: "m6", Role: agentstate.RoleAssistant, Importance: 5, Parts: []agentstate.Part{agentstate.TextPart(big)}}, // explicit 5
		assistantMsg("m7", big), // 30
		userMsg("m8", big),      // the latest turn
	}}}
	w, ctl := statetest.WorkControl(st, statetest.RecentTurns(1))
	ctl.SetCompactionTarget(w.UsedTokens() - 3*53) // three drops needed
	if err := run(newPolicy(t, NewDropLowImportanceFactory(), "{min_importance_threshold: 31, keep_recent_messages: 0}"), w); err != nil {
		t.Fatal(err)
	}
	// Dropped: m6 (5), m2 (10), then m3 (30, older than m7).
	if got, want := strings.Join(ids(w), ","), "m1,m4,m5,m7,m8"; got != want {
		t.Errorf("kept %s, want %s", got, want)
	}
}

// TestTruncateCondensesTheRunningTask: a running task whose outputs do not
// fit the window keeps every call; its older output becomes a placeholder
// naming it (the call stays, so the agent can run it again), and only then
// would anything be dropped. The newest output stays as it was.
func TestTruncateCondensesTheRunningTask(t *testing.T) {
	read := agentstate.Message{ID: "m3", Role: agentstate.RoleTool, ExecutionID: "e1", Parts: []agentstate.Part{{Kind: agentstate.PartToolResult,
		ToolResult: agentstate.ToolResult{ToolCallID: "c1", Name: "read", Content: "HEAD " + strings.Repeat("x", 4000) + " TAIL"}}}}
	grep := agentstate.Message{ID: "m5", Role: agentstate.RoleTool, ExecutionID: "e1", Parts: []agentstate.Part{{Kind: agentstate.PartToolResult,
		ToolResult: agentstate.ToolResult{ToolCallID: "c2", Name: "grep", Content: strings.Repeat("y", 1600)}}}}
	st := &agentstate.State{Execution: agentstate.Execution{ID: "e1"}, Context: agentstate.Context{Messages: []agentstate.Message{
		userMsg("m1", "fix the parser"),
		{ID: "m2", Role: agentstate.RoleAssistant, ExecutionID: "e1", Parts: []agentstate.Part{{Kind: agentstate.PartToolCall, ToolCall: agentstate.ToolCall{ID: "c1", Name: "read", ArgumentsJSON: `{"path":"parser.go"}`}}}},
		read,
		{ID: "m4", Role: agentstate.RoleAssistant, ExecutionID: "e1", Parts: []agentstate.Part{{Kind: agentstate.PartToolCall, ToolCall: agentstate.ToolCall{ID: "c2", Name: "grep", ArgumentsJSON: "{}"}}}},
		grep,
	}}}
	w, ctl := statetest.WorkControl(st, statetest.RecentTurns(1))
	ctl.SetHardLimit(900)
	ctl.SetHardLimitExceeded(true)
	ctl.SetCompactionTarget(900)
	if err := run(newPolicy(t, NewTruncateFactory(Deps{}), ""), w); err != nil {
		t.Fatalf("refused what can be condensed: %v", err)
	}
	if used := w.UsedTokens(); used > w.HardLimit() {
		t.Errorf("used %d, over the window's %d", used, w.HardLimit())
	}
	if diff := cmp.Diff([]string{"m1", "m2", "m3", "m4", "m5"}, ids(w)); diff != "" {
		t.Fatalf("a call of the running task was dropped (-want +got):\n%s", diff)
	}
	if got := w.Entries[2].Message.Parts[0].ToolResult.Content; !strings.HasPrefix(got, "[output masked: message m3, tool read, call c1") {
		t.Errorf("the older read is not condensed to a placeholder naming it:\n%.300s", got)
	}
	if w.Entries[4].Message.Parts[0].ToolResult.Content != grep.Parts[0].ToolResult.Content {
		t.Error("the newest output was changed although condensing the older one was enough")
	}
}

// TestTruncateCutKeepsWhatFailed: the newest output alone is over the
// window; it is cut to a head and a tail on line boundaries, and the lines in
// its middle that say what failed stay, with a note naming the log message.
func TestTruncateCutKeepsWhatFailed(t *testing.T) {
	output := strings.Repeat("ok   example.com/a 0.012s\n", 150) + "--- FAIL: TestParse (0.00s)\n    parse_test.go:12: got 1, want 2 [E-4711]\n" + strings.Repeat("ok   example.com/b 0.034s\n", 150)
	st := &agentstate.State{Context: agentstate.Context{Messages: []agentstate.Message{
		userMsg("m1", "fix the parser"),
		{ID: "m2", Role: agentstate.RoleAssistant, Parts: []agentstate.Part{{Kind: agentstate.PartToolCall, ToolCall: agentstate.ToolCall{ID: "c1", Name: "bash", ArgumentsJSON: `{"command":"go test ./..."}`}}}},
		{ID: "m3", Role: agentstate.RoleTool, Parts: []agentstate.Part{{Kind: agentstate.PartToolResult, ToolResult: agentstate.ToolResult{ToolCallID: "c1", Name: "bash", Content: output}}}},
	}}}
	w, ctl := statetest.WorkControl(st, statetest.RecentTurns(1))
	ctl.SetHardLimit(w.UsedTokens() / 3)
	ctl.SetHardLimitExceeded(true)
	ctl.SetCompactionTarget(w.HardLimit())
	if err := run(newPolicy(t, NewTruncateFactory(Deps{}), ""), w); err != nil {
		t.Fatalf("refused what can be cut: %v", err)
	}
	if used := w.UsedTokens(); used > w.HardLimit() {
		t.Errorf("used %d, over the window's %d", used, w.HardLimit())
	}
	got := w.Entries[2].Message.Parts[0].ToolResult.Content
	for _, want := range []string{policies.ShrinkMarker, "log message m3", "--- FAIL: TestParse (0.00s)\n", "    parse_test.go:12: got 1, want 2 [E-4711]\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("the cut output lacks %q:\n%s", want, got)
		}
	}
	if !strings.HasPrefix(got, "ok   example.com/a 0.012s\n") || !strings.HasSuffix(got, "ok   example.com/b 0.034s\n") {
		t.Errorf("the cut output does not keep whole lines of its head and tail:\n%s", got)
	}
	if d, _ := w.Disposition("m3"); d.Disposition != policies.DispositionTruncated {
		t.Errorf("m3 disposition %s, want truncated", d.Disposition)
	}
	if len(w.Report().Warnings) == 0 || !strings.Contains(strings.Join(w.Report().Warnings, "\n"), "cut tool output m3") {
		t.Errorf("warnings %q do not say what was cut", w.Report().Warnings)
	}
}

// TestTruncateCutsOneOutputFurtherRatherThanTheNext: a cut's note can cost
// more than estimated (here a long log id), leaving the window a few tokens
// short; the output being cut is cut further, and the older, smaller output
// of the turn before (protected by a recency window of two turns), whose
// middle names its failure, stays whole.
func TestTruncateCutsOneOutputFurtherRatherThanTheNext(t *testing.T) {
	readID := "m5-" + strings.Repeat("r", 160)
	call := func(id, callID string) agentstate.Message {
		return agentstate.Message{ID: id, Role: agentstate.RoleAssistant, Parts: []agentstate.Part{{Kind: agentstate.PartToolCall, ToolCall: agentstate.ToolCall{ID: callID, Name: "bash", ArgumentsJSON: "{}"}}}}
	}
	output := func(id, callID, content string) agentstate.Message {
		return agentstate.Message{ID: id, Role: agentstate.RoleTool, Parts: []agentstate.Part{{Kind: agentstate.PartToolResult,
			ToolResult: agentstate.ToolResult{ToolCallID: callID, Name: "bash", Content: content}}}}
	}
	test := strings.Repeat("ok   example.com/a\n", 40) + "--- FAIL: TestParse (0.00s)\n    parse_test.go:12: got 1, want 2\n" + strings.Repeat("ok   example.com/b\n", 40)
	st := &agentstate.State{Context: agentstate.Context{Messages: []agentstate.Message{
		userMsg("m1", "fix the parser"),
		call("m2", "c1"), output("m3", "c1", test),
		call("m4", "c2"), output(readID, "c2", strings.Repeat("x y ", 2000)),
		userMsg("m6", "and run it"),
		call("m7", "c3"), output("m8", "c3", "done"),
	}}}
	w, ctl := statetest.WorkControl(st, statetest.RecentTurns(2))
	ctl.SetHardLimit(w.UsedTokens() - 500)
	ctl.SetHardLimitExceeded(true)
	ctl.SetCompactionTarget(w.HardLimit())
	if err := run(newPolicy(t, NewTruncateFactory(Deps{}), ""), w); err != nil {
		t.Fatalf("refused what can be shrunk: %v", err)
	}
	if used := w.UsedTokens(); used > w.HardLimit() {
		t.Errorf("used %d, over the window's %d", used, w.HardLimit())
	}
	if got := w.Entries[4].Message.Parts[0].ToolResult.Content; !strings.Contains(got, policies.ShrinkMarker) {
		t.Errorf("the largest output was not cut:\n%.200s", got)
	}
	if got := w.Entries[2].Message.Parts[0].ToolResult.Content; got != test {
		t.Errorf("the older test output was cut for what the largest fell short by:\n%s", got)
	}
}

// TestTruncateFitsASummaryRatherThanDroppingIt: a summary the window
// cannot hold beside the newest turn is fitted into the room left, keeping
// its constraints and decisions and every failure still open, and saying how
// many items it left out; it is never replaced by a note of its errors alone
// while room is free.
func TestTruncateFitsASummaryRatherThanDroppingIt(t *testing.T) {
	var notes strings.Builder
	for k := 0; k < 40; k++ {
		fmt.Fprintf(&notes, "- The nightly export job %d writes its report to bucket exports-%d.\n", k, k)
	}
	summary := agentstate.Message{ID: "ctxc-summary-1", Role: agentstate.RoleUser, Kind: agentstate.KindSummary, CoversMessageIDs: []string{"m2", "m3"},
		Parts: []agentstate.Part{agentstate.TextPart("Summary of 2 earlier messages (m2 to m3), written by ctxc without a model.\n\n" +
			"## User constraints\n- The max gRPC message size has to stay at 16 MiB, partners depend on it.\n\n" +
			"## Errors still open\n- bash(command=go test ./...) [call c1]: --- FAIL: TestParse (0.00s) ¦ parse_test.go:12: got 1, want 2\n\n" +
			"## Decisions and conclusions\n- We use errgroup.WithContext for the fan-out.\n\n" +
			"## User notes\n" + notes.String())}}
	st := &agentstate.State{Context: agentstate.Context{Messages: []agentstate.Message{
		userMsg("m1", "fix the parser"),
		summary,
		userMsg("m4", "now the docs "+strings.Repeat("please ", 200)),
	}}}
	w, ctl := statetest.WorkControl(st, statetest.RecentTurns(1))
	full := w.UsedTokens()
	ctl.SetHardLimit(full - w.Entries[1].Tokens/2)
	ctl.SetHardLimitExceeded(true)
	ctl.SetCompactionTarget(w.HardLimit())
	ctl.SetAtEnd(true)
	if err := run(newPolicy(t, NewTruncateFactory(Deps{}), ""), w); err != nil {
		t.Fatal(err)
	}
	if used := w.UsedTokens(); used > w.HardLimit() {
		t.Errorf("used %d, over the window's %d", used, w.HardLimit())
	}
	var text string
	for _, e := range w.Entries {
		if e.Message.Kind == agentstate.KindSummary {
			text += e.Message.Text()
		}
	}
	for _, want := range []string{"16 MiB, partners depend on it", "[call c1]", "errgroup.WithContext", "left out to fit the summary budget", "Summary of 2 earlier messages"} {
		if !strings.Contains(text, want) {
			t.Errorf("the summary fitted to the window lacks %q:\n%s", want, text)
		}
	}
	if strings.Count(text, "nightly export job") == 40 {
		t.Errorf("nothing was left out of the summary, though it did not fit:\n%s", text)
	}
}

// TestTruncateFitsACLITranscriptToSummarize: an agent CLI compacting its own
// history sends its whole transcript in one user message, the instruction at
// the end; no window holds it, so its middle is cut to fit, keeping the task
// and its rules at the start, what failed, and the instruction.
func TestTruncateFitsACLITranscriptToSummarize(t *testing.T) {
	var b strings.Builder
	b.WriteString("<conversation>\n[User]: Make the tests pass. Never edit anything under vendor/.\n")
	for k := 1; k <= 60; k++ {
		fmt.Fprintf(&b, "[Assistant tool calls]: bash(command=\"sh run-check.sh %d\")\n[Tool result]: ", k)
		for l := 0; l < 12; l++ {
			fmt.Fprintf(&b, "check %d: step %d of the build went through in %d ms\n", k, l, 10+l)
		}
		if k == 31 {
			b.WriteString("panic: pricing: posting to closed period 2026-12 [E-4711]\n")
		}
	}
	b.WriteString("</conversation>\n\nThe messages above are a conversation to summarize. Create a structured context checkpoint summary.")
	st := &agentstate.State{Context: agentstate.Context{SystemPrompt: "You are a summarizer.", Messages: []agentstate.Message{userMsg("m1", b.String())}}}
	w, ctl := statetest.WorkControl(st, statetest.RecentTurns(1))
	ctl.SetHardLimit(w.UsedTokens() / 4)
	ctl.SetHardLimitExceeded(true)
	ctl.SetCompactionTarget(w.HardLimit())
	if err := run(newPolicy(t, NewTruncateFactory(Deps{}), ""), w); err != nil {
		t.Fatalf("refused a transcript that can be cut: %v", err)
	}
	if used := w.UsedTokens(); used > w.HardLimit() {
		t.Errorf("used %d, over the window's %d", used, w.HardLimit())
	}
	got := w.Entries[0].Message.Text()
	for _, want := range []string{"Never edit anything under vendor/.", "panic: pricing: posting to closed period 2026-12 [E-4711]", policies.ShrinkMarker,
		"The messages above are a conversation to summarize. Create a structured context checkpoint summary."} {
		if !strings.Contains(got, want) {
			t.Errorf("the cut transcript lacks %q", want)
		}
	}
}

// TestTruncateRefusalAddsUp: when the system prompt alone is over the window
// nothing can be cut, and the error names each part that must be kept with
// its size; the parts add up to what it says is needed.
func TestTruncateRefusalAddsUp(t *testing.T) {
	st := &agentstate.State{Context: agentstate.Context{SystemPrompt: strings.Repeat("s", 4000), Messages: []agentstate.Message{
		userMsg("m1", "fix the parser"),
	}}}
	w, ctl := statetest.WorkControl(st, statetest.RecentTurns(1))
	ctl.SetHardLimit(500)
	ctl.SetHardLimitExceeded(true)
	err := run(newPolicy(t, NewTruncateFactory(Deps{}), ""), w)
	var irr *agentstate.IrreducibleError
	if !errors.As(err, &irr) {
		t.Fatalf("error %v, want *agentstate.IrreducibleError", err)
	}
	for _, want := range []string{"system prompt 1,00", "tools 0", "first task"} {
		if !strings.Contains(irr.Detail, want) {
			t.Errorf("detail %q does not name %q", irr.Detail, want)
		}
	}
	if got := refusalSum(t, irr.Detail); got != irr.NeededTokens {
		t.Errorf("the parts of %q add up to %d, not the %d needed", irr.Detail, got, irr.NeededTokens)
	}
}

// refusalSum adds the sizes a refusal names ("tokens: a 1,003, b 7"): parts
// are separated by ", ", a number's thousands by a comma alone.
func refusalSum(t *testing.T, detail string) int {
	t.Helper()
	_, list, ok := strings.Cut(detail, "(tokens: ")
	if !ok {
		t.Fatalf("detail %q lists no parts", detail)
	}
	sum := 0
	for _, part := range strings.Split(strings.TrimSuffix(list, ")"), ", ") {
		fields := strings.Fields(part)
		n, err := strconv.Atoi(strings.ReplaceAll(fields[len(fields)-1], ",", ""))
		if err != nil {
			t.Fatalf("part %q of %q has no size", part, detail)
		}
		sum += n
	}
	return sum
}
