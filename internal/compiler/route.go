package compiler

import (
	"context"
	"errors"
	"time"

	"github.com/contextcompiler/ctxc/internal/compiler/routing"
	"github.com/contextcompiler/ctxc/internal/pipeline"
	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// What Route appends (package compiler/routing documents each).
type (
	// RouteInput is a UserTurn, a Step or an Event.
	RouteInput   = routing.Input
	UserTurn     = routing.UserTurn
	Step         = routing.Step
	Event        = routing.Event
	FinishReason = routing.FinishReason
)

// ReasonInvalidRouteInput is the reason of the InvalidArgumentError for a
// Route input that cannot be appended.
const ReasonInvalidRouteInput = routing.ReasonInvalidRouteInput

// RouteRequest is one Route.
type RouteRequest struct {
	Source StateSource
	// Profile names the profile whose compaction runs when an execution ends.
	Profile string
	// Options are the compile options that compaction uses (the window,
	// reserved output, soft threshold), as the runtime passes them to Compile.
	Options agentstate.Options
	Input   RouteInput
	// Scope is whose earlier work the run may reuse (the schedule cache):
	// the authenticated caller, so that no caller's compile can be answered
	// from another's; "" for a service without authentication.
	Scope string
}

// RouteResult is what Route produced.
type RouteResult struct {
	// Result is the append: the new state (compacted when Compaction is
	// set), the appended ids, and what became of the execution.
	routing.Result
	// HistoryDiscarded says the state's history was discarded (Reset).
	HistoryDiscarded bool
	// Compaction reports the compaction at the end of the execution, nil
	// when none ran. A compaction that failed leaves the state uncompacted
	// and says why in a warning.
	Compaction *policies.Report
}

// Route appends a user turn, a step's output or an event to the log. When the
// input ends an execution with a final answer (or, if the profile says so,
// with an error) and the profile compacts on execution end, the profile's
// compaction schedule runs on the new state, and what it decided is persisted
// into the returned state only when its trigger fired (the trigger
// decides, the strategy compacts).
func (s *Service) Route(ctx context.Context, req RouteRequest) (*RouteResult, error) {
	in, err := s.load(req.Source)
	if err != nil {
		return nil, err
	}
	profile, err := s.catalog.Profile(req.Profile)
	if err != nil {
		return nil, err
	}
	res, err := routing.Route(in.state, req.Input, routing.Options{Now: time.Now})
	if err != nil {
		return nil, err
	}
	out := &RouteResult{Result: *res, HistoryDiscarded: in.discarded}
	failed := res.State.Execution.Status == agentstate.ExecutionFailed
	if res.ExecutionEnded && ((!failed && profile.CompactOnExecutionEnd) || (failed && profile.CompactOnExecutionError)) {
		out.State, out.Compaction = s.compactAtBoundary(ctx, profile.Name, res.State, req.Options, req.Scope)
	}
	return out, nil
}

// compactAtBoundary runs the profile's compaction on a state whose execution
// just ended. Appending is what the caller asked for, so a compaction that
// cannot fit the window does not fail the call: the report says why.
func (s *Service) compactAtBoundary(ctx context.Context, profile string, st *agentstate.State, opts agentstate.Options, scope string) (*agentstate.State, *policies.Report) {
	res, err := s.catalog.Compact(ctx, pipeline.Request{Profile: profile, State: st, Options: opts, CacheScope: scope})
	s.observe(ctx, compactedRun(UseCaseRoute, profile, res, err))
	if err != nil {
		var irreducible *agentstate.IrreducibleError
		if !errors.As(err, &irreducible) {
			s.log.ErrorContext(ctx, "compaction at execution end failed", "profile", profile, "error", err.Error())
			return st, &policies.Report{Profile: profile, Warnings: []string{"compaction at the end of the execution failed; the state is returned uncompacted"}}
		}
		return st, &policies.Report{Profile: profile, Warnings: []string{"compaction at the end of the execution did not fit the window: " + irreducible.Error()}}
	}
	return res.State, &res.Report
}
