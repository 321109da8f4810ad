package eval

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

// The rules a compiled context must keep; see the package doc.
const (
	RuleSystemPrompt   = "system_prompt"
	RuleToolResult     = "tool_result_paired"
	RuleToolCall       = "tool_call_answered"
	RuleFirstTask      = "first_task"
	RulePinned         = "pinned"
	RuleNewestTurn     = "newest_turn"
	RuleLogOrder       = "log_order"
	maxViolationDetail = 160
)

// Violation is one broken rule of one compiled context.
type Violation struct {
	Rule   string `json:"rule"`
	Detail string `json:"detail"`
}

func (v Violation) String() string { return v.Rule + ": " + v.Detail }

// checkCompiled checks the compiled messages of state on their own, without
// trusting the server's checker.
func checkCompiled(state *ctxcv1.AgentState, msgs []*ctxcv1.Message) []Violation {
	var out []Violation
	bad := func(rule, format string, args ...any) {
		out = append(out, Violation{Rule: rule, Detail: clip(fmt.Sprintf(format, args...))})
	}
	ctx := state.GetContext()
	log := ctx.GetMessages()

	if sp := ctx.GetSystemPrompt(); sp != "" {
		if len(msgs) == 0 || msgs[0].GetRole() != ctxcv1.Role_ROLE_SYSTEM || plainText(msgs[0]) != sp {
			bad(RuleSystemPrompt, "message 0 is not the system prompt")
		}
	}

	checkToolPairs(state, msgs, bad)

	if i := firstUser(log); i >= 0 && findVerbatim(msgs, log[i]) < 0 {
		bad(RuleFirstTask, "the first user message %q is missing or changed", log[i].GetId())
	}
	for _, m := range log {
		if m.GetPinned() && findVerbatim(msgs, m) < 0 {
			bad(RulePinned, "pinned message %q is missing or changed", m.GetId())
		}
	}
	if i := lastUser(log); i >= 0 {
		at := findVerbatim(msgs, log[i])
		switch {
		case at < 0:
			bad(RuleNewestTurn, "the newest user message %q is missing or changed", log[i].GetId())
		default:
			for j := at + 1; j < len(msgs); j++ {
				if isRegularUser(msgs[j]) {
					bad(RuleNewestTurn, "message %d (%q) is a user message after the newest user message %q", j, msgs[j].GetId(), log[i].GetId())
					break
				}
			}
		}
	}

	index := make(map[string]int, len(log))
	for i, m := range log {
		index[m.GetId()] = i
	}
	last, lastID := -1, ""
	for j, m := range msgs {
		i, ok := index[m.GetId()]
		// A persisted summary is appended to the log by Compact but stands
		// where the messages it covers were.
		if !ok || m.GetId() == "" || m.GetKind() == ctxcv1.MessageKind_MESSAGE_KIND_SUMMARY {
			continue
		}
		if i <= last {
			bad(RuleLogOrder, "message %d (%q) shows log message %d after %q (log message %d)", j, m.GetId(), i, lastID, last)
		}
		last, lastID = i, m.GetId()
	}
	return out
}

