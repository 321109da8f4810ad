package estimate

import (
	"github.com/contextcompiler/ctxc/policies"
)

// TypeEstimate is the estimate stage's policy type.
const TypeEstimate = "estimate"

// NewFactory returns the factory of the "estimate" policy. It needs nothing
// from the token service: the runner installs Work.Counter (the model's
// counter, from tokens.Service.Resolve) before the first stage.
func NewFactory() policies.Factory {
	return policies.TypedFactory[Config, *Config]{Name: TypeEstimate, In: policies.StageEstimate,
		Defaults: func() *Config { return &Config{} },
		New:      func(*Config) (policies.Policy, error) { return estimate{}, nil }}
}
