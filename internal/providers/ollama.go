package providers

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/contextcompiler/ctxc/internal/providers/wire"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

func renderOllama(c *conversation) ([]byte, error) {
	stream := false
	req := wire.OllamaRequest{Model: c.model, Messages: []wire.OllamaMessage{}, Tools: functionTools(c), Stream: &stream}
	// Without num_ctx Ollama uses its small default window and silently cuts
	// the front of a longer prompt: the system prompt and the task go first.
	if c.contextWindow > 0 {
		req.Options = &wire.OllamaOptions{NumCtx: c.contextWindow}
	}
	if rf := parseResponseFormat(c.responseFormat, c.notes); rf != nil {
		if rf.jsonOnly {
			req.Format = rawJSON("json")
		} else {
			req.Format = rf.schema
		}
	}
	if c.system != "" {
		req.Messages = append(req.Messages, wire.OllamaMessage{Role: "system", Content: c.system})
	}
	for i := range c.messages {
		req.Messages = append(req.Messages, ollamaMessagesOf(c, &c.messages[i])...)
	}
	return encodeJSON(req)
}

// ollamaMessagesOf renders one compiled message as /api/chat messages: one
// per result of a tool message, else one, or none when nothing of it can be
// sent.
func ollamaMessagesOf(c *conversation, m *agentstate.Message) (msgs []wire.OllamaMessage) {
	if m.Role == agentstate.RoleTool {
		for _, p := range m.Parts {
			if p.Kind != agentstate.PartToolResult {
				c.notes.add("non-result part(s) of tool messages omitted", 1)
				continue
			}
			msgs = append(msgs, wire.OllamaMessage{Role: "tool", Content: toolResultContent(p.ToolResult), ToolName: p.ToolResult.Name, ToolCallID: p.ToolResult.ToolCallID})
		}
		return msgs
	}
	out := wire.OllamaMessage{Role: "user"}
	switch m.Role {
	case agentstate.RoleAssistant:
		out.Role = "assistant"
	case agentstate.RoleSystem:
		out.Role = "system"
	}
	var texts, thinking []string
	for _, p := range m.Parts {
		switch {
		case p.Kind == agentstate.PartText:
			texts = append(texts, p.Text)
		case p.Kind == agentstate.PartToolCall && out.Role == "assistant":
			out.ToolCalls = append(out.ToolCalls, wire.OllamaToolCall{ID: p.ToolCall.ID, Function: wire.OllamaFunction{Name: p.ToolCall.Name, Arguments: argumentsObject(p.ToolCall.ArgumentsJSON)}})
		case p.Kind == agentstate.PartReasoning && out.Role == "assistant":
			if p.Reasoning.Text != "" {
				thinking = append(thinking, p.Reasoning.Text)
			}
			if len(p.Reasoning.Signature) > 0 {
				c.notes.add("reasoning signature(s) omitted (Ollama has no signatures)", 1)
			}
		case p.Kind == agentstate.PartImage && out.Role == "user":
			if _, data, ok := imageBytes(p.Image); ok {
				out.Images = append(out.Images, base64.StdEncoding.EncodeToString(data))
			} else {
				c.notes.add("image URL(s) omitted (Ollama takes only inline images)", 1)
			}
		default:
			c.notes.add(fmt.Sprintf("%s part(s) of %s messages omitted", p.Kind, m.Role), 1)
		}
	}
	out.Content = strings.Join(texts, "\n")
	out.Thinking = strings.Join(thinking, "\n")
	if len(texts) == 0 && len(thinking) == 0 && len(out.Images) == 0 && len(out.ToolCalls) == 0 {
		return nil
	}
	return append(msgs, out)
}

