package compaction

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/contextcompiler/ctxc/internal/diagnose"
	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
	"github.com/contextcompiler/ctxc/policies/isolate"
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
	cfg     TruncateConfig
	outputs *diagnose.Cache
	// det fits the summaries a truncation must drop into the room left.
	det DeterministicSummarizer
}

// Replayable: truncation reads only the view.
func (truncator) Replayable() bool { return true }

func (t truncator) Apply(ctx context.Context, w *policies.Work) error {
	byMessages := t.cfg.Mode == TruncateMessageLimit
	goal := target(w)
	if t.cfg.Mode == TruncateTokenLimit {
		goal = t.cfg.TargetTokens
		if goal == 0 {
			goal = int(float64(target(w)) * t.cfg.TargetRatio)
		}
	}
	if !byMessages {
		t.condenseTask(w, goal)
	}
	protected := policies.Protection(w)
	units := policies.Units(w.Entries)
	preamble := w.SystemTokens + w.ToolTokens
	protectedTokens, protectedCount := 0, 0
	for _, u := range units {
		if protected[u.Start] {
			protectedTokens += unitTokens(w.Entries, u)
			protectedCount += u.Len()
		}
	}
	cut := false
	if need := preamble + protectedTokens; w.HardLimit() > 0 && need > w.HardLimit() {
		// Never refuse what can be shrunk: the protected tool outputs are
		// cut first; only what cannot be cut refuses the call.
		fits := false
		cut = true
		if w.HardLimitExceeded() {
			// Cut so that the running task's condensed history and the
			// summaries still fit beside them, up to a quarter of the
			// window; only when that cannot be, to the window itself.
			rest := 0
			for _, u := range units {
				if !protected[u.Start] {
					rest += unitTokens(w.Entries, u)
				}
			}
			reserve := min(rest, w.HardLimit()/4)
			protectedTokens, fits = shrinkProtected(w, protected, preamble, protectedTokens, w.HardLimit()-reserve, t.outputs)
			if !fits && reserve > 0 {
				protectedTokens, fits = shrinkProtected(w, protected, preamble, protectedTokens, w.HardLimit(), t.outputs)
			}
			if !fits {
				protectedTokens, fits = shrinkUserText(w, protected, preamble, protectedTokens, w.HardLimit(), t.outputs)
			}
		}
		if !fits {
			return refusal(w.Entries, w.SystemTokens, w.ToolTokens, w.HardLimit(), func(i int) bool { return protected[i] }, 0)
		}
	}
	mustKeep := protected

	// room is what the kept unprotected units may use, in tokens or messages.
	room := goal - preamble - protectedTokens
	if room < 0 && cut {
		// What must be kept was cut to fit the window: the target is out
		// of reach, and dropping the rest would only lose what still fits.
		room = max(0, w.HardLimit()-preamble-protectedTokens)
	}
	if byMessages {
		room = t.cfg.MaxMessages - protectedCount
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
				summaries += unitTokens(w.Entries, u)
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
	drop, dropped := t.dropSet(w.Entries, units, protected, room, byMessages)
	if dropped == 0 {
		return nil
	}
	if _, noteTokens := t.failureNote(ctx, w, drop, noteFull, 0); noteTokens > 0 && !byMessages {
		// The note must fit too: make room for it and choose again.
		drop, dropped = t.dropSet(w.Entries, units, protected, room-noteTokens, byMessages)
	}
	before := w.UsedTokens()
	kept := before
	for i := range w.Entries {
		if drop[i] {
			kept -= w.Entries[i].Tokens
		}
	}
	room = 0
	if w.HardLimit() > 0 && !byMessages {
		room = w.HardLimit() - kept // what the note of what is dropped may take
	}
	note, noteTokens := t.failureNote(ctx, w, drop, noteFull, room)
	if note != nil && w.HardLimit() > 0 {
		// What is kept must fit beside the note: the protected outputs cut
		// further first, then a shorter note; refused only when neither
		// makes it fit.
		if over := kept + noteTokens - w.HardLimit(); over > 0 && w.HardLimitExceeded() {
			after, _ := shrinkProtected(w, mustKeep, preamble, protectedTokens, preamble+protectedTokens-over, t.outputs)
			kept -= protectedTokens - after
			protectedTokens = after
		}
		for level := noteFull + 1; kept+noteTokens > w.HardLimit() && level <= noteShortest; level++ {
			note, noteTokens = t.failureNote(ctx, w, drop, level, 0)
		}
		if kept+noteTokens > w.HardLimit() {
			return refusal(w.Entries, w.SystemTokens, w.ToolTokens, w.HardLimit(), func(i int) bool { return !drop[i] }, noteTokens)
		}
		before = w.UsedTokens()
	}
	removed := 0
	reason := fmt.Sprintf("truncated (%s): older than the newest messages that fit", t.cfg.Mode)
	for i := range w.Entries {
		if drop[i] {
			removed += w.Entries[i].Tokens
			dispose(w, &w.Entries[i], policies.DispositionDropped, TypeTruncate, reason)
		}
	}
	w.Appended = dropAppended(w.Entries, w.Appended, drop)
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

// condenseTask condenses the running task's history in place while the
// view is over goal, oldest first: each older call stays, and its output
// becomes a placeholder naming what identifies it (isolation's masking,
// failures and the running execution's outputs included), before any unit
// of the task is dropped. An agent 60 calls into one prompt keeps seeing
// what it ran and what broke.
func (t truncator) condenseTask(w *policies.Work, goal int) {
	history := policies.TaskHistory(w.Entries, w.RecentTurns())
	if history.Len() == 0 || w.UsedTokens() <= goal {
		return
	}
	protected := policies.Protection(w)
	isolate.MaskObservations(w, &isolate.MaskingConfig{PreviewChars: condensedPreviewChars}, isolate.MaskRun{
		TargetTokens: max(goal, 1),
		Protect:      func(i int) bool { return protected[i] || !history.Contains(i) },
		Policy:       TypeTruncate,
		Outputs:      t.outputs,
		Condensable:  history.Contains,
	})
}

// condensedPreviewChars is the head and the tail a condensed output of a
// running task keeps: a gist of it beside the lines that name its failure.
const condensedPreviewChars = 120

// dropSet chooses what to drop: from the newest unprotected unit back, keep
// units while they fit room, then drop every older one; then drop on to the
// next turn start, if one comes before the protected tail, so the kept turns
// are whole.
func (t truncator) dropSet(entries []agentstate.Entry, units []policies.Span, protected []bool, room int, byMessages bool) ([]bool, int) {
	drop := make([]bool, len(entries))
	dropped, full, cut := 0, false, -1
	for k := len(units) - 1; k >= 0; k-- {
		u := units[k]
		if protected[u.Start] {
			continue
		}
		size := u.Len()
		if !byMessages {
			size = unitTokens(entries, u)
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
		if policies.IsTurnStart(&entries[u.Start].Message) {
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

// noteOverhead is what a note costs beyond its text: the message's own
// tokens in the provider's format, about.
const noteOverhead = 8

// noteLevel is how much of each failure the note of a truncation says: all
// that identifies it, then one line a finding, then only which call failed
// (what invariant 5 needs), each tried when the last did not fit.
type noteLevel int

const (
	noteFull noteLevel = iota
	noteHeadlines
	noteShortest
)

// failureNote writes the note that keeps dropped unresolved failures visible
// (invariant 5): a summary message covering the dropped messages that names
// each failure with its call id and error lines, and carries over the error
// lines ("[call ...]") of dropped summaries; and, of the running task's
// history (policies.TaskHistory), what the dropped outputs printed that
// went wrong, with the call that printed it. nil when none is dropped.
func (t truncator) failureNote(ctx context.Context, w *policies.Work, drop []bool, level noteLevel, room int) (*agentstate.Message, int) {
	// Lines first: most truncations drop no failure, and then the note
	// costs one pass over the view, at every compaction point of a long log.
	var lines, carried, observed, summaries []string
	var visible []bool
	history := policies.TaskHistory(w.Entries, w.RecentTurns())
	calls := map[string]agentstate.ToolCall{}
	for i := range w.Entries {
		if !drop[i] {
			continue
		}
		m := &w.Entries[i].Message
		if m.Kind == agentstate.KindSummary {
			summaries = append(summaries, m.Text())
			for _, line := range errorLines(m.Text(), false) {
				switch {
				case level == noteFull:
					carried = append(carried, line)
				case strings.HasPrefix(line, "  "): // a continuation line
				case level == noteShortest && callID(line) != "":
					head, _, _ := strings.Cut(line, "[call "+callID(line)+"]")
					carried = append(carried, head+"[call "+callID(line)+"] failed")
				default:
					carried = append(carried, line)
				}
			}
			if history.Contains(i) && level < noteShortest {
				for _, item := range sectionItems(m.Text(), secSeen) {
					if level == noteHeadlines {
						item, _, _ = strings.Cut(item, "\n")
					}
					observed = append(observed, item)
				}
			}
			continue
		}
		for _, p := range m.Parts {
			if p.Kind == agentstate.PartToolCall {
				calls[p.ToolCall.ID] = p.ToolCall
			}
			if p.Kind != agentstate.PartToolResult {
				continue
			}
			if p.ToolResult.IsError {
				if visible == nil {
					visible = policies.StaysVisible(w.Entries)
				}
				if visible[i] {
					line := fmt.Sprintf("- %s [call %s] failed", p.ToolResult.Name, p.ToolResult.ToolCallID)
					switch level {
					case noteFull:
						line += ": " + strings.Join(t.outputs.Identify(p.ToolResult.Content, diagnose.DefaultLimits), "\n  ")
					case noteHeadlines:
						d := *t.outputs.Read(p.ToolResult.Content)
						d.Failed = true
						line += ": " + strings.Join(d.Headlines(diagnose.DefaultLimits), "\n  ")
					}
					lines = append(lines, line)
					continue
				}
			}
			if !history.Contains(i) || level == noteShortest {
				continue
			}
			content := p.ToolResult.Content
			if e := &w.Entries[i]; e.Changed {
				// A condensed output is read from the log, as it was.
				if full, ok := w.LogToolResult(e.SourceID, p.ToolResult.ToolCallID); ok {
					content = full
				}
			}
			limits := diagnose.DefaultLimits
			if level == noteHeadlines {
				limits.LinesPerFinding = 1
			}
			if problems := t.outputs.Read(content).ProblemLines(p.ToolResult.IsError, limits); len(problems) > 0 {
				observed = append(observed, fmt.Sprintf("- %s: %s", describeCall(calls[p.ToolResult.ToolCallID], p.ToolResult.Name), strings.Join(problems, "\n  ")))
			}
		}
	}
	if len(lines) == 0 && len(carried) == 0 && len(observed) == 0 && (len(summaries) == 0 || room <= 0) {
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
	// It counts the messages left out, not the summaries among them.
	counted := len(covers)
	for i := range w.Entries {
		if drop[i] && w.Entries[i].Message.Kind == agentstate.KindSummary && seen[w.Entries[i].SourceID] {
			counted--
		}
	}
	header := fmt.Sprintf(summaryHeader+", left out by ctxc to fit the window.\n", counted)
	// What the dropped outputs themselves say; a note that merges the
	// dropped summaries reads theirs in their own sections (an error left
	// behind unfixed stays so), the shorter notes carry their lines over.
	errorsOnly := func(lines []string) string {
		text := header
		if lines = uniqueLines(lines); len(lines) > 0 {
			text += fmt.Sprintf("\n## %s\n%s\n", secOpenErrors, strings.Join(lines, "\n"))
		}
		if len(observed) > 0 {
			text += fmt.Sprintf("\n## %s\n%s\n", secSeen, strings.Join(uniqueLines(observed), "\n"))
		}
		return text
	}
	text := errorsOnly(append(lines, carried...))
	if len(summaries) > 0 && room > 0 && level == noteFull {
		// Summaries that do not fit are fitted into the room there is, not
		// dropped for a note of their errors: the lightest items go first,
		// the constraints and decisions stay as long as they fit, and the
		// failures still open are never left out.
		// Its budget is the summary's own text: what the header and the
		// message cost beyond it is learned and taken off, a few times.
		budget, own := room-noteOverhead, errorsOnly(lines)
		for range maxShrinkTries {
			merged, err := t.det.Summarize(ctx, SummaryRequest{Merge: append(summaries[:len(summaries):len(summaries)], own), BudgetTokens: budget, Counter: w.Counter()})
			if err != nil {
				break
			}
			if _, body, ok := strings.Cut(merged, "\n"); ok {
				text = header + body
			}
			over := w.Counter().CountText(text) + noteOverhead - room
			if over <= 0 || w.Counter() == nil {
				break
			}
			budget -= over + shrinkSlack
		}
	}
	m := agentstate.Message{ID: freeID(w.Entries, w, noteID(covers)), Role: agentstate.RoleUser, Kind: agentstate.KindSummary, Parts: []agentstate.Part{agentstate.TextPart(text)}, CoversMessageIDs: covers}
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

// sectionItems returns the items of one section of a summary, each with
// its continuation lines.
func sectionItems(text, title string) []string {
	var out []string
	in := false
	for _, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, "## "):
			in = line == "## "+title
		case in && strings.HasPrefix(line, "- "):
			out = append(out, line)
		case in && strings.HasPrefix(line, "  ") && len(out) > 0:
			out[len(out)-1] += "\n" + line
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

// dropAppended is appended (the summaries written in this run) without
// those of entries that drop drops: Compact must not persist what the view
// no longer shows.
func dropAppended(entries []agentstate.Entry, appended []agentstate.Message, drop []bool) []agentstate.Message {
	gone := map[string]bool{}
	for i := range entries {
		if drop[i] && entries[i].SourceID == "" && entries[i].Message.Kind == agentstate.KindSummary {
			gone[entries[i].Message.ID] = true
		}
	}
	if len(gone) == 0 {
		return appended
	}
	kept := appended[:0:0]
	for _, m := range appended {
		if !gone[m.ID] {
			kept = append(kept, m)
		}
	}
	return kept
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

// refusal says why what must be kept (the entries kept marks, the preamble,
// and a note of noteTokens) cannot fit the window (hardLimit): each part
// with its size, the parts adding up to what it says is needed.
func refusal(entries []agentstate.Entry, systemTokens, toolTokens, hardLimit int, kept func(i int) bool, noteTokens int) error {
	type part struct {
		name   string
		tokens int
		count  int
	}
	parts := []part{{name: "system prompt", tokens: systemTokens}, {name: "tools", tokens: toolTokens}}
	add := func(name string, tokens int) {
		for k := range parts {
			if parts[k].name == name {
				parts[k].tokens += tokens
				parts[k].count++
				return
			}
		}
		parts = append(parts, part{name: name, tokens: tokens, count: 1})
	}
	first, instruction := policies.FirstTask(entries), policies.Instruction(entries)
	latest := policies.RecentStart(entries, 1)
	newest := len(entries)
	for i := len(entries) - 1; i >= latest; i-- {
		if m := &entries[i].Message; m.Role == agentstate.RoleAssistant && m.HasToolCalls() {
			newest = i
			break
		}
	}
	for i := range entries {
		if !kept(i) {
			continue
		}
		e := &entries[i]
		switch {
		case e.Message.Pinned:
			add("pinned messages", e.Tokens)
		case i == first:
			add("first task", e.Tokens)
		case i == instruction:
			add("the user's instruction", e.Tokens)
		case e.Message.Kind == agentstate.KindSummary:
			add("summaries", e.Tokens)
		case i >= newest:
			add("the newest call with its result (its output cut to the least)", e.Tokens)
		case i >= latest:
			add("the rest of the newest turn", e.Tokens)
		default:
			add("earlier messages kept", e.Tokens)
		}
	}
	if noteTokens > 0 {
		add("the note naming the failed calls that must stay visible", noteTokens)
	}
	need := 0
	names := make([]string, 0, len(parts))
	for _, p := range parts {
		need += p.tokens
		names = append(names, fmt.Sprintf("%s %s", p.name, formatCount(p.tokens)))
	}
	return &agentstate.IrreducibleError{
		NeededTokens:    need,
		AvailableTokens: hardLimit,
		Detail:          "what must be kept exceeds the usable window (tokens: " + strings.Join(names, ", ") + ")",
	}
}
