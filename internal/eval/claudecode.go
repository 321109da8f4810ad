package eval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/internal/providers/wire"
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
		blocks, err := anthropicBlocks(msg.Content)
		if err != nil {
			return nil, lineErr(l.n, "message.content", "%v", err)
		}
		if cl.Type == "assistant" {
			if c.model == "" && msg.Model != "" && msg.Model != "<synthetic>" {
				c.model = msg.Model
			}
			m, err := anthropicAssistant(blocks, names, l.n, "message")
			if err != nil {
				return nil, err
			}
			// Claude Code writes one line per content block of a response;
			// lines of the same message id are one message.
			if k := len(c.messages); msg.ID != "" && msg.ID == lastAssistant && k > 0 && c.messages[k-1].kind == "assistant" {
				last := &c.messages[k-1]
				last.text, last.reasoning = joinText(last.text, m.text), joinText(last.reasoning, m.reasoning)
				last.calls = append(last.calls, m.calls...)
			} else {
				c.messages = append(c.messages, m)
			}
			lastAssistant = msg.ID
			continue
		}
		lastAssistant = ""
		msgs, err := anthropicUser(blocks, names, l.n, "message", cl.IsCompactSummary)
		if err != nil {
			return nil, err
		}
		c.messages = append(c.messages, msgs...)
	}
	return c, nil
}

// anthropicBlocks reads Anthropic message content: a string (one text
// block) or an array of blocks.
func anthropicBlocks(raw json.RawMessage) ([]wire.AnthropicBlock, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var text string
		err := json.Unmarshal(raw, &text)
		return []wire.AnthropicBlock{{Type: "text", Text: &text}}, err
	}
	var blocks []wire.AnthropicBlock
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, fmt.Errorf("neither a string nor an array of content blocks: %w", err)
	}
	return blocks, nil
}

// anthropicAssistant is an assistant message of Anthropic blocks (a Claude
// Code line's; field names it for errors): its text, thinking and tool
// calls, whose names it records.
func anthropicAssistant(blocks []wire.AnthropicBlock, names map[string]string, line int, field string) (convMessage, error) {
	m := convMessage{line: line, kind: "assistant"}
	for i, b := range blocks {
		switch b.Type {
		case "text":
			m.text = joinText(m.text, deref(b.Text))
		case "thinking":
			m.reasoning = joinText(m.reasoning, deref(b.Thinking))
		case "tool_use":
			if b.ID == "" || b.Name == "" {
				return m, lineErr(line, fmt.Sprintf("%s.content[%d]", field, i), "a tool_use block needs an id and a name")
			}
			names[b.ID] = b.Name
			m.calls = append(m.calls, &ctxcv1.ToolCall{Id: b.ID, Name: b.Name, ArgumentsJson: compactJSON(b.Input)})
		}
	}
	return m, nil
}

// anthropicUser is a user message of Anthropic blocks: its tool results,
// then its text, a user turn unless it is context (sent beside tool results,
// or a summary written at compaction), which is an event.
func anthropicUser(blocks []wire.AnthropicBlock, names map[string]string, line int, field string, summary bool) ([]convMessage, error) {
	var texts []string
	var results []*ctxcv1.ToolResult
	for i, b := range blocks {
		switch b.Type {
		case "text":
			texts = append(texts, deref(b.Text))
		case "tool_result":
			content, ok := contentText(b.Content)
			if !ok {
				return nil, lineErr(line, fmt.Sprintf("%s.content[%d].content", field, i), "neither a string nor an array of content blocks")
			}
			if b.ToolUseID == "" {
				return nil, lineErr(line, fmt.Sprintf("%s.content[%d].tool_use_id", field, i), "required")
			}
			results = append(results, &ctxcv1.ToolResult{ToolCallId: b.ToolUseID, Name: names[b.ToolUseID], Content: content, IsError: b.IsError})
		}
	}
	var msgs []convMessage
	if len(results) > 0 {
		msgs = append(msgs, convMessage{line: line, kind: "tool", results: results})
	}
	if text := strings.Join(texts, "\n"); strings.TrimSpace(text) != "" {
		kind := "user"
		if summary || len(results) > 0 {
			kind = "event"
		}
		msgs = append(msgs, convMessage{line: line, kind: kind, text: text})
	}
	return msgs, nil
}

// deref is a string field the block may not have ("" then).
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
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
