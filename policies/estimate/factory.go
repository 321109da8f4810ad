package estimate

import (
	"fmt"

	"github.com/contextcompiler/ctxc/policies"
)

// TypeEstimate is the estimate stage's policy type.
const TypeEstimate = "estimate"

type factory struct{}

// NewFactory returns the factory of the "estimate" policy. It needs nothing
// from the token service: the runner installs Work.Counter (the model's
// counter, from tokens.Service.Resolve) before the first stage.
func NewFactory() policies.Factory { return factory{} }

func (factory) Type() string                         { return TypeEstimate }
func (factory) Stage() policies.Stage                { return policies.StageEstimate }
func (factory) CreateDefaultConfig() policies.Config { return &Config{} }

func (factory) Create(cfg policies.Config) (policies.Policy, error) {
	c, ok := cfg.(*Config)
	if !ok {
		return nil, fmt.Errorf("%s: config is %T, want *estimate.Config", TypeEstimate, cfg)
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", TypeEstimate, err)
	}
	return estimate{}, nil
}
