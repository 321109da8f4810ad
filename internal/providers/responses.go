package providers

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/contextcompiler/ctxc/internal/providers/wire"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// The item types of a conversation.
const (
	itemMessage          = "message"
	itemReasoning        = "reasoning"
	itemFunctionCall     = "function_call"
	itemFunctionOutput   = "function_call_output"
	itemCustomCall       = "custom_tool_call"
	itemCustomCallOutput = "custom_tool_call_output"
)

// responsesToolCalls are the call items of the built-in and hosted tools
// whose outputs are items of their own (as function_call and
// function_call_output are): each call's output type, and the tool's name
// (an mcp_approval_request names its own).
var responsesToolCalls = map[string]struct{ output, tool string }{
	"computer_call":        {"computer_call_output", "computer"},
	"local_shell_call":     {"local_shell_call_output", "local_shell"},
	"shell_call":           {"shell_call_output", "shell"},
	"apply_patch_call":     {"apply_patch_call_output", "apply_patch"},
	"mcp_approval_request": {"mcp_approval_response", ""},
}

// responsesToolOutputs are responsesToolCalls' outputs, each with its call's type.
var responsesToolOutputs = func() map[string]string {
	out := make(map[string]string, len(responsesToolCalls))
	for call, c := range responsesToolCalls {
		out[c.output] = call
	}
	return out
}()

// responsesOtherItems are the items of the API's input ctxc does not read:
// its hosted tools' calls with their results in them, references to stored
// items, and compaction items. They are the assistant's, and go as the
// client sent them or not at all.
var responsesOtherItems = map[string]bool{
	"file_search_call": true, "web_search_call": true, "image_generation_call": true, "code_interpreter_call": true,
	"mcp_list_tools": true, "mcp_call": true, "item_reference": true, "compaction": true,
	"tool_search_call": true, "tool_search_output": true, "additional_tools": true, "configuration_update": true,
	"compaction_trigger": true, "program": true, "program_output": true,
}

// itemCallID is the id a call item gives its call: call_id, or an
// mcp_approval_request's id.
func itemCallID(it *wire.ResponsesItem) string {
	if it.Type == "mcp_approval_request" {
		return it.ID
	}
	return it.CallID
}

// itemAnswers is the id of the call an output item answers: call_id, a
// local_shell_call_output's id when it has none, an mcp_approval_response's
// approval_request_id.
func itemAnswers(it *wire.ResponsesItem) string {
	switch {
	case it.Type == "mcp_approval_response":
		return it.ApprovalRequestID
	case it.CallID == "" && it.Type == "local_shell_call_output":
		return it.ID
	}
	return it.CallID
}

func renderResponses(c *conversation) ([]byte, error) {
	req := struct {
		Model        string               `json:"model,omitempty"`
		Instructions string               `json:"instructions,omitempty"`
		Input        []json.RawMessage    `json:"input"`
		Tools        []wire.ResponsesTool `json:"tools,omitempty"`
		Text         *wire.ResponsesText  `json:"text,omitempty"`
	}{Model: c.model, Instructions: c.system, Input: []json.RawMessage{}}
	strict := false
	for i, t := range c.tools {
		schema := c.toolSchemas[i]
		if schema == nil {
			schema = emptyInputSchema
		}
		req.Tools = append(req.Tools, wire.ResponsesTool{Type: "function", Name: t.Name, Description: t.Description, Parameters: schema, Strict: &strict})
	}
	if rf := parseResponseFormat(c.responseFormat, c.notes); rf != nil {
		req.Text = &wire.ResponsesText{Format: responsesFormat(rf)}
	}
	for i := range c.messages {
		req.Input = append(req.Input, responsesItems(c, &c.messages[i], nil)...)
	}
	return encodeJSON(req)
}

// responsesFormat is a response format as text.format: the Chat Completions
// response_format with its json_schema fields moved up a level.
func responsesFormat(rf *responseSchema) json.RawMessage {
	if rf.jsonOnly {
		return json.RawMessage(`{"type":"json_object"}`)
	}
	var wrapped struct {
		JSONSchema map[string]json.RawMessage `json:"json_schema"`
	}
	_ = json.Unmarshal(rf.openAI, &wrapped)
	format := map[string]json.RawMessage{"type": rawJSON("json_schema")}
	for k, v := range wrapped.JSONSchema {
		format[k] = v
	}
	if _, ok := format["name"]; !ok {
		format["name"] = rawJSON("response")
	}
	return rawJSON(format)
}

