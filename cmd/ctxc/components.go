package main

import (
	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/budget"
	"github.com/contextcompiler/ctxc/policies/compaction"
	"github.com/contextcompiler/ctxc/policies/decide"
	"github.com/contextcompiler/ctxc/policies/isolation"
	"github.com/contextcompiler/ctxc/policies/normalize"
	"github.com/contextcompiler/ctxc/policies/render"
	"github.com/contextcompiler/ctxc/policies/tokens"
	"github.com/contextcompiler/ctxc/policies/views"
)

// components is the one list of every policy this build can put in a profile.
// Adding a policy means adding its factory here; nothing registers itself.
func components() (*policies.Registry, error) {
	return policies.NewRegistry(
		// normalize
		normalize.NewFactory(),
		// project
		views.NewFactory(),
		// isolate
		isolation.NewTransparentFactory(),
		isolation.NewBoundaryFactory(),
		isolation.NewObservationMaskingFactory(),
		// estimate
		tokens.NewEstimateFactory(),
		// budget
		budget.NewFactory(),
		// decide
		decide.NewThresholdFactory(),
		decide.NewHeadroomFactory(),
		decide.NewMessageCountFactory(),
		decide.NewCompositeFactory(),
		// compact, cheap first; repair runs after any transform that changed the view
		compaction.NewClampFactory(),
		compaction.NewDedupeFactory(),
		compaction.NewMaskObservationsFactory(),
		compaction.NewDropLowImportanceFactory(),
		compaction.NewSummarizeFactory(),
		compaction.NewTruncateFactory(),
		normalize.NewRepairFactory(),
		// render
		render.NewFactory(),
	)
}
