package views

import (
	"context"
	"fmt"

	"github.com/contextcompiler/ctxc/policies"
)

// TypeProject is the project stage's policy type.
const TypeProject = "project"

type factory struct{}

// NewFactory returns the factory of the "project" policy.
func NewFactory() policies.Factory { return factory{} }

func (factory) Type() string                         { return TypeProject }
func (factory) Stage() policies.Stage                { return policies.StageProject }
func (factory) CreateDefaultConfig() policies.Config { return &Config{View: ViewReasoning} }

func (factory) Create(cfg policies.Config) (policies.Policy, error) {
	c, ok := cfg.(*Config)
	if !ok {
		return nil, fmt.Errorf("%s: config is %T, want *views.Config", TypeProject, cfg)
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", TypeProject, err)
	}
	return projector{view: c.view()}, nil
}

type projector struct{ view policies.View }

func (p projector) Apply(_ context.Context, w *policies.Work) error {
	view := p.view
	if w.Options.View != policies.ViewUnspecified {
		view = w.Options.View
	}
	Project(w, view)
	return nil
}