// responsesItems renders one compiled message as input items: a user or
// system message; an assistant turn as its reasoning, its message and its
// calls; a tool message as one output per result. custom names the calls
// made to custom tools (their items keep their type).
func responsesItems(c *conversation, m *agentstate.Message, custom map[string]bool) []json.RawMessage {
	var items []json.RawMessage
	type message struct {
		Type    string                  `json:"type"`
		Role    string                  `json:"role"`
		Content []wire.ResponsesContent `json:"content"`
	}
	switch m.Role {
	case agentstate.RoleTool:
		for _, p := range m.Parts {
			if p.Kind != agentstate.PartToolResult {
				c.notes.add("non-result part(s) of tool messages omitted", 1)
				continue
			}
			typ := itemFunctionOutput
			if custom[p.ToolResult.ToolCallID] {
				typ = itemCustomCallOutput
			}
			items = append(items, rawJSON(struct {
				Type   string `json:"type"`
				CallID string `json:"call_id"`
				Output string `json:"output"`
			}{typ, p.ToolResult.ToolCallID, toolResultContent(p.ToolResult)}))
		}
	case agentstate.RoleAssistant:
		var content []wire.ResponsesContent
		var calls []json.RawMessage
		for _, p := range m.Parts {
			switch p.Kind {
			case agentstate.PartText:
				content = append(content, wire.ResponsesContent{Type: "output_text", Text: &p.Text})
			case agentstate.PartReasoning:
				// The API reads a reasoning item back only with the id it
				// gave it, which the log does not keep.
				c.notes.add("reasoning part(s) omitted (a reasoning item needs the id the API gave it)", 1)
			case agentstate.PartToolCall:
				calls = append(calls, responsesCall(p.ToolCall, custom[p.ToolCall.ID]))
			default:
				c.notes.add(fmt.Sprintf("%s part(s) of assistant messages omitted", p.Kind), 1)
			}
		}
		if len(content) > 0 {
			items = append(items, rawJSON(message{Type: itemMessage, Role: "assistant", Content: content}))
		}
		items = append(items, calls...)
	default: // user, and system messages inside the log
		role := "user"
		if m.Role == agentstate.RoleSystem {
			role = "system"
		}
		var content []wire.ResponsesContent
		for _, p := range m.Parts {
			switch {
			case p.Kind == agentstate.PartText:
				content = append(content, wire.ResponsesContent{Type: "input_text", Text: &p.Text})
			case p.Kind == agentstate.PartImage && role == "user":
				u := openAIImage(p.Image)
				content = append(content, wire.ResponsesContent{Type: "input_image", ImageURL: &u, Detail: "auto"})
			default:
				c.notes.add(fmt.Sprintf("%s part(s) of %s messages omitted", p.Kind, role), 1)
			}
		}
		if len(content) > 0 {
			items = append(items, rawJSON(message{Type: itemMessage, Role: role, Content: content}))
		}
	}
	return items
}

func responsesCall(tc agentstate.ToolCall, custom bool) json.RawMessage {
	if custom {
		return rawJSON(struct {
			Type   string `json:"type"`
			CallID string `json:"call_id"`
			Name   string `json:"name"`
			Input  string `json:"input"`
		}{itemCustomCall, tc.ID, tc.Name, tc.ArgumentsJSON})
	}
	args := tc.ArgumentsJSON
	if blank(args) {
		args = "{}"
	}
	return rawJSON(struct {
		Type      string `json:"type"`
		CallID    string `json:"call_id"`
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}{itemFunctionCall, tc.ID, tc.Name, args})
}

