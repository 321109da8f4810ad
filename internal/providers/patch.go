package providers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/contextcompiler/ctxc/internal/providers/wire"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// What Splice sends for a message the compile changed (a result cut, a text
// masked, reasoning or calls left out): the client's own JSON of the message
// (Anthropic, Gemini: of each of its blocks), where a part the compile left
// as it was keeps its bytes, a part it changed has only what changed written
// again (a text, a result's content, a call's arguments) beside the part's
// other fields as they were (ids, signatures, cache_control, citations, any
// field ctxc does not know), and a part it left out is left out whole. A
// part ctxc does not read (opaqueText) is sent as it was or, changed, left
// out whole with its server tool partner; reasoning, images and the built-in
// tools' items are sent as they were. Only a part the compile added (a
// masked message's placeholder) is rendered.

// slot says where in a conversation element a part was read from.
type slot uint8

const (
	// slotElem is the element itself: a Responses item other than a message.
	slotElem slot = iota
	// slotContent is the element's content read as one: a string, or text
	// parts read as one text (a tool message's, an Anthropic system
	// message's).
	slotContent
	// slotBlock is an element of the content array: an Anthropic block, a
	// Gemini part, a Chat Completions or Responses content part.
	slotBlock
	// slotCall is an element of tool_calls (Chat Completions, Ollama).
	slotCall
	// slotFunctionCall is Chat Completions' deprecated function_call.
	slotFunctionCall
	// slotThinking is Ollama's thinking.
	slotThinking
	// slotImage is an element of Ollama's images.
	slotImage
)

// partSource is where in the body one part of an imported message was read
// from: the element (message, item, content) and its slot, index the
// position in the slot's array.
type partSource struct {
	elem  int
	slot  slot
	index int
}

// imported is the body message the view's entry i shows changed by the
// compile (its index in im.Messages), when it shows one.
func (s *splicer) imported(i int) (int, bool) {
	e := &s.view[i]
	if e.SourceID == "" || !e.Changed {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimPrefix(e.SourceID, "in-"))
	if err != nil || n < 1 || n > len(s.im.Messages) || n > len(s.im.Origins) || s.im.Messages[n-1].ID != e.SourceID {
		return 0, false
	}
	return n - 1, true
}

// sources says where each part of imported message n came from, reading its
// elements again as Import read them.
func (s *splicer) sources(n int) ([]partSource, error) {
	var out []partSource
	for _, r := range s.im.Origins[n] {
		if r.Message < 0 || r.Message >= len(s.elems) {
			return nil, fmt.Errorf("message %d is not in the body", r.Message)
		}
		if slices.ContainsFunc(out, func(p partSource) bool { return p.elem == r.Message }) && r.Block == WholeMessage {
			continue
		}
		switch s.format {
		case agentstate.RenderAnthropic, agentstate.RenderGemini:
			if r.Block == WholeMessage {
				out = append(out, partSource{r.Message, slotContent, -1})
			} else {
				out = append(out, partSource{r.Message, slotBlock, r.Block})
			}
		case agentstate.RenderOpenAI:
			out = append(out, chatSources(s.elems[r.Message], r.Message)...)
		case agentstate.RenderOllama:
			out = append(out, ollamaSources(s.elems[r.Message], r.Message)...)
		case agentstate.RenderOpenAIResponses:
			out = append(out, responsesSources(s.elems[r.Message], r.Message)...)
		}
	}
	if len(out) != len(s.im.Messages[n].Parts) {
		return nil, fmt.Errorf("message %s: %d parts, read from %d places", s.im.Messages[n].ID, len(s.im.Messages[n].Parts), len(out))
	}
	return out, nil
}

// arrayLen is the number of elements of a JSON array; -1 for another value.
func arrayLen(raw json.RawMessage) int {
	var elems []json.RawMessage
	if json.Unmarshal(raw, &elems) != nil {
		return -1
	}
	return len(elems)
}

// contentSources are the parts read from a content value: none for null or
// nothing, one for a string, one per element of an array.
func contentSources(raw json.RawMessage, e int) []partSource {
	if t := bytes.TrimSpace(raw); len(t) == 0 || string(t) == "null" {
		return nil
	}
	n := arrayLen(raw)
	if n < 0 {
		return []partSource{{e, slotContent, -1}}
	}
	out := make([]partSource, n)
	for k := range out {
		out[k] = partSource{e, slotBlock, k}
	}
	return out
}

