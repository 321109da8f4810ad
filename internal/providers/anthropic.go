package providers

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/contextcompiler/ctxc/internal/providers/wire"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// maxCacheBreakpoints is how many blocks a request may mark with cache_control.
const maxCacheBreakpoints = 4

// emptyInputSchema is sent for a tool without parameters: input_schema is required.
var emptyInputSchema = json.RawMessage(`{"type":"object","properties":{}}`)

// anthropicTurn is one message being built; thinking blocks are kept apart
// because the API wants them before every other block of the turn.
type anthropicTurn struct {
	role     string
	thinking []wire.AnthropicBlock
	blocks   []wire.AnthropicBlock
}

func renderAnthropic(c *conversation) ([]byte, error) {
	req := wire.AnthropicRequest{Model: c.model, MaxTokens: c.maxTokens, Messages: []wire.AnthropicMessage{}}
	if c.system != "" {
		req.System = rawJSON(c.system)
	}
	for i, t := range c.tools {
		schema := c.toolSchemas[i]
		if schema == nil {
			schema = emptyInputSchema
		}
		req.Tools = append(req.Tools, wire.AnthropicTool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	if c.responseFormat != "" {
		c.notes.add("response format(s) omitted (the Messages API has no response_format)", 1)
	}
	var turns []anthropicTurn
	stableTurn := -1 // the turn holding the last message of the stable prefix
	appendTurn := func(t anthropicTurn) {
		if len(t.thinking)+len(t.blocks) == 0 {
			return
		}
		if n := len(turns); n > 0 && turns[n-1].role == t.role {
			turns[n-1].thinking = append(turns[n-1].thinking, t.thinking...)
			turns[n-1].blocks = append(turns[n-1].blocks, t.blocks...)
			return
		}
		turns = append(turns, t)
	}
	for i := range c.messages {
		appendTurn(anthropicTurnOf(c, &c.messages[i]))
		if i+1 == c.stable {
			stableTurn = len(turns) - 1
		}
	}
	if len(turns) > 0 && turns[0].role == "assistant" {
		text := LeadingUserText
		turns = append([]anthropicTurn{{role: "user", blocks: []wire.AnthropicBlock{{Type: "text", Text: &text}}}}, turns...)
		if stableTurn >= 0 {
			stableTurn++
		}
	}
	// Prompt-cache breakpoints: at the end of the stable prefix, which later
	// compiles send again byte for byte, and at the end of the request, so
	// the next call (which appends) reads all of this one from the cache.
	cacheAfter(turns, stableTurn)
	cacheAfter(turns, len(turns)-1)
	for _, t := range turns {
		req.Messages = append(req.Messages, wire.AnthropicMessage{Role: t.role, Content: rawJSON(append(t.thinking, t.blocks...))})
	}
	return encodeJSON(req)
}

// anthropicTurnOf renders one compiled message as a turn's blocks, thinking
// apart (the API wants it first in its turn).
func anthropicTurnOf(c *conversation, m *agentstate.Message) anthropicTurn {
	t := anthropicTurn{role: "user"}
	if m.Role == agentstate.RoleAssistant {
		t.role = "assistant"
	}
	for _, p := range m.Parts {
		switch {
		case p.Kind == agentstate.PartText:
			if blank(p.Text) {
				c.notes.add("blank text part(s) omitted (the API rejects them)", 1)
				continue
			}
			t.blocks = append(t.blocks, wire.AnthropicBlock{Type: "text", Text: &p.Text})
		case p.Kind == agentstate.PartToolCall && t.role == "assistant":
			t.blocks = append(t.blocks, wire.AnthropicBlock{Type: "tool_use", ID: p.ToolCall.ID, Name: p.ToolCall.Name, Input: argumentsObject(p.ToolCall.ArgumentsJSON)})
		case p.Kind == agentstate.PartToolResult && m.Role == agentstate.RoleTool:
			b := wire.AnthropicBlock{Type: "tool_result", ToolUseID: p.ToolResult.ToolCallID, IsError: p.ToolResult.IsError}
			if p.ToolResult.Content != "" {
				b.Content = rawJSON(p.ToolResult.Content)
			}
			t.blocks = append(t.blocks, b)
		case p.Kind == agentstate.PartReasoning && t.role == "assistant":
			r := p.Reasoning
			switch {
			case len(r.Signature) == 0:
				c.notes.add("unsigned reasoning part(s) omitted (the API accepts only signed thinking)", 1)
			case r.Text == "":
				t.thinking = append(t.thinking, wire.AnthropicBlock{Type: "redacted_thinking", Data: base64.StdEncoding.EncodeToString(r.Signature)})
			default:
				t.thinking = append(t.thinking, wire.AnthropicBlock{Type: "thinking", Thinking: &r.Text, Signature: base64.StdEncoding.EncodeToString(r.Signature)})
			}
		case p.Kind == agentstate.PartImage && t.role == "user" && m.Role != agentstate.RoleTool:
			if mt, data, ok := imageBytes(p.Image); ok {
				t.blocks = append(t.blocks, wire.AnthropicBlock{Type: "image", Source: &wire.AnthropicSource{Type: "base64", MediaType: mt, Data: base64.StdEncoding.EncodeToString(data)}})
			} else {
				t.blocks = append(t.blocks, wire.AnthropicBlock{Type: "image", Source: &wire.AnthropicSource{Type: "url", URL: p.Image.URL}})
			}
		default:
			c.notes.add(fmt.Sprintf("%s part(s) of %s messages omitted", p.Kind, m.Role), 1)
		}
	}
	return t
}

// cacheAfter marks the last block of turns[i] as a cache breakpoint.
func cacheAfter(turns []anthropicTurn, i int) {
	if i < 0 || i >= len(turns) || len(turns[i].blocks) == 0 {
		return
	}
	turns[i].blocks[len(turns[i].blocks)-1].CacheControl = &wire.AnthropicCacheControl{Type: "ephemeral"}
}

// ValidateAnthropic checks the Messages API rules a body must meet: the
// system prompt a string or text blocks; at least one message; roles user
// and assistant strictly alternating, starting with user, with system
// messages of text between turns (never between a tool_use and its
// tool_result); non-empty content with no blank text; thinking blocks signed and
// first in their assistant turn; tool_use ids unique, inputs objects; each
// tool_use answered exactly once by a tool_result in the next (user)
// message, where tool_result blocks come first; no tool_result without its
// tool_use; tool_result content a string or blocks; block types the API
// documents; max_tokens positive; the client's tools with input_schema
// objects; at most four cache_control breakpoints in all.
func ValidateAnthropic(body []byte) error {
	return validateAnthropic(body, true)
}

// validateAnthropic is ValidateAnthropic, with or without the max_tokens
// rule (a count_tokens body has none, and Splice keeps the client's).
func validateAnthropic(body []byte, maxTokens bool) error {
	var req wire.AnthropicRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return fmt.Errorf("invalid anthropic body: %w", err)
	}
	v := anthropicValidator{ids: make(map[string]bool)}
	if maxTokens && req.MaxTokens <= 0 {
		v.fail("max_tokens must be positive")
	}
	v.system(req.System)
	for i, t := range req.Tools {
		if t.Name == "" || (t.Type == "" || t.Type == "custom") && !isJSONObject(t.InputSchema) {
			v.fail("tools[%d]: want a name and an input_schema object", i)
		}
		if t.CacheControl != nil {
			v.breakpoints++
		}
	}
	for i, m := range req.Messages {
		v.message(i, m)
	}
	if v.turns == 0 {
		v.fail("messages holds no user or assistant message")
	}
	for id := range v.open {
		v.fail("tool_use %q of the last message has no tool_result", id)
	}
	if v.breakpoints > maxCacheBreakpoints {
		v.fail("%d blocks carry cache_control; at most %d may", v.breakpoints, maxCacheBreakpoints)
	}
	return v.err("anthropic")
}

// system checks the system prompt: a string, or non-blank text blocks.
func (v *anthropicValidator) system(raw json.RawMessage) {
	if len(raw) == 0 || isJSONString(raw) {
		return
	}
	var blocks []wire.AnthropicBlock
	if err := json.Unmarshal(raw, &blocks); err != nil {
		v.fail("system must be a string or text blocks")
		return
	}
	for j, b := range blocks {
		if b.Type != "text" || b.Text == nil || blank(*b.Text) {
			v.fail("system[%d]: want a text block with text", j)
		}
		if b.CacheControl != nil {
			v.breakpoints++
		}
	}
}

// anthropicValidator checks the messages of a body in order: roles that
// alternate, blocks each role may hold, and tool_use ids each answered by a
// tool_result at the start of the next message.
type anthropicValidator struct {
	checker
	breakpoints int
	// turns counts the user and assistant messages so far: system messages
	// stand between turns without being one.
	turns int
	// ids holds every tool_use id so far; open, those of the previous
	// assistant message.
	ids, open map[string]bool
}

// systemMessage checks a system message of the conversation (Claude Code
// sends its environment so): text only, and never between a tool_use and
// its tool_result.
func (v *anthropicValidator) systemMessage(i int, m wire.AnthropicMessage) {
	if len(v.open) > 0 {
		v.fail("messages[%d]: a system message between a tool_use and its tool_result", i)
	}
	var text string
	if json.Unmarshal(m.Content, &text) == nil {
		if blank(text) {
			v.fail("messages[%d]: blank text", i)
		}
		return
	}
	var blocks []wire.AnthropicBlock
	if err := json.Unmarshal(m.Content, &blocks); err != nil || len(blocks) == 0 {
		v.fail("messages[%d]: content must be a string or text blocks", i)
		return
	}
	for j, b := range blocks {
		if b.Type != "text" || b.Text == nil || blank(*b.Text) {
			v.fail("messages[%d].content[%d]: a system message holds text blocks", i, j)
		}
		if b.CacheControl != nil {
			v.breakpoints++
		}
	}
}

func (v *anthropicValidator) message(i int, m wire.AnthropicMessage) {
	if m.Role == "system" {
		v.systemMessage(i, m)
		return
	}
	want := "user"
	if v.turns%2 == 1 {
		want = "assistant"
	}
	v.turns++
	if m.Role != want {
		v.fail("messages[%d]: role %q, want %q (roles alternate, starting with user)", i, m.Role, want)
	}
	var blocks []wire.AnthropicBlock
	var text string
	switch {
	case json.Unmarshal(m.Content, &text) == nil:
		// A string is one text block.
		if blank(text) {
			v.fail("messages[%d]: blank text", i)
		}
	case json.Unmarshal(m.Content, &blocks) != nil || len(blocks) == 0:
		v.fail("messages[%d]: content must be a string or a non-empty array of blocks", i)
		return
	}
	answered := make(map[string]bool)
	leading := true // only thinking and tool_result blocks so far
	for j, b := range blocks {
		if b.CacheControl != nil {
			v.breakpoints++
			if b.CacheControl.Type != "ephemeral" || b.Type == "thinking" || b.Type == "redacted_thinking" {
				v.fail("messages[%d].content[%d]: cache_control must be {\"type\":\"ephemeral\"} on a block other than thinking", i, j)
			}
		}
		v.block(i, j, m.Role, b, leading, answered)
		if b.Type != "thinking" && b.Type != "redacted_thinking" && b.Type != "tool_result" {
			leading = false
		}
	}
	for id := range v.open {
		if !answered[id] {
			v.fail("messages[%d]: tool_use %q of the previous message has no tool_result", i, id)
		}
	}
	v.open = nil
	if m.Role == "assistant" {
		v.open = make(map[string]bool)
		for _, b := range blocks {
			if b.Type == "tool_use" {
				v.open[b.ID] = true
			}
		}
	}
}

// block checks block j of message i, of role; leading says no block other
// than thinking and tool_result came before it, answered collects the
// tool_use ids the message's results answer.
func (v *anthropicValidator) block(i, j int, role string, b wire.AnthropicBlock, leading bool, answered map[string]bool) {
	switch b.Type {
	case "text":
		if b.Text == nil || blank(*b.Text) {
			v.fail("messages[%d].content[%d]: blank text", i, j)
		}
	case "thinking", "redacted_thinking":
		sig := b.Signature
		if b.Type == "redacted_thinking" {
			sig = b.Data
		}
		if _, ok := decodeSignature(sig); !ok || sig == "" {
			v.fail("messages[%d].content[%d]: %s needs a base64 signature", i, j, b.Type)
		}
		if role != "assistant" || !leading {
			v.fail("messages[%d].content[%d]: %s must open an assistant message", i, j, b.Type)
		}
	case "tool_use":
		if role != "assistant" || b.ID == "" || b.Name == "" || !isJSONObject(b.Input) {
			v.fail("messages[%d].content[%d]: tool_use needs an assistant message, id, name and object input", i, j)
		}
		if v.ids[b.ID] {
			v.fail("messages[%d].content[%d]: duplicate tool_use id %q", i, j, b.ID)
		}
		v.ids[b.ID] = true
	case "tool_result":
		v.toolResult(i, j, role, b, leading, answered)
	case "image":
		if !validAnthropicImage(b.Source) {
			v.fail("messages[%d].content[%d]: image needs a base64, url or file source", i, j)
		}
	case "document", "search_result", "container_upload":
		if role != "user" && b.Type != "container_upload" {
			v.fail("messages[%d].content[%d]: %s belongs in a user message", i, j, b.Type)
		}
	case "server_tool_use", "web_search_tool_result", "web_fetch_tool_result", "code_execution_tool_result",
		"bash_code_execution_tool_result", "text_editor_code_execution_tool_result", "tool_search_tool_result",
		"mcp_tool_use", "mcp_tool_result":
		// Server-side tools: the call and its result are both the assistant's.
		if role != "assistant" {
			v.fail("messages[%d].content[%d]: %s belongs in an assistant message", i, j, b.Type)
		}
	default:
		v.fail("messages[%d].content[%d]: unexpected block type %q", i, j, b.Type)
	}
}

func (v *anthropicValidator) toolResult(i, j int, role string, b wire.AnthropicBlock, leading bool, answered map[string]bool) {
	switch {
	case role != "user" || !leading:
		v.fail("messages[%d].content[%d]: tool_result must come first in a user message", i, j)
	case !v.open[b.ToolUseID] || answered[b.ToolUseID]:
		v.fail("messages[%d].content[%d]: tool_result %q answers no tool_use of the previous message", i, j, b.ToolUseID)
	}
	answered[b.ToolUseID] = true
	if len(b.Content) == 0 || isJSONString(b.Content) {
		return
	}
	var blocks []wire.AnthropicBlock
	if err := json.Unmarshal(b.Content, &blocks); err != nil {
		v.fail("messages[%d].content[%d]: tool_result content must be a string or blocks", i, j)
		return
	}
	for k, c := range blocks {
		switch {
		case c.Type == "text" && c.Text != nil:
		case c.Type == "image" && validAnthropicImage(c.Source):
		case c.Type == "document" || c.Type == "search_result" || c.Type == "tool_reference" || c.Type == "browser_state":
		default:
			v.fail("messages[%d].content[%d].content[%d]: a tool_result holds text, image, document, search_result, tool_reference or browser_state blocks, not %q", i, j, k, c.Type)
		}
	}
}

func validAnthropicImage(s *wire.AnthropicSource) bool {
	return s != nil && (s.Type == "base64" && s.MediaType != "" && s.Data != "" || s.Type == "url" && s.URL != "" || s.Type == "file" && s.FileID != "")
}

func importAnthropic(im *importer, body []byte) {
	var req wire.AnthropicRequest
	if !im.decode(body, &req, "") {
		return
	}
	im.out.Model, im.out.MaxOutputTokens = req.Model, req.MaxTokens
	im.out.SystemPrompt = anthropicText(im, req.System, "system")
	for i, t := range req.Tools {
		if t.Name == "" {
			im.fail(fmt.Sprintf("tools[%d].name", i), "a tool needs a name")
		}
		im.out.Tools = append(im.out.Tools, agentstate.ToolDefinition{Name: t.Name, Description: t.Description, ParametersJSON: schemaText(t.InputSchema)})
	}
	for i, m := range req.Messages {
		if im.ended(i) {
			return
		}
		im.at = i
		importAnthropicMessage(im, fmt.Sprintf("messages[%d]", i), m)
	}
}

// importAnthropicMessage reads one message at path: a string content, or
// blocks whose results and other content become separate messages, in
// block order.
func importAnthropicMessage(im *importer, path string, m wire.AnthropicMessage) {
	switch m.Role {
	case "user", "assistant":
	case "system":
		// A system message in the conversation (Claude Code sends its
		// environment so): text only, and pinned, since it instructs as the
		// system prompt does and compaction must not summarize it away.
		if text := anthropicText(im, m.Content, path+".content"); text != "" {
			im.add(agentstate.RoleSystem, []agentstate.Part{textPart(text)})
			im.out.Messages[len(im.out.Messages)-1].Pinned = true
		}
		return
	default:
		im.fail(path+".role", "unsupported role %q (want user, assistant or system)", m.Role)
		return
	}
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		im.add(anthropicRole(m.Role), []agentstate.Part{textPart(s)})
		return
	}
	var blocks []wire.AnthropicBlock
	if !im.decode(m.Content, &blocks, path+".content") {
		return
	}
	t := turn{im: im, role: anthropicRole(m.Role)}
	var raws []json.RawMessage // the blocks as sent, read once a block needs them
	raw := func(j int) json.RawMessage {
		if raws == nil {
			_ = json.Unmarshal(m.Content, &raws)
		}
		if j < len(raws) {
			return raws[j]
		}
		return nil
	}
	for j, b := range blocks {
		ref := t.next(j, b.Type == "tool_result")
		parts, results := len(t.parts), len(t.results)
		importAnthropicBlock(&t, fmt.Sprintf("%s.content[%d]", path, j), b, func() json.RawMessage { return raw(j) })
		t.fromBlock(ref, parts, results)
	}
	t.flush()
}

