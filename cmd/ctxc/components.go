package main

import (
	"github.com/contextcompiler/ctxc/internal/llm"
	"github.com/contextcompiler/ctxc/internal/metrics"
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

// policyDeps are the shared parts some policies are built with.
type policyDeps struct {
	planner, summarizer llm.Completer // nil when not configured
	cache               *summarycache.Cache
	prices              accounting.PriceLookup
	helpers             []metrics.HelperModel // the clients above, for metrics
	// outputs remembers what was read of tool outputs across the policies
	// that read them (nil: each its own).
	outputs *diagnose.Cache
}

// components is the registry of every policy this build can put in a profile.
func components(deps policyDeps) (*policies.Registry, error) {
	return policies.NewRegistry(factories(deps)...)
}

// factories is the one list of every policy this build can put in a profile,
// by stage in stage order. Adding a policy means adding its factory here;
// nothing registers itself (docs/ARCHITECTURE.md, "Adding a policy").
func factories(deps policyDeps) []policies.Factory {
	return []policies.Factory{
		// normalize
		normalize.NewFactory(),
		// project
		views.NewFactory(),
		// isolate
		isolation.NewTransparentFactory(),
		isolation.NewBoundaryFactory(isolation.Deps{Outputs: deps.outputs}),
		isolation.NewObservationMaskingFactory(isolation.Deps{Outputs: deps.outputs}),
		// estimate
		estimate.NewFactory(),
		// budget
		budget.NewFactory(),
		// plan
		planning.NewFactory(planning.Deps{Planner: deps.planner, Summarizer: deps.summarizer, Cache: deps.cache, Prices: deps.prices}),
		planning.NewPlacementFactory(),
		// decide
		decide.NewThresholdFactory(),
		decide.NewHeadroomFactory(),
		decide.NewMessageCountFactory(),
		decide.NewCompositeFactory(),
		// compact, cheap first; repair runs after any transform that changed the view
		compaction.NewClampFactory(),
		compaction.NewDedupeFactory(),
		compaction.NewMaskObservationsFactory(compaction.Deps{Outputs: deps.outputs}),
		compaction.NewDropLowImportanceFactory(),
		compaction.NewSummarizeFactory(compaction.Deps{Outputs: deps.outputs}),
		llmsummary.NewFactory(llmsummary.Deps{Client: deps.summarizer, Cache: deps.cache, Prices: deps.prices, Outputs: deps.outputs}),
		compaction.NewTruncateFactory(),
		normalize.NewRepairFactory(),
		// render
		render.NewFactory(),
	}
}
