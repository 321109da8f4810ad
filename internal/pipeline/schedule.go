package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// The compaction schedule (docs/design.md, "Compaction schedule").
//
// A stateless compile of a growing log must keep the same compacted prefix,
// byte for byte, until compaction is really needed again, or every turn is
// billed at full price by the provider's prompt cache. So compaction is not
// decided on the whole log at once: the runner replays the view from its
// start and stops at every compaction point (policies.CompactionPoints: user
// turn boundaries and execution ends). At each point it asks the trigger about
// the view up to there, as compacted at earlier points:
//
//   - under the trigger: nothing happens, the view only grows;
//   - over it: first an intake pass edits in place (masks, clamps) only the
//     messages that have just left the recency window, which a turn-by-turn
//     caller has never sent in this form, just enough to get back under the
//     trigger; that costs no cached prefix;
//   - still over it: a compaction event runs the profile's transforms towards
//     the trigger's target (the low-water mark), oldest material first.
//
// Every decision depends only on the log up to its point, so the next compile
// of the same log grown by appends makes the same decisions, and the view is
// append-only between events: the gap between the trigger and the target is
// the hysteresis. The end of the view is handled last, by the decide step
// itself: a compaction there is stable when the end is a compaction point; a
// fit of a view over the window in the middle of a turn is not, and what it
// changes is marked Unsettled.

// verdict is the trigger's answer for a view of the given size: a profile
// without a trigger compacts only a view over the usable window, towards
// fit_target_ratio of it.
func (r *runner) verdict(used, messages int) policies.Verdict {
	w := r.w
	b := *w.Budget
	b.Used = used
	b.Remaining = max(b.ContextWindow-used-b.ReservedOutput, 0)
	over := w.HardLimit() > 0 && used > w.HardLimit()
	fit := int(float64(w.HardLimit()) * r.p.info.FitTargetRatio)
	if r.trigger == nil {
		v := policies.Verdict{Fire: over, Point: w.HardLimit() + 1, Target: fit}
		if over {
			v.Reason = fmt.Sprintf("used %s tokens, over the usable window of %s", count(used), count(w.HardLimit()))
		}
		return v
	}
	v := r.trigger.Evaluate(policies.Measure{Used: used, Messages: messages, Budget: b})
	if over && !v.Fire {
		v.Fire = true
		v.Reason = fmt.Sprintf("used %s tokens, over the usable window of %s", count(used), count(w.HardLimit()))
	}
	if v.Target <= 0 || (w.HardLimit() > 0 && v.Target > w.HardLimit()) {
		v.Target = fit
	}
	return v
}

// schedule runs the compaction transforms (chain) at every compaction point
// of the view, then on the view this call compiles.
func (r *runner) schedule(ctx context.Context, chain []step) error {
	w := r.w
	if w.Budget == nil {
		return nil
	}
	full := w.Entries
	preamble := w.SystemTokens + w.ToolTokens
	// intakeFrom is where the recency window began at the previous point: the
	// entries from there to where it begins now have just left it.
	intakeFrom := 0
	fullFires := r.verdict(w.UsedTokens(), len(full)).Fire
	points := policies.CompactionPoints(full)
	if !fullFires {
		// Triggers only fire on more tokens or messages, so a log whose
		// whole view does not fire has nothing to do at any point: the view
		// is the log, and only the last point's recency window matters.
		if len(points) > 0 {
			intakeFrom = recentEntry(full[:points[len(points)-1]], w.RecentTurns())
		}
		return r.finish(ctx, chain, intakeFrom)
	}
	// The view grows as the points pass and shrinks at each compaction, so
	// it stays about the window's size: grown on demand, not sized for the
	// whole log (16 MB at 100,000 messages, for a view of a tenth of that).
	view := make([]agentstate.Entry, 0, min(len(full), 1024))
	used, pos, next := preamble, 0, 0
	// A compile of a log that only grew since an earlier one resumes where
	// that one stood after its last point (schedcache.go).
	cached, snap := r.beginCache(chain, full, points)
	compactedAny := false
	if snap != nil {
		view = append(view, cloneEntries(snap.view)...)
		used, intakeFrom, pos, next, compactedAny = snap.used, snap.intakeFrom, snap.pos, snap.point+1, snap.compactedAny
	}
	for i := next; i < len(points); i++ {
		p := points[i]
		if err := ctx.Err(); err != nil {
			return err
		}
		for ; pos < p; pos++ {
			view = append(view, full[pos])
			used += full[pos].Tokens
		}
		w.Entries = view
		if v := r.verdict(used, len(view)); v.Fire {
			compactedAny = true
			if err := r.compactAt(ctx, chain, v, intakeFrom, true, false); err != nil {
				return err
			}
			view = w.Entries
			used = w.UsedTokens()
		}
		intakeFrom = recentEntry(view, w.RecentTurns())
	}
	if ctx.Err() == nil {
		r.save(cached, len(points)-1, view, used, intakeFrom, pos, compactedAny)
	}
	for ; pos < len(full); pos++ {
		view = append(view, full[pos])
	}
	w.Entries = view
	if len(r.compaction.Points) > 0 {
		r.dirty = true // the runner rebuilt the view: measure it again
	}
	r.checks.forget() // and check it in full: points saw only prefixes
	return r.finish(ctx, chain, intakeFrom)
}

