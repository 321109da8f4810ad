package compaction

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/contextcompiler/ctxc/internal/agentstate"
	"github.com/contextcompiler/ctxc/internal/policies"
	"github.com/contextcompiler/ctxc/internal/policies/diagnose"
)

// truncator is the "truncate" policy: the deterministic fallback that keeps the
// newest units contiguous and drops everything older than the first unit that
// does not fit (the contiguous-recency rule: never skip a large message
// and keep older ones), always keeping protected entries. The cut moves
// forward to the next user-turn boundary when there is one among the dropped
// candidates' successors, so a kept turn is whole. Unresolved
// failures it drops stay visible in a short note (a summary message) naming
// each, in the place of the dropped messages.
type truncator struct {
	cfg TruncateConfig
}

// Replayable: truncation reads only the view.
func (truncator) Replayable() bool { return true }

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
	if need := preamble + protectedTokens; w.HardLimit() > 0 && need > w.HardLimit() {
		// Never refuse what can be shrunk: the protected tool outputs are
		// cut first; only what cannot be cut refuses the call.
		fits := false
		if w.HardLimitExceeded() {
			protectedTokens, fits = shrinkProtected(w, protected, preamble, protectedTokens)
		}
		if !fits {
			return irreducible(w, protected, preamble, protectedTokens, protectedCount)
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

	// Summaries hold the facts of everything older: they go only when the
	// rest cannot be made to fit without dropping them too.
	keep, summaries := protected, 0
	for _, u := range units {
		if m := &w.Entries[u.Start].Message; !protected[u.Start] && m.Kind == agentstate.KindSummary && u.Len() == 1 {
			if summaries == 0 {
				keep = append([]bool(nil), protected...)
			}
			keep[u.Start] = true
			if byMessages {
				summaries++
			} else {
				summaries += unitTokens(w, u)
			}
		}
	}
	// Summaries go only when the window itself cannot be met without
	// dropping them (a target below it is not worth their facts), and only
	// from the view a call compiles: inside the log a later point can still
	// compact what is protected now.
	if summaries > 0 && (byMessages || w.HardLimit() <= 0 || !w.AtEnd() || preamble+protectedTokens+summaries <= w.HardLimit()) {
		room -= summaries
		if !byMessages && room < 0 && w.HardLimit() > 0 {
			room = 0
		}
		protected = keep
	} else if summaries > 0 && w.HardLimit() > 0 && !byMessages {
		room = w.HardLimit() - preamble - protectedTokens
	}
	drop, dropped := t.dropSet(w, units, protected, room, byMessages)
	if dropped == 0 {
		return nil
	}
	if _, noteTokens := failureNote(w, drop); noteTokens > 0 && !byMessages {
		// The note must fit too: make room for it and choose again.
		drop, dropped = t.dropSet(w, units, protected, room-noteTokens, byMessages)
	}
	before := w.UsedTokens()
	if note, noteTokens := failureNote(w, drop); note != nil && w.HardLimit() > 0 {
		kept := before + noteTokens
		for i := range w.Entries {
			if drop[i] {
				kept -= w.Entries[i].Tokens
			}
		}
		if kept > w.HardLimit() {
			return &agentstate.IrreducibleError{
				NeededTokens:    kept,
				AvailableTokens: w.HardLimit(),
				Detail: fmt.Sprintf("the protected messages (%s tokens with the system prompt and tools) and the note naming the failed calls that must stay visible (%s tokens) exceed the usable window",
					formatCount(preamble+protectedTokens), formatCount(noteTokens)),
			}
		}
	}
	removed := 0
	reason := fmt.Sprintf("truncated (%s): older than the newest messages that fit", t.cfg.Mode)
	for i := range w.Entries {
		if drop[i] {
			removed += w.Entries[i].Tokens
			dispose(w, &w.Entries[i], policies.DispositionDropped, TypeTruncate, reason)
		}
	}
	note, noteTokens := failureNote(w, drop)
	dropAppended(w, drop)
	w.Entries = removeEntries(w.Entries, drop)
	if note != nil {
		w.Entries = insertEntry(w.Entries, firstDropped(drop), agentstate.Entry{Message: *note})
		w.Touch(firstDropped(drop))
		w.Appended = append(w.Appended, *note)
	}
	after := before - removed + noteTokens
	switch {
	case w.HardLimit() > 0 && before > w.HardLimit():
		w.Warn(fmt.Sprintf("context of %s tokens exceeded the window's usable %s; truncated to %s tokens by dropping %d messages",
			formatCount(before), formatCount(w.HardLimit()), formatCount(after), dropped))
	case byMessages:
		w.Warn(fmt.Sprintf("context of %d messages was over max_messages %d; truncated to %d messages (%s tokens) by dropping %d messages",
			len(w.Entries)+dropped, t.cfg.MaxMessages, len(w.Entries), formatCount(after), dropped))
	default:
		w.Warn(fmt.Sprintf("context of %s tokens was over the compaction target of %s; truncated to %s tokens by dropping %d messages",
			formatCount(before), formatCount(goal), formatCount(after), dropped))
	}
	return nil
}

// dropSet chooses what to drop: from the newest unprotected unit back, keep
// units while they fit room, then drop every older one; then drop on to the
// next turn start, if one comes before the protected tail, so the kept turns
// are whole.
func (t truncator) dropSet(w *policies.Work, units []policies.Span, protected []bool, room int, byMessages bool) ([]bool, int) {
	drop := make([]bool, len(w.Entries))
	dropped, full, cut := 0, false, -1
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
		if !full {
			cut = k
		}
		full = true // everything older goes too: the kept tail stays contiguous
		for i := u.Start; i < u.End; i++ {
			drop[i] = true
			dropped++
		}
	}
	if dropped == 0 {
		return drop, 0
	}
	for k := cut + 1; k < len(units); k++ {
		u := units[k]
		if protected[u.Start] {
			break
		}
		if policies.IsTurnStart(&w.Entries[u.Start].Message) {
			for j := cut + 1; j < k; j++ {
				for i := units[j].Start; i < units[j].End; i++ {
					drop[i] = true
					dropped++
				}
			}
			break
		}
	}
	return drop, dropped
}

