package tokens

import (
	"context"
	"errors"

	"github.com/contextcompiler/ctxc/policies"
)

type estimate struct{}

// Apply counts every entry not yet counted and the preamble.
func (estimate) Apply(_ context.Context, w *policies.Work) error {
	return Estimate(w)
}

// Estimate counts, with w.Counter, every entry whose Counted is false (setting
// Tokens, Provenance and Counted) and the preamble (w.SystemTokens,
// w.ToolTokens).
func Estimate(w *policies.Work) error {
	if w.Counter == nil {
		return errors.New("estimate: no token counter resolved for the model")
	}
	for i := range w.Entries {
		e := &w.Entries[i]
		if e.Counted {
			continue
		}
		e.Tokens, e.Provenance = w.Counter.CountMessage(&e.Message)
		e.Counted = true
	}
	if w.State != nil {
		w.SystemTokens, w.ToolTokens = w.Counter.CountPreamble(&w.State.Context)
	} else {
		w.SystemTokens, w.ToolTokens = 0, 0
	}
	return nil
}
