package budget

import (
	"context"
	"fmt"
	"slices"

	"github.com/contextcompiler/ctxc/policies"
)

// TypeTokenBudget is the budget stage's policy type.
const TypeTokenBudget = "token_budget"

// NewFactory returns the factory of the "token_budget" policy.
func NewFactory() policies.Factory {
	return policies.TypedFactory[Config, *Config]{Name: TypeTokenBudget, In: policies.StageBudget,
		Defaults: func() *Config { c := DefaultConfig(); return &c },
		New:      func(c *Config) (policies.Policy, error) { return tokenBudget{cfg: *c}, nil }}
}

type tokenBudget struct{ cfg Config }

// Apply sets w.Budget, and warns when it reserved less for output than the
// request asked: a clamped value is reported like every other repair.
func (p tokenBudget) Apply(_ context.Context, w *policies.Work) error {
	b := Compute(w, &p.cfg)
	w.Budget = &b
	if r := w.Options().ReservedOutputTokens; r != nil && int64(*r) > int64(b.ReservedOutput) {
		warning := fmt.Sprintf("reserved_output_token_count %d is more than max_reserved_output_ratio %g of the %d-token window: %d tokens reserved for output",
			*r, p.cfg.MaxReservedOutputRatio, b.ContextWindow, b.ReservedOutput)
		// The runner measures again after each compaction: warn once.
		if !slices.Contains(w.Report().Warnings, warning) {
			w.Warn(warning)
		}
	}
	return nil
}