// importAnthropicBlock reads one block at path into t (raw gives its bytes);
// a block that cannot be read is reported and left out, and one of a type
// ctxc does not read (documents, search results, server tools' blocks) is
// imported as opaqueText.
func importAnthropicBlock(t *turn, path string, b wire.AnthropicBlock, raw func() json.RawMessage) {
	im := t.im
	switch b.Type {
	case "text":
		if b.Text == nil {
			im.fail(path+".text", "a text block needs text")
			return
		}
		t.parts = append(t.parts, textPart(*b.Text))
	case "thinking", "redacted_thinking":
		text, sig := "", b.Data
		if b.Type == "thinking" {
			sig = b.Signature
			if b.Thinking != nil {
				text = *b.Thinking
			}
		}
		sigBytes, ok := decodeSignature(sig)
		if !ok {
			im.fail(path, "the signature must be standard base64")
			return
		}
		t.parts = append(t.parts, agentstate.Part{Kind: agentstate.PartReasoning, Reasoning: agentstate.Reasoning{Text: text, Signature: sigBytes}})
	case "tool_use":
		if b.ID == "" {
			im.fail(path+".id", "a tool_use block needs an id")
		}
		if b.Name == "" {
			im.fail(path+".name", "a tool_use block needs a name")
		}
		im.rememberCall(b.ID, b.Name)
		t.parts = append(t.parts, agentstate.Part{Kind: agentstate.PartToolCall, ToolCall: agentstate.ToolCall{ID: b.ID, Name: b.Name, ArgumentsJSON: argumentsFromObject(b.Input)}})
	case "tool_result":
		if b.ToolUseID == "" {
			im.fail(path+".tool_use_id", "a tool_result block needs the id of its tool_use")
		}
		content := anthropicResultText(im, b.Content, path+".content")
		t.results = append(t.results, agentstate.ToolResult{ToolCallID: b.ToolUseID, Name: im.callNames[b.ToolUseID], Content: content, IsError: b.IsError})
	case "image":
		switch {
		case b.Source != nil && b.Source.Type == "base64":
			data, err := base64.StdEncoding.DecodeString(b.Source.Data)
			if err != nil {
				im.fail(path+".source.data", "not base64: %v", err)
				return
			}
			t.parts = append(t.parts, imagePart(agentstate.Image{Source: agentstate.ImageSourceData, Data: data, MediaType: b.Source.MediaType}))
		case b.Source != nil && b.Source.Type == "url" && b.Source.URL != "":
			t.parts = append(t.parts, imagePart(agentstate.Image{Source: agentstate.ImageSourceURL, URL: b.Source.URL}))
		case b.Source != nil && b.Source.Type == "file" && b.Source.FileID != "":
			// An image of the Files API: sent as it was, or left out whole.
			t.parts = append(t.parts, textPart(opaqueText(b.Type, raw())))
		default:
			im.fail(path+".source", "an image needs a base64, url or file source")
		}
	case "":
		im.fail(path+".type", "a block needs a type")
	default:
		t.parts = append(t.parts, textPart(opaqueText(b.Type, raw())))
	}
}