// ValidateResponses checks the Responses API rules a body must meet: input
// a string or a list of items of known types; messages with a known role and
// content; call ids present and unique; every call answered by exactly one
// output of its kind after it, and no output without its call; a reasoning
// item with its id, followed by another item of the assistant's turn;
// function tools named with object parameters.
func ValidateResponses(body []byte) error {
	var req wire.ResponsesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return fmt.Errorf("invalid openai_responses body: %w", err)
	}
	var c checker
	for i, t := range req.Tools {
		if t.Type == "function" && (t.Name == "" || len(t.Parameters) > 0 && !isJSONObject(t.Parameters)) {
			c.fail("tools[%d]: a function tool needs a name and object parameters", i)
		}
	}
	if len(req.Input) == 0 {
		c.fail("input is missing")
		return c.err("openai_responses")
	}
	if isJSONString(req.Input) {
		return c.err("openai_responses")
	}
	var items []wire.ResponsesItem
	if err := json.Unmarshal(req.Input, &items); err != nil {
		c.fail("input: %v", err)
		return c.err("openai_responses")
	}
	if len(items) == 0 {
		c.fail("input is empty")
	}
	calls := map[string]string{} // call id -> type of its output, "" once answered
	tools := map[string]string{} // the same for responsesToolCalls, which may stay unanswered
	// An item_reference may stand for the call an output answers.
	references := false
	for _, it := range items {
		references = references || it.Type == "item_reference"
	}
	for i, it := range items {
		switch it.Type {
		case "", itemMessage:
			switch it.Role {
			case "user", "assistant", "system", "developer":
			default:
				c.fail("input[%d]: unknown role %q", i, it.Role)
			}
			if len(it.Content) == 0 || string(it.Content) == "null" {
				c.fail("input[%d]: message without content", i)
			}
		case itemReasoning:
			if it.ID == "" {
				c.fail("input[%d]: a reasoning item needs the id the API gave it", i)
			}
			if i+1 == len(items) || !assistantItem(items[i+1]) {
				c.fail("input[%d]: a reasoning item must be followed by a message or call of the same turn", i)
			}
		case itemFunctionCall, itemCustomCall:
			output := itemFunctionOutput
			if it.Type == itemCustomCall {
				output = itemCustomCallOutput
			}
			if _, dup := calls[it.CallID]; dup || it.CallID == "" || it.Name == "" {
				c.fail("input[%d]: a %s needs a name and a call_id of its own (%q)", i, it.Type, it.CallID)
			}
			calls[it.CallID] = output
		case itemFunctionOutput, itemCustomCallOutput:
			if calls[it.CallID] != it.Type && !references {
				c.fail("input[%d]: %s %q answers no call before it", i, it.Type, it.CallID)
			}
			calls[it.CallID] = ""
			if len(it.Output) == 0 {
				c.fail("input[%d]: %s without output", i, it.Type)
			}
		default:
			if tc, ok := responsesToolCalls[it.Type]; ok {
				if itemCallID(&it) == "" {
					c.fail("input[%d]: a %s needs its call id", i, it.Type)
				}
				tools[itemCallID(&it)] = tc.output
				break
			}
			if _, ok := responsesToolOutputs[it.Type]; ok {
				if tools[itemAnswers(&it)] != it.Type && !references {
					c.fail("input[%d]: %s %q answers no call before it", i, it.Type, itemAnswers(&it))
				}
				delete(tools, itemAnswers(&it))
				break
			}
			if !responsesOtherItems[it.Type] {
				c.fail("input[%d]: item type %q", i, it.Type)
			}
		}
	}
	for i, it := range items {
		if (it.Type == itemFunctionCall || it.Type == itemCustomCall) && calls[it.CallID] != "" {
			c.fail("input[%d]: %s %q has no output", i, it.Type, it.CallID)
		}
	}
	return c.err("openai_responses")
}

// assistantItem reports whether an item belongs to the assistant's side of
// a turn: its message, reasoning and calls.
func assistantItem(it wire.ResponsesItem) bool {
	switch it.Type {
	case itemReasoning, itemFunctionCall, itemCustomCall:
		return true
	case "", itemMessage:
		return it.Role == "assistant"
	}
	return false
}

func importResponses(im *importer, body []byte) {
	var req wire.ResponsesRequest
	if !im.decode(body, &req, "") {
		return
	}
	im.out.Model, im.out.MaxOutputTokens = req.Model, req.MaxOutputTokens
	if len(req.Instructions) > 0 && string(req.Instructions) != "null" {
		var s string
		if !im.decode(req.Instructions, &s, "instructions") {
			return
		}
		im.out.SystemPrompt = s
	}
	for i, t := range req.Tools {
		switch t.Type {
		case "function", "custom":
			if t.Name == "" {
				im.fail(fmt.Sprintf("tools[%d].name", i), "a tool needs a name")
			}
			im.out.Tools = append(im.out.Tools, agentstate.ToolDefinition{Name: t.Name, Description: t.Description, ParametersJSON: schemaText(t.Parameters)})
		}
	}
	var s string
	if json.Unmarshal(req.Input, &s) == nil {
		im.add(agentstate.RoleUser, []agentstate.Part{textPart(s)})
		return
	}
	var items []wire.ResponsesItem
	if len(req.Input) > 0 && !im.decode(req.Input, &items, "input") {
		return
	}
	r := responsesImport{importer: im, leading: true, body: body}
	for i, it := range items {
		if im.ended(i) {
			return
		}
		im.at = i
		r.item(fmt.Sprintf("input[%d]", i), it)
	}
	r.flush()
}