func chatSources(raw json.RawMessage, e int) []partSource {
	var m struct {
		Role         string            `json:"role"`
		Content      json.RawMessage   `json:"content"`
		ToolCalls    []json.RawMessage `json:"tool_calls"`
		FunctionCall json.RawMessage   `json:"function_call"`
	}
	_ = json.Unmarshal(raw, &m)
	if m.Role == "tool" || m.Role == "function" {
		return []partSource{{e, slotContent, -1}}
	}
	out := contentSources(m.Content, e)
	if m.Role == "assistant" {
		for k := range m.ToolCalls {
			out = append(out, partSource{e, slotCall, k})
		}
		if len(m.FunctionCall) > 0 && string(m.FunctionCall) != "null" {
			out = append(out, partSource{e, slotFunctionCall, -1})
		}
	}
	return out
}

func ollamaSources(raw json.RawMessage, e int) []partSource {
	var m struct {
		Role      string            `json:"role"`
		Content   string            `json:"content"`
		Thinking  string            `json:"thinking"`
		Images    []json.RawMessage `json:"images"`
		ToolCalls []json.RawMessage `json:"tool_calls"`
	}
	_ = json.Unmarshal(raw, &m)
	if m.Role == "tool" {
		return []partSource{{e, slotContent, -1}}
	}
	var out []partSource
	if m.Thinking != "" {
		out = append(out, partSource{e, slotThinking, -1})
	}
	if m.Content != "" || (len(m.ToolCalls) == 0 && len(m.Images) == 0 && m.Thinking == "") {
		out = append(out, partSource{e, slotContent, -1})
	}
	for k := range m.Images {
		out = append(out, partSource{e, slotImage, k})
	}
	if m.Role == "assistant" {
		for k := range m.ToolCalls {
			out = append(out, partSource{e, slotCall, k})
		}
	}
	return out
}

func responsesSources(raw json.RawMessage, e int) []partSource {
	var it struct {
		Type    string          `json:"type"`
		Content json.RawMessage `json:"content"`
	}
	_ = json.Unmarshal(raw, &it)
	if it.Type == "" || it.Type == itemMessage {
		return contentSources(it.Content, e)
	}
	return []partSource{{e, slotElem, -1}}
}

// align pairs each of cur (a changed message's parts) with the part of orig
// (the message as imported) it shows, or -1 for a part the compile added:
// in order, the next part equal to it, else the next of its kind (and call
// id) before that.
func align(cur, orig []agentstate.Part) []int {
	match := make([]int, len(cur))
	j := 0
	for k := range cur {
		match[k] = -1
		equal := slices.IndexFunc(orig[j:], func(p agentstate.Part) bool { return partEqual(&cur[k], &p) })
		limit := len(orig)
		if equal >= 0 {
			limit = j + equal
		}
		for c := j; c <= limit && c < len(orig); c++ {
			if c == limit && equal >= 0 || samePart(&cur[k], &orig[c]) {
				match[k] = c
				j = c + 1
				break
			}
		}
	}
	return match
}

// samePart reports whether a and b may be one part before and after a
// change: the same kind, and for calls and results the same call.
func samePart(a, b *agentstate.Part) bool {
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case agentstate.PartToolCall:
		return a.ToolCall.ID == b.ToolCall.ID
	case agentstate.PartToolResult:
		return a.ToolResult.ToolCallID == b.ToolResult.ToolCallID
	}
	return true
}

func partEqual(a, b *agentstate.Part) bool {
	return a.Kind == b.Kind && a.Text == b.Text && a.ToolCall == b.ToolCall && a.ToolResult == b.ToolResult &&
		a.Image.Source == b.Image.Source && a.Image.URL == b.Image.URL && a.Image.MediaType == b.Image.MediaType && bytes.Equal(a.Image.Data, b.Image.Data) &&
		a.Reasoning.Text == b.Reasoning.Text && bytes.Equal(a.Reasoning.Signature, b.Reasoning.Signature)
}

