package eval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

// claudeLine is what eval reads of a Claude Code transcript line.
type claudeLine struct {
	Type             string          `json:"type"`
	SessionID        string          `json:"sessionId"`
	IsSidechain      bool            `json:"isSidechain"`
	IsMeta           bool            `json:"isMeta"`
	IsCompactSummary bool            `json:"isCompactSummary"`
	Message          json.RawMessage `json:"message"`
}

type claudeMessage struct {
	ID      string          `json:"id"`
	Model   string          `json:"model"`
	Content json.RawMessage `json:"content"`
}

type claudeBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// readClaudeCode reads a Claude Code session transcript: user and assistant
// lines of the main thread, in file order (see the package doc).
func readClaudeCode(lines []rawLine) (*conversation, error) {
	c := &conversation{}
	names := map[string]string{} // tool call id → tool name
	lastAssistant := ""          // message id of the last assistant line
	for _, l := range lines {
		var cl claudeLine
		if err := decodeObject(l, &cl); err != nil {
			return nil, err
		}
		if c.id == "" {
			c.id = cl.SessionID
		}
		if (cl.Type != "user" && cl.Type != "assistant") || cl.IsSidechain || cl.IsMeta {
			continue
		}
		if len(cl.Message) == 0 {
			return nil, lineErr(l.n, "message", "required on a %s line", cl.Type)
		}
		var msg claudeMessage
		if err := json.Unmarshal(cl.Message, &msg); err != nil {
			return nil, lineErr(l.n, "message", "%v", err)
		}
		raw := bytes.TrimSpace(msg.Content)
		var blocks []claudeBlock
		if len(raw) > 0 && raw[0] == '"' {
			var text string
			json.Unmarshal(raw, &text)
			blocks = []claudeBlock{{Type: "text", Text: text}}
		} else if err := json.Unmarshal(raw, &blocks); err != nil {
			return nil, lineErr(l.n, "message.content", "neither a string nor an array of content blocks: %v", err)
		}
		if cl.Type == "assistant" {
			if c.model == "" && msg.Model != "" && msg.Model != "<synthetic>" {
				c.model = msg.Model
			}
			// Claude Code writes one line per content block of a response;
			// lines of the same message id are one message.
			if msg.ID == "" || msg.ID != lastAssistant || len(c.messages) == 0 || c.messages[len(c.messages)-1].kind != "assistant" {
				c.messages = append(c.messages, convMessage{line: l.n, kind: "assistant"})
			}
			lastAssistant = msg.ID
			m := &c.messages[len(c.messages)-1]
			for i, b := range blocks {
				switch b.Type {
				case "text":
					m.text = joinText(m.text, b.Text)
				case "thinking":
					m.reasoning = joinText(m.reasoning, b.Thinking)
				case "tool_use":
					if b.ID == "" || b.Name == "" {
						return nil, lineErr(l.n, fmt.Sprintf("message.content[%d]", i), "a tool_use block needs an id and a name")
					}
					names[b.ID] = b.Name
					m.calls = append(m.calls, &ctxcv1.ToolCall{Id: b.ID, Name: b.Name, ArgumentsJson: compactJSON(b.Input)})
				}
			}
			continue
		}
		lastAssistant = ""
		var texts []string
		var results []*ctxcv1.ToolResult
		for i, b := range blocks {
			switch b.Type {
			case "text":
				texts = append(texts, b.Text)
			case "tool_result":
				content, ok := contentText(b.Content)
				if !ok {
					return nil, lineErr(l.n, fmt.Sprintf("message.content[%d].content", i), "neither a string nor an array of content blocks")
				}
				if b.ToolUseID == "" {
					return nil, lineErr(l.n, fmt.Sprintf("message.content[%d].tool_use_id", i), "required")
				}
				results = append(results, &ctxcv1.ToolResult{ToolCallId: b.ToolUseID, Name: names[b.ToolUseID], Content: content, IsError: b.IsError})
			}
		}
		if len(results) > 0 {
			c.messages = append(c.messages, convMessage{line: l.n, kind: "tool", results: results})
		}
		text := strings.Join(texts, "\n")
		switch {
		case strings.TrimSpace(text) == "":
		case cl.IsCompactSummary || len(results) > 0:
			// A summary Claude Code wrote when it compacted, or text sent
			// beside tool results, is context, not a new request.
			c.messages = append(c.messages, convMessage{line: l.n, kind: "event", text: text})
		default:
			c.messages = append(c.messages, convMessage{line: l.n, kind: "user", text: text})
		}
	}
	return c, nil
}

func joinText(a, b string) string {
	if a == "" {
		return b
	}
	if b == "" {
		return a
	}
	return a + "\n" + b
}

// compactJSON is raw JSON without insignificant space ("{}" for none).
func compactJSON(raw json.RawMessage) string {
	var buf bytes.Buffer
	if len(bytes.TrimSpace(raw)) == 0 || json.Compact(&buf, raw) != nil {
		return "{}"
	}
	return buf.String()
}
