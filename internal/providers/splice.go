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

// Splice puts a compiled context back into the request body it was imported
// from (im is Import(format, body)), for a caller that forwards the body to
// the provider: only the conversation is replaced (messages; Gemini's
// contents; OpenAI Responses' input), and every other field of the body, its
// unknown ones too, keeps its bytes and its place. In the conversation,
// each message the compile left as it was keeps its JSON bytes (the client's
// own cache_control, ids, signatures and extra fields with it); a message
// it changed is the client's JSON of it with only what changed written
// again and the parts it left out left out (patch.go); only what the
// compile made (summaries, repairs, placeholders) is rendered as Render
// renders it. For Anthropic and Gemini, whose turns alternate, a turn is
// the client's own message when it holds that message's blocks, else one
// built from the blocks it holds.
//
// When the compile left every message as it was, Splice returns body itself
// and changed is false: the caller sends the client's bytes. For Anthropic
// it places a cache_control breakpoint at the end of the stable prefix (the
// entry before the first Unsettled one), and when the body would then carry
// more than the API allows, drops the client's earliest breakpoints in
// messages. The result passes the provider's validator, or Splice fails.
func Splice(format agentstate.RenderFormat, body []byte, im *Imported, in Input) (out []byte, changed bool, err error) {
	s := splicer{format: format, im: im, view: in.View}
	if s.unchanged() {
		return body, false, nil
	}
	c, err := prepare(in)
	if err != nil {
		return nil, false, err
	}
	s.c = c
	fields, err := objectFields(body)
	if err != nil {
		return nil, false, fmt.Errorf("splice %s: %w", format, err)
	}
	key, validate := conversationKey(format)
	if key == "" {
		return nil, false, fmt.Errorf("splice: unsupported format %v", format)
	}
	at := slices.IndexFunc(fields, func(f field) bool { return f.key == key })
	if at < 0 {
		return nil, false, fmt.Errorf("splice %s: the body has no %q", format, key)
	}
	if s.elems, err = conversationElements(format, fields[at].value); err != nil {
		return nil, false, fmt.Errorf("splice %s: %s: %w", format, key, err)
	}
	s.pending = pendingCalls(in.View)
	var conv []json.RawMessage
	switch format {
	case agentstate.RenderAnthropic, agentstate.RenderGemini:
		conv, err = s.turns(fields)
	default:
		conv, err = s.flat()
	}
	if err != nil {
		return nil, false, fmt.Errorf("splice %s: %w", format, err)
	}
	fields[at].value = writeArray(conv)
	out = writeObject(fields)
	if err := validate(out); err != nil {
		return nil, false, fmt.Errorf("splice %s: %w", format, err)
	}
	return out, true, nil
}

// conversationKey is the body field holding the conversation in format, and
// the format's validator.
func conversationKey(format agentstate.RenderFormat) (string, func([]byte) error) {
	switch format {
	case agentstate.RenderOpenAI:
		return "messages", ValidateOpenAI
	case agentstate.RenderAnthropic:
		// max_tokens is the client's (and a count_tokens body has none).
		return "messages", func(b []byte) error { return validateAnthropic(b, false) }
	case agentstate.RenderGemini:
		return "contents", ValidateGemini
	case agentstate.RenderOllama:
		return "messages", ValidateOllama
	case agentstate.RenderOpenAIResponses:
		return "input", ValidateResponses
	}
	return "", nil
}

// conversationElements are the messages (items) of a conversation value; an
// OpenAI Responses input given as a string is one user message.
func conversationElements(format agentstate.RenderFormat, raw json.RawMessage) ([]json.RawMessage, error) {
	var text string
	if format == agentstate.RenderOpenAIResponses && json.Unmarshal(raw, &text) == nil {
		return []json.RawMessage{rawJSON(map[string]string{"role": "user", "content": text})}, nil
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, err
	}
	return elems, nil
}

// splicer builds the conversation of a spliced body.
type splicer struct {
	format agentstate.RenderFormat
	im     *Imported
	view   []agentstate.Entry
	c      *conversation
	// elems are the body's conversation: its messages (Responses: items).
	elems []json.RawMessage
	// pending are the ids of calls no result in the view answers.
	pending map[string]bool
	// parsed caches elements read as turns (Anthropic, Gemini).
	parsed map[int]*bodyTurn
}

