package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// Segment says how far a run goes.
type Segment uint8

const (
	// SegmentCompile runs every stage (Compile).
	SegmentCompile Segment = iota
	// SegmentBudget stops after the stage that measures the budget (Budget).
	SegmentBudget
	// SegmentCompact runs through the compact stage and skips the final
	// stages (Compact, and Route's compaction at an execution end).
	SegmentCompact
)

// Request is one pipeline run.
type Request struct {
	// Profile is the profile name; "" selects the default.
	Profile string
	// State is the input; the run never modifies it.
	State *agentstate.State
	// Options are the per-call options.
	Options agentstate.Options
	// Segment says how far to run.
	Segment Segment
	// Force makes the compact stage compact the end of the log even when no
	// trigger fired (the Compact RPC).
	Force bool
	// Attachments are documents attached to the call.
	Attachments []agentstate.Attachment
	// CacheScope partitions the schedule cache: a run reuses only what runs
	// of the same scope stored (the authenticated caller).
	CacheScope string
	// ReportFromVerbatim leaves out of Report.Messages the entries of the log
	// messages in the verbatim prefix (Report.OmittedMessageReports says how
	// many): the caller holds those messages and asked not to be told of them.
	ReportFromVerbatim bool
}

// Result is what a run produced.
type Result struct {
	// Work holds the compiled view (Entries), the budget and the bookkeeping.
	Work *policies.Work
	// Report explains the run.
	Report policies.Report
	// BudgetBefore is the budget of the whole log as the budget stage first
	// computed it, before any compaction (nil when the profile has no budget stage).
	BudgetBefore *agentstate.Budget
}

// SystemMessageID is the id of the system prompt message in compiled output.
const SystemMessageID = "ctxc-system"

// Messages returns what the model should see: the system prompt first (when
// set) as a system message, then the compiled view.
func (r *Result) Messages() []agentstate.Message { return r.MessagesFrom(0) }

// MessagesFrom is Messages without the first skip messages.
func (r *Result) MessagesFrom(skip int) []agentstate.Message {
	entries := r.Work.Entries
	out := make([]agentstate.Message, 0, max(0, len(entries)+1-skip))
	if sp := r.Work.State().Context.SystemPrompt; sp != "" {
		if skip == 0 {
			out = append(out, agentstate.Message{ID: SystemMessageID, Role: agentstate.RoleSystem, Parts: []agentstate.Part{agentstate.TextPart(sp)}})
		} else {
			skip--
		}
	}
	for i := min(skip, len(entries)); i < len(entries); i++ {
		out = append(out, entries[i].Message)
	}
	return out
}

// Run executes a profile on a state.
func (c *Catalog) Run(ctx context.Context, req Request) (*Result, error) {
	p, err := c.forRun(req)
	if err != nil {
		return nil, err
	}
	info, counter, err := c.resolver.Resolve(req.State.Model)
	if err != nil {
		return nil, err
	}
	if b, ok := counter.(agentstate.BoundCounter); ok {
		// A call that ends stops tokenizing at once (a text of megabytes
		// without a space takes seconds a count); what it counted then is
		// approximate, and the run ends with ctx's error after the stage.
		counter = b.Bound(ctx.Done())
	}
	w, ctl := policies.NewWork(policies.Input{State: req.State, Options: req.Options, Model: info, Counter: counter,
		Attachments: req.Attachments, RecentTurns: p.info.RecentTurns})
	r := &runner{c: c, p: p, w: w, ctl: ctl, seg: req.Segment, force: req.Force, scope: req.CacheScope, reportFromVerbatim: req.ReportFromVerbatim}
	if err := r.run(ctx); err != nil {
		return nil, err
	}
	return &Result{Work: w, Report: r.report(), BudgetBefore: r.budgetBefore}, nil
}

type runner struct {
	c   *Catalog
	p   *profile
	w   *policies.Work
	ctl *policies.Control // sets what stages only read; takes each step's notes
	seg Segment
	// force is Request.Force: compact the end of the log though no trigger fired.
	force bool
	// scope partitions the schedule cache (Request.CacheScope).
	scope string
	// reportFromVerbatim is Request.ReportFromVerbatim.
	reportFromVerbatim bool

	stages       []policies.StageReport
	counted      bool // the estimate stage has run: entries are counted after every step
	checks       *checker
	budgetBefore *agentstate.Budget
	// measure is the step that computes the budget; it runs again, through
	// step, whenever the view changed since it last ran (dirty).
	measure *step
	dirty   bool
	// decide is the trigger step of a profile that compacts: the schedule
	// evaluates its trigger at every compaction point, and the step itself
	// runs on the view this call compiles.
	decide  *step
	trigger policies.Trigger

	compacted  bool
	compaction policies.CompactionReport
	point      int // the compaction point steps run at (1-based), 0 outside compaction
	// saved is transform's copy of the view before a step, reused from one
	// transform to the next (a long log makes two at each of its
	// compaction points); a reverted step's copy becomes the view.
	saved []agentstate.Entry
}