// edit is what becomes of one part of the body message a changed entry
// shows: cur is the part as compiled (nil when left out).
type edit struct {
	src  partSource
	orig *agentstate.Part
	cur  *agentstate.Part
}

// piece is one part of a changed entry in the compiled order: the body's
// part edits[at], or (at -1) a part the compile added.
type piece struct {
	at   int
	part *agentstate.Part
}

// changes reads the view's changed entry i, which shows imported message n:
// what became of each of its parts, and the compiled parts in order.
func (s *splicer) changes(i, n int) ([]edit, []piece, error) {
	srcs, err := s.sources(n)
	if err != nil {
		return nil, nil, err
	}
	orig := s.im.Messages[n].Parts
	cur := s.message(i).Parts
	edits := make([]edit, len(orig))
	for j := range orig {
		edits[j] = edit{src: srcs[j], orig: &orig[j]}
	}
	pieces := make([]piece, len(cur))
	for k, j := range align(cur, orig) {
		pieces[k] = piece{at: j, part: &cur[k]}
		if j >= 0 {
			edits[j].cur = &cur[k]
		}
	}
	return edits, pieces, nil
}

// changed reports whether the edit changed its part (and did not leave it out).
func (e *edit) changed() bool { return e.cur != nil && !partEqual(e.cur, e.orig) }

// setField sets key to value in fields, in its place, or at the end.
func setField(fields []field, key string, value json.RawMessage) []field {
	for k := range fields {
		if fields[k].key == key {
			fields[k].value = value
			return fields
		}
	}
	return append(fields, field{key, value})
}

func fieldValue(fields []field, key string) (json.RawMessage, bool) {
	for _, f := range fields {
		if f.key == key {
			return f.value, true
		}
	}
	return nil, false
}

func deleteField(fields []field, key string) []field {
	return slices.DeleteFunc(fields, func(f field) bool { return f.key == key })
}

// patchField writes value as key of the JSON object raw, its other fields
// as they were.
func patchField(raw json.RawMessage, key string, value json.RawMessage) (json.RawMessage, error) {
	fields, err := objectFields(raw)
	if err != nil {
		return nil, err
	}
	return writeObject(setField(fields, key, value)), nil
}

// patchNested writes value as inner of the object at outer of raw.
func patchNested(raw json.RawMessage, outer, inner string, value json.RawMessage) (json.RawMessage, error) {
	fields, err := objectFields(raw)
	if err != nil {
		return nil, err
	}
	in, ok := fieldValue(fields, outer)
	if !ok {
		return nil, fmt.Errorf("no %q", outer)
	}
	patched, err := patchField(in, inner, value)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", outer, err)
	}
	return writeObject(setField(fields, outer, patched)), nil
}

// textKey is the field of a content part or block that holds its text
// ("text", or a refusal's "refusal"); "" for a part that holds none.
func textKey(fields []field) string {
	var typ string
	if v, ok := fieldValue(fields, "type"); ok {
		_ = json.Unmarshal(v, &typ)
	}
	if typ == "refusal" {
		if _, ok := fieldValue(fields, "refusal"); ok {
			return "refusal"
		}
	}
	switch typ {
	case "", "text", "input_text", "output_text":
		if v, ok := fieldValue(fields, "text"); ok && isJSONString(v) {
			return "text"
		}
	}
	return ""
}

// patchText writes text as the text of a content part or block, its other
// fields as they were; ok is false for a part that holds no text of its own
// (opaqueText): it cannot be patched, only left out.
func patchText(raw json.RawMessage, text string) (json.RawMessage, bool, error) {
	fields, err := objectFields(raw)
	if err != nil {
		return nil, false, err
	}
	key := textKey(fields)
	if key == "" {
		return nil, false, nil
	}
	return writeObject(setField(fields, key, rawJSON(text))), true, nil
}

// patchTextValue writes text as a content value that was a string or text
// parts read as one: a string stays one; parts that are one text part keep
// that part with its text written; several parts, or parts of other kinds,
// become the string (the compile cut what they held as one text).
func patchTextValue(raw json.RawMessage, text string) json.RawMessage {
	var parts []json.RawMessage
	if json.Unmarshal(raw, &parts) == nil && len(parts) == 1 {
		if patched, ok, err := patchText(parts[0], text); err == nil && ok {
			return writeArray([]json.RawMessage{patched})
		}
	}
	return rawJSON(text)
}

