// Package components is the one explicit list of every policy this build can
// put in a profile (docs/ARCHITECTURE.md, "Adding a policy"). Package embed
// builds the service's registry from it; nothing registers itself.
package components

import (
	"github.com/contextcompiler/ctxc/internal/accounting"
	"github.com/contextcompiler/ctxc/internal/diagnose"
	"github.com/contextcompiler/ctxc/internal/llm"
	"github.com/contextcompiler/ctxc/internal/summarycache"
	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/budget"
	"github.com/contextcompiler/ctxc/policies/compaction"
	"github.com/contextcompiler/ctxc/policies/decide"
	"github.com/contextcompiler/ctxc/policies/estimate"
	"github.com/contextcompiler/ctxc/policies/isolate"
	"github.com/contextcompiler/ctxc/policies/llmsummary"
	"github.com/contextcompiler/ctxc/policies/normalize"
	"github.com/contextcompiler/ctxc/policies/plan"
	"github.com/contextcompiler/ctxc/policies/project"
	"github.com/contextcompiler/ctxc/policies/render"
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
		project.NewFactory(),
		// isolate
		isolate.NewTransparentFactory(),
		isolate.NewBoundaryFactory(isolate.Deps{Outputs: deps.Outputs}),
		isolate.NewObservationMaskingFactory(isolate.Deps{Outputs: deps.Outputs}),
		// estimate
		estimate.NewFactory(),
		// budget
		budget.NewFactory(),
		// plan
		plan.NewFactory(plan.Deps{Planner: deps.Planner, Summarizer: deps.Summarizer, Cache: deps.Cache, Prices: deps.Prices, Outputs: deps.Outputs}),
		plan.NewPlacementFactory(),
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
