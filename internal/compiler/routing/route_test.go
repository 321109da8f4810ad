package routing

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/contextcompiler/ctxc/policies/agentstate"
)

const (
	user      = agentstate.RoleUser
	assistant = agentstate.RoleAssistant
	tool      = agentstate.RoleTool
	system    = agentstate.RoleSystem
)

func TestRouteUserTurn(t *testing.T) {
	tests := []struct {
		name            string
		state           *agentstate.State
		in              UserTurn
		wantAppended    []agentstate.Message
		wantExecution   agentstate.Execution
		wantPrompt      string
		wantReplaced    bool
		wantInterrupted string
	}{
		{
			name:          "first turn gets a generated execution and ids",
			state:         &agentstate.State{},
			in:            UserTurn{Messages: []agentstate.Message{msg("", user, text("hello"))}},
			wantAppended:  []agentstate.Message{tagged(msg("exec-1-u0", user, text("hello")), "exec-1", OutputUser, "")},
			wantExecution: agentstate.Execution{ID: "exec-1", Status: agentstate.ExecutionRunning},
		},
		{
			name:  "leading system messages set the prompt, later ones stay in place as events",
			state: withStatus(runningState(), agentstate.ExecutionCompleted),
			in: UserTurn{ExecutionID: "e7", Messages: []agentstate.Message{
				msg("", system, text("You are terse.")),
				msg("", system, text("Answer in English.")),
				msg("", user, text("where am I?")),
				msg("", system, text("the user checked in at Harrogate Theatre")),
			}},
			wantAppended: []agentstate.Message{
				tagged(msg("e7-u2", user, text("where am I?")), "e7", OutputUser, ""),
				tagged(msg("e7-u3", system, text("the user checked in at Harrogate Theatre")), "e7", OutputEvent, ""),
			},
			wantExecution: agentstate.Execution{ID: "e7", Status: agentstate.ExecutionRunning},
			wantPrompt:    "You are terse.\n\nAnswer in English.",
			wantReplaced:  true,
		},
		{
			name:            "a turn while an execution runs interrupts it",
			state:           runningState(),
			in:              UserTurn{Messages: []agentstate.Message{msg("u2", user, text("stop, do this instead"))}},
			wantAppended:    []agentstate.Message{tagged(msg("u2", user, text("stop, do this instead")), "exec-2", OutputUser, "")},
			wantExecution:   agentstate.Execution{ID: "exec-2", Status: agentstate.ExecutionRunning},
			wantPrompt:      "You are a careful agent.",
			wantInterrupted: "e1",
		},
		{
			name:  "generated ids skip ids given explicitly in the same turn",
			state: &agentstate.State{},
			in: UserTurn{ExecutionID: "e2", Messages: []agentstate.Message{
				msg("", user, text("a")),
				msg("e2-u0", user, text("b")),
			}},
			wantAppended: []agentstate.Message{
				tagged(msg("e2-u0-2", user, text("a")), "e2", OutputUser, ""),
				tagged(msg("e2-u0", user, text("b")), "e2", OutputUser, ""),
			},
			wantExecution: agentstate.Execution{ID: "e2", Status: agentstate.ExecutionRunning},
		},
		{
			name: "generated execution ids never reuse one in the log",
			state: withLog(&agentstate.State{Execution: agentstate.Execution{ID: "exec-2", Status: agentstate.ExecutionCompleted}},
				tagged(msg("exec-3-u0", user, text("old")), "exec-2", OutputUser, "")),
			in:            UserTurn{Messages: []agentstate.Message{msg("", user, text("new"))}},
			wantAppended:  []agentstate.Message{tagged(msg("exec-3-u0-2", user, text("new")), "exec-3", OutputUser, "")},
			wantExecution: agentstate.Execution{ID: "exec-3", Status: agentstate.ExecutionRunning},
		},
		{
			name:  "user events keep their kind, caller metadata is kept and ctxc tags win",
			state: &agentstate.State{},
			in: UserTurn{ExecutionID: "e1", Messages: []agentstate.Message{
				{ID: "ev", Role: user, Kind: agentstate.KindEvent, Parts: []agentstate.Part{text("opened file a.go")}, Metadata: map[string]string{"source": "ide", MetaOutput: "spoofed"}},
				msg("q", user, text("what does it do?")),
			}},
			wantAppended: []agentstate.Message{
				{ID: "ev", Role: user, Kind: agentstate.KindEvent, Parts: []agentstate.Part{text("opened file a.go")}, ExecutionID: "e1", Metadata: map[string]string{"source": "ide", MetaOutput: OutputEvent}},
				tagged(msg("q", user, text("what does it do?")), "e1", OutputUser, ""),
			},
			wantExecution: agentstate.Execution{ID: "e1", Status: agentstate.ExecutionRunning},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := len(tt.state.Context.Messages)
			res := mustRoute(t, tt.state, tt.in)
			if diff := cmp.Diff(tt.state.Context.Messages, res.State.Context.Messages[:n], cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("existing log changed (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantAppended, appended(res, n)); diff != "" {
				t.Errorf("appended (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(ids(tt.wantAppended), res.AppendedIDs); diff != "" {
				t.Errorf("AppendedIDs (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantExecution, res.State.Execution); diff != "" {
				t.Errorf("execution (-want +got):\n%s", diff)
			}
			if res.State.Context.SystemPrompt != tt.wantPrompt || res.SystemPromptReplaced != tt.wantReplaced {
				t.Errorf("system prompt = %q (replaced %v), want %q (replaced %v)", res.State.Context.SystemPrompt, res.SystemPromptReplaced, tt.wantPrompt, tt.wantReplaced)
			}
			if res.InterruptedExecutionID != tt.wantInterrupted || res.ExecutionEnded {
				t.Errorf("interrupted %q, ended %v; want interrupted %q, not ended", res.InterruptedExecutionID, res.ExecutionEnded, tt.wantInterrupted)
			}
		})
	}
}

func TestRouteStep(t *testing.T) {
	usage := &agentstate.Usage{InputTokens: 1200, CachedInputTokens: 300, OutputTokens: 42}
	errorMsg := func(id, text, step string) agentstate.Message {
		return agentstate.Message{ID: id, Role: user, Kind: agentstate.KindEvent, Parts: []agentstate.Part{agentstate.TextPart(text)}, Pinned: true, ExecutionID: "e1",
			Metadata: map[string]string{MetaOutput: OutputError, MetaError: "true", MetaUnresolved: "true", MetaStepIndex: step}}
	}
	withUsage := func(m agentstate.Message, u *agentstate.Usage) agentstate.Message { m.Usage = u; return m }
	tests := []struct {
		name          string
		state         *agentstate.State
		in            Step
		wantAppended  []agentstate.Message
		wantExecution agentstate.Execution
		wantEnded     bool
		// wantOld, when set, is the expected old part of the log.
		wantOld []agentstate.Message
	}{
		{
			name:  "tool calls with their results keep the execution running",
			state: runningState(),
			in: Step{FinishReason: FinishToolCalls, Messages: []agentstate.Message{
				msg("", assistant, callPart("c1", "read_file")),
				msg("", tool, resultPart("c1", "", "package main", false)),
			}},
			wantAppended: []agentstate.Message{
				tagged(msg("e1-s0-0", assistant, callPart("c1", "read_file")), "e1", OutputAssistant, "0"),
				tagged(msg("e1-s0-1", tool, resultPart("c1", "read_file", "package main", false)), "e1", OutputToolResult, "0"),
			},
			wantExecution: agentstate.Execution{ID: "e1", StepIndex: 1, Status: agentstate.ExecutionRunning},
		},
		{
			name: "a result may answer a call of an earlier step",
			state: func() *agentstate.State {
				st := withLog(runningState(), tagged(msg("a1", assistant, callPart("c1", "run_tests")), "e1", OutputAssistant, "0"))
				st.Execution.StepIndex = 1
				return st
			}(),
			in: Step{FinishReason: FinishLength, Messages: []agentstate.Message{
				msg("t1", tool, resultPart("c1", "", "ok", false)),
				msg("a2", assistant, text("tests pass, writing the summa")),
			}},
			wantAppended: []agentstate.Message{
				tagged(msg("t1", tool, resultPart("c1", "run_tests", "ok", false)), "e1", OutputToolResult, "1"),
				tagged(msg("a2", assistant, text("tests pass, writing the summa")), "e1", OutputAssistant, "1"),
			},
			wantExecution: agentstate.Execution{ID: "e1", StepIndex: 2, Status: agentstate.ExecutionRunning},
		},
		{
			name:  "a final answer completes the execution and carries the usage on the last assistant message",
			state: runningState(),
			in: Step{FinishReason: FinishStop, Usage: usage, Messages: []agentstate.Message{
				msg("a1", assistant, text("thinking aloud")),
				msg("", system, text("budget nearly spent")),
				msg("a2", assistant, text("done")),
			}},
			wantAppended: []agentstate.Message{
				tagged(msg("a1", assistant, text("thinking aloud")), "e1", OutputAssistant, "0"),
				tagged(msg("e1-s0-1", system, text("budget nearly spent")), "e1", OutputEvent, "0"),
				withUsage(tagged(msg("a2", assistant, text("done")), "e1", OutputAssistant, "0"), usage),
			},
			wantExecution: agentstate.Execution{ID: "e1", Status: agentstate.ExecutionCompleted},
			wantEnded:     true,
		},
		{
			name:          "a failed step without output fails the execution and keeps the error visible",
			state:         runningState(),
			in:            Step{FinishReason: FinishError, Error: "provider returned 529 overloaded"},
			wantAppended:  []agentstate.Message{errorMsg("e1-s0-error", "The agent step failed: provider returned 529 overloaded", "0")},
			wantExecution: agentstate.Execution{ID: "e1", Status: agentstate.ExecutionFailed},
			wantEnded:     true,
		},
		{
			name:  "an unspecified finish reason with an error is a failure",
			state: runningState(),
			in:    Step{Error: "tool sandbox crashed", Messages: []agentstate.Message{msg("a1", assistant, text("let me try"))}},
			wantAppended: []agentstate.Message{
				tagged(msg("a1", assistant, text("let me try")), "e1", OutputAssistant, "0"),
				errorMsg("e1-s0-error", "The agent step failed: tool sandbox crashed", "0"),
			},
			wantExecution: agentstate.Execution{ID: "e1", Status: agentstate.ExecutionFailed},
			wantEnded:     true,
		},
		{
			name:          "an unspecified finish reason with tool calls continues",
			state:         runningState(),
			in:            Step{Messages: []agentstate.Message{msg("a1", assistant, text("checking"), callPart("c1", "grep"))}},
			wantAppended:  []agentstate.Message{tagged(msg("a1", assistant, text("checking"), callPart("c1", "grep")), "e1", OutputAssistant, "0")},
			wantExecution: agentstate.Execution{ID: "e1", StepIndex: 1, Status: agentstate.ExecutionRunning},
		},
		{
			name:          "an unspecified finish reason with plain text completes",
			state:         runningState(),
			in:            Step{Messages: []agentstate.Message{msg("a1", assistant, text("all done"))}},
			wantAppended:  []agentstate.Message{tagged(msg("a1", assistant, text("all done")), "e1", OutputAssistant, "0")},
			wantExecution: agentstate.Execution{ID: "e1", Status: agentstate.ExecutionCompleted},
			wantEnded:     true,
		},
		{
			name: "an unspecified status with an execution id counts as running",
			state: func() *agentstate.State {
				st := runningState()
				st.Execution.Status = agentstate.ExecutionUnspecified
				return st
			}(),
			in:            Step{FinishReason: FinishStop, Messages: []agentstate.Message{msg("a1", assistant, text("hi"))}},
			wantAppended:  []agentstate.Message{tagged(msg("a1", assistant, text("hi")), "e1", OutputAssistant, "0")},
			wantExecution: agentstate.Execution{ID: "e1", Status: agentstate.ExecutionCompleted},
			wantEnded:     true,
		},
		{
			name: "completing an execution resolves earlier step errors",
			state: func() *agentstate.State {
				st := runningState()
				st.Context.Messages = append([]agentstate.Message{
					msg("u0", user, text("earlier task")),
					{ID: "e0-s0-error", Role: user, Kind: agentstate.KindEvent, Parts: []agentstate.Part{text("The agent step failed: boom")}, Pinned: true, ExecutionID: "e0",
						Metadata: map[string]string{MetaOutput: OutputError, MetaError: "true", MetaUnresolved: "true", MetaStepIndex: "0"}},
				}, st.Context.Messages...)
				return st
			}(),
			in:           Step{FinishReason: FinishStop, Messages: []agentstate.Message{msg("a1", assistant, text("fixed"))}},
			wantAppended: []agentstate.Message{tagged(msg("a1", assistant, text("fixed")), "e1", OutputAssistant, "0")},
			wantOld: []agentstate.Message{
				msg("u0", user, text("earlier task")),
				{ID: "e0-s0-error", Role: user, Kind: agentstate.KindEvent, Parts: []agentstate.Part{text("The agent step failed: boom")}, ExecutionID: "e0",
					Metadata: map[string]string{MetaOutput: OutputError, MetaError: "true", MetaResolvedBy: "e1", MetaStepIndex: "0"}},
				tagged(msg("u1", user, text("fix the build")), "e1", OutputUser, ""),
			},
			wantExecution: agentstate.Execution{ID: "e1", Status: agentstate.ExecutionCompleted},
			wantEnded:     true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := len(tt.state.Context.Messages)
			wantOld := tt.wantOld
			if wantOld == nil {
				wantOld = deepCopy(tt.state).Context.Messages
			}
			res := mustRoute(t, tt.state, tt.in)
			if diff := cmp.Diff(wantOld, res.State.Context.Messages[:n]); diff != "" {
				t.Errorf("existing log (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantAppended, appended(res, n)); diff != "" {
				t.Errorf("appended (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(ids(tt.wantAppended), res.AppendedIDs); diff != "" {
				t.Errorf("AppendedIDs (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantExecution, res.State.Execution); diff != "" {
				t.Errorf("execution (-want +got):\n%s", diff)
			}
			if res.ExecutionEnded != tt.wantEnded {
				t.Errorf("ExecutionEnded = %v, want %v", res.ExecutionEnded, tt.wantEnded)
			}
		})
	}
}

func TestRouteEvent(t *testing.T) {
	tests := []struct {
		name  string
		state *agentstate.State
		in    Event
		want  agentstate.Message
	}{
		{
			name:  "outside an execution, as a user message",
			state: withStatus(runningState(), agentstate.ExecutionCompleted),
			in:    Event{Text: "the user checked in at Harrogate Theatre", Metadata: map[string]string{"venue": "harrogate"}},
			want: agentstate.Message{ID: "evt-1", Role: user, Kind: agentstate.KindEvent, Parts: []agentstate.Part{text("the user checked in at Harrogate Theatre")},
				Metadata: map[string]string{"venue": "harrogate", MetaOutput: OutputEvent}},
		},
		{
			name:  "inside a running execution, with the system role",
			state: runningState(),
			in:    Event{Text: "deploy window closes in 5 minutes", Role: system},
			want: agentstate.Message{ID: "evt-1", Role: system, Kind: agentstate.KindEvent, Parts: []agentstate.Part{text("deploy window closes in 5 minutes")},
				ExecutionID: "e1", Metadata: map[string]string{MetaOutput: OutputEvent}},
		},
		{
			name:  "the generated id skips a taken one",
			state: withLog(runningState(), msg("evt-2", user, text("x")), msg("evt-2-2", user, text("y"))),
			in:    Event{Text: "ping"},
			want: agentstate.Message{ID: "evt-3", Role: user, Kind: agentstate.KindEvent, Parts: []agentstate.Part{text("ping")},
				ExecutionID: "e1", Metadata: map[string]string{MetaOutput: OutputEvent}},
		},
		{
			name:  "a taken generated id is bumped",
			state: withLog(runningState(), msg("evt-2", user, text("x"))),
			in:    Event{Text: "ping"},
			want: agentstate.Message{ID: "evt-2-2", Role: user, Kind: agentstate.KindEvent, Parts: []agentstate.Part{text("ping")},
				ExecutionID: "e1", Metadata: map[string]string{MetaOutput: OutputEvent}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := len(tt.state.Context.Messages)
			res := mustRoute(t, tt.state, &tt.in)
			if diff := cmp.Diff([]agentstate.Message{tt.want}, appended(res, n)); diff != "" {
				t.Errorf("appended (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.state.Execution, res.State.Execution); diff != "" {
				t.Errorf("an event changed the execution (-want +got):\n%s", diff)
			}
			if res.ExecutionEnded {
				t.Error("an event ended the execution")
			}
		})
	}
}

func TestRouteRejects(t *testing.T) {
	v := func(field, desc string) agentstate.FieldViolation {
		return agentstate.FieldViolation{Field: field, Description: desc}
	}
	tests := []struct {
		name  string
		state *agentstate.State
		in    Input
		want  []agentstate.FieldViolation
	}{
		{
			name:  "no input",
			state: runningState(),
			in:    nil,
			want:  []agentstate.FieldViolation{v("input", "exactly one of user_turn, step or event is required")},
		},
		{
			name:  "nil step pointer",
			state: runningState(),
			in:    (*Step)(nil),
			want:  []agentstate.FieldViolation{v("input", "exactly one of user_turn, step or event is required")},
		},
		{
			name:  "user turn reusing a log id",
			state: runningState(),
			in:    UserTurn{Messages: []agentstate.Message{msg("u1", user, text("again"))}},
			want:  []agentstate.FieldViolation{v("user_turn.messages[0].id", `id "u1" is already used by the log (message 0)`)},
		},
		{
			name:  "user turn with an assistant message and no user message",
			state: runningState(),
			in:    UserTurn{Messages: []agentstate.Message{msg("a", assistant, text("hi"))}},
			want: []agentstate.FieldViolation{
				v("user_turn.messages[0].role", "a user turn holds ROLE_USER messages (and ROLE_SYSTEM ones, kept as events), not ROLE_ASSISTANT: send assistant output and tool results in a step"),
				v("user_turn.messages", "at least one regular ROLE_USER message is required"),
			},
		},
		{
			name:  "user turn with only a system prompt",
			state: &agentstate.State{},
			in:    UserTurn{Messages: []agentstate.Message{msg("", system, text("be nice"))}},
			want:  []agentstate.FieldViolation{v("user_turn.messages", "at least one regular ROLE_USER message is required")},
		},
		{
			name:  "user turn reusing an execution id",
			state: withStatus(runningState(), agentstate.ExecutionCompleted),
			in:    UserTurn{ExecutionID: "e1", Messages: []agentstate.Message{msg("", user, text("again"))}},
			want:  []agentstate.FieldViolation{v("user_turn.execution_id", `execution "e1" already exists in this state: a user turn starts a new execution`)},
		},
		{
			name:  "user turn with duplicate ids and a tool result",
			state: &agentstate.State{},
			in: UserTurn{Messages: []agentstate.Message{
				msg("x", user, text("a")),
				msg("x", user, resultPart("c1", "grep", "", false)),
			}},
			want: []agentstate.FieldViolation{
				v("user_turn.messages[1].id", `id "x" is already used by user_turn.messages[0]`),
				v("user_turn.messages[1].parts[0].tool_result", "only ROLE_TOOL messages carry tool results, not ROLE_USER"),
			},
		},
		{
			name:  "user turn with a summary",
			state: &agentstate.State{},
			in:    UserTurn{Messages: []agentstate.Message{{ID: "s", Role: user, Kind: agentstate.KindSummary, Parts: []agentstate.Part{text("so far")}}, msg("", user, text("q"))}},
			want:  []agentstate.FieldViolation{v("user_turn.messages[0].kind", "Route appends regular messages and events, not MESSAGE_KIND_SUMMARY: summaries and masks come from Compact")},
		},
		{
			name:  "step for a finished execution",
			state: withStatus(runningState(), agentstate.ExecutionCompleted),
			in:    Step{FinishReason: FinishStop, Messages: []agentstate.Message{msg("", assistant, text("late"))}},
			want:  []agentstate.FieldViolation{v("step", `execution "e1" has finished (completed): send a user_turn to start a new one`)},
		},
		{
			name:  "step for a failed execution",
			state: withStatus(runningState(), agentstate.ExecutionFailed),
			in:    Step{FinishReason: FinishStop, Messages: []agentstate.Message{msg("", assistant, text("late"))}},
			want:  []agentstate.FieldViolation{v("step", `execution "e1" has finished (failed): send a user_turn to start a new one`)},
		},
		{
			name:  "step without any execution",
			state: &agentstate.State{},
			in:    Step{FinishReason: FinishStop, Messages: []agentstate.Message{msg("", assistant, text("hi"))}},
			want:  []agentstate.FieldViolation{v("step", "no execution is running: send a user_turn to start one")},
		},
		{
			name:  "step result for an unknown call",
			state: runningState(),
			in: Step{FinishReason: FinishToolCalls, Messages: []agentstate.Message{
				msg("", assistant, callPart("c1", "grep")),
				msg("", tool, resultPart("c1", "grep", "3 matches", false)),
				msg("", tool, resultPart("c9", "grep", "?", false)),
			}},
			want: []agentstate.FieldViolation{v("step.messages[2].parts[0].tool_result.tool_call_id", `no call with id "c9" was made in execution "e1"`)},
		},
		{
			name:  "step result before its call",
			state: runningState(),
			in: Step{FinishReason: FinishToolCalls, Messages: []agentstate.Message{
				msg("", tool, resultPart("c1", "grep", "3 matches", false)),
				msg("", assistant, callPart("c1", "grep")),
			}},
			want: []agentstate.FieldViolation{v("step.messages[0].parts[0].tool_result.tool_call_id", `no call with id "c1" was made in execution "e1"`)},
		},
		{
			name: "step result for a call that already has one",
			state: withLog(runningState(),
				tagged(msg("a1", assistant, callPart("c1", "grep")), "e1", OutputAssistant, "0"),
				tagged(msg("t1", tool, resultPart("c1", "grep", "x", false)), "e1", OutputToolResult, "0")),
			in:   Step{FinishReason: FinishToolCalls, Messages: []agentstate.Message{msg("", tool, resultPart("c1", "grep", "again", false))}},
			want: []agentstate.FieldViolation{v("step.messages[0].parts[0].tool_result.tool_call_id", `call "c1" already has a result in message "t1"`)},
		},
		{
			name: "step result for a call of another execution",
			state: withLog(runningState(),
				tagged(msg("a0", assistant, callPart("c0", "grep")), "e0", OutputAssistant, "0")),
			in:   Step{FinishReason: FinishToolCalls, Messages: []agentstate.Message{msg("", tool, resultPart("c0", "grep", "late", false))}},
			want: []agentstate.FieldViolation{v("step.messages[0].parts[0].tool_result.tool_call_id", `call "c0" belongs to execution "e0", not to the running execution "e1"`)},
		},
		{
			name:  "step with a duplicate message id and a duplicate call id",
			state: withLog(runningState(), tagged(msg("a1", assistant, callPart("c1", "grep")), "e1", OutputAssistant, "0")),
			in: Step{FinishReason: FinishToolCalls, Messages: []agentstate.Message{
				msg("a2", assistant, callPart("c1", "grep"), callPart("", "")),
				msg("a2", assistant, text("dup")),
			}},
			want: []agentstate.FieldViolation{
				v("step.messages[1].id", `id "a2" is already used by step.messages[0]`),
				v("step.messages[0].parts[0].tool_call.id", `call id "c1" is already used by message "a1"`),
				v("step.messages[0].parts[1].tool_call.name", "required: the tool's name"),
				v("step.messages[0].parts[1].tool_call.id", "required: results name the call by this id"),
			},
		},
		{
			name:  "step with a user message, an empty message and a bad part",
			state: runningState(),
			in: Step{FinishReason: FinishStop, Messages: []agentstate.Message{
				msg("", user, text("sneaky")),
				msg("", assistant),
				msg("", tool, text("not a result")),
				msg("", assistant, agentstate.Part{}),
			}},
			want: []agentstate.FieldViolation{
				v("step.messages[0].role", "a step holds ROLE_ASSISTANT and ROLE_TOOL messages (and ROLE_SYSTEM ones, kept as events), not ROLE_USER: send user input as a user_turn or an event"),
				v("step.messages[1].parts", "at least one part is required"),
				v("step.messages[2].parts[0]", "a ROLE_TOOL message holds only tool_result parts, not text"),
				v("step.messages[3].parts[0]", "exactly one of text, tool_call, tool_result, image or reasoning is required"),
			},
		},
		{
			name:  "step with an error but a stop, and usage without an assistant message",
			state: runningState(),
			in: Step{FinishReason: FinishStop, Error: "boom", Usage: &agentstate.Usage{InputTokens: 1},
				Messages: []agentstate.Message{{Role: system, Kind: agentstate.KindEvent, Parts: []agentstate.Part{text("note")}}}},
			want: []agentstate.FieldViolation{
				v("step.error", "an error is only allowed with FINISH_REASON_ERROR, not FINISH_REASON_STOP"),
				v("step.usage", "usage is stored on the step's assistant message, and the step has none"),
			},
		},
		{
			name:  "empty step that did not fail, with an unknown finish reason",
			state: runningState(),
			in:    Step{FinishReason: 9},
			want: []agentstate.FieldViolation{
				v("step.finish_reason", "unknown finish reason 9"),
				v("step.messages", "at least one message is required unless the step failed (FINISH_REASON_ERROR)"),
			},
		},
		{
			name:  "assistant event",
			state: runningState(),
			in:    Step{FinishReason: FinishStop, Messages: []agentstate.Message{{Role: assistant, Kind: agentstate.KindEvent, Parts: []agentstate.Part{text("x")}}}},
			want:  []agentstate.FieldViolation{v("step.messages[0].kind", "only ROLE_USER and ROLE_SYSTEM messages can be events, not ROLE_ASSISTANT")},
		},
		{
			name:  "event without text and with a tool role",
			state: runningState(),
			in:    Event{Text: "  ", Role: tool},
			want: []agentstate.FieldViolation{
				v("event.text", "required: the event's text"),
				v("event.role", "an event is stored as ROLE_USER or ROLE_SYSTEM, not ROLE_TOOL"),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := deepCopy(tt.state)
			res, err := Route(tt.state, tt.in, Options{})
			if res != nil {
				t.Errorf("Route returned a result with an error: %+v", res)
			}
			var got *agentstate.InvalidArgumentError
			if !errors.As(err, &got) {
				t.Fatalf("Route error = %v, want *agentstate.InvalidArgumentError", err)
			}
			want := &agentstate.InvalidArgumentError{Reason: ReasonInvalidRouteInput, Violations: tt.want}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, tt.state); diff != "" {
				t.Errorf("a rejected Route modified the state (-before +after):\n%s", diff)
			}
		})
	}
}

func TestRouteDoesNotModifyInput(t *testing.T) {
	in := Step{FinishReason: FinishToolCalls, Messages: []agentstate.Message{
		msg("", assistant, callPart("c1", "grep")),
		{Role: tool, Parts: []agentstate.Part{resultPart("c1", "", "x", false)}, Metadata: map[string]string{"k": "v"}},
	}}
	before := Step{FinishReason: in.FinishReason, Messages: deepCopy(&agentstate.State{Context: agentstate.Context{Messages: in.Messages}}).Context.Messages}
	mustRoute(t, runningState(), in)
	if diff := cmp.Diff(before, in); diff != "" {
		t.Errorf("Route modified its input (-before +after):\n%s", diff)
	}
}

func TestRouteStampsCreateTime(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	given := now.Add(-time.Hour)
	res, err := Route(runningState(), Step{FinishReason: FinishError, Error: "x", Messages: []agentstate.Message{
		msg("a1", assistant, text("a")),
		{ID: "a2", Role: assistant, Parts: []agentstate.Part{text("b")}, CreateTime: &given},
	}}, Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	var got []time.Time
	for _, m := range appended(res, 1) {
		got = append(got, *m.CreateTime)
	}
	if diff := cmp.Diff([]time.Time{now, given, now}, got); diff != "" {
		t.Errorf("create times (-want +got):\n%s", diff)
	}
}