// failureNote writes the note that keeps dropped unresolved failures visible
// (invariant 5): a summary message covering the dropped messages that names
// each failure with its call id and error lines, and carries over the error
// lines ("[call ...]") of dropped summaries. nil when none is dropped.
func failureNote(w *policies.Work, drop []bool) (*agentstate.Message, int) {
	// Lines first: most truncations drop no failure, and then the note
	// costs one pass over the view, at every compaction point of a long log.
	var lines []string
	var visible []bool
	for i := range w.Entries {
		if !drop[i] {
			continue
		}
		m := &w.Entries[i].Message
		if m.Kind == agentstate.KindSummary {
			lines = append(lines, errorLines(m.Text(), false)...)
			continue
		}
		for _, p := range m.Parts {
			if p.Kind != agentstate.PartToolResult || !p.ToolResult.IsError {
				continue
			}
			if visible == nil {
				visible = policies.StaysVisible(w.Entries)
			}
			if !visible[i] {
				break
			}
			lines = append(lines, fmt.Sprintf("- %s [call %s] failed: %s", p.ToolResult.Name, p.ToolResult.ToolCallID, strings.Join(diagnose.Identify(p.ToolResult.Content, diagnose.DefaultLimits), "\n  ")))
		}
	}
	if len(lines) == 0 {
		return nil, 0
	}
	var covers []string
	for i := range w.Entries {
		if !drop[i] {
			continue
		}
		m := &w.Entries[i].Message
		if id := w.Entries[i].SourceID; id != "" {
			covers = append(covers, id)
		} else if m.Kind != agentstate.KindSummary {
			covers = append(covers, m.ID) // synthesized by normalize on every compile
		}
		if m.Kind == agentstate.KindSummary {
			covers = append(covers, m.CoversMessageIDs...)
		}
	}
	lines = uniqueLines(lines)
	// The note must not claim a message the view still shows.
	shown := map[string]bool{}
	for i := range w.Entries {
		if !drop[i] && w.Entries[i].SourceID != "" {
			shown[w.Entries[i].SourceID] = true
		}
	}
	kept := covers[:0]
	seen := map[string]bool{}
	for _, id := range covers {
		if !shown[id] && !seen[id] {
			seen[id] = true
			kept = append(kept, id)
		}
	}
	covers = kept
	// The summary layout lets later summaries merge the note like any other.
	text := fmt.Sprintf(summaryHeader+", left out by ctxc to fit the window.\n\n## %s\n%s\n",
		len(covers), secOpenErrors, strings.Join(lines, "\n"))
	m := agentstate.Message{ID: freeID(w, noteID(covers)), Role: agentstate.RoleUser, Kind: agentstate.KindSummary, Parts: []agentstate.Part{agentstate.TextPart(text)}, CoversMessageIDs: covers}
	n := 0
	if w.Counter() != nil {
		n, _ = w.Counter().CountMessage(&m)
	}
	return &m, n
}

