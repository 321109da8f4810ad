package estimate

import (
	"context"
	"errors"
	"runtime"
	"slices"

	"github.com/contextcompiler/ctxc/internal/tokens"
	"github.com/contextcompiler/ctxc/policies"
)

type estimate struct{}

// Apply counts every entry not yet counted and the preamble. Counts of a
// model the registry lacks rest on its provider's defaults, and the report
// says so.
func (estimate) Apply(_ context.Context, w *policies.Work) error {
	if w.Model().Assumption != "" && !slices.Contains(w.Report().Warnings, w.Model().Assumption) {
		w.Warn(w.Model().Assumption)
	}
	// With w.Counter: every entry whose Counted is false (setting Tokens,
	// Provenance and Counted), and the preamble (w.SystemTokens, w.ToolTokens).
	if w.Counter() == nil {
		return errors.New("estimate: no token counter resolved for the model")
	}
	tokens.CountEntries(w.Counter(), w.Entries, runtime.GOMAXPROCS(0))
	if w.State() != nil {
		w.SystemTokens, w.ToolTokens = w.Counter().CountPreamble(&w.State().Context)
	} else {
		w.SystemTokens, w.ToolTokens = 0, 0
	}
	return nil
}