// run executes the profile's steps: those before the compact stage in order,
// then the compaction schedule (schedule.go), then the final stages. Each
// stage's behaviour comes from its row of the stage table.
func (r *runner) run(ctx context.Context) error {
	steps := r.p.steps
	compacts := false
	for i := range steps {
		compacts = compacts || steps[i].stage.Info().Compacts
	}
	i := 0
	for ; i < len(steps); i++ {
		s := &steps[i]
		info := s.stage.Info()
		if info.Compacts || info.Final || (r.seg == SegmentBudget && r.measure != nil && !info.Measures) {
			break
		}
		if info.Decides && compacts {
			r.decide = s
			r.trigger, _ = s.policy.(policies.Trigger)
			continue
		}
		before, n := r.tokens(), len(r.w.Entries)
		if err := r.step(ctx, s); err != nil {
			return err
		}
		switch {
		case info.Measures:
			r.measure, r.dirty = s, false
			r.afterBudget()
		case r.measure != nil && !info.ReadOnly && (r.tokens() != before || len(r.w.Entries) != n):
			// The decision must see what this step left (planning), not what came in.
			r.dirty = true
			if err := r.remeasure(ctx); err != nil {
				return err
			}
		}
	}
	if r.seg == SegmentBudget {
		return nil
	}
	end := i
	for end < len(steps) && steps[end].stage.Info().Compacts {
		end++
	}
	if end > i {
		if err := r.schedule(ctx, steps[i:end]); err != nil {
			return err
		}
	}
	if r.seg == SegmentCompact {
		return nil
	}
	for ; end < len(steps); end++ {
		if err := r.step(ctx, &steps[end]); err != nil {
			return err
		}
	}
	return nil
}

// remeasure runs the budget step again on the current view, when it changed.
func (r *runner) remeasure(ctx context.Context) error {
	if r.measure == nil || !r.dirty {
		return nil
	}
	if err := r.step(ctx, r.measure); err != nil {
		return err
	}
	r.dirty = false
	r.afterBudget()
	return nil
}

// afterBudget derives the hard limit from the budget, and makes the budget's
// ShouldCompact the verdict of the profile's trigger (which also fires over
// the window), so that the budget says what the decide stage decides; the
// first budget is the one before any compaction.
func (r *runner) afterBudget() {
	b := r.w.Budget
	if b == nil {
		return
	}
	r.ctl.SetHardLimit(max(b.ContextWindow-b.ReservedOutput, 0))
	r.ctl.SetHardLimitExceeded(b.Used > r.w.HardLimit())
	if t := r.p.trigger; t != nil {
		v := t.Evaluate(policies.Measure{Used: r.w.UsedTokens(), Messages: len(r.w.Entries), Budget: *b})
		b.ShouldCompact = v.Fire || r.w.HardLimitExceeded()
	}
	if r.budgetBefore == nil {
		before := *b
		r.budgetBefore = &before
	}
}

func (r *runner) skip(s *step) {
	n := len(r.w.Entries)
	t := r.tokens()
	r.stages = append(r.stages, policies.StageReport{
		Stage: s.stage.String(), Policy: s.typ, MessagesIn: n, MessagesOut: n,
		TokensIn: t, TokensOut: t, Skipped: true, CompactionPoint: r.point,
	})
}

func (r *runner) tokens() int {
	if !r.counted {
		return 0
	}
	return r.w.UsedTokens()
}

