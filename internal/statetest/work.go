package statetest

import (
	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// DefaultContextWindow is the window Work gives a model without an override.
const DefaultContextWindow = 128000

// DefaultRecentTurns is the recency window Work sets.
const DefaultRecentTurns = 2

// Work builds a Work the way the runner does before the first stage: one entry
// per log message, Counter = FakeCounter, every entry and the preamble counted,
// and a Model with a window (the state's override, else DefaultContextWindow).
// HardLimit is the window minus the max output tokens. set changes the Input
// before the Work is built; tests change the Work's own fields freely
// afterwards, and what stages only read through WorkControl's Control.
func Work(st *agentstate.State, set ...Set) *policies.Work {
	w, _ := WorkControl(st, set...)
	return w
}

// WorkControl is Work with the runner's Control, for tests that set what
// stages only read (the hard limit, the compaction pass).
func WorkControl(st *agentstate.State, set ...Set) (*policies.Work, *policies.Control) {
	counter := FakeCounter{}
	window := DefaultContextWindow
	if st.Model.ContextWindowTokens != nil {
		window = int(*st.Model.ContextWindowTokens)
	}
	maxOut := 4096
	if st.Model.MaxOutputTokens != nil {
		maxOut = int(*st.Model.MaxOutputTokens)
	}
	in := policies.Input{
		State:       st,
		Model:       agentstate.ModelInfo{Name: st.Model.Name, Provider: st.Model.Provider, ContextWindow: window, MaxOutputTokens: maxOut},
		Counter:     counter,
		RecentTurns: DefaultRecentTurns,
	}
	for _, f := range set {
		f(&in)
	}
	w, ctl := policies.NewWork(in)
	ctl.SetHardLimit(window - maxOut)
	w.SystemTokens, w.ToolTokens = counter.CountPreamble(&st.Context)
	Recount(w.Entries, w.Counter())
	return w, ctl
}

// A Set changes the Input of a test's Work before it is built.
type Set func(*policies.Input)

// RecentTurns sets the recency window.
func RecentTurns(n int) Set { return func(in *policies.Input) { in.RecentTurns = n } }

// Attachments sets the request's attached documents.
func Attachments(a ...agentstate.Attachment) Set {
	return func(in *policies.Input) { in.Attachments = a }
}

// Render sets the provider body the request asks for.
func Render(f agentstate.RenderFormat) Set { return func(in *policies.Input) { in.Options.Render = f } }

// Recount counts with counter every entry that is not Counted, as the
// runner does after a stage.
func Recount(entries []agentstate.Entry, counter agentstate.TokenCounter) {
	for i := range entries {
		e := &entries[i]
		if !e.Counted {
			e.Tokens, e.Provenance = counter.CountMessage(&e.Message)
			e.Counted = true
		}
	}
}
