package compaction

import (
	"context"
	"fmt"

	"github.com/contextcompiler/ctxc/policies"
)

// truncator is the "truncate" policy: the deterministic fallback that keeps the
// newest units contiguous and drops everything older than the first unit that
// does not fit (seed 003's contiguous-recency fix: never skip a large message
// and keep older ones), always keeping protected entries.
type truncator struct {
	cfg TruncateConfig
}

func (t truncator) Apply(_ context.Context, w *policies.Work) error {
	protected := policies.Protection(w)
	units := policies.Units(w.Entries)
	preamble := w.SystemTokens + w.ToolTokens
	protectedTokens, protectedCount := 0, 0
	for _, u := range units {
		if protected[u.Start] {
			protectedTokens += unitTokens(w, u)
			protectedCount += u.Len()
		}
	}
	if need := preamble + protectedTokens; w.HardLimit > 0 && need > w.HardLimit {
		return &policies.IrreducibleError{
			NeededTokens:    need,
			AvailableTokens: w.HardLimit,
			Detail: fmt.Sprintf("the system prompt and tools (%s tokens) and the %d protected messages (first task, pinned, latest %d turns, unresolved failures, running execution: %s tokens) exceed the usable window",
				formatCount(preamble), protectedCount, w.RecentTurns, formatCount(protectedTokens)),
		}
	}

	// room is what the kept unprotected units may use, in tokens or messages.
	var room int
	byMessages := t.cfg.Mode == TruncateMessageLimit
	goal := target(w)
	switch t.cfg.Mode {
	case TruncateMessageLimit:
		room = t.cfg.MaxMessages - protectedCount
	case TruncateTokenLimit:
		goal = t.cfg.TargetTokens
		if goal == 0 {
			goal = int(float64(target(w)) * t.cfg.TargetRatio)
		}
		room = goal - preamble - protectedTokens
	default:
		room = goal - preamble - protectedTokens
	}

	drop := make([]bool, len(w.Entries))
	dropped, full := 0, false
	for k := len(units) - 1; k >= 0; k-- {
		u := units[k]
		if protected[u.Start] {
			continue
		}
		size := u.Len()
		if !byMessages {
			size = unitTokens(w, u)
		}
		if !full && size <= room {
			room -= size
			continue
		}
		full = true // everything older goes too: the kept tail stays contiguous
		for i := u.Start; i < u.End; i++ {
			drop[i] = true
			dropped++
		}
	}
	if dropped == 0 {
		return nil
	}
	before := w.UsedTokens()
	removed := 0
	reason := fmt.Sprintf("truncated (%s): older than the newest messages that fit", t.cfg.Mode)
	for i := range w.Entries {
		if drop[i] {
			removed += w.Entries[i].Tokens
			dispose(w, &w.Entries[i], policies.DispositionDropped, TypeTruncate, reason)
		}
	}
	w.Entries = removeEntries(w.Entries, drop)
	after := before - removed
	switch {
	case w.HardLimit > 0 && before > w.HardLimit:
		w.Warn(fmt.Sprintf("context of %s tokens exceeded the window's usable %s; truncated to %s tokens by dropping %d messages",
			formatCount(before), formatCount(w.HardLimit), formatCount(after), dropped))
	case byMessages:
		w.Warn(fmt.Sprintf("context of %d messages was over max_messages %d; truncated to %d messages (%s tokens) by dropping %d messages",
			len(w.Entries)+dropped, t.cfg.MaxMessages, len(w.Entries), formatCount(after), dropped))
	default:
		w.Warn(fmt.Sprintf("context of %s tokens was over the compaction target of %s; truncated to %s tokens by dropping %d messages",
			formatCount(before), formatCount(goal), formatCount(after), dropped))
	}
	return nil
}
