package isolate

import (
	"context"
	"fmt"

	"github.com/contextcompiler/ctxc/internal/diagnose"
	"github.com/contextcompiler/ctxc/policies"
)

// Policy types.
const (
	TypeTransparent        = "transparent"
	TypeBoundary           = "boundary"
	TypeObservationMasking = "observation_masking"
)

type factory struct {
	typ      string
	defaults func() policies.Config
	create   func(cfg policies.Config) (policies.Policy, error)
}

func (f factory) Type() string                         { return f.typ }
func (f factory) Stage() policies.Stage                { return policies.StageIsolate }
func (f factory) CreateDefaultConfig() policies.Config { return f.defaults() }

func (f factory) Create(cfg policies.Config) (policies.Policy, error) {
	if cfg == nil {
		return nil, fmt.Errorf("%s: nil config", f.typ)
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", f.typ, err)
	}
	return f.create(cfg)
}

func wrongConfig(typ string, cfg policies.Config) error {
	return fmt.Errorf("%s: unexpected config type %T", typ, cfg)
}

// NewTransparentFactory returns the factory of "transparent": the full trace, unchanged.
func NewTransparentFactory() policies.Factory {
	return factory{
		typ:      TypeTransparent,
		defaults: func() policies.Config { return &TransparentConfig{} },
		create: func(cfg policies.Config) (policies.Policy, error) {
			if _, ok := cfg.(*TransparentConfig); !ok {
				return nil, wrongConfig(TypeTransparent, cfg)
			}
			return transparent{}, nil
		},
	}
}

// Deps are the shared parts isolation policies read with.
type Deps struct {
	// Outputs remembers what was read of tool outputs, for every policy that
	// reads them; nil gives each policy its own.
	Outputs *diagnose.Cache
}

// NewBoundaryFactory returns the factory of "boundary": see Boundary.
func NewBoundaryFactory(deps Deps) policies.Factory {
	return factory{
		typ:      TypeBoundary,
		defaults: func() policies.Config { return &BoundaryConfig{MaxRecordCalls: 50} },
		create: func(cfg policies.Config) (policies.Policy, error) {
			c, ok := cfg.(*BoundaryConfig)
			if !ok {
				return nil, wrongConfig(TypeBoundary, cfg)
			}
			return boundary{cfg: *c, outputs: diagnose.CacheOr(deps.Outputs)}, nil
		},
	}
}

// NewObservationMaskingFactory returns the factory of "observation_masking":
// see MaskObservations.
func NewObservationMaskingFactory(deps Deps) policies.Factory {
	return factory{
		typ:      TypeObservationMasking,
		defaults: func() policies.Config { return DefaultMaskingConfig() },
		create: func(cfg policies.Config) (policies.Policy, error) {
			c, ok := cfg.(*MaskingConfig)
			if !ok {
				return nil, wrongConfig(TypeObservationMasking, cfg)
			}
			cc := *c
			cc.ExemptTools = append([]string(nil), c.ExemptTools...)
			return masking{cfg: cc, outputs: diagnose.CacheOr(deps.Outputs)}, nil
		},
	}
}

type transparent struct{}

func (transparent) Apply(context.Context, *policies.Work) error { return nil }

// boundary and masking remember what they read of tool outputs across the
// requests they serve.
type boundary struct {
	cfg     BoundaryConfig
	outputs *diagnose.Cache
}

func (b boundary) Apply(_ context.Context, w *policies.Work) error {
	Boundary(w, &b.cfg, b.outputs)
	return nil
}

type masking struct {
	cfg     MaskingConfig
	outputs *diagnose.Cache
}

func (m masking) Apply(_ context.Context, w *policies.Work) error {
	MaskObservations(w, &m.cfg, MaskRun{Outputs: m.outputs})
	return nil
}