// patchBlock writes a changed part into its Anthropic block or Gemini part;
// ok is false for one that cannot be written and is left out whole (ctxc's
// opaqueText of a part it does not read).
func (s *splicer) patchBlock(raw json.RawMessage, e *edit) (json.RawMessage, bool, error) {
	p := e.cur
	switch p.Kind {
	case agentstate.PartText:
		return patchText(raw, p.Text)
	case agentstate.PartToolCall:
		key, inner := "input", ""
		if s.format == agentstate.RenderGemini {
			key, inner = "functionCall", "args"
		}
		var out json.RawMessage
		var err error
		if inner == "" {
			out, err = patchField(raw, key, argumentsObject(p.ToolCall.ArgumentsJSON))
		} else {
			out, err = patchNested(raw, key, inner, argumentsObject(p.ToolCall.ArgumentsJSON))
		}
		return out, err == nil, err
	case agentstate.PartToolResult:
		r := p.ToolResult
		if s.format == agentstate.RenderGemini {
			res := wire.GeminiResult{Output: &r.Content}
			if r.IsError {
				res = wire.GeminiResult{Error: &r.Content}
			}
			out, err := patchNested(raw, "functionResponse", "response", rawJSON(res))
			return out, err == nil, err
		}
		fields, err := objectFields(raw)
		if err != nil {
			return nil, false, err
		}
		content, _ := fieldValue(fields, "content")
		fields = setField(fields, "content", patchTextValue(content, r.Content))
		if r.IsError != e.orig.ToolResult.IsError {
			fields = setField(fields, "is_error", rawJSON(r.IsError))
		}
		return writeObject(fields), true, nil
	}
	// Reasoning (signed: never rewritten) and images: as they were.
	return raw, true, nil
}

// opaqueIDs are the ids a block ctxc does not read pairs by (a server
// tool's use and its result: id and tool_use_id).
func opaqueIDs(raw json.RawMessage) []string {
	var b struct {
		ID        string `json:"id"`
		ToolUseID string `json:"tool_use_id"`
	}
	_ = json.Unmarshal(raw, &b)
	var ids []string
	for _, id := range []string{b.ID, b.ToolUseID} {
		if id != "" {
			ids = append(ids, id)
		}
	}
	return ids
}

// changedBlocks is entryBlocks for the changed entry i showing imported
// message n (Anthropic, Gemini): the body's blocks as they were, changed
// (patchBlock) or left out, and the blocks the compile added rendered.
func (s *splicer) changedBlocks(i, n int) (string, []spliceBlock, error) {
	edits, pieces, err := s.changes(i, n)
	if err != nil {
		return "", nil, err
	}
	role := ""
	var blocks []spliceBlock
	var added []agentstate.Part
	var dropped []string // ids of opaque blocks left out
	flushAdded := func() {
		if len(added) == 0 {
			return
		}
		m := s.view[i].Message
		m.Parts = added
		r, bs := s.renderBlocks(&m)
		if role == "" {
			role = r
		}
		blocks = append(blocks, bs...)
		added = nil
	}
	for _, pc := range pieces {
		if pc.at < 0 {
			added = append(added, *pc.part)
			continue
		}
		flushAdded()
		e := &edits[pc.at]
		t, err := s.turn(e.src.elem)
		if err != nil {
			return "", nil, err
		}
		role = t.role
		from := Ref{Message: e.src.elem, Block: e.src.index}
		if e.src.slot == slotContent {
			// A string content (Anthropic), or a system message's text
			// blocks read as one: the text in a block of its own.
			from.Block = WholeMessage
			text := e.cur.Text
			if !e.changed() && t.text != nil {
				text = *t.text
			}
			if !e.changed() && t.text == nil {
				for j, raw := range t.blocks {
					blocks = append(blocks, spliceBlock{raw: raw, from: Ref{Message: e.src.elem, Block: j}, first: s.opensTurn(role, raw)})
				}
				continue
			}
			blocks = append(blocks, spliceBlock{raw: rawJSON(wire.AnthropicBlock{Type: "text", Text: &text}), from: from, edited: e.changed()})
			continue
		}
		if e.src.index >= len(t.blocks) {
			return "", nil, fmt.Errorf("message %d has no block %d", e.src.elem, e.src.index)
		}
		raw := t.blocks[e.src.index]
		if !e.changed() {
			blocks = append(blocks, spliceBlock{raw: raw, from: from, first: s.opensTurn(role, raw)})
			continue
		}
		patched, ok, err := s.patchBlock(raw, e)
		if err != nil {
			return "", nil, fmt.Errorf("message %d block %d: %w", e.src.elem, e.src.index, err)
		}
		if !ok {
			dropped = append(dropped, opaqueIDs(raw)...)
			s.c.notes.add("part(s) ctxc does not read, changed by the compile, left out whole", 1)
			continue
		}
		blocks = append(blocks, spliceBlock{raw: patched, from: from, edited: true, first: s.opensTurn(role, patched)})
	}
	flushAdded()
	if len(dropped) > 0 && s.format == agentstate.RenderAnthropic {
		// A server tool's use goes with its result.
		blocks = slices.DeleteFunc(blocks, func(b spliceBlock) bool {
			if b.from.Message < 0 || anthropicKnownBlock(b.raw) {
				return false
			}
			return slices.ContainsFunc(opaqueIDs(b.raw), func(id string) bool { return slices.Contains(dropped, id) })
		})
	}
	if role == "" {
		role, _ = s.renderBlocks(&agentstate.Message{Role: s.view[i].Message.Role})
	}
	return role, blocks, nil
}

