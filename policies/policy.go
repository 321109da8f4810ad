package policies

import (
	"context"
	"fmt"
	"sort"
)

// Stage is a pipeline stage kind. Stages run in the order of these constants.
type Stage uint8

// The stages, in their fixed order (docs/ARCHITECTURE.md). Plan sits between
// budget and decide: it needs the budget, and the decision should see what
// planning left.
const (
	StageNormalize Stage = iota + 1
	StageProject
	StageIsolate
	StageEstimate
	StageBudget
	StagePlan
	StageDecide
	StageCompact
	StageRender
)

var stageNames = [...]string{"", "normalize", "project", "isolate", "estimate", "budget", "plan", "decide", "compact", "render"}

func (s Stage) String() string {
	if int(s) < len(stageNames) && s > 0 {
		return stageNames[s]
	}
	return fmt.Sprintf("stage(%d)", uint8(s))
}

// Policy is one step of a pipeline. It changes the Work it is given. Policies
// hold no per-request state, so one instance serves concurrent requests.
type Policy interface {
	Apply(ctx context.Context, w *Work) error
}

// Config is a policy's settings, decoded from a profile. Validate reports every
// problem at once (errors.Join).
type Config interface {
	Validate() error
}

// Factory builds a policy type. Type is the lower_snake_case id used in profiles.
type Factory interface {
	Type() string
	Stage() Stage
	// CreateDefaultConfig returns a pointer to the config with its defaults set;
	// profiles decode their settings over it.
	CreateDefaultConfig() Config
	// Create builds a policy from a validated config.
	Create(cfg Config) (Policy, error)
}

// Registry holds the factories a server knows, by type. It is a value built once
// at start; there is no package-level registry.
type Registry struct {
	factories map[string]Factory
}

// NewRegistry builds a registry, rejecting duplicate or empty types.
func NewRegistry(factories ...Factory) (*Registry, error) {
	r := &Registry{factories: make(map[string]Factory, len(factories))}
	for _, f := range factories {
		t := f.Type()
		if t == "" {
			return nil, fmt.Errorf("factory for stage %s has an empty type", f.Stage())
		}
		if _, dup := r.factories[t]; dup {
			return nil, fmt.Errorf("policy type %q registered twice", t)
		}
		r.factories[t] = f
	}
	return r, nil
}

// Factory returns the factory of a type.
func (r *Registry) Factory(typ string) (Factory, bool) {
	f, ok := r.factories[typ]
	return f, ok
}

// Types lists the registered types, sorted.
func (r *Registry) Types() []string {
	out := make([]string, 0, len(r.factories))
	for t := range r.factories {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}