// responsesImport reads input items in order. An assistant turn comes as
// several items, in the order the model writes them: reasoning, a message,
// calls. Such a run is one assistant message, as the other providers' turns
// are; reasoning after anything else, or a message after a message or a
// call, starts the next.
type responsesImport struct {
	*importer
	leading   bool // only system and developer messages so far
	assistant []agentstate.Part
	refs      []Ref
	// spoken says the turn being collected has a message or a call.
	spoken bool
	// body is the body imported; raws its input items as sent, read once an
	// item needs them.
	body []byte
	raws []json.RawMessage
}

// flush adds the assistant message being collected.
func (r *responsesImport) flush() {
	if len(r.assistant) == 0 {
		return
	}
	r.importer.refs = r.refs
	r.add(agentstate.RoleAssistant, r.assistant)
	r.assistant, r.refs, r.spoken = nil, nil, false
}

// assistantPart collects the parts of one item of the assistant's side of
// the turn; opens says the item starts a new turn after a message or call
// (reasoning, and a message), speaks that it is a message or call.
func (r *responsesImport) assistantPart(opens, speaks bool, parts ...agentstate.Part) {
	if opens && r.spoken {
		r.flush()
	}
	if len(parts) > 0 {
		r.assistant = append(r.assistant, parts...)
		r.refs = append(r.refs, Ref{Message: r.at, Block: WholeMessage})
	}
	r.spoken = r.spoken || speaks
}

func (r *responsesImport) item(path string, it wire.ResponsesItem) {
	im := r.importer
	if it.Type != itemMessage && it.Type != "" || it.Role != "system" && it.Role != "developer" {
		r.leading = false
	}
	switch it.Type {
	case "", itemMessage:
		if it.Role == "assistant" {
			r.assistantPart(true, true, responsesContentParts(im, it.Content, path, false)...)
			return
		}
		r.flush()
		switch it.Role {
		case "system", "developer":
			parts := responsesContentParts(im, it.Content, path, false)
			if r.leading {
				im.out.SystemPrompt = joinNonEmpty(im.out.SystemPrompt, strings.Join(partTexts(parts), "\n"))
				im.out.Preamble = r.at + 1
				return
			}
			im.add(agentstate.RoleSystem, parts)
		case "user":
			im.add(agentstate.RoleUser, responsesContentParts(im, it.Content, path, true))
		default:
			im.fail(path+".role", "unsupported role %q (want user, assistant, system or developer)", it.Role)
		}
	case itemReasoning:
		var texts []string
		for _, s := range it.Summary {
			if s.Text != nil {
				texts = append(texts, *s.Text)
			}
		}
		reasoning := agentstate.Reasoning{Text: strings.Join(texts, "\n")}
		if it.EncryptedContent != nil {
			reasoning.Signature = []byte(*it.EncryptedContent)
		}
		r.assistantPart(true, false, agentstate.Part{Kind: agentstate.PartReasoning, Reasoning: reasoning})
	case itemFunctionCall, itemCustomCall:
		if it.CallID == "" {
			im.fail(path+".call_id", "a call needs a call_id")
		}
		if it.Name == "" {
			im.fail(path+".name", "a call needs a name")
		}
		args := string(it.Arguments)
		if it.Type == itemCustomCall {
			if im.out.CustomCalls == nil {
				im.out.CustomCalls = map[string]bool{}
			}
			im.out.CustomCalls[it.CallID] = true
			args = ""
			if it.Input != nil {
				args = *it.Input
			}
		}
		im.rememberCall(it.CallID, it.Name)
		r.assistantPart(false, true, agentstate.Part{Kind: agentstate.PartToolCall, ToolCall: agentstate.ToolCall{ID: it.CallID, Name: it.Name, ArgumentsJSON: args}})
	case itemFunctionOutput, itemCustomCallOutput:
		r.flush()
		if it.CallID == "" {
			im.fail(path+".call_id", "an output needs the call_id of its call")
		}
		content, isErr := errorResult(responsesOutput(im, it.Output, path+".output"))
		im.addResults([]agentstate.ToolResult{{ToolCallID: it.CallID, Name: im.callNames[it.CallID], Content: content, IsError: isErr}}, nil)
	default:
		r.otherItem(path, it)
	}
}

