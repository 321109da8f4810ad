package eval

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

func TestCheckCompiled(t *testing.T) {
	user := ctxcv1.Role_ROLE_USER
	assistant := ctxcv1.Role_ROLE_ASSISTANT
	tool := ctxcv1.Role_ROLE_TOOL
	task := msg("u1", user, textPart("fix the bug"))
	pinned := msg("p1", user, textPart("deploys on Tuesdays only"))
	pinned.Pinned = true
	call := msg("a1", assistant, callPart("c1", "read_file"), callPart("c2", "grep"))
	call.ExecutionId = "e1"
	res1 := msg("t1", tool, resultPart("c1", "package x"))
	res2 := msg("t2", tool, resultPart("c2", "x.go:1:package x"))
	answer := msg("a2", assistant, textPart("done"))
	newest := msg("u2", user, textPart("thanks, now the tests"))
	log := []*ctxcv1.Message{task, pinned, call, res1, res2, answer, newest}
	state := &ctxcv1.AgentState{
		Context:   &ctxcv1.AgentContext{SystemPrompt: "be careful", Messages: log},
		Execution: &ctxcv1.Execution{Id: "e2", Status: ctxcv1.ExecutionStatus_EXECUTION_STATUS_RUNNING},
	}
	sys := systemMessage("be careful")
	// A running execution's last step, still waiting for its result.
	runningCall := msg("a3", assistant, callPart("c3", "run_tests"))
	runningCall.ExecutionId = "e2"
	runningState := &ctxcv1.AgentState{
		Context:   &ctxcv1.AgentContext{SystemPrompt: "be careful", Messages: append(append([]*ctxcv1.Message{}, log...), runningCall)},
		Execution: state.Execution,
	}
	summary := &ctxcv1.Message{Id: "ctxc-s1", Role: user, Kind: ctxcv1.MessageKind_MESSAGE_KIND_SUMMARY, Parts: []*ctxcv1.Part{textPart("summary")}}
	changedTask := msg("u1", user, textPart("fix the bug (shortened)"))
	event := &ctxcv1.Message{Id: "ev1", Role: user, Kind: ctxcv1.MessageKind_MESSAGE_KIND_EVENT, Parts: []*ctxcv1.Part{textPart("CI passed")}}

	// Compact appends a summary to the log; compiles show it in place of
	// what it covers.
	persistedSummary := &ctxcv1.Message{Id: "s1", Role: user, Kind: ctxcv1.MessageKind_MESSAGE_KIND_SUMMARY, Parts: []*ctxcv1.Part{textPart("summary")}, CoversMessageIds: []string{"a1", "t1", "t2", "a2"}}
	persisted := &ctxcv1.AgentState{
		Context:   &ctxcv1.AgentContext{SystemPrompt: "be careful", Messages: append(append([]*ctxcv1.Message{}, log...), persistedSummary)},
		Execution: state.Execution,
	}

	tests := []struct {
		name     string
		state    *ctxcv1.AgentState
		compiled []*ctxcv1.Message
		want     []string
	}{
		{"the log as it is", state, []*ctxcv1.Message{sys, task, pinned, call, res1, res2, answer, newest}, nil},
		{"both results in one tool message", state, []*ctxcv1.Message{sys, task, pinned, call, msg("t1", tool, resultPart("c1", "a"), resultPart("c2", "b")), answer, newest}, nil},
		{"a summary in place of the middle", state, []*ctxcv1.Message{sys, task, pinned, summary, newest}, nil},
		{"an event after the newest turn is not a user turn", state, []*ctxcv1.Message{sys, task, pinned, newest, event}, nil},
		{"no system prompt", state, []*ctxcv1.Message{task, pinned, newest}, []string{RuleSystemPrompt}},
		{"a different system prompt", state, []*ctxcv1.Message{systemMessage("be quick"), task, pinned, newest}, []string{RuleSystemPrompt}},
		{"a result without its call", state, []*ctxcv1.Message{sys, task, pinned, res1, answer, newest}, []string{RuleToolResult}},
		{"a call without one of its results", state, []*ctxcv1.Message{sys, task, pinned, call, res1, answer, newest}, []string{RuleToolCall}},
		{"a result after a user message", state, []*ctxcv1.Message{sys, task, pinned, call, event, res1, res2, newest}, []string{RuleToolCall, RuleToolCall, RuleToolResult, RuleToolResult}},
		{"the running execution's last call may wait", runningState, []*ctxcv1.Message{sys, task, pinned, newest, runningCall}, nil},
		{"an older call may not", runningState, []*ctxcv1.Message{sys, task, pinned, call, newest, runningCall}, []string{RuleToolCall, RuleToolCall}},
		{"the first task missing", state, []*ctxcv1.Message{sys, pinned, newest}, []string{RuleFirstTask}},
		{"the first task changed", state, []*ctxcv1.Message{sys, changedTask, pinned, newest}, []string{RuleFirstTask}},
		{"the pinned note missing", state, []*ctxcv1.Message{sys, task, newest}, []string{RulePinned}},
		{"the newest turn missing", state, []*ctxcv1.Message{sys, task, pinned}, []string{RuleNewestTurn}},
		{"a user message after the newest turn", state, []*ctxcv1.Message{sys, task, newest, pinned}, []string{RuleNewestTurn, RuleLogOrder}},
		{"log order broken", state, []*ctxcv1.Message{sys, task, pinned, answer, call, res1, res2, newest}, []string{RuleLogOrder}},
		{"a log message shown twice", state, []*ctxcv1.Message{sys, task, pinned, answer, answer, newest}, []string{RuleLogOrder}},
		{"a persisted summary stands where what it covers was", persisted, []*ctxcv1.Message{sys, task, pinned, persistedSummary, newest}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, v := range checkCompiled(tt.state, tt.compiled) {
				got = append(got, v.Rule)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
		})
	}
}

