package policies

import (
	"iter"

	"github.com/contextcompiler/ctxc/internal/agentstate"
)

// Span is a half-open range [Start, End) of entries.
type Span struct{ Start, End int }

// Len is the number of entries in the span.
func (s Span) Len() int { return s.End - s.Start }

// Units splits entries into the smallest ranges that must be kept or dropped
// whole: an assistant message that calls tools together with the tool messages
// right after it that answer those calls, or any other single message.
func Units(entries []agentstate.Entry) []Span {
	units := make([]Span, 0, len(entries))
	for u := range EachUnit(entries) {
		units = append(units, u)
	}
	return units
}

// EachUnit yields the units of entries (Units) in order without collecting
// them: the checks and the protection marks walk them at every step of every
// compaction point of a long log.
func EachUnit(entries []agentstate.Entry) iter.Seq[Span] {
	return func(yield func(Span) bool) {
		for i := 0; i < len(entries); {
			end := i + 1
			if m := &entries[i].Message; m.Role == agentstate.RoleAssistant && m.HasToolCalls() {
				for end < len(entries) && entries[end].Message.Role == agentstate.RoleTool {
					end++
				}
			}
			if !yield(Span{i, end}) {
				return
			}
			i = end
		}
	}
}

// IsTurnStart reports whether a message opens a turn: a regular user message.
// Events, summaries and repairs do not.
func IsTurnStart(m *agentstate.Message) bool {
	return m.Role == agentstate.RoleUser && m.Kind == agentstate.KindRegular
}

// TurnStarts returns the indexes of the entries that open turns, oldest first.
func TurnStarts(entries []agentstate.Entry) []int {
	var starts []int
	for i := range entries {
		if IsTurnStart(&entries[i].Message) {
			starts = append(starts, i)
		}
	}
	return starts
}

// RecentStart returns the index of the first entry of the latest n turns (0
// when there are fewer turns; len(entries) when n is 0).
func RecentStart(entries []agentstate.Entry, n int) int {
	if n <= 0 {
		return len(entries)
	}
	// From the end, so that finding the window costs its length, not the
	// log's: the schedule asks at every compaction point.
	seen, start := 0, 0
	for i := len(entries) - 1; i >= 0; i-- {
		if !IsTurnStart(&entries[i].Message) {
			continue
		}
		if seen == n {
			return start // an older turn exists, so the window starts at the nth
		}
		seen, start = seen+1, i
	}
	return 0
}

// FirstTask returns the index of the first regular user message, or -1.
func FirstTask(entries []agentstate.Entry) int {
	for i := range entries {
		if IsTurnStart(&entries[i].Message) {
			return i
		}
	}
	return -1
}

// IsToolTrace reports whether a message belongs to the tool trace: a tool
// message, or an assistant message that calls tools.
func IsToolTrace(m *agentstate.Message) bool {
	return m.Role == agentstate.RoleTool || (m.Role == agentstate.RoleAssistant && m.HasToolCalls())
}

// CompactionPoints returns, in ascending order, the ends p of the prefixes
// entries[:p] (0 < p < len(entries)) at which compaction may run
// (at user-message boundaries and execution ends, never inside a tool loop):
// right after a regular user message that opens a turn, right before one (the
// turn before it is over), and right after an assistant answer without tool
// calls that the next entry does not continue (a tool message, or an
// assistant message of the same execution, would).
// Each point depends only on the entries around it, so a log grown by appends
// keeps every point it had. The end of the view is a point when
// AtCompactionPoint says so.
func CompactionPoints(entries []agentstate.Entry) []int {
	var points []int
	for p := 1; p < len(entries); p++ {
		if endsAtPoint(&entries[p-1].Message, &entries[p].Message) {
			points = append(points, p)
		}
	}
	return points
}

// AtCompactionPoint reports whether the end of the view is a compaction
// point: its last entry opens a turn, no execution is running, or the last
// entry is an answer of an execution that no longer runs.
func AtCompactionPoint(entries []agentstate.Entry, st *agentstate.State) bool {
	if len(entries) == 0 || st == nil || !st.Execution.Running() {
		return true
	}
	last := &entries[len(entries)-1].Message
	if IsTurnStart(last) {
		return true
	}
	if last.Role != agentstate.RoleAssistant || last.HasToolCalls() {
		return false
	}
	return last.ExecutionID != st.Execution.ID
}

func endsAtPoint(last, next *agentstate.Message) bool {
	if IsTurnStart(last) || IsTurnStart(next) {
		return true
	}
	if last.Role != agentstate.RoleAssistant || last.HasToolCalls() {
		return false
	}
	continues := next.Role == agentstate.RoleTool || (next.Role == agentstate.RoleAssistant && next.ExecutionID == last.ExecutionID)
	return !continues
}
