package providers

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"

	"github.com/contextcompiler/ctxc/internal/providers/wire"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

func functionTools(c *conversation) []wire.OpenAITool {
	tools := make([]wire.OpenAITool, len(c.tools))
	for i, t := range c.tools {
		tools[i] = wire.OpenAITool{Type: "function", Function: wire.OpenAIFunctionDecl{Name: t.Name, Description: t.Description, Parameters: c.toolSchemas[i]}}
	}
	return tools
}

func renderOpenAI(c *conversation) ([]byte, error) {
	req := wire.OpenAIRequest{Model: c.model, Messages: []json.RawMessage{}, Tools: functionTools(c)}
	if rf := parseResponseFormat(c.responseFormat, c.notes); rf != nil {
		req.ResponseFormat = rf.openAI
	}
	add := func(m wire.OpenAIMessage) { req.Messages = append(req.Messages, rawJSON(m)) }
	if c.system != "" {
		add(wire.OpenAIMessage{Role: "system", Content: rawJSON(c.system)})
	}
	for i := range c.messages {
		for _, m := range openAIMessagesOf(c, &c.messages[i]) {
			add(m)
		}
	}
	return encodeJSON(req)
}

// openAIMessagesOf renders one compiled message as Chat Completions
// messages: one per result of a tool message, else one, or none when
// nothing of it can be sent.
func openAIMessagesOf(c *conversation, m *agentstate.Message) (out []wire.OpenAIMessage) {
	switch m.Role {
	case agentstate.RoleTool:
		for _, p := range m.Parts {
			if p.Kind == agentstate.PartToolResult {
				out = append(out, wire.OpenAIMessage{Role: "tool", ToolCallID: p.ToolResult.ToolCallID, Content: rawJSON(toolResultContent(p.ToolResult))})
			} else {
				c.notes.add("non-result part(s) of tool messages omitted", 1)
			}
		}
	case agentstate.RoleAssistant:
		msg := wire.OpenAIMessage{Role: "assistant"}
		var texts []string
		for _, p := range m.Parts {
			switch p.Kind {
			case agentstate.PartText:
				texts = append(texts, p.Text)
			case agentstate.PartToolCall:
				args := p.ToolCall.ArgumentsJSON
				if blank(args) {
					args = "{}"
				}
				msg.ToolCalls = append(msg.ToolCalls, wire.OpenAIToolCall{ID: p.ToolCall.ID, Type: "function", Function: wire.OpenAIFunction{Name: p.ToolCall.Name, Arguments: args}})
			case agentstate.PartReasoning:
				c.notes.add("reasoning part(s) omitted (Chat Completions accepts no reasoning input)", 1)
			default:
				c.notes.add("non-text part(s) of assistant messages omitted", 1)
			}
		}
		msg.Content = openAIContent(texts, nil)
		if msg.Content == nil && len(msg.ToolCalls) == 0 {
			return nil
		}
		out = append(out, msg)
	default: // user, and system messages inside the log
		role := "user"
		if m.Role == agentstate.RoleSystem {
			role = "system"
		}
		var texts []string
		var images []string
		for _, p := range m.Parts {
			switch {
			case p.Kind == agentstate.PartText:
				texts = append(texts, p.Text)
			case p.Kind == agentstate.PartImage && role == "user":
				images = append(images, openAIImage(p.Image))
			default:
				c.notes.add(fmt.Sprintf("%s part(s) of %s messages omitted", p.Kind, role), 1)
			}
		}
		if content := openAIContent(texts, images); content != nil {
			out = append(out, wire.OpenAIMessage{Role: role, Content: content})
		}
	}
	return out
}