// anthropicKnownBlock reports whether a block is of a type Import reads.
func anthropicKnownBlock(raw json.RawMessage) bool {
	var b struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(raw, &b)
	switch b.Type {
	case "text", "thinking", "redacted_thinking", "tool_use", "tool_result", "image":
		return true
	}
	return false
}

// renderBlocks renders a message as the blocks (Gemini: parts) of a turn,
// with its role. Gemini's calls and responses carry their call's id, unless
// Import made it up (the body's had none).
func (s *splicer) renderBlocks(m *agentstate.Message) (string, []spliceBlock) {
	var blocks []spliceBlock
	if s.format == agentstate.RenderGemini {
		role, parts := geminiPartsOf(s.c, m)
		var calls, results []string
		for _, p := range m.Parts {
			switch p.Kind {
			case agentstate.PartToolCall:
				calls = append(calls, p.ToolCall.ID)
			case agentstate.PartToolResult:
				results = append(results, p.ToolResult.ToolCallID)
			}
		}
		for _, p := range parts {
			switch {
			case p.FunctionCall != nil && len(calls) > 0:
				if !s.im.SyntheticCallIDs[calls[0]] {
					p.FunctionCall.ID = calls[0]
				}
				calls = calls[1:]
			case p.FunctionResponse != nil && len(results) > 0:
				if !s.im.SyntheticCallIDs[results[0]] {
					p.FunctionResponse.ID = results[0]
				}
				results = results[1:]
			}
			raw := rawJSON(p)
			blocks = append(blocks, spliceBlock{raw: raw, from: Ref{Message: -1}, first: s.opensTurn(role, raw)})
		}
		return role, blocks
	}
	t := anthropicTurnOf(s.c, m)
	for _, b := range append(t.thinking, t.blocks...) {
		raw := rawJSON(b)
		blocks = append(blocks, spliceBlock{raw: raw, from: Ref{Message: -1}, first: s.opensTurn(t.role, raw)})
	}
	return t.role, blocks
}

