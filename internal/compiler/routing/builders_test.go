package routing

import (
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contextcompiler/ctxc/policies/agentstate"
)

func text(s string) agentstate.Part { return agentstate.TextPart(s) }

func callPart(id, name string) agentstate.Part {
	return agentstate.Part{Kind: agentstate.PartToolCall, ToolCall: agentstate.ToolCall{ID: id, Name: name, ArgumentsJSON: "{}"}}
}

func resultPart(callID, name, content string, isError bool) agentstate.Part {
	return agentstate.Part{Kind: agentstate.PartToolResult, ToolResult: agentstate.ToolResult{ToolCallID: callID, Name: name, Content: content, IsError: isError}}
}

func msg(id string, role agentstate.Role, parts ...agentstate.Part) agentstate.Message {
	return agentstate.Message{ID: id, Role: role, Parts: parts}
}

// tagged is a message as Route stores it.
func tagged(m agentstate.Message, exec, output, step string) agentstate.Message {
	m.ExecutionID = exec
	m.Metadata = map[string]string{MetaOutput: output}
	if step != "" {
		m.Metadata[MetaStepIndex] = step
	}
	if output == OutputEvent {
		m.Kind = agentstate.KindEvent
	}
	return m
}

// runningState has one user turn of execution e1 at step 0, still running.
func runningState() *agentstate.State {
	return &agentstate.State{
		SchemaVersion: 1,
		AgentID:       "agent",
		Model:         agentstate.ModelSpec{Name: "gpt-4o", Provider: "openai"},
		Context: agentstate.Context{
			SystemPrompt: "You are a careful agent.",
			Messages:     []agentstate.Message{tagged(msg("u1", agentstate.RoleUser, text("fix the build")), "e1", OutputUser, "")},
		},
		Execution: agentstate.Execution{ID: "e1", Status: agentstate.ExecutionRunning},
	}
}

func withStatus(st *agentstate.State, s agentstate.ExecutionStatus) *agentstate.State {
	st.Execution.Status = s
	return st
}

func withLog(st *agentstate.State, msgs ...agentstate.Message) *agentstate.State {
	st.Context.Messages = append(st.Context.Messages, msgs...)
	return st
}

// deepCopy copies everything Route could write by mistake, so tests can
// prove the input state is untouched.
func deepCopy(st *agentstate.State) *agentstate.State {
	if st == nil {
		return nil
	}
	c := *st
	c.Context.Metadata = maps.Clone(st.Context.Metadata)
	c.Context.Tools = slices.Clone(st.Context.Tools)
	c.Context.Messages = make([]agentstate.Message, len(st.Context.Messages))
	for i, m := range st.Context.Messages {
		m.Parts = slices.Clone(m.Parts)
		m.Metadata = maps.Clone(m.Metadata)
		if m.Usage != nil {
			u := *m.Usage
			m.Usage = &u
		}
		c.Context.Messages[i] = m
	}
	if st.Context.Messages == nil {
		c.Context.Messages = nil
	}
	return &c
}

// mustRoute routes and fails the test on error.
func mustRoute(t *testing.T, st *agentstate.State, in Input) *Result {
	t.Helper()
	before := deepCopy(st)
	res, err := Route(st, in, Options{})
	if err != nil {
		t.Fatalf("Route: %v", err)
	}
	if diff := cmp.Diff(before, st); diff != "" {
		t.Fatalf("Route modified its input state (-before +after):\n%s", diff)
	}
	return res
}

// appended returns the messages a result added to a log of n messages.
func appended(res *Result, n int) []agentstate.Message {
	return res.State.Context.Messages[n:]
}