// recentEntry is the index of the first entry of the recency window.
func recentEntry(view []agentstate.Entry, recentTurns int) int {
	return policies.RecentStart(view, max(recentTurns, 1))
}

// finish measures the view this call compiles, runs the decide step on it,
// and compacts it when the trigger fired at a compaction point, when the view
// does not fit the window, or when the Compact RPC asked (forced when no
// trigger fired anywhere).
func (r *runner) finish(ctx context.Context, chain []step, intakeFrom int) error {
	w := r.w
	if err := r.remeasure(ctx); err != nil {
		return err
	}
	if r.decide != nil {
		if err := r.step(ctx, r.decide); err != nil {
			return err
		}
	}
	v := r.verdict(w.UsedTokens(), len(w.Entries))
	atPoint := policies.AtCompactionPoint(w.Entries, w.State())
	fired := w.Decision.Compact // the decide step fired, at a compaction point
	if r.decide == nil {
		fired = v.Fire && atPoint
	}
	r.compaction.TriggerTokens, r.compaction.TargetTokens, r.compaction.TriggerFired = v.Point, v.Target, fired
	stable := atPoint
	// By ctxc's own count, like every decision of the schedule; a count
	// anchored on provider usage only reports.
	r.ctl.SetHardLimitExceeded(w.HardLimit() > 0 && w.UsedTokens() > w.HardLimit())
	if w.HardLimitExceeded() {
		w.Warn(fmt.Sprintf("context of %d tokens exceeds the usable window of %d tokens (window %d minus %d reserved for output); compacting to fit",
			w.UsedTokens(), w.HardLimit(), w.Budget.ContextWindow, w.Budget.ReservedOutput))
	}
	switch {
	case fired:
		if w.Decision.Reason != "" {
			v.Reason = w.Decision.Reason
		}
		if r.trigger == nil && r.decide != nil {
			// A decide policy that is no policies.Trigger names its own target.
			v.Target = w.Decision.Target
			if v.Target <= 0 {
				v.Target = w.Budget.SoftThreshold * 3 / 4
			}
		}
	case w.HardLimitExceeded():
		// A fit in the middle of a turn: later compiles do not repeat it.
		stable = false
		v.Target = min(v.Target, w.HardLimit())
	case r.force: // the Compact RPC
		if len(r.compaction.Points) == 0 {
			r.compaction.Forced = true
			v.Reason = "Compact RPC: compaction forced, no trigger fired"
		} else {
			v.Reason = "Compact RPC: compaction points were reached"
		}
	default:
		r.skipAll(chain)
		return r.remeasure(ctx)
	}
	if !fired || r.trigger == nil {
		v.Point = 0 // compact: an intake pass could not answer why
	}
	// What Compact persists is no context sent to a model: its end is
	// compacted like any point inside the log, and the compile that sends it
	// makes it fit.
	sends := r.seg == SegmentCompile
	if err := r.compactAt(ctx, chain, v, intakeFrom, stable, sends); err != nil {
		return err
	}
	if err := r.remeasure(ctx); err != nil {
		return err
	}
	if sends && w.HardLimit() > 0 && w.UsedTokens() > w.HardLimit() {
		return &agentstate.IrreducibleError{
			NeededTokens:    w.UsedTokens(),
			AvailableTokens: w.HardLimit(),
			Detail:          fmt.Sprintf("profile %q compacted as far as its policies allow and still does not fit", r.p.info.Name),
		}
	}
	return nil
}

// skipAll reports every transform of the chain as skipped on the final view.
func (r *runner) skipAll(chain []step) {
	for i := range chain {
		r.skip(&chain[i])
	}
}

