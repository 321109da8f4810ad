package masksecrets

import (
	"github.com/contextcompiler/ctxc/policies"
)

// Type is the policy's type: the name a profile's step gives it.
const Type = "mask_secrets"

// NewFactory returns the factory of the mask_secrets policy, for
// server.Config.Policies. Its policies run in the normalize stage, after
// the built-in normalize policy (see the README for why there).
func NewFactory() policies.Factory {
	return policies.TypedFactory[Config, *Config]{
		Name:     Type,
		In:       policies.StageNormalize,
		Defaults: DefaultConfig,
		New:      newMasker,
	}
}