// origin is where the view's entry i came from in the body, when it shows
// an imported message as it was.
func (s *splicer) origin(i int) ([]Ref, bool) {
	e := &s.view[i]
	if e.SourceID == "" || e.Changed {
		return nil, false
	}
	n, err := strconv.Atoi(strings.TrimPrefix(e.SourceID, "in-"))
	if err != nil || n < 1 || n > len(s.im.Messages) || n > len(s.im.Origins) || s.im.Messages[n-1].ID != e.SourceID {
		return nil, false
	}
	return s.im.Origins[n-1], true
}

// unchanged reports whether the view is the imported conversation, message
// for message, as it was.
func (s *splicer) unchanged() bool {
	if len(s.view) != len(s.im.Messages) {
		return false
	}
	for i := range s.view {
		if _, ok := s.origin(i); !ok || s.view[i].SourceID != s.im.Messages[i].ID {
			return false
		}
	}
	return true
}

// message is the view's entry i as a renderer takes it: without the calls
// no result answers (every provider rejects them).
func (s *splicer) message(i int) *agentstate.Message {
	m := s.view[i].Message
	if slices.ContainsFunc(m.Parts, func(p agentstate.Part) bool { return p.Kind == agentstate.PartToolCall && s.pending[p.ToolCall.ID] }) {
		m.Parts = slices.DeleteFunc(slices.Clone(m.Parts), func(p agentstate.Part) bool { return p.Kind == agentstate.PartToolCall && s.pending[p.ToolCall.ID] })
		s.c.notes.add("tool call(s) without a result omitted (pending calls of the running execution)", 1)
	}
	return &m
}

// pendingCalls are the ids of the view's calls that no result answers.
func pendingCalls(view []agentstate.Entry) map[string]bool {
	answered := map[string]bool{}
	for i := range view {
		for _, p := range view[i].Message.Parts {
			if p.Kind == agentstate.PartToolResult {
				answered[p.ToolResult.ToolCallID] = true
			}
		}
	}
	pending := map[string]bool{}
	for i := range view {
		for _, p := range view[i].Message.Parts {
			if p.Kind == agentstate.PartToolCall && !answered[p.ToolCall.ID] {
				pending[p.ToolCall.ID] = true
			}
		}
	}
	return pending
}

// flat builds a conversation of messages that need no merging (OpenAI Chat
// Completions and Responses, Ollama): the preamble the system prompt was
// read from, then each entry as the body's own message(s) or rendered.
func (s *splicer) flat() ([]json.RawMessage, error) {
	out := slices.Clone(s.elems[:min(s.im.Preamble, len(s.elems))])
	for i := range s.view {
		if refs, ok := s.origin(i); ok {
			for k, r := range refs {
				if k > 0 && r.Message == refs[k-1].Message {
					continue
				}
				out = append(out, s.elems[r.Message])
			}
			continue
		}
		if n, ok := s.imported(i); ok {
			elems, err := s.flatChanged(i, n)
			if err != nil {
				return nil, err
			}
			out = append(out, elems...)
			continue
		}
		out = append(out, s.renderFlat(s.message(i))...)
	}
	return out, nil
}

// bodyTurn is a message of an Anthropic or Gemini body, read for splicing.
type bodyTurn struct {
	role string
	// text is the content of a message whose content is a string (Anthropic).
	text   *string
	blocks []json.RawMessage
}

