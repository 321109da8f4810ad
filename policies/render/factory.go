package render

import (
	"context"

	"github.com/contextcompiler/ctxc/internal/providers"
	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// TypeRender is the render stage's policy type.
const TypeRender = "render"

// NewFactory returns the factory of the render stage's "render" policy.
func NewFactory() policies.Factory {
	return policies.TypedFactory[Config, *Config]{Name: TypeRender, In: policies.StageRender,
		Defaults: func() *Config { return &Config{} },
		New:      func(*Config) (policies.Policy, error) { return renderer{}, nil }}
}

// renderer sets w.Rendered to the provider body that w.Options.Render asks
// for, and warns about what the provider could not take.
type renderer struct{}

func (renderer) Apply(_ context.Context, w *policies.Work) error {
	if w.Options().Render == agentstate.RenderNone {
		return nil
	}
	opts := w.Options()
	body, omitted, err := providers.Render(opts.Render, providers.Input{State: w.State(), Model: w.Model(), Budget: w.Budget,
		View: w.Entries, MaxReplyBytes: opts.MaxReplyBytes})
	if err != nil {
		return err
	}
	w.Rendered = string(body)
	for _, n := range omitted {
		w.Warn(n)
	}
	return nil
}
