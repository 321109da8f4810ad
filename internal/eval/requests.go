package eval

import (
	"encoding/json"
	"errors"
	"strings"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/internal/providers"
	"github.com/contextcompiler/ctxc/internal/providers/wire"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// readRequestBodies reads a list of request bodies, one per line, as a proxy
// sees them, and takes the conversation of the last body with the most
// messages: a client resends the whole conversation with every call, so that
// body holds every turn, and replaying it turn by turn measures it like any
// session (every body is still decoded, and a bad one named by its line).
// The conversation is read as the proxy reads it, with providers.Import.
func readRequestBodies(lines []rawLine, f Format) (*conversation, error) {
	best, bestModel := -1, ""
	bestMessages := 0
	for i, l := range lines {
		model, messages, err := bodyHead(l, f)
		if err != nil {
			return nil, err
		}
		if messages >= bestMessages {
			best, bestModel, bestMessages = i, model, messages
		}
	}
	if best < 0 {
		return nil, lineErr(1, "", "the file holds no request body")
	}
	line := lines[best].n
	if bestModel == "" {
		return nil, lineErr(line, "model", "required")
	}
	format := agentstate.RenderOpenAI
	if f == FormatAnthropic {
		format = agentstate.RenderAnthropic
	}
	imp, err := providers.Import(format, lines[best].data)
	if err != nil {
		return nil, importErr(line, err)
	}
	return importedConversation(imp, f, line), nil
}

// bodyHead decodes one request body: its model and how many messages it
// holds ("messages" is required).
func bodyHead(l rawLine, f Format) (model string, messages int, err error) {
	var present bool
	if f == FormatAnthropic {
		var body wire.AnthropicRequest
		if err := decodeObject(l, &body); err != nil {
			return "", 0, err
		}
		model, messages, present = body.Model, len(body.Messages), body.Messages != nil
	} else {
		var body wire.OpenAIRequest
		if err := decodeObject(l, &body); err != nil {
			return "", 0, err
		}
		model, messages, present = body.Model, len(body.Messages), body.Messages != nil
	}
	if !present {
		return "", 0, lineErr(l.n, "messages", "required: a %s request body", f)
	}
	return model, messages, nil
}

// importErr names the line and field of what Import refused (its fields
// are under input_json).
func importErr(line int, err error) error {
	var invalid *agentstate.InvalidArgumentError
	if !errors.As(err, &invalid) || len(invalid.Violations) == 0 {
		return lineErr(line, "", "%v", err)
	}
	field := func(v agentstate.FieldViolation) string {
		return strings.TrimPrefix(strings.TrimPrefix(v.Field, "input_json"), ".")
	}
	first := invalid.Violations[0]
	desc := first.Description
	for _, v := range invalid.Violations[1:] {
		desc += "; " + field(v) + ": " + v.Description
	}
	return lineErr(line, field(first), "%s", desc)
}

// importedConversation is an imported body as a conversation of line: the
// system prompt with the system messages of the conversation after it; per
// body message its assistant message, or its tool results and then its
// text, which is an event when it came with results (Anthropic's text
// beside tool_result blocks). A Chat Completions result is an error when
// its output reports a non-zero exit status, as the format has no flag.
func importedConversation(imp *providers.Imported, f Format, line int) *conversation {
	c := &conversation{model: imp.Model, systemPrompt: imp.SystemPrompt}
	for _, t := range imp.Tools {
		c.tools = append(c.tools, &ctxcv1.ToolDefinition{Name: t.Name, Description: t.Description, ParametersJson: t.ParametersJSON})
	}
	chat := f == FormatOpenAIChat
	for k := 0; k < len(imp.Messages); {
		// The messages Import made of one body message.
		origin := bodyMessage(imp, k)
		end := k + 1
		for end < len(imp.Messages) && bodyMessage(imp, end) == origin {
			end++
		}
		var text []string
		var results []*ctxcv1.ToolResult
		user := false
		for _, m := range imp.Messages[k:end] {
			switch m.Role {
			case agentstate.RoleSystem:
				c.systemPrompt = strings.TrimPrefix(c.systemPrompt+"\n\n"+partsText(m.Parts), "\n\n")
			case agentstate.RoleAssistant:
				c.messages = append(c.messages, importedAssistant(m, line))
			case agentstate.RoleTool:
				for _, p := range m.Parts {
					if r := p.ToolResult; p.Kind == agentstate.PartToolResult {
						results = append(results, &ctxcv1.ToolResult{ToolCallId: r.ToolCallID, Name: r.Name, Content: r.Content, IsError: r.IsError || chat && exitFailure(r.Content)})
					}
				}
			case agentstate.RoleUser:
				user = true
				text = append(text, partsText(m.Parts))
			}
		}
		if len(results) > 0 {
			c.messages = append(c.messages, convMessage{line: line, kind: "tool", results: results})
		}
		// A Chat user message is a turn even when blank; Anthropic's blank
		// text is none.
		if t := joinTexts(text); user && (chat || strings.TrimSpace(t) != "") {
			kind := "user"
			if len(results) > 0 {
				kind = "event"
			}
			c.messages = append(c.messages, convMessage{line: line, kind: kind, text: t})
		}
		k = end
	}
	return c
}

// bodyMessage is the body message imported message k came from.
func bodyMessage(imp *providers.Imported, k int) int {
	if refs := imp.Origins[k]; len(refs) > 0 {
		return refs[0].Message
	}
	return -1 - k
}

// importedAssistant is an assistant message: its texts and its reasoning
// joined by newlines, its calls in order (no arguments: "{}").
func importedAssistant(m agentstate.Message, line int) convMessage {
	out := convMessage{line: line, kind: "assistant"}
	for _, p := range m.Parts {
		switch p.Kind {
		case agentstate.PartText:
			out.text = joinText(out.text, p.Text)
		case agentstate.PartReasoning:
			out.reasoning = joinText(out.reasoning, p.Reasoning.Text)
		case agentstate.PartToolCall:
			args := p.ToolCall.ArgumentsJSON
			if args == "" {
				args = "{}"
			}
			out.calls = append(out.calls, &ctxcv1.ToolCall{Id: p.ToolCall.ID, Name: p.ToolCall.Name, ArgumentsJson: args})
		}
	}
	return out
}

// partsText is the texts of parts joined by newlines (images left out).
func partsText(parts []agentstate.Part) string {
	var texts []string
	for _, p := range parts {
		if p.Kind == agentstate.PartText {
			texts = append(texts, p.Text)
		}
	}
	return joinTexts(texts)
}

// joinTexts joins the texts that are not empty with newlines.
func joinTexts(texts []string) string {
	out := ""
	for _, t := range texts {
		out = joinText(out, t)
	}
	return out
}

// anthropicBody reports whether a body with "messages" is Anthropic's: a
// top-level "system" or "anthropic_version", or a tool_use, tool_result or
// thinking block.
func anthropicBody(body map[string]json.RawMessage) bool {
	if body["system"] != nil || body["anthropic_version"] != nil {
		return true
	}
	var msgs []wire.AnthropicMessage
	json.Unmarshal(body["messages"], &msgs)
	for _, m := range msgs {
		var blocks []wire.AnthropicBlock
		_ = json.Unmarshal(m.Content, &blocks) // a string content holds none
		for _, b := range blocks {
			switch b.Type {
			case "tool_use", "tool_result", "thinking", "redacted_thinking":
				return true
			}
		}
	}
	return false
}