// openAIContent is a plain string for one text, content parts otherwise, nil for nothing.
func openAIContent(texts, imageURLs []string) json.RawMessage {
	if len(imageURLs) == 0 {
		switch len(texts) {
		case 0:
			return nil
		case 1:
			return rawJSON(texts[0])
		}
	}
	parts := make([]wire.OpenAIContentPart, 0, len(texts)+len(imageURLs))
	for i := range texts {
		parts = append(parts, wire.OpenAIContentPart{Type: "text", Text: &texts[i]})
	}
	for _, u := range imageURLs {
		parts = append(parts, wire.OpenAIContentPart{Type: "image_url", ImageURL: &wire.OpenAIImageURL{URL: u}})
	}
	return rawJSON(parts)
}

func openAIImage(img agentstate.Image) string {
	if img.Source == agentstate.ImageSourceData || (img.URL == "" && len(img.Data) > 0) {
		return dataURL(mediaTypeOf(img.MediaType, img.Data), img.Data)
	}
	return img.URL
}

// ValidateOpenAI checks the Chat Completions rules a rendered body must meet:
// known roles; every assistant message with tool_calls is followed directly
// by one tool message per call id (and tool messages appear nowhere else);
// call ids unique and non-empty; function names non-empty; content present
// where required; tool parameters are objects.
func ValidateOpenAI(body []byte) error {
	var req wire.OpenAIRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return fmt.Errorf("invalid openai body: %w", err)
	}
	var c checker
	if len(req.Messages) == 0 {
		c.fail("messages is empty")
	}
	validateFunctionTools(&c, req.Tools)
	ids := make(map[string]bool)
	var open map[string]bool // calls of the latest assistant message still unanswered
	openAt := -1
	closeOpen := func() {
		for id := range open {
			c.fail("messages[%d]: tool call %q has no tool message", openAt, id)
		}
		open, openAt = nil, -1
	}
	for i, raw := range req.Messages {
		var m wire.OpenAIMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			c.fail("messages[%d]: %v", i, err)
			continue
		}
		if m.Role == "tool" {
			switch {
			case openAt < 0:
				c.fail("messages[%d]: tool message without a preceding assistant tool call", i)
			case !open[m.ToolCallID]:
				c.fail("messages[%d]: tool_call_id %q answers no open call", i, m.ToolCallID)
			default:
				delete(open, m.ToolCallID)
			}
			if !isJSONString(m.Content) && !textParts(m.Content) {
				c.fail("messages[%d]: tool content must be a string or text parts", i)
			}
			continue
		}
		closeOpen()
		switch m.Role {
		case "system", "developer", "user":
			if len(m.Content) == 0 || string(m.Content) == "null" {
				c.fail("messages[%d]: %s message without content", i, m.Role)
			}
		case "function":
			// The deprecated result of an assistant's function_call.
		case "assistant":
			if (len(m.Content) == 0 || string(m.Content) == "null") && len(m.ToolCalls) == 0 && m.FunctionCall == nil {
				c.fail("messages[%d]: assistant message without content, tool_calls or function_call", i)
			}
			if len(m.ToolCalls) > 0 {
				open, openAt = make(map[string]bool), i
			}
			for j, tc := range m.ToolCalls {
				switch {
				case tc.ID == "":
					c.fail("messages[%d].tool_calls[%d]: empty id", i, j)
				case ids[tc.ID]:
					c.fail("messages[%d].tool_calls[%d]: duplicate id %q", i, j, tc.ID)
				}
				ids[tc.ID] = true
				open[tc.ID] = true
				if name, _ := tc.NameAndArguments(); tc.Type != "function" && tc.Type != "custom" || name == "" {
					c.fail("messages[%d].tool_calls[%d]: want type function or custom, and a name", i, j)
				}
			}
		default:
			c.fail("messages[%d]: unknown role %q", i, m.Role)
		}
	}
	closeOpen()
	return c.err("openai")
}