// step runs one policy inside its span, then recounts and checks invariants.
// Every policy call of a run goes through it.
func (r *runner) step(ctx context.Context, s *step) error {
	w := r.w
	info := s.stage.Info()
	attrs := []attribute.KeyValue{
		attribute.String("ctxc.profile", r.p.info.Name),
		attribute.String("ctxc.stage", info.Name),
		attribute.String("ctxc.policy", s.typ),
	}
	if r.point > 0 {
		attrs = append(attrs, attribute.Int("ctxc.compaction_point", r.point), attribute.Bool("ctxc.intake", w.Pass() == policies.PassIntake))
	}
	ctx, span := r.c.tracer.Start(ctx, "ctxc.stage."+info.Name, trace.WithAttributes(attrs...))
	defer span.End()
	msgsIn, tokIn := len(w.Entries), r.tokens()
	r.ctl.TakeNotes() // what was noted outside a step is no step's
	start := time.Now()
	var untouched []entryPrint
	if s.tailDependent {
		untouched = prints(w.Entries)
	}
	err := ctx.Err() // a caller that has gone gets no more work done
	if err == nil {
		err = s.policy.Apply(ctx, w)
	}
	if err == nil {
		// A policy that saw the end of ctx may have stopped half way.
		err = ctx.Err()
	}
	if err == nil && info.Counts {
		r.counted = true
	}
	if err == nil && r.counted {
		r.recount()
	}
	if err == nil && s.tailDependent {
		unsettleFrom(w.Entries, untouched)
	}
	if err == nil {
		if info.First {
			// Each step of the first stage makes the log that the later
			// stages keep to (a normalize-stage policy may rewrite what a
			// message says, as masking secrets does): the invariants hold
			// against the log as the last of them left it, and what later
			// policies read of the log is that log.
			r.ctl.SealLog()
			r.checks = newChecker(w.Entries, w.Options().View)
		}
		if r.checks != nil {
			err = r.checks.after(w, s)
		}
	}
	elapsed := time.Since(start)
	notes := r.ctl.TakeNotes()
	rep := policies.StageReport{
		Stage: info.Name, Policy: s.typ, DurationMicros: uint64(elapsed.Microseconds()),
		MessagesIn: msgsIn, MessagesOut: len(w.Entries), TokensIn: tokIn, TokensOut: r.tokens(),
		MessagesAffected: notes.Touches + abs(msgsIn-len(w.Entries)), Degraded: notes.Degraded, DegradedReason: notes.DegradedReason,
		CompactionPoint: r.point, Detail: notes.Detail,
	}
	span.SetAttributes(
		attribute.Int("ctxc.messages_in", rep.MessagesIn),
		attribute.Int("ctxc.messages_out", rep.MessagesOut),
		attribute.Int("ctxc.tokens_in", rep.TokensIn),
		attribute.Int("ctxc.tokens_out", rep.TokensOut),
		attribute.Bool("ctxc.degraded", rep.Degraded),
	)
	r.stages = append(r.stages, rep)
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		return fmt.Errorf("stage %s: %w", info.Name, err)
	}
	return nil
}

// transform runs one compaction transform; one that does not shrink the
// context is reverted, so every kept attempt makes progress.
func (r *runner) transform(ctx context.Context, s *step) (bool, error) {
	w := r.w
	// The step's report holds the counts before and after it when counted:
	// each is a pass over the view, at every step of every compaction point.
	before := 0
	if !r.counted {
		before = w.UsedTokens()
	}
	entries := append(r.saved[:0], w.Entries...) // the view, bounded by the window
	r.saved = entries
	ledger := w.Checkpoint()
	defer w.Release()
	mark := len(r.stages)
	if err := r.step(ctx, s); err != nil {
		var irreducible *agentstate.IrreducibleError
		if errors.As(err, &irreducible) {
			return false, irreducible
		}
		return false, err
	}
	var after int
	if r.counted {
		before, after = r.stages[mark].TokensIn, r.stages[mark].TokensOut
	} else {
		after = w.UsedTokens()
	}
	changed := !sameEntries(entries, w.Entries)
	if s.repair {
		return changed, nil
	}
	if changed && after >= before {
		w.Entries = entries
		r.saved = nil // the copy is the view now
		w.Rollback(ledger)
		r.checks.forget() // the view is the one from before the step, not the one it checked
		r.stages[mark].MessagesOut = len(w.Entries)
		r.stages[mark].TokensOut = before
		r.stages[mark].Skipped = true
		r.stages[mark].Degraded = true
		r.stages[mark].DegradedReason = fmt.Sprintf("did not shrink the context (%d -> %d tokens); reverted", before, after)
		return false, nil
	}
	return changed, nil
}

// recount counts entries a policy changed or added.
func (r *runner) recount() {
	w := r.w
	for i := range w.Entries {
		e := &w.Entries[i]
		if !e.Counted {
			e.Tokens, e.Provenance = w.Counter().CountMessage(&e.Message)
			e.Counted = true
		}
	}
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// sameEntries reports whether two views show the same messages unchanged.
func sameEntries(a, b []agentstate.Entry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].SourceID != b[i].SourceID || a[i].Message.ID != b[i].Message.ID || a[i].Changed != b[i].Changed || a[i].Tokens != b[i].Tokens {
			return false
		}
	}
	return true
}