// turn reads the body's message i.
func (s *splicer) turn(i int) (*bodyTurn, error) {
	if t, ok := s.parsed[i]; ok {
		return t, nil
	}
	var m struct {
		Role    string            `json:"role"`
		Content json.RawMessage   `json:"content"`
		Parts   []json.RawMessage `json:"parts"`
	}
	if err := json.Unmarshal(s.elems[i], &m); err != nil {
		return nil, fmt.Errorf("message %d: %w", i, err)
	}
	t := &bodyTurn{role: m.Role, blocks: m.Parts}
	if s.format == agentstate.RenderGemini && t.role == "" {
		t.role = "user"
	}
	if s.format == agentstate.RenderAnthropic {
		var text string
		if json.Unmarshal(m.Content, &text) == nil {
			t.text = &text
		} else if err := json.Unmarshal(m.Content, &t.blocks); err != nil {
			return nil, fmt.Errorf("message %d content: %w", i, err)
		}
	}
	if s.parsed == nil {
		s.parsed = map[int]*bodyTurn{}
	}
	s.parsed[i] = t
	return t, nil
}

// spliceBlock is one block (Gemini: part) of a turn being built.
type spliceBlock struct {
	raw json.RawMessage
	// from is the body block it is, when it is one (Message -1 otherwise).
	from Ref
	// first orders blocks that must open their turn: thinking in an
	// assistant turn, results in a user turn.
	first bool
	// edited says raw is no longer the body block's bytes; ours that it
	// holds the breakpoint Splice placed.
	edited, ours bool
}

type spliceTurn struct {
	role   string
	blocks []spliceBlock
	// entries are the view entries whose blocks the turn holds.
	entries []int
}

// turns builds the conversation of a provider whose turns alternate
// (Anthropic, Gemini): each entry's blocks, the body's own or rendered,
// merged into turns by role, with thinking first in assistant turns and
// results first in user turns, a leading user turn when the first is the
// model's, and (Anthropic) the stable prefix's breakpoint. fields are the
// body's (Anthropic's system and tools carry breakpoints too).
func (s *splicer) turns(fields []field) ([]json.RawMessage, error) {
	var turns []spliceTurn
	stable, stableTurn := s.stableEntries(), -1
	for i := range s.view {
		role, blocks, err := s.entryBlocks(i)
		if err != nil {
			return nil, err
		}
		if len(blocks) == 0 {
			continue
		}
		at := joins(turns, role)
		if at < 0 {
			turns = append(turns, spliceTurn{role: role})
			at = len(turns) - 1
		}
		turns[at].blocks = append(turns[at].blocks, blocks...)
		turns[at].entries = append(turns[at].entries, i)
		if i < stable {
			stableTurn = at
		}
	}
	if len(turns) > 0 && turns[0].role == s.modelRole() {
		turns = append([]spliceTurn{{role: "user", blocks: []spliceBlock{s.leadingText()}}}, turns...)
		if stableTurn >= 0 {
			stableTurn++
		}
	}
	if s.format == agentstate.RenderAnthropic {
		if err := breakpoints(fields, turns, stableTurn); err != nil {
			return nil, err
		}
	}
	out := make([]json.RawMessage, len(turns))
	for k := range turns {
		t := &turns[k]
		slices.SortStableFunc(t.blocks, func(a, b spliceBlock) int {
			switch {
			case a.first == b.first:
				return 0
			case a.first:
				return -1
			}
			return 1
		})
		if m, ok := s.wholeMessage(t); ok {
			out[k] = s.elems[m]
			continue
		}
		if m, ok := s.oneMessage(t); ok {
			// The client's message with its blocks changed: its other
			// fields as they were.
			raws := make([]json.RawMessage, len(t.blocks))
			for j, b := range t.blocks {
				raws[j] = b.raw
			}
			msg, err := patchField(s.elems[m], s.blocksKey(), writeArray(raws))
			if err != nil {
				return nil, fmt.Errorf("message %d: %w", m, err)
			}
			out[k] = msg
			continue
		}
		raws := make([]json.RawMessage, len(t.blocks))
		for j, b := range t.blocks {
			raws[j] = b.raw
		}
		out[k] = writeObject([]field{{"role", rawJSON(t.role)}, {s.blocksKey(), writeArray(raws)}})
	}
	return out, nil
}

// joins is the turn blocks of role join: the last turn when it has that
// role, or, for a user or assistant turn, the last one of that role when
// only system messages (Claude Code's environment) came after it, so that
// user and assistant turns keep alternating; -1 for a new turn.
func joins(turns []spliceTurn, role string) int {
	for k := len(turns) - 1; k >= 0; k-- {
		switch {
		case turns[k].role == role:
			return k
		case turns[k].role != "system" || role == "system":
			return -1
		}
	}
	return -1
}