func validateFunctionTools(c *checker, tools []wire.OpenAITool) {
	for i, t := range tools {
		if t.Type == "custom" && t.Custom != nil && t.Custom.Name != "" {
			continue
		}
		if t.Type != "function" || t.Function.Name == "" {
			c.fail("tools[%d]: want type function (or custom) and a name", i)
		}
		if len(t.Function.Parameters) > 0 && !isJSONObject(t.Function.Parameters) {
			c.fail("tools[%d]: parameters must be an object", i)
		}
	}
}

// textParts reports whether raw is an array of text content parts.
func textParts(raw json.RawMessage) bool {
	var parts []wire.OpenAIContentPart
	if json.Unmarshal(raw, &parts) != nil || len(parts) == 0 {
		return false
	}
	for _, p := range parts {
		if p.Type != "text" || p.Text == nil {
			return false
		}
	}
	return true
}

func isJSONString(raw json.RawMessage) bool {
	var s string
	return json.Unmarshal(raw, &s) == nil
}

func isJSONObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && m != nil
}

// openAITools imports tool definitions in the OpenAI shape (Ollama uses it too).
func (im *importer) openAITools(tools []wire.OpenAITool) {
	for i, t := range tools {
		if t.Custom != nil {
			t.Function = *t.Custom
		}
		if t.Function.Name == "" {
			im.fail(fmt.Sprintf("tools[%d].function.name", i), "a tool needs a name")
		}
		im.out.Tools = append(im.out.Tools, agentstate.ToolDefinition{Name: t.Function.Name, Description: t.Function.Description, ParametersJSON: schemaText(t.Function.Parameters)})
	}
}

func importOpenAI(im *importer, body []byte) {
	var req wire.OpenAIRequest
	if !im.decode(body, &req, "") {
		return
	}
	im.openAIHead(req.Model, req.MaxTokens, req.MaxCompletionTokens, req.Tools)
	leading := true
	for i, raw := range req.Messages {
		if im.ended(i) {
			return
		}
		path := fmt.Sprintf("messages[%d]", i)
		var m wire.OpenAIMessage
		if !im.decode(raw, &m, path) {
			continue
		}
		im.openAIMessage(i, &m, &leading, func(allowImages bool) []agentstate.Part {
			parts, _ := openAIImportContent(im, m.Content, path, allowImages)
			return parts
		})
	}
}

// openAICommon is a Chat Completions body as most clients write it, read in
// one pass: every content a string, text, refusal or image_url parts, or
// nothing.
type openAICommon struct {
	Model    string `json:"model"`
	Messages []struct {
		Role         string                `json:"role"`
		Content      any                   `json:"content"`
		ToolCalls    []wire.OpenAIToolCall `json:"tool_calls"`
		ToolCallID   string                `json:"tool_call_id"`
		FunctionCall *wire.OpenAIFunction  `json:"function_call"`
		Name         string                `json:"name"`
	} `json:"messages"`
	Tools               []wire.OpenAITool `json:"tools"`
	MaxTokens           int               `json:"max_tokens"`
	MaxCompletionTokens int               `json:"max_completion_tokens"`
}

// importOpenAICommon imports a body of the common shape in one decoding
// pass, where importOpenAI decodes each message again to say where a
// problem is (a long conversation costs several times less); false, with
// nothing imported, for a body of another shape, which importOpenAI reads.
func importOpenAICommon(im *importer, body []byte) bool {
	var req openAICommon
	if decodeCommon(body, &req) != nil {
		return false
	}
	contents := make([][]agentstate.Part, len(req.Messages))
	for i, m := range req.Messages {
		if im.ended(i) {
			return false
		}
		var ok bool
		if contents[i], ok = commonContent(m.Content, m.Role == "user"); !ok {
			return false
		}
	}
	im.openAIHead(req.Model, req.MaxTokens, req.MaxCompletionTokens, req.Tools)
	leading := true
	for i, m := range req.Messages {
		if im.ended(i) {
			return true
		}
		om := wire.OpenAIMessage{Role: m.Role, ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID, FunctionCall: m.FunctionCall, Name: m.Name}
		im.openAIMessage(i, &om, &leading, func(bool) []agentstate.Part { return contents[i] })
	}
	return true
}