// otherItem reads an item of a type the API takes and ctxc does not read
// (the built-in tools' calls and outputs, hosted tools' items, references,
// compaction): a call of responsesToolCalls as a call of that tool, its
// output as the call's result (its text, or the item's opaqueText), any
// other as opaqueText in the assistant's turn.
func (r *responsesImport) otherItem(path string, it wire.ResponsesItem) {
	im := r.importer
	raw := r.raw(r.at)
	if tc, ok := responsesToolCalls[it.Type]; ok {
		id, name := itemCallID(&it), tc.tool
		if name == "" {
			name = it.Name
		}
		if id == "" {
			im.fail(path+".call_id", "a %s needs its call id", it.Type)
		}
		args := string(it.Arguments)
		if it.Type != "mcp_approval_request" {
			args = opaqueText(it.Type, raw)
		}
		im.rememberCall(id, name)
		r.assistantPart(false, true, agentstate.Part{Kind: agentstate.PartToolCall, ToolCall: agentstate.ToolCall{ID: id, Name: name, ArgumentsJSON: args}})
		return
	}
	if _, ok := responsesToolOutputs[it.Type]; ok {
		r.flush()
		id := itemAnswers(&it)
		if id == "" {
			im.fail(path+".call_id", "a %s needs the id of its call", it.Type)
		}
		var content string
		if json.Unmarshal(it.Output, &content) != nil {
			content = opaqueText(it.Type, raw)
		}
		im.addResults([]agentstate.ToolResult{{ToolCallID: id, Name: im.callNames[id], Content: content}}, nil)
		return
	}
	if it.Type == "" {
		im.fail(path+".type", "an item needs a type")
		return
	}
	r.assistantPart(false, true, textPart(opaqueText(it.Type, raw)))
}

// raw is input item i as sent, read once an item needs it.
func (r *responsesImport) raw(i int) json.RawMessage {
	if r.raws == nil {
		var req struct {
			Input []json.RawMessage `json:"input"`
		}
		_ = json.Unmarshal(r.body, &req)
		r.raws = req.Input
	}
	if i < len(r.raws) {
		return r.raws[i]
	}
	return nil
}

// responsesContentParts reads a message's content: a string, or parts.
func responsesContentParts(im *importer, raw json.RawMessage, path string, allowImages bool) []agentstate.Part {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []agentstate.Part{textPart(s)}
	}
	var raws []json.RawMessage
	if !im.decode(raw, &raws, path+".content") {
		return nil
	}
	var parts []agentstate.Part
	for j, rp := range raws {
		pp := fmt.Sprintf("%s.content[%d]", path, j)
		var cp wire.ResponsesContent
		if !im.decode(rp, &cp, pp) {
			continue
		}
		switch {
		case (cp.Type == "input_text" || cp.Type == "output_text" || cp.Type == "text") && cp.Text != nil:
			parts = append(parts, textPart(*cp.Text))
		case cp.Type == "refusal" && cp.Refusal != nil:
			parts = append(parts, textPart(*cp.Refusal))
		case cp.Type == "input_image" && allowImages && cp.ImageURL != nil && *cp.ImageURL != "":
			if mt, data, ok := parseDataURL(*cp.ImageURL); ok {
				parts = append(parts, imagePart(agentstate.Image{Source: agentstate.ImageSourceData, Data: data, MediaType: mt}))
			} else {
				parts = append(parts, imagePart(agentstate.Image{Source: agentstate.ImageSourceURL, URL: *cp.ImageURL}))
			}
		case cp.Type == "input_text" || cp.Type == "output_text" || cp.Type == "text" || cp.Type == "refusal" || cp.Type == "":
			im.fail(pp+".type", "unsupported content part %q here", cp.Type)
		default:
			// Files, audio, images by file id: sent as the client sent
			// them, or left out whole.
			parts = append(parts, textPart(opaqueText(cp.Type, rp)))
		}
	}
	return parts
}

// responsesOutput reads a call's output: a string, or parts joined by
// newlines, a text part as its text and another (an image, a file) as its
// opaqueText.
func responsesOutput(im *importer, raw json.RawMessage, path string) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var raws []json.RawMessage
	if !im.decode(raw, &raws, path) {
		return ""
	}
	texts := make([]string, 0, len(raws))
	for j, rp := range raws {
		var cp wire.ResponsesContent
		if !im.decode(rp, &cp, fmt.Sprintf("%s[%d]", path, j)) {
			continue
		}
		if cp.Text != nil && (cp.Type == "input_text" || cp.Type == "output_text") {
			texts = append(texts, *cp.Text)
			continue
		}
		// An image or a file of the output.
		texts = append(texts, opaqueText(cp.Type, rp))
	}
	return strings.Join(texts, "\n")
}
