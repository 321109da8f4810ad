package decide

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// trigger says whether a context of a given size should be compacted.
type trigger interface {
	evaluate(m policies.Measure) policies.Verdict
}

// decider is the policy around a trigger. As a step it applies the verdict on
// the view a call compiles, deferring compaction in the middle of a running
// tool loop; as a policies.Trigger it answers the compaction schedule.
type decider struct {
	trigger trigger
}

// Evaluate implements policies.Trigger.
func (d decider) Evaluate(m policies.Measure) policies.Verdict { return d.trigger.evaluate(m) }

func (d decider) Apply(_ context.Context, w *policies.Work) error {
	if w.Budget == nil {
		return errNoBudget
	}
	// Triggers see ctxc's own count of the view (w.UsedTokens), not a count
	// anchored on provider usage, so that every compile passing a compaction
	// point decides it the same way.
	v := d.trigger.evaluate(policies.Measure{Used: w.UsedTokens(), Messages: len(w.Entries), Budget: *w.Budget})
	if !v.Fire {
		return nil
	}
	if !policies.AtCompactionPoint(w.Entries, w.State()) {
		w.Warn(fmt.Sprintf("compaction deferred: %s, but execution %q is in the middle of a tool loop; it compacts at the next user message or at the end of the execution",
			v.Reason, w.State().Execution.ID))
		return nil
	}
	if w.Decision.Compact {
		// Already asked for by a decide policy before: keep its reason, add ours.
		w.Decision.Reason = joinReasons(w.Decision.Reason, v.Reason)
	} else {
		w.Decision.Compact = true
		w.Decision.Reason = v.Reason
	}
	w.Decision.Target = v.Target
	return nil
}

// errNoBudget is returned when a trigger runs without a budget stage.
var errNoBudget = errors.New("no budget: a decide policy needs a budget policy before it")

func joinReasons(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

func usable(b *agentstate.Budget) int {
	if u := b.ContextWindow - b.ReservedOutput; u > 0 {
		return u
	}
	return 0
}

func scale(n int, ratio float64) int { return int(float64(n) * ratio) }

type thresholdTrigger struct{ cfg ThresholdConfig }

// evaluate fires at the threshold, or when fewer tokens remain than the
// budget's minimum headroom (token_budget's min_headroom_tokens), which is
// what the budget's should_compact says: the two never disagree.
func (t thresholdTrigger) evaluate(m policies.Measure) policies.Verdict {
	b := &m.Budget
	point, what := b.SoftThreshold, "soft threshold"
	if t.cfg.Ratio != nil {
		point = int(float64(usable(b)) * *t.cfg.Ratio)
		what = "threshold " + strconv.FormatFloat(*t.cfg.Ratio, 'g', -1, 64) + " of the usable window"
	}
	v := policies.Verdict{
		Fire:   m.Used >= point,
		Point:  point,
		Target: scale(point, t.cfg.TargetRatio),
	}
	if v.Fire {
		v.Reason = fmt.Sprintf("used %s of %s tokens, at or over the %s of %s", tokens(m.Used), tokens(usable(b)), what, tokens(point))
	}
	if b.MinHeadroom <= 0 {
		return v
	}
	// The used count at which exactly the minimum headroom remains; one token
	// more fires.
	least := max(usable(b)-b.MinHeadroom, 0)
	if least+1 < point {
		v.Point, v.Target = least+1, scale(least, t.cfg.TargetRatio)
	}
	if remaining := max(usable(b)-m.Used, 0); !v.Fire && remaining < b.MinHeadroom {
		v.Fire = true
		v.Reason = fmt.Sprintf("%s tokens remaining (used %s of %s), below the budget's min headroom of %s",
			tokens(remaining), tokens(m.Used), tokens(usable(b)), tokens(b.MinHeadroom))
	}
	return v
}

type headroomTrigger struct{ cfg HeadroomConfig }

func (t headroomTrigger) evaluate(m policies.Measure) policies.Verdict {
	b := &m.Budget
	// The trigger point is the used count at which exactly the minimum remains.
	point := max(usable(b)-t.cfg.MinHeadroomTokens, 0)
	remaining := max(usable(b)-m.Used, 0)
	v := policies.Verdict{
		Fire:   remaining < t.cfg.MinHeadroomTokens,
		Point:  point + 1,
		Target: scale(point, t.cfg.TargetRatio),
	}
	if v.Fire {
		v.Reason = fmt.Sprintf("%s tokens remaining (used %s of %s), below min headroom %s",
			tokens(remaining), tokens(m.Used), tokens(usable(b)), tokens(t.cfg.MinHeadroomTokens))
	}
	return v
}

type messageCountTrigger struct{ cfg MessageCountConfig }

func (t messageCountTrigger) evaluate(m policies.Measure) policies.Verdict {
	v := policies.Verdict{
		Fire:   m.Messages > t.cfg.MaxMessages,
		Target: scale(m.Used, t.cfg.TargetRatio),
	}
	if v.Fire {
		v.Reason = fmt.Sprintf("%s messages, more than max messages %s", tokens(m.Messages), tokens(t.cfg.MaxMessages))
	}
	return v
}

type compositeTrigger struct {
	all      bool
	triggers []trigger
}

// evaluate: the point is the lowest token point of the nested triggers (for
// "any"; for "all", the highest), the target the lowest target of those that
// fired (of all of them when none fired).
func (t compositeTrigger) evaluate(m policies.Measure) policies.Verdict {
	var out policies.Verdict
	fired, reasons := 0, []string{}
	firedTarget, anyTarget := -1, -1
	for _, nested := range t.triggers {
		v := nested.evaluate(m)
		if v.Point > 0 && (out.Point == 0 || (!t.all && v.Point < out.Point) || (t.all && v.Point > out.Point)) {
			out.Point = v.Point
		}
		if anyTarget < 0 || v.Target < anyTarget {
			anyTarget = v.Target
		}
		if v.Fire {
			fired++
			reasons = append(reasons, v.Reason)
			if firedTarget < 0 || v.Target < firedTarget {
				firedTarget = v.Target
			}
		}
	}
	out.Fire = fired > 0 && (!t.all || fired == len(t.triggers))
	out.Reason = strings.Join(reasons, "; and ")
	out.Target = anyTarget
	if fired > 0 {
		out.Target = firedTarget
	}
	return out
}

// tokens formats a count with thousands separators: 91204 -> "91,204".
func tokens(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}