func (s *splicer) modelRole() string {
	if s.format == agentstate.RenderGemini {
		return "model"
	}
	return "assistant"
}

func (s *splicer) leadingText() spliceBlock {
	text := LeadingUserText
	if s.format == agentstate.RenderGemini {
		return spliceBlock{raw: rawJSON(wire.GeminiPart{Text: &text}), from: Ref{Message: -1}}
	}
	return spliceBlock{raw: rawJSON(wire.AnthropicBlock{Type: "text", Text: &text}), from: Ref{Message: -1}}
}

// stableEntries is how many leading entries of the view are stable.
func (s *splicer) stableEntries() int {
	for i := range s.view {
		if s.view[i].Unsettled {
			return i
		}
	}
	return len(s.view)
}

// entryBlocks are the view entry i's role and blocks: the body's own when
// the entry shows an imported message as it was, else rendered.
func (s *splicer) entryBlocks(i int) (string, []spliceBlock, error) {
	if refs, ok := s.origin(i); ok {
		var role string
		var blocks []spliceBlock
		for _, r := range refs {
			t, err := s.turn(r.Message)
			if err != nil {
				return "", nil, err
			}
			role = t.role
			switch {
			case r.Block == WholeMessage && t.text != nil:
				blocks = append(blocks, spliceBlock{raw: rawJSON(wire.AnthropicBlock{Type: "text", Text: t.text}), from: r})
			case r.Block == WholeMessage:
				// A message read whole (Anthropic's system messages): all its blocks.
				for j, raw := range t.blocks {
					blocks = append(blocks, spliceBlock{raw: raw, from: Ref{Message: r.Message, Block: j}, first: s.opensTurn(role, raw)})
				}
			case r.Block >= 0 && r.Block < len(t.blocks):
				raw := t.blocks[r.Block]
				blocks = append(blocks, spliceBlock{raw: raw, from: r, first: s.opensTurn(role, raw)})
			default:
				return "", nil, fmt.Errorf("message %d has no block %d", r.Message, r.Block)
			}
		}
		return role, blocks, nil
	}
	if n, ok := s.imported(i); ok {
		return s.changedBlocks(i, n)
	}
	role, blocks := s.renderBlocks(s.message(i))
	return role, blocks, nil
}

// opensTurn reports whether a block must come first in its turn: thinking
// in an assistant turn and tool results in a user turn (Anthropic), and
// function responses in a user turn (Gemini).
func (s *splicer) opensTurn(role string, raw json.RawMessage) bool {
	if s.format == agentstate.RenderGemini {
		var p struct {
			FunctionResponse json.RawMessage `json:"functionResponse"`
		}
		_ = json.Unmarshal(raw, &p)
		return role == "user" && p.FunctionResponse != nil
	}
	var b struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(raw, &b)
	switch b.Type {
	case "thinking", "redacted_thinking":
		return role == "assistant"
	case "tool_result":
		return role == "user"
	}
	return false
}

// blocksKey is the field of a turn that holds its blocks.
func (s *splicer) blocksKey() string {
	if s.format == agentstate.RenderGemini {
		return "parts"
	}
	return "content"
}

// oneMessage reports whether every block of a turn is one of one body
// message's (some of them, some changed).
func (s *splicer) oneMessage(t *spliceTurn) (int, bool) {
	if len(t.blocks) == 0 || t.blocks[0].from.Message < 0 {
		return 0, false
	}
	m := t.blocks[0].from.Message
	for _, b := range t.blocks {
		if b.from.Message != m {
			return 0, false
		}
	}
	return m, true
}