// compactAt compacts the current view (w.Entries) at one compaction point:
// an intake pass first when the verdict has a token point (v.Point > 0), then,
// if the view is still over the trigger, an event towards the target. It does
// exactly the same at a point inside the log as at the same point when it
// ends the view a call compiles, so the next compile repeats it. stable says
// the point is a compaction point (not a fit in mid-turn, whose changes are
// Unsettled), final that the view is the one this call compiles.
func (r *runner) compactAt(ctx context.Context, chain []step, v policies.Verdict, intakeFrom int, stable, final bool) error {
	w := r.w
	before := w.UsedTokens()
	r.compaction.Points = append(r.compaction.Points, policies.CompactionPoint{
		AfterMessageID: lastLogID(w.Entries), Reason: v.Reason, TokensBefore: before, TargetTokens: v.Target, Stable: stable,
	})
	r.point = len(r.compaction.Points)
	defer func() { r.point = 0 }()
	reports := len(r.stages)
	// By ctxc's own count, as at every other point, so the decision repeats.
	r.ctl.SetHardLimitExceeded(w.HardLimit() > 0 && before > w.HardLimit())
	r.ctl.SetAtEnd(final)
	defer r.ctl.SetAtEnd(false)
	r.checks.beginCompaction(w)
	var untouched []entryPrint
	if !stable {
		untouched = prints(w.Entries)
	}

	changed, intake := false, false
	if v.Point > 0 && intakeFrom < recentEntry(w.Entries, w.RecentTurns()) {
		r.ctl.SetPass(policies.PassIntake, intakeFrom)
		r.ctl.SetCompactionTarget(v.Point - 1)
		ch, err := r.runChain(ctx, chain, passIntake, final)
		r.ctl.SetPass(policies.PassEvent, 0)
		if err != nil {
			return err
		}
		changed = ch
		intake = !r.verdict(w.UsedTokens(), len(w.Entries)).Fire && !(w.HardLimit() > 0 && w.UsedTokens() > w.HardLimit())
	}
	if !intake {
		r.ctl.SetCompactionTarget(v.Target)
		ch, err := r.runChain(ctx, chain, passEvent, final)
		if err != nil {
			return err
		}
		changed = changed || ch
	}
	pt := &r.compaction.Points[r.point-1]
	pt.TokensAfter, pt.Intake = w.UsedTokens(), intake
	if !changed && !final {
		// Nothing could be done at this point inside the log: neither it nor
		// its steps are reported (the view this call compiles always is).
		r.compaction.Points = r.compaction.Points[:r.point-1]
		r.stages = r.stages[:reports]
		return nil
	}
	if !changed {
		return nil
	}
	r.compacted, r.dirty = true, true
	if untouched != nil {
		unsettleFrom(w.Entries, untouched)
	}
	return nil
}

// Passes of the transform chain.
const (
	passIntake = iota // in-place edits of the messages that just left the recency window
	passEvent         // every transform, towards the target
)

// runChain runs the pass's transforms in profile order while the view is
// over the target; repair passes run when any transform changed the view.
func (r *runner) runChain(ctx context.Context, chain []step, pass int, final bool) (bool, error) {
	w := r.w
	changed := false
	for i := range chain {
		s := &chain[i]
		switch {
		case s.repair:
		case pass == passIntake && !s.inPlace:
			continue
		}
		if s.repair {
			if !changed {
				continue
			}
		} else if w.UsedTokens() <= w.CompactionTarget() {
			if final && pass == passEvent {
				r.skip(s)
			}
			continue
		}
		ch, err := r.transform(ctx, s)
		if err != nil {
			var irreducible *agentstate.IrreducibleError
			if errors.As(err, &irreducible) && !final {
				continue
			}
			return changed, err
		}
		changed = changed || ch
	}
	return changed, nil
}

// prints identifies the entries of a view, to find later where it changed.
func prints(entries []agentstate.Entry) []entryPrint {
	out := make([]entryPrint, len(entries))
	for i := range entries {
		out[i] = printOf(&entries[i].Message)
	}
	return out
}

// unsettleFrom marks Unsettled the first entry where the view differs from
// the one printed, which ends the stable prefix there.
func unsettleFrom(entries []agentstate.Entry, before []entryPrint) {
	for i := range entries {
		if i >= len(before) || !before[i].of(&entries[i].Message) {
			entries[i].Unsettled = true
			return
		}
	}
}

// lastLogID is the id of the log message the view ends with.
func lastLogID(entries []agentstate.Entry) string {
	for i := len(entries) - 1; i >= 0; i-- {
		if id := entries[i].SourceID; id != "" {
			return id
		}
	}
	return ""
}

// count formats a count with thousands separators: 12345 -> "12,345".
func count(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + count(-n)
	}
	out := make([]byte, 0, len(s)+len(s)/3)
	for i := 0; i < len(s); i++ {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}