func noteID(covers []string) string {
	sum := sha256.Sum256([]byte("truncated\n" + strings.Join(covers, "\n")))
	return SummaryIDPrefix + hex.EncodeToString(sum[:6])
}

// errorLines returns the items of a summary's sections on failed calls
// ("Errors still open", "Errors resolved": the deterministic summary's, the
// LLM summarizer's and the ones summarize adds itself all use these headings),
// with openOnly only those still open.
func errorLines(text string, openOnly bool) []string {
	var out []string
	open := false
	for _, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, "## "):
			open = strings.HasPrefix(line, "## Errors") && (!openOnly || strings.HasPrefix(line, "## "+secOpenErrors))
		case open && (strings.HasPrefix(line, "- ") || strings.HasPrefix(line, "  ") && len(out) > 0):
			out = append(out, line) // an item and its continuation lines
		}
	}
	return out
}

// uniqueLines keeps the first of equal lines, in order.
func uniqueLines(lines []string) []string {
	seen := map[string]bool{}
	out := lines[:0:0]
	for _, l := range lines {
		if !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	return out
}

// dropAppended forgets the summaries written in this run that are dropped:
// Compact must not persist what the view no longer shows.
func dropAppended(w *policies.Work, drop []bool) {
	gone := map[string]bool{}
	for i := range w.Entries {
		if drop[i] && w.Entries[i].SourceID == "" && w.Entries[i].Message.Kind == agentstate.KindSummary {
			gone[w.Entries[i].Message.ID] = true
		}
	}
	if len(gone) == 0 {
		return
	}
	kept := w.Appended[:0:0]
	for _, m := range w.Appended {
		if !gone[m.ID] {
			kept = append(kept, m)
		}
	}
	w.Appended = kept
}

func firstDropped(drop []bool) int {
	for i, d := range drop {
		if d {
			return i
		}
	}
	return 0
}

// insertEntry returns entries with e inserted at index at (into a new slice).
func insertEntry(entries []agentstate.Entry, at int, e agentstate.Entry) []agentstate.Entry {
	out := make([]agentstate.Entry, 0, len(entries)+1)
	out = append(out, entries[:at]...)
	out = append(out, e)
	return append(out, entries[at:]...)
}

// irreducible says why what must be kept cannot fit: the system prompt, the
// tools, the pinned messages, the first task and the newest turn, each with
// its size, and what the protected tool outputs take when cut to the least.
func irreducible(w *policies.Work, protected []bool, preamble, protectedTokens, protectedCount int) error {
	pinned, first, newest, rest := 0, 0, 0, 0
	firstTask := policies.FirstTask(w.Entries)
	newestStart := policies.RecentStart(w.Entries, 1)
	for i := range w.Entries {
		if !protected[i] {
			continue
		}
		e := &w.Entries[i]
		switch {
		case e.Message.Pinned:
			pinned += e.Tokens
		case i == firstTask:
			first += e.Tokens
		case i >= newestStart && e.Message.Role == agentstate.RoleUser:
			newest += e.Tokens
		default:
			rest += e.Tokens
		}
	}
	parts := []string{
		fmt.Sprintf("system prompt %s", formatCount(w.SystemTokens)),
		fmt.Sprintf("tools %s", formatCount(w.ToolTokens)),
		fmt.Sprintf("pinned messages %s", formatCount(pinned)),
		fmt.Sprintf("first task %s", formatCount(first)),
		fmt.Sprintf("newest turn %s", formatCount(newest)),
		fmt.Sprintf("the other %d protected messages, their tool outputs cut to the least %s", protectedCount, formatCount(rest)),
	}
	return &agentstate.IrreducibleError{
		NeededTokens:    preamble + protectedTokens,
		AvailableTokens: w.HardLimit(),
		Detail:          "what must be kept exceeds the usable window (tokens: " + strings.Join(parts, ", ") + ")",
	}
}
