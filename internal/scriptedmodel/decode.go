package scriptedmodel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/contextcompiler/ctxc/internal/providers/wire"
)

// decode fills req's neutral view from its body. Only what the view needs is
// read; everything else a client sends (thinking, metadata, cache_control,
// reasoning settings…) stays in Body as it came.
func decode(req *Request) error {
	if len(bytes.TrimSpace(req.Body)) == 0 {
		return fmt.Errorf("the body is empty: expected a JSON object")
	}
	var head struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
	}
	if err := json.Unmarshal(req.Body, &head); err != nil {
		return fmt.Errorf("the body is not a JSON object: %w", err)
	}
	req.Model, req.Stream = head.Model, head.Stream
	req.ThinkingOn = thinkingOn(req.Protocol, req.Body)
	switch req.Protocol {
	case AnthropicMessages, AnthropicCountTokens:
		return decodeAnthropic(req)
	case ChatCompletions:
		return decodeChat(req)
	case Responses:
		return decodeResponses(req)
	case GeminiGenerateContent:
		return decodeGemini(req)
	}
	return nil
}

// thinkingOn reads whether a body asks the model to think
// (Request.ThinkingOn). A field of another type than the API's leaves the
// rest read: decode says what is wrong with the body.
func thinkingOn(p Protocol, body []byte) bool {
	switch p {
	case AnthropicMessages:
		var b wire.AnthropicRequest
		_ = json.Unmarshal(body, &b)
		return b.Thinking != nil && (b.Thinking.Type == "enabled" || b.Thinking.Type == "adaptive")
	case Responses:
		var b wire.ResponsesRequest
		_ = json.Unmarshal(body, &b)
		if r := bytes.TrimSpace(b.Reasoning); len(r) > 0 && string(r) != "null" {
			return true
		}
		return slices.Contains(b.Include, "reasoning.encrypted_content")
	case GeminiGenerateContent:
		var b wire.GeminiRequest
		_ = json.Unmarshal(body, &b)
		g := b.GenerationConfig
		return g != nil && g.ThinkingConfig != nil && g.ThinkingConfig.IncludeThoughts
	}
	return false
}

// str is a string field a body may leave out ("" then).
func str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// appendMessage adds m to msgs, merging it into the last message when both
// are the same role and m only continues it (calls after an assistant's text,
// results after results), as the providers' own shapes would group them.
func appendMessage(msgs []Turn, m Turn) []Turn {
	if n := len(msgs); n > 0 {
		last := &msgs[n-1]
		calls := m.Role == "assistant" && last.Role == "assistant" && m.Text == ""
		results := m.Role == "user" && last.Role == "user" && m.Text == "" && last.Text == "" && len(m.ToolCalls) == 0
		if calls || results {
			last.ToolCalls = append(last.ToolCalls, m.ToolCalls...)
			last.ToolResults = append(last.ToolResults, m.ToolResults...)
			return msgs
		}
	}
	return append(msgs, m)
}

// textOf reads a string or an array of blocks with a "text" field (text,
// input_text, output_text), joining their texts with newlines.
func textOf(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return "", errNotString
	}
	var texts []string
	for _, b := range blocks {
		if b.Text != "" {
			texts = append(texts, b.Text)
		}
	}
	return strings.Join(texts, "\n"), nil
}

func decodeAnthropic(req *Request) error {
	var body wire.AnthropicRequest
	if err := json.Unmarshal(req.Body, &body); err != nil {
		return err
	}
	var err error
	if req.System, err = textOf(body.System); err != nil {
		return errField("system", err)
	}
	for _, t := range body.Tools {
		req.Tools = append(req.Tools, t.Name)
	}
	for i, m := range body.Messages {
		field := fmt.Sprintf("messages[%d]", i)
		if m.Role == "system" {
			// Claude Code sends its environment as a system message in the
			// conversation; the view keeps it with the system prompt.
			text, err := textOf(m.Content)
			if err != nil {
				return errField(field+".content", err)
			}
			req.System = strings.TrimPrefix(req.System+"\n\n"+text, "\n\n")
			continue
		}
		if m.Role != "user" && m.Role != "assistant" {
			return errField(field+".role", fmt.Errorf("%q is not user, assistant or system", m.Role))
		}
		msg := Turn{Role: m.Role}
		raw := bytes.TrimSpace(m.Content)
		if len(raw) > 0 && raw[0] == '"' {
			if err := json.Unmarshal(raw, &msg.Text); err != nil {
				return errField(field+".content", err)
			}
			req.Messages = append(req.Messages, msg)
			continue
		}
		var blocks []wire.AnthropicBlock
		if err := json.Unmarshal(raw, &blocks); err != nil {
			return errField(field+".content", errNotString)
		}
		var texts []string
		for j, b := range blocks {
			switch b.Type {
			case "text":
				texts = append(texts, str(b.Text))
			case "tool_use", "server_tool_use":
				msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: b.ID, Name: b.Name, Input: string(b.Input)})
			case "tool_result":
				content, err := textOf(b.Content)
				if err != nil {
					return errField(fmt.Sprintf("%s.content[%d].content", field, j), err)
				}
				msg.ToolResults = append(msg.ToolResults, ToolResult{CallID: b.ToolUseID, Content: content, IsError: b.IsError})
			}
		}
		msg.Text = strings.Join(texts, "\n")
		req.Messages = append(req.Messages, msg)
	}
	return nil
}

