package metrics

import (
	"context"
	"errors"

	"github.com/contextcompiler/ctxc/internal/compiler"
	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// Outcomes of a run (the outcome label of ctxc_pipeline_runs_total).
const (
	outcomeOK          = "ok"
	outcomeDegraded    = "degraded"    // succeeded, with a step that fell back or was reverted
	outcomeIrreducible = "irreducible" // what must be kept does not fit the window
	outcomeInvalid     = "invalid"     // the request's fault: bad input, unknown profile or model, a limit, a precondition
	outcomeUnavailable = "unavailable" // a backend a strict policy needs failed
	outcomeCanceled    = "canceled"    // the caller's deadline passed or it gave up
	outcomeInternal    = "internal"    // a bug: an invariant or anything unexpected
)

var outcomes = []string{outcomeOK, outcomeDegraded, outcomeIrreducible, outcomeInvalid, outcomeUnavailable, outcomeCanceled, outcomeInternal}

// Kinds of compaction points (policies.CompactionPoint.Intake).
const (
	pointIntake = "intake"
	pointEvent  = "event"
)

// ObserveRun records one pipeline run (compiler.RunObserver).
func (m *Metrics) ObserveRun(ctx context.Context, run compiler.Run) {
	profile := m.profile(run.Profile)
	rep := run.Report
	m.runs.WithLabelValues(run.UseCase, profile, outcome(run)).Inc()
	if rep == nil {
		return
	}
	exemplar := TraceExemplar(ctx)
	if run.Before != nil && run.After != nil {
		observe(m.inputTokens.WithLabelValues(run.UseCase, profile), float64(run.Before.Used), exemplar)
		observe(m.outputTokens.WithLabelValues(run.UseCase, profile), float64(run.After.Used), exemplar)
	}
	if run.UseCase != compiler.UseCaseBudget {
		m.observeCompaction(run.UseCase, profile, &rep.Compaction, rep.Compacted)
	}
	for i := range rep.Stages {
		m.observeStage(profile, &rep.Stages[i], exemplar)
	}
	for _, r := range rep.Repairs {
		m.repairs.WithLabelValues(profile, r.Kind).Inc()
	}
	for _, u := range rep.ModelUsage {
		model := m.helperModel(u.Model)
		m.helperTokens.WithLabelValues(profile, u.Task, model, "input").Add(float64(u.InputTokens))
		m.helperTokens.WithLabelValues(profile, u.Task, model, "output").Add(float64(u.OutputTokens))
		m.helperCost.WithLabelValues(profile, u.Task, model).Add(u.CostUSD)
	}
}

// observeCompaction records the compaction points of a run that may compact.
func (m *Metrics) observeCompaction(method, profile string, c *policies.CompactionReport, compacted bool) {
	if compacted {
		m.compactions.WithLabelValues(method, profile).Inc()
	}
	var intake, event int
	for _, p := range c.Points {
		kind := pointEvent
		if p.Intake {
			kind, intake = pointIntake, intake+1
		} else {
			event++
		}
		if removed := p.TokensBefore - p.TokensAfter; removed > 0 {
			m.compactionRemoved.WithLabelValues(method, profile, kind).Add(float64(removed))
		}
	}
	m.compactionPoints.WithLabelValues(method, profile, pointIntake).Observe(float64(intake))
	m.compactionPoints.WithLabelValues(method, profile, pointEvent).Observe(float64(event))
}

// observeStage records one step. A step the runner skipped did not run and
// has no duration; one it reverted ran (and is degraded).
func (m *Metrics) observeStage(profile string, s *policies.StageReport, exemplar map[string]string) {
	if s.Skipped && !s.Degraded {
		return
	}
	observe(m.stageDuration.WithLabelValues(profile, s.Stage, s.Policy), float64(s.DurationMicros)/1e6, exemplar)
	if removed := s.TokensIn - s.TokensOut; removed > 0 && !s.Skipped {
		m.stageRemoved.WithLabelValues(profile, s.Stage, s.Policy).Add(float64(removed))
	}
	if s.Degraded {
		m.stageDegraded.WithLabelValues(profile, s.Stage, s.Policy, ReasonClass(s.DegradedReason)).Inc()
	}
}

// outcome classes how a run ended, as adapter.ToStatus does for status codes.
func outcome(run compiler.Run) string {
	err := run.Err
	if err == nil {
		for i := range run.Report.Stages {
			if run.Report.Stages[i].Degraded {
				return outcomeDegraded
			}
		}
		return outcomeOK
	}
	var (
		irreducible  *agentstate.IrreducibleError
		invalid      *agentstate.InvalidArgumentError
		profile      *agentstate.UnknownProfileError
		model        *agentstate.UnknownModelError
		limit        *agentstate.LimitError
		precondition *agentstate.PreconditionError
		unavailable  *agentstate.UnavailableError
	)
	switch {
	case errors.As(err, &irreducible):
		return outcomeIrreducible
	case errors.As(err, &invalid), errors.As(err, &profile), errors.As(err, &model), errors.As(err, &limit), errors.As(err, &precondition):
		return outcomeInvalid
	case errors.As(err, &unavailable):
		return outcomeUnavailable
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return outcomeCanceled
	}
	return outcomeInternal
}
