package estimate

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contextcompiler/ctxc/internal/tokens"
	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

func gpt4oCounter(t *testing.T) agentstate.TokenCounter {
	t.Helper()
	s, err := tokens.NewService(tokens.DefaultServiceConfig())
	if err != nil {
		t.Fatal(err)
	}
	_, c, err := s.Resolve(agentstate.ModelSpec{Name: "gpt-4o"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestEstimatePolicy: the policy counts, with the resolved counter, every
// entry not yet counted and the preamble, and leaves counted entries alone.
func TestEstimatePolicy(t *testing.T) {
	f := NewFactory()
	p, err := f.Create(f.CreateDefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	c := gpt4oCounter(t)
	log := []agentstate.Message{
		{ID: "m1", Role: agentstate.RoleUser, Parts: []agentstate.Part{agentstate.TextPart("hi there")}},
		{ID: "m2", Role: agentstate.RoleAssistant, Parts: []agentstate.Part{agentstate.TextPart("hello, how can I help?")}},
	}
	tools := []agentstate.ToolDefinition{{Name: "search", ParametersJSON: `{"type":"object"}`}}
	state := &agentstate.State{Context: agentstate.Context{Messages: log, SystemPrompt: "Be brief.", Tools: tools}}
	w, _ := policies.NewWork(policies.Input{State: state, Counter: c})
	w.Entries[1].Counted, w.Entries[1].Tokens = true, 7 // already counted: kept
	if err := p.Apply(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	n0, p0 := c.CountMessage(&log[0])
	sys, tl := c.CountPreamble(&state.Context)
	type counts struct {
		Tokens0     int
		Provenance0 agentstate.Provenance
		Counted0    bool
		Tokens1     int
		System      int
		Tools       int
	}
	want := counts{n0, p0, true, 7, sys, tl}
	got := counts{w.Entries[0].Tokens, w.Entries[0].Provenance, w.Entries[0].Counted, w.Entries[1].Tokens, w.SystemTokens, w.ToolTokens}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if n0 == 0 || sys == 0 || tl == 0 || p0 != agentstate.ProvenanceExact {
		t.Errorf("gpt-4o's counter gave %d/%v for a message, %d for the system prompt, %d for tools", n0, p0, sys, tl)
	}
	if w, _ := policies.NewWork(policies.Input{State: state}); p.Apply(t.Context(), w) == nil {
		t.Error("Apply without counter succeeded")
	}
}

func TestCreateRejectsAForeignConfig(t *testing.T) {
	type other struct{ policies.Config }
	if _, err := NewFactory().Create(other{}); err == nil {
		t.Error("Create accepted a config of another policy")
	}
}