// flatChanged is the body's elements for the changed entry i showing
// imported message n (Chat Completions, Responses, Ollama): each element
// it was read from with its parts as they were, changed or left out (an
// element left with no part is left out), and the parts the compile added
// rendered in their place.
func (s *splicer) flatChanged(i, n int) ([]json.RawMessage, error) {
	edits, pieces, err := s.changes(i, n)
	if err != nil {
		return nil, err
	}
	if s.format == agentstate.RenderOpenAIResponses {
		pieces = s.keepReasoning(edits, pieces)
	}
	var out []json.RawMessage
	done := map[int]bool{}
	var added []agentstate.Part
	flushAdded := func() {
		if len(added) == 0 {
			return
		}
		m := s.view[i].Message
		m.Parts = added
		out = append(out, s.renderFlat(&m)...)
		added = nil
	}
	// Chat Completions and Ollama messages are one element, which takes
	// the texts the compile added (a masked call's placeholder) itself.
	oneElement := s.format != agentstate.RenderOpenAIResponses
	var extra []agentstate.Part
	if oneElement && slices.ContainsFunc(pieces, func(pc piece) bool { return pc.at >= 0 }) {
		for _, pc := range pieces {
			if pc.at < 0 {
				extra = append(extra, *pc.part)
			}
		}
		pieces = slices.DeleteFunc(pieces, func(pc piece) bool { return pc.at < 0 })
	}
	for _, pc := range pieces {
		if pc.at < 0 {
			added = append(added, *pc.part)
			continue
		}
		flushAdded()
		elem := edits[pc.at].src.elem
		if done[elem] {
			continue
		}
		done[elem] = true
		var mine []*edit
		for j := range edits {
			if edits[j].src.elem == elem {
				mine = append(mine, &edits[j])
			}
		}
		patched, keep, err := s.patchElement(s.elems[elem], mine, extra)
		if err != nil {
			return nil, fmt.Errorf("message %d: %w", elem, err)
		}
		extra = nil
		if keep {
			out = append(out, patched)
		}
	}
	flushAdded()
	if len(extra) > 0 {
		m := s.view[i].Message
		m.Parts = extra
		out = append(out, s.renderFlat(&m)...)
	}
	return out, nil
}

// keepReasoning keeps, as the client sent them, the reasoning items the
// compile left out before a call item it kept that carries its id (the
// API refuses such a call without the reasoning item it came with: "was
// provided without its required 'reasoning' item").
func (s *splicer) keepReasoning(edits []edit, pieces []piece) []piece {
	var keptCall = -1 // the last call item kept with its id
	for j := range edits {
		e := &edits[j]
		if e.cur != nil && e.orig.Kind == agentstate.PartToolCall && e.src.slot == slotElem && hasKey(s.elems[e.src.elem], "id") {
			keptCall = j
		}
	}
	for j := 0; j < keptCall; j++ {
		e := &edits[j]
		if e.cur != nil || e.orig.Kind != agentstate.PartReasoning {
			continue
		}
		e.cur = e.orig
		at := slices.IndexFunc(pieces, func(pc piece) bool { return pc.at > j })
		if at < 0 {
			at = len(pieces)
		}
		pieces = slices.Insert(pieces, at, piece{at: j, part: e.orig})
	}
	return pieces
}

// renderFlat renders a message as Chat Completions, Ollama or Responses
// elements.
func (s *splicer) renderFlat(m *agentstate.Message) []json.RawMessage {
	var out []json.RawMessage
	switch s.format {
	case agentstate.RenderOpenAI:
		for _, msg := range openAIMessagesOf(s.c, m) {
			out = append(out, rawJSON(msg))
		}
	case agentstate.RenderOllama:
		for _, msg := range ollamaMessagesOf(s.c, m) {
			// An id Import made up is not the body's: Ollama pairs by name and order.
			if s.im.SyntheticCallIDs[msg.ToolCallID] {
				msg.ToolCallID = ""
			}
			for k := range msg.ToolCalls {
				if s.im.SyntheticCallIDs[msg.ToolCalls[k].ID] {
					msg.ToolCalls[k].ID = ""
				}
			}
			out = append(out, rawJSON(msg))
		}
	case agentstate.RenderOpenAIResponses:
		out = append(out, responsesItems(s.c, m, s.im.CustomCalls)...)
	}
	return out
}

