package statetest

import (
	"github.com/contextcompiler/ctxc/internal/agentstate"
	"github.com/contextcompiler/ctxc/internal/policies"
)

// DefaultContextWindow is the window Work gives a model without an override.
const DefaultContextWindow = 128000

// DefaultRecentTurns is the recency window Work sets.
const DefaultRecentTurns = 2

// Work builds a Work the way the runner does before the first stage: one entry
// per log message, Counter = FakeCounter, every entry and the preamble counted,
// and a Model with a window (the state's override, else DefaultContextWindow).
// HardLimit is the window minus the max output tokens. Tests change fields
// freely afterwards.
func Work(st *agentstate.State) *policies.Work {
	counter := FakeCounter{}
	window := DefaultContextWindow
	if st.Model.ContextWindowTokens != nil {
		window = int(*st.Model.ContextWindowTokens)
	}
	maxOut := 4096
	if st.Model.MaxOutputTokens != nil {
		maxOut = int(*st.Model.MaxOutputTokens)
	}
	w := &policies.Work{
		State:   st,
		Model:   agentstate.ModelInfo{Name: st.Model.Name, Provider: st.Model.Provider, ContextWindow: window, MaxOutputTokens: maxOut},
		Counter: counter,
		Entries: agentstate.EntriesFromLog(st.Context.Messages),

		HardLimit:   window - maxOut,
		RecentTurns: DefaultRecentTurns,
	}
	w.SystemTokens, w.ToolTokens = counter.CountPreamble(&st.Context)
	Recount(w)
	return w
}

// Recount counts every entry that is not Counted, as the runner does after a stage.
func Recount(w *policies.Work) {
	for i := range w.Entries {
		e := &w.Entries[i]
		if !e.Counted {
			e.Tokens, e.Provenance = w.Counter.CountMessage(&e.Message)
			e.Counted = true
		}
	}
}
