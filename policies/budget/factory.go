package budget

import (
	"context"
	"fmt"

	"github.com/contextcompiler/ctxc/policies"
)

// TypeTokenBudget is the budget stage's policy type.
const TypeTokenBudget = "token_budget"

type factory struct{}

// NewFactory returns the factory of the "token_budget" policy.
func NewFactory() policies.Factory { return factory{} }

func (factory) Type() string          { return TypeTokenBudget }
func (factory) Stage() policies.Stage { return policies.StageBudget }
func (factory) CreateDefaultConfig() policies.Config {
	c := DefaultConfig()
	return &c
}

func (factory) Create(cfg policies.Config) (policies.Policy, error) {
	c, ok := cfg.(*Config)
	if !ok {
		return nil, fmt.Errorf("%s: config is %T, want *budget.Config", TypeTokenBudget, cfg)
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", TypeTokenBudget, err)
	}
	return tokenBudget{cfg: *c}, nil
}

type tokenBudget struct{ cfg Config }

// Apply sets w.Budget.
func (p tokenBudget) Apply(_ context.Context, w *policies.Work) error {
	b := Compute(w, &p.cfg)
	w.Budget = &b
	return nil
}
