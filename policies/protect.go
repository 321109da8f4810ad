package policies

import (
	"strings"

	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// Protection marks the entries that compaction must keep verbatim
// (docs/ARCHITECTURE.md, invariants): the first task, the user's instruction
// (Instruction), pinned messages, the latest w.RecentTurns turns but the
// history of the running task (TaskHistory: its older tool units, condensed
// under pressure), the running execution's trace unless the hard window is
// exceeded, and every entry before w.ScopeStart (outside the part of
// the view the runner lets this pass change). A mark on any entry of a tool
// unit marks the whole unit. The result is aligned with w.Entries at the time
// of the call.
//
// Unresolved failures are not protected verbatim: they must stay visible
// (StaysVisible), which a summary that names them satisfies, and protecting
// one must not protect the other outputs of its tool unit.
func Protection(w *Work) []bool {
	n := len(w.Entries)
	protected := make([]bool, n)
	for i := 0; i < min(w.ScopeStart(), n); i++ {
		protected[i] = true
	}
	if first := FirstTask(w.Entries); first >= 0 {
		protected[first] = true
	}
	if instruction := Instruction(w.Entries); instruction >= 0 {
		protected[instruction] = true
	}
	history := TaskHistory(w.Entries, w.RecentTurns())
	for i := RecentStart(w.Entries, w.RecentTurns()); i < n; i++ {
		if !history.Contains(i) || IsTurnStart(&w.Entries[i].Message) {
			protected[i] = true
		}
	}
	running := w.State() != nil && w.State().Execution.Running() && !w.HardLimitExceeded()
	for i := range w.Entries {
		m := &w.Entries[i].Message
		if m.Pinned || (running && m.ExecutionID != "" && m.ExecutionID == w.State().Execution.ID) {
			protected[i] = true
		}
	}
	for u := range EachUnit(w.Entries) {
		any := false
		for i := u.Start; i < u.End; i++ {
			any = any || protected[i]
		}
		if any {
			for i := u.Start; i < u.End; i++ {
				protected[i] = true
			}
		}
	}
	return protected
}

// StaysVisible marks the entries that hold unresolved failures
// (UnresolvedFailures): a transform may mask their tool unit's other outputs,
// and a summary that names them (NamesFailure) may take their place, but no
// transform removes or hides them otherwise. Aligned with entries.
func StaysVisible(entries []agentstate.Entry) []bool {
	visible := make([]bool, len(entries))
	for _, i := range UnresolvedFailures(entries) {
		visible[i] = true
	}
	return visible
}

// NamesFailure reports whether a summary's text names every failed result of
// m by its tool call id, so that the summary keeps the failure visible in
// m's place (invariant 5).
func NamesFailure(summaryText string, m *agentstate.Message) bool {
	named := false
	for _, p := range m.Parts {
		if p.Kind != agentstate.PartToolResult || !p.ToolResult.IsError {
			continue
		}
		if p.ToolResult.ToolCallID == "" || !strings.Contains(summaryText, p.ToolResult.ToolCallID) {
			return false
		}
		named = true
	}
	return named
}

// UnresolvedFailures returns the indexes of tool messages holding a failed
// result that no later successful result of the same tool resolves.
func UnresolvedFailures(entries []agentstate.Entry) []int {
	resolved := make(map[string]bool)
	var out []int
	for i := len(entries) - 1; i >= 0; i-- {
		m := &entries[i].Message
		if m.Role != agentstate.RoleTool {
			continue
		}
		failed := false
		for _, p := range m.Parts {
			if p.Kind != agentstate.PartToolResult {
				continue
			}
			if p.ToolResult.IsError {
				if !resolved[p.ToolResult.Name] {
					failed = true
				}
			}
		}
		for _, p := range m.Parts {
			if p.Kind == agentstate.PartToolResult && !p.ToolResult.IsError {
				resolved[p.ToolResult.Name] = true
			}
		}
		if failed {
			out = append(out, i)
		}
	}
	for l, r := 0, len(out)-1; l < r; l, r = l+1, r-1 {
		out[l], out[r] = out[r], out[l]
	}
	return out
}

// RepairPass marks a compact-stage policy that runs after the transforms whenever
// any of them changed the view, even when the target is already met.
type RepairPass interface {
	RepairPass()
}

// InPlaceEdit marks a compact-stage policy whose edits change the content of
// messages in place (tool outputs masked or cut) and never move, remove or add
// messages. Only such policies run on intake: on the messages that have just
// left the recency window, which a turn-by-turn caller has not sent before, so
// editing them costs no cached prompt prefix.
type InPlaceEdit interface {
	InPlaceEdit()
}

// TailDependent marks a policy whose change to a message may depend on the
// messages after it (a recency window that moves as the log grows), so a
// later compile may show that message differently. The runner marks what such
// a policy changes Unsettled, which ends the stable prefix there.
type TailDependent interface {
	TailDependent() bool
}

// ShrinkMarker opens the note that takes the place of the middle of a
// protected tool output cut to fit the window. Only when the context exceeds
// the hard window may a protected message change, and only so: its tool
// outputs cut, everything else as it was (invariants 3 and 6).
const ShrinkMarker = "[ctxc cut"

// ShrunkFrom reports whether m is was with some tool outputs, or the text of
// a user message, cut to fit the window (ShrinkMarker) and nothing else
// changed.
func ShrunkFrom(m, was *agentstate.Message) bool {
	if m.ID != was.ID || m.Role != was.Role || m.Kind != was.Kind || len(m.Parts) != len(was.Parts) {
		return false
	}
	for i := range m.Parts {
		a, b := &m.Parts[i], &was.Parts[i]
		if a.Kind != b.Kind {
			return false
		}
		if a.Kind == agentstate.PartToolResult && a.ToolResult.ToolCallID == b.ToolResult.ToolCallID && a.ToolResult.Content != b.ToolResult.Content {
			if !strings.Contains(a.ToolResult.Content, ShrinkMarker) {
				return false
			}
			continue
		}
		if a.Kind == agentstate.PartText && IsTurnStart(m) && a.Text != b.Text {
			// A user message too large for the window on its own (an agent
			// CLI's transcript to summarize), cut in its middle.
			if !strings.Contains(a.Text, ShrinkMarker) {
				return false
			}
			continue
		}
		if a.Text != b.Text || a.ToolResult != b.ToolResult || a.ToolCall.ID != b.ToolCall.ID {
			return false
		}
	}
	return true
}

// Replayable marks a compact-stage policy whose changes are a pure function
// of what it reads of the Work (the view, the log, the ledger, the budget and
// options): no model, no clock, nothing outside the request. The runner
// remembers the compaction schedule's progress across compiles
// (pipeline.ScheduleCache) only for profiles whose compact-stage policies all
// are, since a resumed run must compile what a full replay would.
type Replayable interface {
	Replayable() bool
}
