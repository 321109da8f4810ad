package routing

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// TestRouteScenario follows one agent through a user turn, a step with two
// parallel tool calls (one failing), a final answer with usage, an event and
// a second user turn, checking the whole state after every call.
func TestRouteScenario(t *testing.T) {
	usage := &agentstate.Usage{InputTokens: 2100, OutputTokens: 64}
	st := &agentstate.State{Model: agentstate.ModelSpec{Name: "claude-sonnet-4-5", Provider: "anthropic"}}

	type call struct {
		in            Input
		wantAdded     []agentstate.Message
		wantExecution agentstate.Execution
		wantEnded     bool
		wantPrompt    string
	}
	calls := []call{
		{
			in: UserTurn{Messages: []agentstate.Message{
				msg("", system, text("You are a travel assistant.")),
				msg("", user, text("find me a show in Harrogate tonight")),
			}},
			wantAdded:     []agentstate.Message{tagged(msg("exec-1-u1", user, text("find me a show in Harrogate tonight")), "exec-1", OutputUser, "")},
			wantExecution: agentstate.Execution{ID: "exec-1", Status: agentstate.ExecutionRunning},
			wantPrompt:    "You are a travel assistant.",
		},
		{
			in: Step{FinishReason: FinishToolCalls, Messages: []agentstate.Message{
				msg("", assistant, text("Checking listings and weather."), callPart("call_a", "listings"), callPart("call_b", "weather")),
				msg("", tool, resultPart("call_a", "", "Harrogate Theatre: Hamlet 19:30", false)),
				msg("", tool, resultPart("call_b", "", "weather API timeout", true)),
			}},
			wantAdded: []agentstate.Message{
				tagged(msg("exec-1-s0-0", assistant, text("Checking listings and weather."), callPart("call_a", "listings"), callPart("call_b", "weather")), "exec-1", OutputAssistant, "0"),
				tagged(msg("exec-1-s0-1", tool, resultPart("call_a", "listings", "Harrogate Theatre: Hamlet 19:30", false)), "exec-1", OutputToolResult, "0"),
				tagged(msg("exec-1-s0-2", tool, resultPart("call_b", "weather", "weather API timeout", true)), "exec-1", OutputToolResult, "0"),
			},
			wantExecution: agentstate.Execution{ID: "exec-1", StepIndex: 1, Status: agentstate.ExecutionRunning},
			wantPrompt:    "You are a travel assistant.",
		},
		{
			in: Step{FinishReason: FinishStop, Usage: usage, Messages: []agentstate.Message{
				msg("", assistant, text("Hamlet at Harrogate Theatre, 19:30.")),
			}},
			wantAdded: []agentstate.Message{func() agentstate.Message {
				m := tagged(msg("exec-1-s1-0", assistant, text("Hamlet at Harrogate Theatre, 19:30.")), "exec-1", OutputAssistant, "1")
				m.Usage = usage
				return m
			}()},
			wantExecution: agentstate.Execution{ID: "exec-1", StepIndex: 1, Status: agentstate.ExecutionCompleted},
			wantEnded:     true,
			wantPrompt:    "You are a travel assistant.",
		},
		{
			in: Event{Text: "the user checked in at Harrogate Theatre"},
			wantAdded: []agentstate.Message{{ID: "evt-5", Role: user, Kind: agentstate.KindEvent, Parts: []agentstate.Part{text("the user checked in at Harrogate Theatre")},
				Metadata: map[string]string{MetaOutput: OutputEvent}}},
			wantExecution: agentstate.Execution{ID: "exec-1", StepIndex: 1, Status: agentstate.ExecutionCompleted},
			wantPrompt:    "You are a travel assistant.",
		},
		{
			in:            UserTurn{Messages: []agentstate.Message{msg("", user, text("tell me about this place"))}},
			wantAdded:     []agentstate.Message{tagged(msg("exec-2-u0", user, text("tell me about this place")), "exec-2", OutputUser, "")},
			wantExecution: agentstate.Execution{ID: "exec-2", Status: agentstate.ExecutionRunning},
			wantPrompt:    "You are a travel assistant.",
		},
	}

	var wantLog []agentstate.Message
	for i, c := range calls {
		res := mustRoute(t, st, c.in)
		wantLog = append(wantLog, c.wantAdded...)
		if diff := cmp.Diff(wantLog, res.State.Context.Messages); diff != "" {
			t.Fatalf("call %d: log (-want +got):\n%s", i, diff)
		}
		if diff := cmp.Diff(ids(c.wantAdded), res.AppendedIDs); diff != "" {
			t.Errorf("call %d: AppendedIDs (-want +got):\n%s", i, diff)
		}
		if diff := cmp.Diff(c.wantExecution, res.State.Execution); diff != "" {
			t.Errorf("call %d: execution (-want +got):\n%s", i, diff)
		}
		if res.ExecutionEnded != c.wantEnded {
			t.Errorf("call %d: ExecutionEnded = %v, want %v", i, res.ExecutionEnded, c.wantEnded)
		}
		if res.State.Context.SystemPrompt != c.wantPrompt {
			t.Errorf("call %d: system prompt %q, want %q", i, res.State.Context.SystemPrompt, c.wantPrompt)
		}
		if res.State.SchemaVersion != agentstate.CurrentSchemaVersion || res.State.Model != st.Model {
			t.Errorf("call %d: version %d model %+v changed", i, res.State.SchemaVersion, res.State.Model)
		}
		st = res.State
	}

	// The failed weather call stays visible as an unresolved failure: no later
	// call of the same tool succeeded.
	entries := agentstate.EntriesFromLog(st.Context.Messages)
	if diff := cmp.Diff([]int{3}, policies.UnresolvedFailures(entries)); diff != "" {
		t.Errorf("unresolved failures (-want +got):\n%s", diff)
	}
	// Two turns, each opening at its user message; the event does not open one.
	if diff := cmp.Diff([]int{0, 6}, policies.TurnStarts(entries)); diff != "" {
		t.Errorf("turn starts (-want +got):\n%s", diff)
	}
	// The first execution is over: a late result for one of its calls is refused.
	_, err := Route(st, Step{FinishReason: FinishToolCalls, Messages: []agentstate.Message{msg("", tool, resultPart("call_b", "weather", "sunny", false))}}, Options{})
	want := &agentstate.InvalidArgumentError{Reason: ReasonInvalidRouteInput, Violations: []agentstate.FieldViolation{{
		Field: "step.messages[0].parts[0].tool_result.tool_call_id", Description: `call "call_b" belongs to execution "exec-1", not to the running execution "exec-2"`,
	}}}
	if diff := cmp.Diff(want, err); diff != "" {
		t.Errorf("late result (-want +got):\n%s", diff)
	}
}
