package routing

import (
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contextcompiler/ctxc/policies"
)

func text(s string) policies.Part { return policies.TextPart(s) }

func callPart(id, name string) policies.Part {
	return policies.Part{Kind: policies.PartToolCall, ToolCall: policies.ToolCall{ID: id, Name: name, ArgumentsJSON: "{}"}}
}

func resultPart(callID, name, content string, isError bool) policies.Part {
	return policies.Part{Kind: policies.PartToolResult, ToolResult: policies.ToolResult{ToolCallID: callID, Name: name, Content: content, IsError: isError}}
}

func msg(id string, role policies.Role, parts ...policies.Part) policies.Message {
	return policies.Message{ID: id, Role: role, Parts: parts}
}

// tagged is a message as Route stores it.
func tagged(m policies.Message, exec, output, step string) policies.Message {
	m.ExecutionID = exec
	m.Metadata = map[string]string{MetaOutput: output}
	if step != "" {
		m.Metadata[MetaStepIndex] = step
	}
	if output == OutputEvent {
		m.Kind = policies.KindEvent
	}
	return m
}

// runningState has one user turn of execution e1 at step 0, still running.
func runningState() *policies.State {
	return &policies.State{
		SchemaVersion: 1,
		AgentID:       "agent",
		Model:         policies.ModelSpec{Name: "gpt-4o", Provider: "openai"},
		Context: policies.Context{
			SystemPrompt: "You are a careful agent.",
			Messages:     []policies.Message{tagged(msg("u1", policies.RoleUser, text("fix the build")), "e1", OutputUser, "")},
		},
		Execution: policies.Execution{ID: "e1", Status: policies.ExecutionRunning},
	}
}

func withStatus(st *policies.State, s policies.ExecutionStatus) *policies.State {
	st.Execution.Status = s
	return st
}

func withLog(st *policies.State, msgs ...policies.Message) *policies.State {
	st.Context.Messages = append(st.Context.Messages, msgs...)
	return st
}

// deepCopy copies everything Route could write by mistake, so tests can
// prove the input state is untouched.
func deepCopy(st *policies.State) *policies.State {
	if st == nil {
		return nil
	}
	c := *st
	c.Context.Metadata = maps.Clone(st.Context.Metadata)
	c.Context.Tools = slices.Clone(st.Context.Tools)
	c.Context.Messages = make([]policies.Message, len(st.Context.Messages))
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
func mustRoute(t *testing.T, st *policies.State, in Input) *Result {
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
func appended(res *Result, n int) []policies.Message {
	return res.State.Context.Messages[n:]
}