func decodeChat(req *Request) error {
	var body wire.OpenAIRequest
	if err := json.Unmarshal(req.Body, &body); err != nil {
		return err
	}
	for _, t := range body.Tools {
		name := t.Function.Name
		if t.Custom != nil {
			name += t.Custom.Name
		}
		req.Tools = append(req.Tools, name)
	}
	var system []string
	for i, raw := range body.Messages {
		field := fmt.Sprintf("messages[%d]", i)
		var m wire.OpenAIMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return errField(field, err)
		}
		text, err := textOf(m.Content)
		if err != nil {
			return errField(field+".content", err)
		}
		switch m.Role {
		case "system", "developer":
			system = append(system, text)
		case "user":
			req.Messages = appendMessage(req.Messages, Turn{Role: "user", Text: text})
		case "assistant":
			msg := Turn{Role: "assistant", Text: text}
			for _, c := range m.ToolCalls {
				msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: c.ID, Name: c.Function.Name, Input: c.Function.Arguments})
			}
			req.Messages = append(req.Messages, msg)
		case "tool":
			req.Messages = appendMessage(req.Messages, Turn{Role: "user", ToolResults: []ToolResult{{CallID: m.ToolCallID, Content: text}}})
		default:
			return errField(field+".role", fmt.Errorf("%q is not system, developer, user, assistant or tool", m.Role))
		}
	}
	req.System = strings.Join(system, "\n\n")
	return nil
}

func decodeResponses(req *Request) error {
	var body wire.ResponsesRequest
	if err := json.Unmarshal(req.Body, &body); err != nil {
		return err
	}
	var instructions string
	if len(body.Instructions) > 0 {
		if err := json.Unmarshal(body.Instructions, &instructions); err != nil {
			return errField("instructions", err)
		}
	}
	for _, t := range body.Tools {
		name := t.Name
		if name == "" {
			name = t.Type // built-in tools such as local_shell and web_search
		}
		req.Tools = append(req.Tools, name)
		if t.Type == "custom" {
			if req.CustomTools == nil {
				req.CustomTools = map[string]bool{}
			}
			req.CustomTools[name] = true
		}
	}
	system := []string{}
	if instructions != "" {
		system = append(system, instructions)
	}
	defer func() { req.System = strings.Join(system, "\n\n") }()
	raw := bytes.TrimSpace(body.Input)
	if len(raw) > 0 && raw[0] == '"' {
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			return errField("input", err)
		}
		req.Messages = []Turn{{Role: "user", Text: text}}
		return nil
	}
	var items []wire.ResponsesItem
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &items); err != nil {
			return errField("input", fmt.Errorf("expected a string or an array of items: %w", err))
		}
	}
	for i, it := range items {
		field := fmt.Sprintf("input[%d]", i)
		switch it.Type {
		case "message", "":
			text, err := textOf(it.Content)
			if err != nil {
				return errField(field+".content", err)
			}
			switch it.Role {
			case "system", "developer":
				system = append(system, text)
			case "user", "assistant":
				req.Messages = appendMessage(req.Messages, Turn{Role: it.Role, Text: text})
			default:
				return errField(field+".role", fmt.Errorf("%q is not system, developer, user or assistant", it.Role))
			}
		case "function_call":
			req.Messages = appendMessage(req.Messages, Turn{Role: "assistant", ToolCalls: []ToolCall{{ID: it.CallID, Name: it.Name, Input: string(it.Arguments)}}})
		case "custom_tool_call":
			req.Messages = appendMessage(req.Messages, Turn{Role: "assistant", ToolCalls: []ToolCall{{ID: it.CallID, Name: it.Name, Input: str(it.Input)}}})
		case "local_shell_call":
			req.Messages = appendMessage(req.Messages, Turn{Role: "assistant", ToolCalls: []ToolCall{{ID: it.CallID, Name: "local_shell", Input: string(it.Action)}}})
		case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
			out, err := textOf(it.Output)
			if err != nil {
				return errField(field+".output", err)
			}
			req.Messages = appendMessage(req.Messages, Turn{Role: "user", ToolResults: []ToolResult{{CallID: it.CallID, Content: out}}})
		}
	}
	return nil
}
