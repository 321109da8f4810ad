package policies

import (
	"iter"
	"strings"

	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// Span is a half-open range [Start, End) of entries.
type Span struct{ Start, End int }

// Len is the number of entries in the span.
func (s Span) Len() int { return s.End - s.Start }

// Contains reports whether entry i is in the span.
func (s Span) Contains(i int) bool { return i >= s.Start && i < s.End }

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

// TaskHistory is the part of the latest turn that compaction may condense
// under pressure: everything after the message that opens it and before its
// newest tool unit (older calls with their results, what the assistant said
// between them, summaries of them). An agent makes 40 to 150 tool calls
// inside one prompt; a recency window that kept the whole running task
// verbatim would fill any window, so within the latest turn only the
// message that opens it and the newest call with its result stay verbatim
// (docs/ARCHITECTURE.md, "Invariants"). Empty when the latest turn has at
// most one tool unit, when the view ends with the assistant's answer (the
// task is no longer running), and when recentTurns is 0 (nothing is
// recent).
func TaskHistory(entries []agentstate.Entry, recentTurns int) Span {
	if recentTurns <= 0 || len(entries) == 0 {
		return Span{}
	}
	if last := &entries[len(entries)-1].Message; last.Role == agentstate.RoleAssistant && !last.HasToolCalls() {
		return Span{} // the task is answered: the turn is kept whole, as any recent turn
	}
	start := RecentStart(entries, 1)
	if start < len(entries) && IsTurnStart(&entries[start].Message) {
		start++
	}
	for i := len(entries) - 1; i >= start; i-- {
		if m := &entries[i].Message; m.Role == agentstate.RoleAssistant && m.HasToolCalls() {
			if i == start {
				return Span{}
			}
			return Span{Start: start, End: i}
		}
	}
	return Span{}
}

// Instruction returns the index of the user's instruction: the newest regular
// user message that holds a person's own words (PersonsWords), not a block an
// agent CLI writes itself (its environment, a reminder); -1 when there is none.
func Instruction(entries []agentstate.Entry) int {
	for i := len(entries) - 1; i >= 0; i-- {
		if m := &entries[i].Message; IsTurnStart(m) && PersonsWords(m.Text()) {
			return i
		}
	}
	return -1
}

// PersonsWords reports whether a user message's text holds words a person
// wrote: something outside the tagged blocks agent CLIs send as user messages
// of their own (Codex's <environment_context>, Claude Code's
// <system-reminder>, a <user_instructions> file), which set the scene but
// give no instruction.
func PersonsWords(text string) bool {
	rest := strings.TrimSpace(text)
	for rest != "" {
		if rest[0] != '<' {
			return true
		}
		end := strings.IndexByte(rest, '>')
		if end < 2 {
			return true
		}
		tag := rest[1:end]
		if i := strings.IndexAny(tag, " \t\n"); i >= 0 {
			tag = tag[:i]
		}
		if tag == "" || !isTagName(tag) {
			return true
		}
		closing := strings.Index(rest, "</"+tag+">")
		if closing < 0 {
			return true
		}
		rest = strings.TrimSpace(rest[closing+len(tag)+3:])
	}
	return false
}

func isTagName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '-' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
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
// (at user-message boundaries, between the steps of a long tool loop and at
// execution ends, never between a call and its results): right after a
// regular user message that opens a turn, right before one (the turn before
// it is over), right after the last tool message of a step from the
// LongTaskSteps-th step of a turn on, and right after an assistant answer
// without tool
// calls that the next entry does not continue (a tool message, or an
// assistant message of the same execution, would).
// Each point depends only on the entries around it, so a log grown by appends
// keeps every point it had. The end of the view is a point when
// AtCompactionPoint says so.
func CompactionPoints(entries []agentstate.Entry) []int {
	var points []int
	steps := 0 // the steps of the turn so far
	for p := 1; p < len(entries); p++ {
		last, next := &entries[p-1].Message, &entries[p].Message
		if IsTurnStart(last) {
			steps = 0
		}
		stepDone := last.Role == agentstate.RoleTool && next.Role != agentstate.RoleTool
		if stepDone {
			steps++
		}
		if endsAtPoint(last, next) || stepDone && steps >= LongTaskSteps {
			points = append(points, p)
		}
	}
	return points
}

// LongTaskSteps is the step of a turn from which every step's end is a
// compaction point: a prompt an agent works on for 40 to 150 tool calls
// compacts its own history as it goes, with the same hysteresis as between
// turns, while the few steps of an ordinary turn compact with the turn.
const LongTaskSteps = 8

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