// patchElement writes the edits of one element's parts into its JSON (raw),
// with added, texts (and calls) the compile added to its message; keep is
// false when no part of it is left.
func (s *splicer) patchElement(raw json.RawMessage, edits []*edit, added []agentstate.Part) (json.RawMessage, bool, error) {
	left := len(added)
	same := len(added) == 0
	for _, e := range edits {
		if e.cur != nil {
			left++
		}
		if e.cur == nil || e.changed() {
			same = false
		}
	}
	switch {
	case left == 0:
		return nil, false, nil
	case same:
		return raw, true, nil
	}
	fields, err := objectFields(raw)
	if err != nil {
		return nil, false, err
	}
	// Edits of array elements, by array and index.
	arrays := map[slot]map[int]*edit{}
	for _, e := range edits {
		switch e.src.slot {
		case slotBlock, slotCall, slotImage:
			if arrays[e.src.slot] == nil {
				arrays[e.src.slot] = map[int]*edit{}
			}
			arrays[e.src.slot][e.src.index] = e
			continue
		}
		if fields, err = s.patchScalar(fields, e); err != nil {
			return nil, false, err
		}
		if fields == nil {
			// A part that cannot be written (opaqueText of a whole item):
			// its element is left out.
			s.c.notes.add("part(s) ctxc does not read, changed by the compile, left out whole", 1)
			return nil, false, nil
		}
	}
	for sl, byIndex := range arrays {
		key := map[slot]string{slotBlock: "content", slotCall: "tool_calls", slotImage: "images"}[sl]
		value, _ := fieldValue(fields, key)
		var elems []json.RawMessage
		if err := json.Unmarshal(value, &elems); err != nil {
			return nil, false, fmt.Errorf("%s: %w", key, err)
		}
		var kept []json.RawMessage
		for k, el := range elems {
			e := byIndex[k]
			switch {
			case e == nil || !e.changed() && e.cur != nil:
				kept = append(kept, el)
			case e.cur == nil:
			default:
				patched, ok, err := s.patchArrayElement(el, e)
				if err != nil {
					return nil, false, fmt.Errorf("%s[%d]: %w", key, k, err)
				}
				if ok {
					kept = append(kept, patched)
				} else {
					s.c.notes.add("part(s) ctxc does not read, changed by the compile, left out whole", 1)
				}
			}
		}
		if len(kept) == 0 {
			fields = deleteField(fields, key)
			continue
		}
		fields = setField(fields, key, writeArray(kept))
	}
	if fields, err = s.addParts(fields, added); err != nil {
		return nil, false, err
	}
	if !s.hasContent(fields) {
		return nil, false, nil
	}
	return writeObject(fields), true, nil
}

// patchScalar writes an edit of a part that is a field of its element (not
// an element of one of its arrays); nil fields when the element is to be
// left out.
func (s *splicer) patchScalar(fields []field, e *edit) ([]field, error) {
	key := map[slot]string{slotContent: "content", slotThinking: "thinking", slotFunctionCall: "function_call"}[e.src.slot]
	if e.cur == nil {
		if e.src.slot == slotElem {
			return nil, nil
		}
		return deleteField(fields, key), nil
	}
	if !e.changed() {
		return fields, nil
	}
	p := e.cur
	switch e.src.slot {
	case slotContent:
		value, _ := fieldValue(fields, "content")
		switch p.Kind {
		case agentstate.PartToolResult:
			if s.format == agentstate.RenderOllama {
				return setField(fields, "content", rawJSON(toolResultContent(p.ToolResult))), nil
			}
			return setField(fields, "content", patchTextValue(value, toolResultContent(p.ToolResult))), nil
		case agentstate.PartText:
			return setField(fields, "content", patchTextValue(value, p.Text)), nil
		}
	case slotThinking:
		return setField(fields, "thinking", rawJSON(p.Reasoning.Text)), nil
	case slotFunctionCall:
		fc, _ := fieldValue(fields, "function_call")
		patched, err := patchField(fc, "arguments", rawJSON(p.ToolCall.ArgumentsJSON))
		if err != nil {
			return nil, fmt.Errorf("function_call: %w", err)
		}
		return setField(fields, "function_call", patched), nil
	case slotElem:
		return s.patchItem(fields, e)
	}
	return fields, nil
}