// wholeMessage reports whether a turn holds exactly the blocks of one body
// message, in order and unmodified: then it is sent as that message's bytes.
func (s *splicer) wholeMessage(t *spliceTurn) (int, bool) {
	if len(t.blocks) == 0 || t.blocks[0].from.Message < 0 {
		return 0, false
	}
	m := t.blocks[0].from.Message
	bt := s.parsed[m]
	if bt == nil {
		return 0, false
	}
	if bt.text != nil {
		return m, len(t.blocks) == 1 && t.blocks[0].from.Block == WholeMessage && !t.blocks[0].edited
	}
	if len(t.blocks) != len(bt.blocks) {
		return 0, false
	}
	for j, b := range t.blocks {
		if b.from != (Ref{Message: m, Block: j}) || b.edited {
			return 0, false
		}
	}
	return m, true
}

// cacheControl is the breakpoint Splice places.
var cacheControl = json.RawMessage(`{"type":"ephemeral"}`)

// breakpoints places a cache_control breakpoint on the last block of
// turns[stable] that may carry one (none when it has one already), then
// drops the earliest of the client's breakpoints in messages while the body
// (its system prompt and tools count too) carries more than the API allows.
func breakpoints(fields []field, turns []spliceTurn, stable int) error {
	if stable >= 0 {
		if err := placeBreakpoint(&turns[stable]); err != nil {
			return err
		}
	}
	count := 0
	for _, f := range fields {
		if f.key == "system" || f.key == "tools" {
			// Inside a JSON string a quote is escaped, so this counts keys.
			count += bytes.Count(f.value, []byte(`"cache_control"`))
		}
	}
	var marked []*spliceBlock
	for k := range turns {
		for j := range turns[k].blocks {
			if b := &turns[k].blocks[j]; hasKey(b.raw, "cache_control") {
				count++
				if !b.ours {
					marked = append(marked, b)
				}
			}
		}
	}
	for _, b := range marked {
		if count <= maxCacheBreakpoints {
			break
		}
		fs, err := objectFields(b.raw)
		if err != nil {
			return err
		}
		b.raw, b.edited = writeObject(slices.DeleteFunc(fs, func(f field) bool { return f.key == "cache_control" })), true
		count--
	}
	return nil
}

// placeBreakpoint puts a cache_control breakpoint on the last block of t
// that may carry one, unless it has one.
func placeBreakpoint(t *spliceTurn) error {
	for j := len(t.blocks) - 1; j >= 0; j-- {
		b := &t.blocks[j]
		fields, err := objectFields(b.raw)
		if err != nil {
			return err
		}
		var typ string
		for _, f := range fields {
			if f.key == "type" {
				_ = json.Unmarshal(f.value, &typ)
			}
		}
		if typ == "thinking" || typ == "redacted_thinking" {
			continue
		}
		if slices.ContainsFunc(fields, func(f field) bool { return f.key == "cache_control" }) {
			return nil
		}
		b.raw = writeObject(append(fields, field{"cache_control", cacheControl}))
		b.edited, b.ours = true, true
		return nil
	}
	return nil
}

// hasKey reports whether a JSON object has key at its top level.
func hasKey(raw json.RawMessage, key string) bool {
	if !bytes.Contains(raw, []byte(strconv.Quote(key))) {
		return false
	}
	fs, err := objectFields(raw)
	return err == nil && slices.ContainsFunc(fs, func(f field) bool { return f.key == key })
}

// field is one member of a JSON object, its value as it was written.
type field struct {
	key   string
	value json.RawMessage
}

// objectFields reads a JSON object's members in order, each value's bytes
// as they are.
func objectFields(raw []byte) ([]field, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object")
	}
	var fields []field
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, err
		}
		fields = append(fields, field{key, value})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	return fields, nil
}

// writeArray writes elems as a JSON array, each element's bytes as they are
// (json.Marshal would compact them).
func writeArray(elems []json.RawMessage) []byte {
	n := 2
	for _, e := range elems {
		n += len(e) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, '[')
	for i, e := range elems {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, e...)
	}
	return append(b, ']')
}

// writeObject writes fields as a compact JSON object, values as they are.
func writeObject(fields []field) []byte {
	n := 2
	for _, f := range fields {
		n += len(f.key) + len(f.value) + 4
	}
	b := make([]byte, 0, n)
	b = append(b, '{')
	for i, f := range fields {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, rawJSON(f.key)...)
		b = append(b, ':')
		b = append(b, f.value...)
	}
	return append(b, '}')
}
