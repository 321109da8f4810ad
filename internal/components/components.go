// Package components is the one explicit list of every policy this build can
// put in a profile (docs/ARCHITECTURE.md, "Adding a policy"). Package embed
// builds the service's registry from it; nothing registers itself.
package components

import (
	"github.com/contextcompiler/ctxc/internal/llm"
	"github.com/contextcompiler/ctxc/internal/policies"
	"github.com/contextcompiler/ctxc/internal/policies/accounting"
	"github.com/contextcompiler/ctxc/internal/policies/budget"
	"github.com/contextcompiler/ctxc/internal/policies/compaction"
	"github.com/contextcompiler/ctxc/internal/policies/decide"
	"github.com/contextcompiler/ctxc/internal/policies/diagnose"
	"github.com/contextcompiler/ctxc/internal/policies/estimate"
	"github.com/contextcompiler/ctxc/internal/policies/isolation"
	"github.com/contextcompiler/ctxc/internal/policies/llmsummary"
	"github.com/contextcompiler/ctxc/internal/policies/normalize"
	"github.com/contextcompiler/ctxc/internal/policies/planning"
	"github.com/contextcompiler/ctxc/internal/policies/render"
	"github.com/contextcompiler/ctxc/internal/policies/views"
	"github.com/contextcompiler/ctxc/internal/summarycache"
)

// Deps are the shared parts some policies are built with; the zero value
// builds every policy in its deterministic form.
type Deps struct {
	Planner, Summarizer llm.Completer // nil when not configured
	Cache               *summarycache.Cache
	Prices              accounting.PriceLookup
	// Outputs remembers what was read of tool outputs across the policies
	// that read them (nil: each its own).
	Outputs *diagnose.Cache
}

// Registry is the registry of every policy this build can put in a profile.
func Registry(deps Deps) (*policies.Registry, error) {
	return policies.NewRegistry(Factories(deps)...)
}

// Factories is the one list of every policy this build can put in a profile,
// by stage in stage order. Adding a policy means adding its factory here;
// nothing registers itself (docs/ARCHITECTURE.md, "Adding a policy").
func Factories(deps Deps) []policies.Factory {
	return []policies.Factory{
		// normalize
		normalize.NewFactory(),
		// project
		views.NewFactory(),
		// isolate
		isolation.NewTransparentFactory(),
		isolation.NewBoundaryFactory(isolation.Deps{Outputs: deps.Outputs}),
		isolation.NewObservationMaskingFactory(isolation.Deps{Outputs: deps.Outputs}),
		// estimate
		estimate.NewFactory(),
		// budget
		budget.NewFactory(),
		// plan
		planning.NewFactory(planning.Deps{Planner: deps.Planner, Summarizer: deps.Summarizer, Cache: deps.Cache, Prices: deps.Prices, Outputs: deps.Outputs}),
		planning.NewPlacementFactory(),
		// decide
		decide.NewThresholdFactory(),
		decide.NewHeadroomFactory(),
		decide.NewMessageCountFactory(),
		decide.NewCompositeFactory(),
		// compact, cheap first; repair runs after any transform that changed the view
		compaction.NewClampFactory(),
		compaction.NewDedupeFactory(),
		compaction.NewMaskObservationsFactory(compaction.Deps{Outputs: deps.Outputs}),
		compaction.NewDropLowImportanceFactory(),
		compaction.NewSummarizeFactory(compaction.Deps{Outputs: deps.Outputs}),
		llmsummary.NewFactory(llmsummary.Deps{Client: deps.Summarizer, Cache: deps.Cache, Prices: deps.Prices, Outputs: deps.Outputs}),
		compaction.NewTruncateFactory(compaction.Deps{Outputs: deps.Outputs}),
		normalize.NewRepairFactory(),
		// render
		render.NewFactory(),
	}
}