// ValidateOllama checks the /api/chat rules a rendered body must meet: known
// roles; tool messages directly after an assistant message with tool_calls,
// one per call, each naming a called tool; call names non-empty and
// arguments objects; images base64; options.num_ctx positive when set.
func ValidateOllama(body []byte) error {
	var req wire.OllamaRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return fmt.Errorf("invalid ollama body: %w", err)
	}
	var c checker
	if len(req.Messages) == 0 {
		c.fail("messages is empty")
	}
	if req.Options != nil && req.Options.NumCtx <= 0 {
		c.fail("options.num_ctx must be positive")
	}
	validateFunctionTools(&c, req.Tools)
	var open []pendingCall
	openAt := -1
	for i, m := range req.Messages {
		if m.Role == "tool" {
			id := m.ToolCallID
			_, found := takePending(&open, m.ToolName)
			if openAt < 0 || !found {
				c.fail("messages[%d]: tool message %q (call %q) answers no open call", i, m.ToolName, id)
			}
			continue
		}
		for _, pc := range open {
			c.fail("messages[%d]: call %q (%s) has no tool message", openAt, pc.id, pc.name)
		}
		open, openAt = nil, -1
		switch m.Role {
		case "system", "user", "assistant":
		default:
			c.fail("messages[%d]: unknown role %q", i, m.Role)
		}
		for j, img := range m.Images {
			if _, err := base64.StdEncoding.DecodeString(img); err != nil {
				c.fail("messages[%d].images[%d]: not base64", i, j)
			}
		}
		if len(m.ToolCalls) > 0 {
			if m.Role != "assistant" {
				c.fail("messages[%d]: tool_calls outside an assistant message", i)
			}
			openAt = i
		}
		for j, tc := range m.ToolCalls {
			if tc.Function.Name == "" || !isJSONObject(tc.Function.Arguments) {
				c.fail("messages[%d].tool_calls[%d]: want a name and object arguments", i, j)
			}
			open = append(open, pendingCall{id: tc.ID, name: tc.Function.Name})
		}
	}
	for _, pc := range open {
		c.fail("messages[%d]: call %q (%s) has no tool message", openAt, pc.id, pc.name)
	}
	return c.err("ollama")
}

func importOllama(im *importer, body []byte) {
	var req wire.OllamaRequest
	if !im.decode(body, &req, "") {
		return
	}
	im.out.Model = req.Model
	if o := req.Options; o != nil {
		im.out.MaxOutputTokens, im.out.ContextWindow = max(o.NumPredict, 0), o.NumCtx
	}
	im.openAITools(req.Tools)
	leading := true
	var pending []pendingCall
	for i, m := range req.Messages {
		if im.ended(i) {
			return
		}
		im.at = i
		path := fmt.Sprintf("messages[%d]", i)
		if m.Role != "system" {
			leading = false
		}
		var parts []agentstate.Part
		if m.Thinking != "" {
			parts = append(parts, agentstate.Part{Kind: agentstate.PartReasoning, Reasoning: agentstate.Reasoning{Text: m.Thinking}})
		}
		if m.Content != "" || (len(m.ToolCalls) == 0 && len(m.Images) == 0 && m.Thinking == "") {
			parts = append(parts, textPart(m.Content))
		}
		for j, img := range m.Images {
			data, err := base64.StdEncoding.DecodeString(img)
			if err != nil {
				im.fail(fmt.Sprintf("%s.images[%d]", path, j), "not base64: %v", err)
				continue
			}
			parts = append(parts, imagePart(agentstate.Image{Source: agentstate.ImageSourceData, Data: data, MediaType: http.DetectContentType(data)}))
		}
		switch m.Role {
		case "system":
			if leading {
				im.out.SystemPrompt = joinNonEmpty(im.out.SystemPrompt, m.Content)
				im.out.Preamble = i + 1
				continue
			}
			im.add(agentstate.RoleSystem, parts)
		case "user":
			im.add(agentstate.RoleUser, parts)
		case "assistant":
			pending = pending[:0]
			for j, tc := range m.ToolCalls {
				cp := fmt.Sprintf("%s.tool_calls[%d]", path, j)
				if tc.Function.Name == "" {
					im.fail(cp+".function.name", "a tool call needs a function name")
				}
				id := tc.ID
				if id == "" {
					id = fmt.Sprintf("ollama-call-%d-%d", i, j)
					im.syntheticCall(id)
				}
				pending = append(pending, pendingCall{id: id, name: tc.Function.Name})
				im.rememberCall(id, tc.Function.Name)
				parts = append(parts, agentstate.Part{Kind: agentstate.PartToolCall, ToolCall: agentstate.ToolCall{ID: id, Name: tc.Function.Name, ArgumentsJSON: argumentsFromObject(tc.Function.Arguments)}})
			}
			im.add(agentstate.RoleAssistant, parts)
		case "tool":
			id := m.ToolCallID
			if id != "" {
				for k, pc := range pending {
					if pc.id == id {
						pending = append(pending[:k], pending[k+1:]...)
						break
					}
				}
			} else {
				var ok bool
				if id, ok = takePending(&pending, m.ToolName); !ok {
					im.fail(path+".tool_name", "tool message %q answers no tool call of the previous assistant message", m.ToolName)
					continue
				}
			}
			name := m.ToolName
			if name == "" {
				name = im.callNames[id]
			}
			content, isErr := errorResult(m.Content)
			im.addResults([]agentstate.ToolResult{{ToolCallID: id, Name: name, Content: content, IsError: isErr}}, nil)
		default:
			im.fail(path+".role", "unsupported role %q (want system, user, assistant or tool)", m.Role)
		}
	}
}
