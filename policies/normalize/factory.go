package normalize

import (
	"context"
	"fmt"

	"github.com/contextcompiler/ctxc/policies"
)

// Policy types.
const (
	// TypeNormalize is the normalize stage's policy.
	TypeNormalize = "normalize"
	// TypeRepair is the same repair run as the compact stage's final pass.
	TypeRepair = "repair"
)

type factory struct {
	typ   string
	stage policies.Stage
}

// NewFactory returns the factory of the normalize stage's "normalize" policy.
func NewFactory() policies.Factory {
	return factory{typ: TypeNormalize, stage: policies.StageNormalize}
}

// NewRepairFactory returns the factory of "repair", the compact stage's final
// pass: the same repairs as normalize, run after the compaction transforms. Its
// policy implements policies.RepairPass.
func NewRepairFactory() policies.Factory {
	return factory{typ: TypeRepair, stage: policies.StageCompact}
}

func (f factory) Type() string                         { return f.typ }
func (f factory) Stage() policies.Stage                { return f.stage }
func (f factory) CreateDefaultConfig() policies.Config { return &Config{} }

func (f factory) Create(cfg policies.Config) (policies.Policy, error) {
	c, ok := cfg.(*Config)
	if !ok {
		return nil, fmt.Errorf("%s: config is %T, want *normalize.Config", f.typ, cfg)
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", f.typ, err)
	}
	p := normalizer{cfg: *c, policy: f.typ}
	if f.stage == policies.StageCompact {
		return repairPass{p}, nil
	}
	return p, nil
}

type normalizer struct {
	cfg    Config
	policy string
}

func (n normalizer) Apply(_ context.Context, w *policies.Work) error {
	runPasses(w, &n.cfg, n.policy, true)
	return nil
}

type repairPass struct{ normalizer }

// RepairPass marks the policy as the compact stage's final pass.
func (repairPass) RepairPass() {}

// Replayable: repairs read only the view.
func (repairPass) Replayable() bool { return true }