// decodeCommon decodes a body of the common shape about twice as fast as
// encoding/json (the proxy reads every call's whole conversation): the v2
// decoder, matching names as encoding/json does. What it refuses and
// encoding/json takes (duplicate names, invalid UTF-8) goes to the slower
// path, which decodes as before.
func decodeCommon(body []byte, v any) error {
	return jsonv2.Unmarshal(body, v, jsonv2.MatchCaseInsensitiveNames(true),
		jsonv1.MatchCaseSensitiveDelimiter(true), jsonv1.CallMethodsWithLegacySemantics(true))
}

// commonContent reads a content decoded as any: nil, a string, or parts of
// type text, refusal and (with allowImages) image_url; ok is false for
// anything else, which openAIImportContent reports.
func commonContent(v any, allowImages bool) (parts []agentstate.Part, ok bool) {
	switch c := v.(type) {
	case nil:
		return nil, true
	case string:
		return []agentstate.Part{textPart(c)}, true
	case []any:
		for _, e := range c {
			cp, _ := e.(map[string]any)
			var text string
			ok = false // a part of no known type declines the body
			switch cp["type"] {
			case "text":
				text, ok = cp["text"].(string)
			case "refusal":
				text, ok = cp["refusal"].(string)
			case "image_url":
				img, _ := cp["image_url"].(map[string]any)
				url, _ := img["url"].(string)
				if !allowImages || url == "" {
					return nil, false
				}
				if mt, data, isData := parseDataURL(url); isData {
					parts = append(parts, imagePart(agentstate.Image{Source: agentstate.ImageSourceData, Data: data, MediaType: mt}))
				} else {
					parts = append(parts, imagePart(agentstate.Image{Source: agentstate.ImageSourceURL, URL: url}))
				}
				continue
			}
			if !ok {
				return nil, false
			}
			parts = append(parts, textPart(text))
		}
		return parts, true
	}
	return nil, false
}

// openAIHead imports what a Chat Completions body says besides its
// messages: the model, the answer's limit and the tools.
func (im *importer) openAIHead(model string, maxTokens, maxCompletionTokens int, tools []wire.OpenAITool) {
	im.out.Model = model
	im.out.MaxOutputTokens = max(maxCompletionTokens, maxTokens)
	im.openAITools(tools)
}

