package decide

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/contextcompiler/ctxc/policies"
)

// verdict is a trigger's answer.
type verdict struct {
	fire bool
	// reason says why it fired (or, for composites, what was evaluated).
	reason string
	// target is the used-token count to compact down to when it fires.
	target int
}

// trigger says whether a context should be compacted. Triggers only read w.
type trigger interface {
	evaluate(w *policies.Work) (verdict, error)
}

// errNoBudget is returned when a token trigger runs without a budget stage.
var errNoBudget = errors.New("no budget: a decide policy needs a budget policy before it")

// decider is the policy around a trigger: it applies the verdict, deferring
// compaction in the middle of a running tool loop.
type decider struct {
	trigger trigger
}

func (d decider) Apply(_ context.Context, w *policies.Work) error {
	v, err := d.trigger.evaluate(w)
	if err != nil {
		return err
	}
	if !v.fire {
		return nil
	}
	if midToolLoop(w) {
		w.Warn(fmt.Sprintf("compaction deferred: %s, but execution %q is in the middle of a tool loop; it compacts at the next user message or at the end of the execution",
			v.reason, w.State.Execution.ID))
		return nil
	}
	if w.CompactionRequested {
		// Already requested (the Compact RPC): keep its reason, add ours.
		w.DecisionReason = joinReasons(w.DecisionReason, v.reason)
	} else {
		w.CompactionRequested = true
		w.DecisionReason = v.reason
	}
	w.CompactionTarget = v.target
	return nil
}

func joinReasons(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// midToolLoop reports whether the running execution is between a user message
// and its end: compaction then waits (seed 002: never during tool loops).
func midToolLoop(w *policies.Work) bool {
	if w.State == nil || !w.State.Execution.Running() || len(w.Entries) == 0 {
		return false
	}
	return !policies.IsTurnStart(&w.Entries[len(w.Entries)-1].Message)
}

func usable(b *policies.Budget) int {
	if u := b.ContextWindow - b.ReservedOutput; u > 0 {
		return u
	}
	return 0
}

func scale(n int, ratio float64) int { return int(float64(n) * ratio) }

type thresholdTrigger struct{ cfg ThresholdConfig }

func (t thresholdTrigger) evaluate(w *policies.Work) (verdict, error) {
	b := w.Budget
	if b == nil {
		return verdict{}, errNoBudget
	}
	if t.cfg.Ratio == nil {
		return verdict{
			fire:   b.OverSoftThreshold,
			reason: fmt.Sprintf("used %s of %s tokens, over soft threshold %s", tokens(b.Used), tokens(usable(b)), tokens(b.SoftThreshold)),
			target: scale(b.SoftThreshold, t.cfg.TargetRatio),
		}, nil
	}
	point := int(float64(usable(b)) * *t.cfg.Ratio)
	return verdict{
		fire: b.Used >= point,
		reason: fmt.Sprintf("used %s of %s tokens, over threshold %s (%s of the usable window)",
			tokens(b.Used), tokens(usable(b)), tokens(point), strconv.FormatFloat(*t.cfg.Ratio, 'g', -1, 64)),
		target: scale(point, t.cfg.TargetRatio),
	}, nil
}

type headroomTrigger struct{ cfg HeadroomConfig }

func (t headroomTrigger) evaluate(w *policies.Work) (verdict, error) {
	b := w.Budget
	if b == nil {
		return verdict{}, errNoBudget
	}
	// The trigger point is the used count at which exactly the minimum remains.
	point := max(b.Used+b.Remaining-t.cfg.MinHeadroomTokens, 0)
	return verdict{
		fire: b.Remaining < t.cfg.MinHeadroomTokens,
		reason: fmt.Sprintf("%s tokens remaining (used %s of %s), below min headroom %s",
			tokens(b.Remaining), tokens(b.Used), tokens(usable(b)), tokens(t.cfg.MinHeadroomTokens)),
		target: scale(point, t.cfg.TargetRatio),
	}, nil
}

type messageCountTrigger struct{ cfg MessageCountConfig }

func (t messageCountTrigger) evaluate(w *policies.Work) (verdict, error) {
	n := len(w.Entries)
	return verdict{
		fire:   n > t.cfg.MaxMessages,
		reason: fmt.Sprintf("%s messages, more than max messages %s", tokens(n), tokens(t.cfg.MaxMessages)),
		target: scale(w.UsedTokens(), t.cfg.TargetRatio),
	}, nil
}

type compositeTrigger struct {
	all      bool
	triggers []trigger
}

func (t compositeTrigger) evaluate(w *policies.Work) (verdict, error) {
	var fired []verdict
	for _, nested := range t.triggers {
		v, err := nested.evaluate(w)
		if err != nil {
			return verdict{}, err
		}
		if v.fire {
			fired = append(fired, v)
		} else if t.all {
			return verdict{}, nil
		}
	}
	if len(fired) == 0 {
		return verdict{}, nil
	}
	out := verdict{fire: true, target: fired[0].target}
	reasons := make([]string, len(fired))
	for i, v := range fired {
		reasons[i] = v.reason
		out.target = min(out.target, v.target)
	}
	out.reason = strings.Join(reasons, "; and ")
	return out, nil
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
