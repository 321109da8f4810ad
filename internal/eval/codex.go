package eval

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/internal/providers/wire"
)

// codexLine is a Codex CLI rollout line.
type codexLine struct {
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload"`
}

// codexPayload is what eval reads of a line's payload; which fields a
// payload has depends on the line's type (and a response item's type). A
// response_item's payload is a Responses input item; a session_meta's id
// is the item's ID, an exec_command_end event's call_id its CallID.
type codexPayload struct {
	wire.ResponsesItem
	// turn_context
	Model string `json:"model"`
	// event_msg exec_command_end
	ExitCode *int `json:"exit_code"`
	// compacted
	Message string `json:"message"`
}

// contextBlock is a user message Codex writes itself: one tagged block
// such as <environment_context>…</environment_context>.
var contextBlock = regexp.MustCompile(`(?s)^\s*<([a-z_]+)>.*</([a-z_]+)>\s*$`)

// readCodex reads a Codex CLI rollout: its response items in order, with
// the exit codes of its exec_command_end events (see the package doc).
func readCodex(lines []rawLine) (*conversation, error) {
	c := &conversation{}
	items := make([]codexPayload, len(lines))
	exitCodes := map[string]int{}
	for i, l := range lines {
		var cl codexLine
		if err := decodeObject(l, &cl); err != nil {
			return nil, err
		}
		if cl.Type == "" {
			return nil, lineErr(l.n, "type", "required on a rollout line")
		}
		if len(cl.Payload) > 0 && cl.Payload[0] == '{' {
			if err := json.Unmarshal(cl.Payload, &items[i]); err != nil && cl.Type == "response_item" {
				return nil, lineErr(l.n, "payload", "%v", err)
			}
		}
		p := &items[i]
		switch cl.Type {
		case "session_meta":
			if c.id == "" {
				c.id = p.ID
			}
		case "turn_context":
			if c.model == "" {
				c.model = p.Model
			}
		case "event_msg":
			if p.Type == "exec_command_end" && p.ExitCode != nil {
				exitCodes[p.CallID] = *p.ExitCode
			}
		case "compacted":
			if strings.TrimSpace(p.Message) != "" {
				c.messages = append(c.messages, convMessage{line: l.n, kind: "event", text: p.Message})
			}
		}
		if cl.Type != "response_item" {
			p.Type = "" // only response items are read below
		}
	}
	names := map[string]string{}
	var system []string
	for i, p := range items {
		n := lines[i].n
		last := func() *convMessage {
			if k := len(c.messages); k > 0 && c.messages[k-1].kind == "assistant" {
				return &c.messages[k-1] // calls right after the assistant's text or calls are the same response's
			}
			c.messages = append(c.messages, convMessage{line: n, kind: "assistant"})
			return &c.messages[len(c.messages)-1]
		}
		switch p.Type {
		case "message":
			text, ok := contentText(p.Content)
			if !ok {
				return nil, lineErr(n, "payload.content", "neither a string nor an array of content blocks")
			}
			switch p.Role {
			case "developer", "system":
				system = append(system, text)
			case "user":
				kind := "user"
				if m := contextBlock.FindStringSubmatch(text); m != nil && m[1] == m[2] {
					kind = "event"
				}
				c.messages = append(c.messages, convMessage{line: n, kind: kind, text: text})
			case "assistant":
				c.messages = append(c.messages, convMessage{line: n, kind: "assistant", text: text})
			default:
				return nil, lineErr(n, "payload.role", "%q is not developer, system, user or assistant", p.Role)
			}
		case "reasoning":
			var texts []string
			for _, s := range p.Summary {
				texts = append(texts, deref(s.Text))
			}
			if len(texts) > 0 {
				c.messages = append(c.messages, convMessage{line: n, kind: "assistant", reasoning: strings.Join(texts, "\n")})
			}
		case "function_call", "custom_tool_call", "local_shell_call":
			if p.CallID == "" {
				return nil, lineErr(n, "payload.call_id", "required on a %s", p.Type)
			}
			args := string(p.Arguments)
			switch p.Type {
			case "custom_tool_call":
				args = string(mustJSON(map[string]string{"input": deref(p.Input)}))
			case "local_shell_call":
				p.Name, args = "local_shell", compactJSON(p.Action)
			}
			if args == "" {
				args = "{}"
			}
			names[p.CallID] = p.Name
			m := last()
			m.calls = append(m.calls, &ctxcv1.ToolCall{Id: p.CallID, Name: p.Name, ArgumentsJson: args})
		case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
			out, ok := contentText(p.Output)
			if !ok {
				// Older rollouts store {"content": …, "success": …}.
				var o struct {
					Content string `json:"content"`
				}
				if json.Unmarshal(p.Output, &o) != nil {
					return nil, lineErr(n, "payload.output", "neither a string nor an array of content blocks")
				}
				out = o.Content
			}
			isError := exitFailure(out)
			if code, ok := exitCodes[p.CallID]; ok {
				isError = code != 0
			}
			c.messages = append(c.messages, convMessage{line: n, kind: "tool", results: []*ctxcv1.ToolResult{{ToolCallId: p.CallID, Name: names[p.CallID], Content: out, IsError: isError}}})
		}
	}
	c.systemPrompt = strings.Join(system, "\n\n")
	c.messages = mergeReasoning(c.messages)
	return c, nil
}

// mergeReasoning joins a reasoning-only assistant message to the assistant
// message after it, as one response's items.
func mergeReasoning(msgs []convMessage) []convMessage {
	var out []convMessage
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		if m.kind == "assistant" && m.text == "" && len(m.calls) == 0 && i+1 < len(msgs) && msgs[i+1].kind == "assistant" {
			next := msgs[i+1]
			next.reasoning = joinText(m.reasoning, next.reasoning)
			next.line = m.line
			msgs[i+1] = next
			continue
		}
		out = append(out, m)
	}
	return out
}

// exitStatus finds a command's exit status in a tool output, as agents
// write it: "[exit status 1]", "Exit code: 1" (Gemini CLI's "Exit Code: 1"),
// "Process exited with code 1".
var exitStatus = regexp.MustCompile(`(?m)^\s*\[?(?:exit status|exit code|Exit [Cc]ode:?|Process exited with code) (\d+)\]?\s*$`)

// exitFailure reports whether out says the command exited with a non-zero
// status: the error flag of formats that have none.
func exitFailure(out string) bool {
	for _, m := range exitStatus.FindAllStringSubmatch(out, -1) {
		if n, err := strconv.Atoi(m[1]); err == nil && n != 0 {
			return true
		}
	}
	return false
}