// anthropicResultText reads a tool_result's content: a string, or blocks
// whose texts are joined with newlines, a block of another type (an image,
// a document, a search result) as its opaqueText.
func anthropicResultText(im *importer, raw json.RawMessage, path string) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []json.RawMessage
	if !im.decode(raw, &blocks, path) {
		return ""
	}
	texts := make([]string, 0, len(blocks))
	for j, rb := range blocks {
		var b wire.AnthropicBlock
		if !im.decode(rb, &b, fmt.Sprintf("%s[%d]", path, j)) {
			continue
		}
		if b.Type == "text" && b.Text != nil {
			texts = append(texts, *b.Text)
			continue
		}
		texts = append(texts, opaqueText(b.Type, rb))
	}
	return strings.Join(texts, "\n")
}

func anthropicRole(role string) agentstate.Role {
	if role == "assistant" {
		return agentstate.RoleAssistant
	}
	return agentstate.RoleUser
}

// anthropicText reads a string or an array of text blocks (system prompts and
// tool_result contents), joining the blocks with newlines.
func anthropicText(im *importer, raw json.RawMessage, path string) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []wire.AnthropicBlock
	if !im.decode(raw, &blocks, path) {
		return ""
	}
	texts := make([]string, 0, len(blocks))
	for j, b := range blocks {
		if b.Type != "text" || b.Text == nil {
			im.fail(fmt.Sprintf("%s[%d].type", path, j), "only text blocks are supported here, got %q", b.Type)
			continue
		}
		texts = append(texts, *b.Text)
	}
	return strings.Join(texts, "\n")
}