func TestIdentifiers(t *testing.T) {
	text := `run_tests failed: E4102 ledger out of balance; upstream said ERR_CONN_RESET, then connect ECONNREFUSED 10.0.3.17:5432.
request to /v1/orders failed: HTTP 503 Service Unavailable (SQLSTATE 23505) exit status 137
ModuleNotFoundError: No module named 'x' and ErrOutOfStock in internal/store/store.go:42 and src/app.test.ts
bump to v1.14.2 and 2.0.0-rc.1, see OPS-1423; UTF-8 and SHA-256 are no tickets; HTTP/1.1 is no path.`
	want := []string{"E4102", "ERR_CONN_RESET", "ECONNREFUSED", "HTTP 503", "SQLSTATE 23505", "exit status 137", "ModuleNotFoundError", "ErrOutOfStock", "internal/store/store.go", "src/app.test.ts", "v1.14.2", "2.0.0-rc.1", "OPS-1423"}
	if diff := cmp.Diff(want, identifiers(text)); diff != "" {
		t.Errorf("identifiers (-want +got):\n%s", diff)
	}
}

func TestCollapse(t *testing.T) {
	for in, want := range map[string]string{
		"  a\n\tb   c ":                "a b c",
		"":                             "",
		"x":                            "x",
		"a\u00a0b\u2003\u2003c\u0085d": "a b c d",
		"\xffa \xfe":                   "\xffa \xfe",
	} {
		if got := Collapse(in); got != want {
			t.Errorf("Collapse(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzCollapse: collapse is the words of strings.Fields joined by one space.
func FuzzCollapse(f *testing.F) {
	for _, s := range []string{"  a\n\tb   c ", "a\u00a0b\u2003c", "\xffa \xfe", "\u0085x\v\fy"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Collapse(s), strings.Join(strings.Fields(s), " "); got != want {
			t.Errorf("Collapse(%q) = %q, want %q", s, got, want)
		}
	})
}
