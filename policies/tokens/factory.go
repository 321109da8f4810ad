package tokens

import (
	"fmt"

	"github.com/contextcompiler/ctxc/policies"
)

// TypeEstimate is the estimate stage's policy type.
const TypeEstimate = "estimate"

type estimateFactory struct{}

// NewEstimateFactory returns the factory of the "estimate" policy. It needs
// nothing from the Service: the runner installs Work.Counter (from
// Service.Resolve) before the first stage.
func NewEstimateFactory() policies.Factory { return estimateFactory{} }

func (estimateFactory) Type() string                         { return TypeEstimate }
func (estimateFactory) Stage() policies.Stage                { return policies.StageEstimate }
func (estimateFactory) CreateDefaultConfig() policies.Config { return &Config{} }

func (estimateFactory) Create(cfg policies.Config) (policies.Policy, error) {
	c, ok := cfg.(*Config)
	if !ok {
		return nil, fmt.Errorf("%s: config is %T, want *tokens.Config", TypeEstimate, cfg)
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", TypeEstimate, err)
	}
	return estimate{}, nil
}