// checkToolPairs: every result answers a call of the nearest preceding
// message that is not a tool message, an assistant message with tool calls;
// every call has its result in the tool messages right after it, except the
// calls of the last step of an execution that is still running.
func checkToolPairs(state *ctxcv1.AgentState, msgs []*ctxcv1.Message, bad func(rule, format string, args ...any)) {
	execOf := map[string]string{}
	for _, m := range state.GetContext().GetMessages() {
		execOf[m.GetId()] = m.GetExecutionId()
	}
	running := runningExecution(state)
	lastCalls := -1
	for j, m := range msgs {
		if len(toolCalls(m)) > 0 && m.GetRole() == ctxcv1.Role_ROLE_ASSISTANT {
			lastCalls = j
		}
	}
	for j := 0; j < len(msgs); j++ {
		m := msgs[j]
		if m.GetRole() == ctxcv1.Role_ROLE_TOOL {
			k := j - 1
			for k >= 0 && msgs[k].GetRole() == ctxcv1.Role_ROLE_TOOL {
				k--
			}
			calls := map[string]bool{}
			if k >= 0 && msgs[k].GetRole() == ctxcv1.Role_ROLE_ASSISTANT {
				for _, c := range toolCalls(msgs[k]) {
					calls[c.GetId()] = true
				}
			}
			for _, p := range m.GetParts() {
				if r := p.GetToolResult(); r != nil && !calls[r.GetToolCallId()] {
					bad(RuleToolResult, "message %d (%q) answers call %q, which the assistant message before it does not make", j, m.GetId(), r.GetToolCallId())
				}
			}
			continue
		}
		calls := toolCalls(m)
		if m.GetRole() != ctxcv1.Role_ROLE_ASSISTANT || len(calls) == 0 {
			continue
		}
		if j == lastCalls && running != "" && execOf[m.GetId()] == running {
			continue // the running execution's last step may still wait for results
		}
		answered := map[string]bool{}
		for k := j + 1; k < len(msgs) && msgs[k].GetRole() == ctxcv1.Role_ROLE_TOOL; k++ {
			for _, p := range msgs[k].GetParts() {
				if r := p.GetToolResult(); r != nil {
					answered[r.GetToolCallId()] = true
				}
			}
		}
		for _, c := range calls {
			if !answered[c.GetId()] {
				bad(RuleToolCall, "message %d (%q) calls %q (%s) and no tool message after it answers", j, m.GetId(), c.GetId(), c.GetName())
			}
		}
	}
}

// runningExecution is the id of the state's execution while it runs.
func runningExecution(state *ctxcv1.AgentState) string {
	e := state.GetExecution()
	switch e.GetStatus() {
	case ctxcv1.ExecutionStatus_EXECUTION_STATUS_RUNNING:
		return e.GetId()
	case ctxcv1.ExecutionStatus_EXECUTION_STATUS_UNSPECIFIED:
		return e.GetId() // unspecified with an id counts as running
	}
	return ""
}

func toolCalls(m *ctxcv1.Message) []*ctxcv1.ToolCall {
	var calls []*ctxcv1.ToolCall
	for _, p := range m.GetParts() {
		if c := p.GetToolCall(); c != nil {
			calls = append(calls, c)
		}
	}
	return calls
}

func isRegularUser(m *ctxcv1.Message) bool {
	return m.GetRole() == ctxcv1.Role_ROLE_USER && m.GetKind() == ctxcv1.MessageKind_MESSAGE_KIND_UNSPECIFIED
}

func firstUser(log []*ctxcv1.Message) int {
	for i, m := range log {
		if isRegularUser(m) {
			return i
		}
	}
	return -1
}

func lastUser(log []*ctxcv1.Message) int {
	for i := len(log) - 1; i >= 0; i-- {
		if isRegularUser(log[i]) {
			return i
		}
	}
	return -1
}

// findVerbatim is the index of the compiled message that shows m unchanged
// (same role, kind and parts), preferring the one with m's id; -1 if none.
func findVerbatim(msgs []*ctxcv1.Message, m *ctxcv1.Message) int {
	found := -1
	for j, c := range msgs {
		if sameContent(c, m) {
			if c.GetId() == m.GetId() {
				return j
			}
			if found < 0 {
				found = j
			}
		}
	}
	return found
}

// sameContent compares what a provider is sent: role, kind and every part.
func sameContent(a, b *ctxcv1.Message) bool {
	if a.GetRole() != b.GetRole() || a.GetKind() != b.GetKind() || len(a.GetParts()) != len(b.GetParts()) {
		return false
	}
	for i := range a.GetParts() {
		if !proto.Equal(a.GetParts()[i], b.GetParts()[i]) {
			return false
		}
	}
	return true
}

func plainText(m *ctxcv1.Message) string {
	var parts []string
	for _, p := range m.GetParts() {
		if t, ok := p.GetContent().(*ctxcv1.Part_Text); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "")
}

func clip(s string) string {
	if len(s) <= maxViolationDetail {
		return s
	}
	return s[:maxViolationDetail] + "…"
}
