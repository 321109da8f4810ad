package render

import (
	"context"
	"fmt"

	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/providers"
)

// TypeRender is the render stage's policy type.
const TypeRender = "render"

type factory struct{}

// NewFactory returns the factory of the render stage's "render" policy.
func NewFactory() policies.Factory { return factory{} }

func (factory) Type() string                         { return TypeRender }
func (factory) Stage() policies.Stage                { return policies.StageRender }
func (factory) CreateDefaultConfig() policies.Config { return &Config{} }

func (factory) Create(cfg policies.Config) (policies.Policy, error) {
	c, ok := cfg.(*Config)
	if !ok {
		return nil, fmt.Errorf("%s: config is %T, want *render.Config", TypeRender, cfg)
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", TypeRender, err)
	}
	return renderer{}, nil
}

// renderer sets w.Rendered to the provider body that w.Options.Render asks
// for, and warns about what the provider could not take.
type renderer struct{}

func (renderer) Apply(_ context.Context, w *policies.Work) error {
	if w.Options.Render == policies.RenderNone {
		return nil
	}
	body, omitted, err := providers.RenderWork(w)
	if err != nil {
		return err
	}
	w.Rendered = string(body)
	for _, n := range omitted {
		w.Warn(n)
	}
	return nil
}
