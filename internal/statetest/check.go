package statetest

import (
	"bytes"
	"fmt"
	"reflect"
	"sort"

	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// Check reports structural problems of a view that every stage after normalize
// must avoid, one line each (nil when there are none):
//   - an empty or duplicate message id;
//   - a message with no parts and no mask;
//   - a tool result that does not answer a call of the assistant message
//     opening its unit, or answers a call twice (an orphan);
//   - a call without its result in its unit, unless the message belongs to the
//     running execution (w.State.Execution while it runs).
func Check(w *policies.Work) []string {
	var out []string
	seen := make(map[string]bool, len(w.Entries))
	for i := range w.Entries {
		m := &w.Entries[i].Message
		switch {
		case m.ID == "":
			out = append(out, fmt.Sprintf("entry %d has no id", i))
		case seen[m.ID]:
			out = append(out, fmt.Sprintf("entry %d: duplicate id %s", i, m.ID))
		}
		seen[m.ID] = true
		if len(m.Parts) == 0 && m.Mask == nil {
			out = append(out, fmt.Sprintf("%s: no parts", m.ID))
		}
	}
	for _, u := range policies.Units(w.Entries) {
		head := &w.Entries[u.Start].Message
		if !(head.Role == agentstate.RoleAssistant && head.HasToolCalls()) {
			if head.Role == agentstate.RoleTool {
				out = append(out, fmt.Sprintf("%s: orphan tool message (no calling assistant message before it)", head.ID))
			}
			continue
		}
		calls := make(map[string]bool)
		for _, p := range head.Parts {
			if p.Kind == agentstate.PartToolCall {
				calls[p.ToolCall.ID] = false
			}
		}
		for i := u.Start + 1; i < u.End; i++ {
			m := &w.Entries[i].Message
			for _, p := range m.Parts {
				if p.Kind != agentstate.PartToolResult {
					continue
				}
				answered, ok := calls[p.ToolResult.ToolCallID]
				switch {
				case !ok:
					out = append(out, fmt.Sprintf("%s: orphan result for call %q", m.ID, p.ToolResult.ToolCallID))
				case answered:
					out = append(out, fmt.Sprintf("%s: second result for call %q", m.ID, p.ToolResult.ToolCallID))
				}
				calls[p.ToolResult.ToolCallID] = true
			}
		}
		if inRunning(w.State(), head) {
			continue
		}
		for _, p := range head.Parts {
			if p.Kind == agentstate.PartToolCall && !calls[p.ToolCall.ID] {
				out = append(out, fmt.Sprintf("%s: call %q of a finished execution has no result", head.ID, p.ToolCall.ID))
			}
		}
	}
	return out
}

// inRunning says m belongs to st's running execution.
func inRunning(st *agentstate.State, m *agentstate.Message) bool {
	return st != nil && st.Execution.Running() && m.ExecutionID == st.Execution.ID
}

// CheckPreserved reports, one line each, where a view w made from st breaks the
// promises every policy keeps about the log:
//   - the first task (first regular user message) is shown verbatim;
//   - pinned messages are shown verbatim;
//   - every reasoning part shown is byte-identical to one of its source message;
//   - a message of the running execution, when shown, is verbatim unless a
//     repair names it;
//   - every log message not shown, and every one shown changed, has a
//     Disposition (or, when changed, a repair naming it).
//
// "Shown" means an entry whose SourceID is the log id; "verbatim" means
// reflect.DeepEqual on the Message. With duplicate log ids the first wins.
func CheckPreserved(st *agentstate.State, w *policies.Work) []string {
	var out []string
	log := make(map[string]*agentstate.Message, len(st.Context.Messages))
	for i := range st.Context.Messages {
		m := &st.Context.Messages[i]
		if _, dup := log[m.ID]; !dup {
			log[m.ID] = m
		}
	}
	shown := make(map[string]*agentstate.Message, len(w.Entries))
	for i := range w.Entries {
		if src := w.Entries[i].SourceID; src != "" {
			if _, dup := shown[src]; !dup {
				shown[src] = &w.Entries[i].Message
			}
		}
	}
	repaired := make(map[string]bool)
	for _, r := range w.Report().Repairs {
		repaired[r.MessageID] = true
	}
	logEntries := agentstate.EntriesFromLog(st.Context.Messages)
	if first := policies.FirstTask(logEntries); first >= 0 {
		id := logEntries[first].Message.ID
		if got, ok := shown[id]; repaired[id] {
			// Normalization repaired a malformed first task; the invariant holds for the repaired log.
		} else if !ok {
			out = append(out, fmt.Sprintf("first task %s is not shown", id))
		} else if !reflect.DeepEqual(*got, *log[id]) && !(w.HardLimitExceeded() && policies.ShrunkFrom(got, log[id])) {
			out = append(out, fmt.Sprintf("first task %s is changed", id))
		}
	}
	for id, src := range log {
		got, ok := shown[id]
		// A pinned message that normalization had to repair (an orphan result, an
		// empty message) cannot be sent as it was; the repair report names it.
		if src.Pinned && !repaired[id] {
			if !ok {
				out = append(out, fmt.Sprintf("pinned %s is not shown", id))
			} else if !reflect.DeepEqual(*got, *src) {
				out = append(out, fmt.Sprintf("pinned %s is changed", id))
			}
		}
		if !ok {
			if _, disposed := w.Disposition(id); !disposed {
				out = append(out, fmt.Sprintf("%s is not shown and has no disposition", id))
			}
			continue
		}
		same := reflect.DeepEqual(*got, *src)
		// A mask already recorded in the log (by an earlier Compact) is honoured
		// even in the running execution; only new changes to it are violations.
		if !same && inRunning(w.State(), src) && !repaired[id] && src.Mask == nil {
			out = append(out, fmt.Sprintf("%s of the running execution is changed", id))
		}
		if _, disposed := w.Disposition(id); !same && !disposed && !repaired[id] {
			out = append(out, fmt.Sprintf("%s is changed and has neither disposition nor repair", id))
		}
		for _, p := range got.Parts {
			if p.Kind == agentstate.PartReasoning && !hasReasoning(src, p.Reasoning) {
				out = append(out, fmt.Sprintf("%s: reasoning part not byte-identical to its source", id))
			}
		}
	}
	sort.Strings(out)
	return out
}

func hasReasoning(m *agentstate.Message, r agentstate.Reasoning) bool {
	for _, p := range m.Parts {
		if p.Kind == agentstate.PartReasoning && p.Reasoning.Text == r.Text && bytes.Equal(p.Reasoning.Signature, r.Signature) {
			return true
		}
	}
	return false
}