// openAIMessage imports message i of a Chat Completions body, whose
// content reads it as parts: leading system and developer messages (while
// *leading) become the system prompt, the others messages of their role.
func (im *importer) openAIMessage(i int, m *wire.OpenAIMessage, leading *bool, content func(allowImages bool) []agentstate.Part) {
	role, toolCalls, toolCallID := m.Role, m.ToolCalls, m.ToolCallID
	im.at = i
	path := func() string { return fmt.Sprintf("messages[%d]", i) }
	system := role == "system" || role == "developer"
	if !system {
		*leading = false
	}
	switch {
	case system && *leading:
		im.out.SystemPrompt = joinNonEmpty(im.out.SystemPrompt, strings.Join(partTexts(content(false)), "\n"))
		im.out.Preamble = i + 1
	case system || role == "user":
		r := agentstate.RoleUser
		if system {
			r = agentstate.RoleSystem
		}
		im.add(r, content(role == "user"))
	case role == "assistant":
		parts := content(false)
		for j, tc := range toolCalls {
			if tc.ID == "" {
				im.fail(fmt.Sprintf("%s.tool_calls[%d].id", path(), j), "a tool call needs an id")
			}
			name, args := tc.NameAndArguments()
			if name == "" {
				im.fail(fmt.Sprintf("%s.tool_calls[%d].function.name", path(), j), "a tool call needs a function name")
			}
			if tc.Custom != nil {
				im.customCall(tc.ID)
			}
			im.rememberCall(tc.ID, name)
			parts = append(parts, agentstate.Part{Kind: agentstate.PartToolCall, ToolCall: agentstate.ToolCall{ID: tc.ID, Name: name, ArgumentsJSON: args}})
		}
		if fc := m.FunctionCall; fc != nil {
			// The deprecated function_call has no id: one is made up, and
			// the function message after it answers it.
			id := "openai-function-call-" + strconv.Itoa(i)
			im.syntheticCall(id)
			im.rememberCall(id, fc.Name)
			im.functionCall = id
			parts = append(parts, agentstate.Part{Kind: agentstate.PartToolCall, ToolCall: agentstate.ToolCall{ID: id, Name: fc.Name, ArgumentsJSON: fc.Arguments}})
		}
		im.add(agentstate.RoleAssistant, parts)
	case role == "tool":
		if toolCallID == "" {
			im.fail(path()+".tool_call_id", "a tool message needs the id of the call it answers")
		}
		text, isErr := errorResult(strings.Join(partTexts(content(false)), "\n"))
		im.addResults([]agentstate.ToolResult{{ToolCallID: toolCallID, Name: im.callNames[toolCallID], Content: text, IsError: isErr}}, nil)
	case role == "function":
		if im.functionCall == "" {
			im.fail(path()+".role", "a function message answers no function_call before it")
			return
		}
		text, isErr := errorResult(strings.Join(partTexts(content(false)), "\n"))
		im.addResults([]agentstate.ToolResult{{ToolCallID: im.functionCall, Name: m.Name, Content: text, IsError: isErr}}, nil)
		im.functionCall = ""
	default:
		im.fail(path()+".role", "unsupported role %q (want system, developer, user, assistant, tool or function)", role)
	}
}

// openAIImportContent reads a string or content-part array into parts.
func openAIImportContent(im *importer, raw json.RawMessage, path string, allowImages bool) ([]agentstate.Part, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []agentstate.Part{textPart(s)}, true
	}
	var raws []json.RawMessage
	if !im.decode(raw, &raws, path+".content") {
		return nil, false
	}
	var parts []agentstate.Part
	for j, rp := range raws {
		pp := fmt.Sprintf("%s.content[%d]", path, j)
		var cp wire.OpenAIContentPart
		if !im.decode(rp, &cp, pp) {
			continue
		}
		switch {
		case cp.Type == "text" && cp.Text != nil:
			parts = append(parts, textPart(*cp.Text))
		case cp.Type == "refusal" && cp.Refusal != nil:
			parts = append(parts, textPart(*cp.Refusal))
		case cp.Type == "image_url" && cp.ImageURL != nil && allowImages:
			if mt, data, ok := parseDataURL(cp.ImageURL.URL); ok {
				parts = append(parts, imagePart(agentstate.Image{Source: agentstate.ImageSourceData, Data: data, MediaType: mt}))
			} else if cp.ImageURL.URL != "" {
				parts = append(parts, imagePart(agentstate.Image{Source: agentstate.ImageSourceURL, URL: cp.ImageURL.URL}))
			} else {
				im.fail(pp+".image_url.url", "an image needs a URL")
			}
		case cp.Type == "image_url" || cp.Type == "text" || cp.Type == "refusal" || cp.Type == "":
			im.fail(pp+".type", "unsupported content part %q here", cp.Type)
		default:
			// Audio, files: sent as the client sent them, or left out whole.
			parts = append(parts, textPart(opaqueText(cp.Type, rp)))
		}
	}
	return parts, true
}

func partTexts(parts []agentstate.Part) []string {
	out := make([]string, 0, len(parts))
	for _, p := range parts {
		if p.Kind == agentstate.PartText {
			out = append(out, p.Text)
		}
	}
	return out
}

func joinNonEmpty(a, b string) string {
	if a == "" {
		return b
	}
	if b == "" {
		return a
	}
	return a + "\n" + b
}
