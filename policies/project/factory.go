package project

import (
	"context"

	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// TypeProject is the project stage's policy type.
const TypeProject = "project"

// NewFactory returns the factory of the "project" policy.
func NewFactory() policies.Factory {
	return policies.TypedFactory[Config, *Config]{Name: TypeProject, In: policies.StageProject,
		Defaults: func() *Config { return &Config{View: ViewReasoning} },
		New:      func(c *Config) (policies.Policy, error) { return projector{view: c.view()}, nil }}
}

type projector struct{ view agentstate.View }

func (p projector) Apply(_ context.Context, w *policies.Work) error {
	view := p.view
	if w.Options().View != agentstate.ViewUnspecified {
		view = w.Options().View
	}
	Project(w, view)
	return nil
}