// patchItem writes an edit of a Responses item other than a message: a
// call's arguments or input, an output's text; reasoning and the built-in
// tools' calls as they were; nil fields for an item ctxc does not read.
func (s *splicer) patchItem(fields []field, e *edit) ([]field, error) {
	var typ string
	if v, ok := fieldValue(fields, "type"); ok {
		_ = json.Unmarshal(v, &typ)
	}
	p := e.cur
	switch {
	case typ == itemFunctionCall:
		return setField(fields, "arguments", rawJSON(p.ToolCall.ArgumentsJSON)), nil
	case typ == itemCustomCall:
		return setField(fields, "input", rawJSON(p.ToolCall.ArgumentsJSON)), nil
	case typ == itemFunctionOutput || typ == itemCustomCallOutput:
		value, _ := fieldValue(fields, "output")
		return setField(fields, "output", patchTextValue(value, toolResultContent(p.ToolResult))), nil
	case p.Kind == agentstate.PartToolResult:
		// A built-in tool's output: its text when it is one.
		if value, ok := fieldValue(fields, "output"); ok && isJSONString(value) {
			return setField(fields, "output", rawJSON(p.ToolResult.Content)), nil
		}
		return fields, nil
	case p.Kind == agentstate.PartText:
		return nil, nil
	}
	return fields, nil
}

// patchArrayElement writes a changed part into its element of a content
// array or of tool_calls; ok is false for a part that cannot be written.
func (s *splicer) patchArrayElement(raw json.RawMessage, e *edit) (json.RawMessage, bool, error) {
	p := e.cur
	switch e.src.slot {
	case slotBlock:
		if p.Kind == agentstate.PartText {
			return patchText(raw, p.Text)
		}
		return raw, true, nil // an image: as it was
	case slotCall:
		if s.format == agentstate.RenderOllama {
			out, err := patchNested(raw, "function", "arguments", argumentsObject(p.ToolCall.ArgumentsJSON))
			return out, err == nil, err
		}
		fields, err := objectFields(raw)
		if err != nil {
			return nil, false, err
		}
		if _, custom := fieldValue(fields, "custom"); custom {
			out, err := patchNested(raw, "custom", "input", rawJSON(p.ToolCall.ArgumentsJSON))
			return out, err == nil, err
		}
		out, err := patchNested(raw, "function", "arguments", rawJSON(p.ToolCall.ArgumentsJSON))
		return out, err == nil, err
	}
	return raw, true, nil
}

// addParts puts the texts the compile added to a Chat Completions or
// Ollama message (a masked call's placeholder) into its content: as the
// content when it has none, after its text when it is one, as a text part
// after its parts. Calls it added (none is expected) are an error.
func (s *splicer) addParts(fields []field, added []agentstate.Part) ([]field, error) {
	for _, p := range added {
		if p.Kind != agentstate.PartText {
			return nil, fmt.Errorf("the compile added a %s part to a message of the body", p.Kind)
		}
		value, ok := fieldValue(fields, "content")
		var text string
		switch {
		case !ok || string(bytes.TrimSpace(value)) == "null" || json.Unmarshal(value, &text) == nil && text == "":
			fields = setField(fields, "content", rawJSON(p.Text))
		case json.Unmarshal(value, &text) == nil:
			fields = setField(fields, "content", rawJSON(text+"\n"+p.Text))
		default:
			var parts []json.RawMessage
			if err := json.Unmarshal(value, &parts); err != nil {
				return nil, fmt.Errorf("content: %w", err)
			}
			parts = append(parts, rawJSON(wire.OpenAIContentPart{Type: "text", Text: &p.Text}))
			fields = setField(fields, "content", writeArray(parts))
		}
	}
	return fields, nil
}

// hasContent reports whether a patched Chat Completions, Ollama or
// Responses element still says something: a content, calls, a thinking, or
// (any other item) anything.
func (s *splicer) hasContent(fields []field) bool {
	var typ string
	if v, ok := fieldValue(fields, "type"); ok {
		_ = json.Unmarshal(v, &typ)
	}
	if s.format == agentstate.RenderOpenAIResponses && typ != "" && typ != itemMessage {
		return true
	}
	for _, key := range []string{"content", "tool_calls", "function_call", "thinking", "images"} {
		v, ok := fieldValue(fields, key)
		if !ok {
			continue
		}
		var text string
		if t := string(bytes.TrimSpace(v)); t == "null" || t == "[]" || json.Unmarshal(v, &text) == nil && text == "" {
			continue
		}
		return true
	}
	return false
}
