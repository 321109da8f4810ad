package budget

import (
	"context"

	"github.com/contextcompiler/ctxc/internal/policies"
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

// Apply sets w.Budget.
func (p tokenBudget) Apply(_ context.Context, w *policies.Work) error {
	b := Compute(w, &p.cfg)
	w.Budget = &b
	return nil
}
