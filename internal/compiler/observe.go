package compiler

import (
	"context"

	"github.com/contextcompiler/ctxc/internal/pipeline"
	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// The use cases that run the pipeline, named as the RPC methods that call them.
const (
	UseCaseCompile = "Compile"
	UseCaseBudget  = "Budget"
	UseCaseCompact = "Compact"
	UseCaseRoute   = "Route"
)

// RunObserver is told how every pipeline run of a use case ended; package
// metrics aggregates runs into Prometheus metrics. It is called on the
// request's goroutine with the request's context (which carries its trace),
// so it must be cheap and safe for concurrent use.
type RunObserver interface {
	ObserveRun(ctx context.Context, run Run)
}

// Run is one pipeline run as the use case that made it saw it end.
type Run struct {
	// UseCase is one of the UseCase constants.
	UseCase string
	// Profile is the profile that ran: a name the catalog has, or "" when
	// the request named one it does not have.
	Profile string
	// Report explains a run that succeeded; nil when it failed.
	Report *policies.Report
	// Before and After are the budgets of the context the run was given and
	// of the one it produced; nil when the use case produces no context
	// (Budget), the profile measures none, or the run failed.
	Before, After *agentstate.Budget
	// Err is why the run failed; nil when it succeeded. A Route whose
	// compaction failed still succeeds: its Run has the error.
	Err error
}

// observe tells the observer, if any, how a run ended. The profile is
// resolved here (a request's "" is the default profile) so that observers
// only ever see the catalog's names.
func (s *Service) observe(ctx context.Context, run Run) {
	if s.observer == nil {
		return
	}
	if run.Report != nil && run.Report.Profile != "" {
		run.Profile = run.Report.Profile
	} else if info, err := s.catalog.Profile(run.Profile); err == nil {
		run.Profile = info.Name
	} else {
		run.Profile = ""
	}
	s.observer.ObserveRun(ctx, run)
}

// compiledRun is the Run of a pipeline run that produced a context (Compile).
func compiledRun(useCase, profile string, res *pipeline.Result, err error) Run {
	run := Run{UseCase: useCase, Profile: profile, Err: err}
	if err == nil {
		run.Report, run.Before, run.After = &res.Report, res.BudgetBefore, res.Work.Budget
	}
	return run
}

// compactedRun is the Run of a compaction persisted into a state (Compact, Route).
func compactedRun(useCase, profile string, res *pipeline.CompactResult, err error) Run {
	run := Run{UseCase: useCase, Profile: profile, Err: err}
	if err == nil {
		run.Report, run.Before, run.After = &res.Report, res.Before, res.After
	}
	return run
}
