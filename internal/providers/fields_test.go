package providers

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// The fields corpus (testdata/fields/<format>.json) holds an example of
// every message and part type the providers' SDKs define (the completeness
// test checks it against their type definitions); FieldsBody builds random
// conversations of those examples, each object of the conversation tagged
// (TagKey) so that FieldsKept can follow it into a spliced body and check it
// was sent to the byte as the client wrote it, changed only where the
// compile cut a text.

// TagKey is the field FieldsBody adds to every element and block of a
// conversation it builds: a name no provider knows, whose value names the
// object.
const TagKey = "x_ctxc_tag"

// FieldsFormats are the formats with a fields corpus.
var FieldsFormats = []agentstate.RenderFormat{agentstate.RenderOpenAI, agentstate.RenderOpenAIResponses, agentstate.RenderAnthropic, agentstate.RenderGemini}

// FieldsSample is one example of the corpus.
type FieldsSample struct {
	// Covers names the SDK types (Gemini: Part fields) the example is of.
	Covers []string `json:"covers"`
	// Kind says where the example goes: message; user, assistant, model
	// and thinking blocks; call and result.
	Kind string `json:"kind"`
	// Calls are the kinds of the calls a call example makes, in order;
	// Answers the kind of call a result example answers.
	Calls   []string `json:"calls"`
	Answers string   `json:"answers"`
	// JSON is the element (or block), or several that go together.
	JSON json.RawMessage `json:"json"`
}

// LoadFieldsCorpus reads a format's corpus.
func LoadFieldsCorpus(t testing.TB, format agentstate.RenderFormat) []FieldsSample {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "fields", format.String()+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Samples []FieldsSample `json:"samples"`
	}
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatalf("%s corpus: %v", format, err)
	}
	return c.Samples
}

// elements is a sample's objects: its JSON, or each of its elements.
func (s *FieldsSample) elements() []json.RawMessage {
	var list []json.RawMessage
	if json.Unmarshal(s.JSON, &list) == nil {
		return list
	}
	return []json.RawMessage{s.JSON}
}

// Blobs the placeholders stand for: a PNG header, a PDF, a WAV and a
// signature, each standard base64.
const (
	blobPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAA="
	blobSig = "c2lnbmF0dXJlLW9mLXRoaW5raW5nLWJsb2NrLQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQ=="
)

var (
	blobPDF = base64.StdEncoding.EncodeToString([]byte("%PDF-1.4\n" + strings.Repeat("x", 180) + "\n%%EOF"))
	blobWAV = base64.StdEncoding.EncodeToString([]byte("RIFF" + strings.Repeat("\x00", 120) + "WAVEfmt "))
)

var fieldsWords = strings.Fields(`the build of stock fails because the test for the
parser reads a file that moved; run go test again after the fix and read the
output of vet for the handler which returns early when the cache is cold and the
request carries no header so every caller sees a timeout`)

// fieldsGen builds one conversation.
type fieldsGen struct {
	rng     *rand.Rand
	samples []FieldsSample
	tags    int
	ids     int
	// breakpoints counts the cache_control fields placed (Anthropic allows four).
	breakpoints int
}

// text is prose of a random length: mostly a sentence, sometimes a page
// (what makes a compile cut).
func (g *fieldsGen) text() string {
	n := 3 + g.rng.IntN(25)
	if g.rng.IntN(4) == 0 {
		n = 150 + g.rng.IntN(900)
	}
	words := make([]string, n)
	for i := range words {
		words[i] = fieldsWords[g.rng.IntN(len(fieldsWords))]
	}
	return strings.Join(words, " ")
}

// fill replaces a sample's placeholders: $ID0, $ID1 by ids (the call ids of
// a call sample), $ID by id, $NAME by name, $TEXT by prose each, the blobs.
func (g *fieldsGen) fill(raw json.RawMessage, ids []string, id, name string) json.RawMessage {
	s := string(raw)
	for k, v := range ids {
		s = strings.ReplaceAll(s, "$ID"+strconv.Itoa(k), v)
	}
	for _, r := range [][2]string{{"$ID", id}, {"$NAME", name}, {"$PNG", blobPNG}, {"$PDF", blobPDF}, {"$WAV", blobWAV}, {"$SIG", blobSig}} {
		s = strings.ReplaceAll(s, r[0], r[1])
	}
	for strings.Contains(s, "$TEXT") {
		s = strings.Replace(s, "$TEXT", g.text(), 1)
	}
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		panic(fmt.Sprintf("sample %s: %v", s, err))
	}
	return b.Bytes()
}

// tag adds TagKey to a JSON object, and (inner) to each object of its
// arrays under those keys.
func (g *fieldsGen) tag(raw json.RawMessage, inner ...string) json.RawMessage {
	fields, err := objectFields(raw)
	if err != nil {
		panic(err)
	}
	for k := range fields {
		if !slices.Contains(inner, fields[k].key) {
			continue
		}
		var elems []json.RawMessage
		if json.Unmarshal(fields[k].value, &elems) != nil {
			continue
		}
		for j := range elems {
			if bytes.HasPrefix(elems[j], []byte("{")) {
				elems[j] = g.tag(elems[j])
			}
		}
		fields[k].value = writeArray(elems)
	}
	g.tags++
	return writeObject(append(fields, field{TagKey, rawJSON("t" + strconv.Itoa(g.tags))}))
}

// pick is a random sample of one of kinds.
func (g *fieldsGen) pick(kinds ...string) *FieldsSample {
	var of []*FieldsSample
	for i := range g.samples {
		if slices.Contains(kinds, g.samples[i].Kind) {
			of = append(of, &g.samples[i])
		}
	}
	return of[g.rng.IntN(len(of))]
}

// answer is a random result sample answering a call of kind.
func (g *fieldsGen) answer(kind string) *FieldsSample {
	var of []*FieldsSample
	for i := range g.samples {
		if g.samples[i].Kind == "result" && g.samples[i].Answers == kind {
			of = append(of, &g.samples[i])
		}
	}
	return of[g.rng.IntN(len(of))]
}

// sampleID is id, or for a sample that answers no call a new id its
// elements share (a server tool's use and its result).
func (g *fieldsGen) sampleID(id string) string {
	if id != "" {
		return id
	}
	g.ids++
	return "x" + strconv.Itoa(g.ids)
}

func (g *fieldsGen) callID() string {
	g.ids++
	return "call_" + strconv.Itoa(g.ids)
}

var fieldsTools = []string{"read_file", "run_shell", "search_code"}

func (g *fieldsGen) name() string { return fieldsTools[g.rng.IntN(len(fieldsTools))] }

// FieldsBody builds a random request body of format from its corpus: a
// conversation of about steps exchanges, every element and block tagged.
func FieldsBody(format agentstate.RenderFormat, samples []FieldsSample, seed uint64, steps int) []byte {
	g := &fieldsGen{rng: rand.New(rand.NewPCG(seed, 45)), samples: samples}
	tools := func(fn func(string) string) string {
		var out []string
		for _, n := range fieldsTools {
			out = append(out, fn(n))
		}
		return strings.Join(out, ",")
	}
	switch format {
	case agentstate.RenderOpenAI:
		msgs := g.flat(steps, "content", "tool_calls")
		return []byte(`{"model":"gpt-4o","max_completion_tokens":1024,"messages":[{"role":"system","content":"You are a coding agent."},` + joinRaw(msgs) +
			`],"tools":[` + tools(func(n string) string {
			return `{"type":"function","function":{"name":"` + n + `","parameters":{"type":"object"}}}`
		}) + `,{"type":"custom","custom":{"name":"apply_patch"}}],"stream":true,"x_body_field":{"kept":[1,2]}}`)
	case agentstate.RenderOpenAIResponses:
		items := g.flat(steps, "content")
		return []byte(`{"model":"gpt-4o","max_output_tokens":1024,"instructions":"You are a coding agent.","input":[` + joinRaw(items) +
			`],"tools":[` + tools(func(n string) string {
			return `{"type":"function","name":"` + n + `","parameters":{"type":"object"},"strict":false}`
		}) + `,{"type":"custom","name":"apply_patch"},{"type":"web_search"}],"store":false,"include":["reasoning.encrypted_content"],"stream":true}`)
	case agentstate.RenderAnthropic:
		g.breakpoints = 1 // the system prompt's
		msgs := g.turns(steps, "user", "assistant", "thinking")
		return []byte(`{"model":"claude-sonnet-4-5","max_tokens":1024,"system":[{"type":"text","text":"You are a coding agent.","cache_control":{"type":"ephemeral"}}],"messages":[` +
			joinRaw(msgs) + `],"tools":[` + tools(func(n string) string {
			return `{"name":"` + n + `","input_schema":{"type":"object"}}`
		}) + `,{"type":"web_search_20250305","name":"web_search"}],"thinking":{"type":"enabled","budget_tokens":2048},"stream":true}`)
	case agentstate.RenderGemini:
		contents := g.turns(steps, "user", "model", "")
		return []byte(`{"contents":[` + joinRaw(contents) + `],"systemInstruction":{"parts":[{"text":"You are a coding agent."}]},"tools":[{"functionDeclarations":[` +
			tools(func(n string) string { return `{"name":"` + n + `","parametersJsonSchema":{"type":"object"}}` }) +
			`]},{"googleSearch":{}}],"generationConfig":{"maxOutputTokens":1024,"thinkingConfig":{"includeThoughts":true}}}`)
	}
	panic(format)
}

// joinRaw joins JSON values with commas.
func joinRaw(elems []json.RawMessage) string {
	parts := make([]string, len(elems))
	for k, e := range elems {
		parts[k] = string(e)
	}
	return strings.Join(parts, ",")
}

// flat builds the messages (items) of Chat Completions or Responses: a user
// message, then steps of messages, or a call and its results.
func (g *fieldsGen) flat(steps int, inner ...string) []json.RawMessage {
	first := g.pick("message")
	for !bytes.Contains(first.JSON, []byte(`"role": "user"`)) {
		first = g.pick("message")
	}
	out := g.place(first, nil, "", inner)
	for range steps {
		s := g.pick("message", "call")
		if s.Kind == "message" {
			out = append(out, g.place(s, nil, "", inner)...)
			continue
		}
		ids := make([]string, len(s.Calls))
		for k := range ids {
			ids[k] = g.callID()
		}
		out = append(out, g.place(s, ids, "", inner)...)
		for k, kind := range s.Calls {
			out = append(out, g.place(g.answer(kind), nil, ids[k], inner)...)
		}
	}
	return out
}

// place fills and tags a sample's elements.
func (g *fieldsGen) place(s *FieldsSample, ids []string, id string, inner []string) []json.RawMessage {
	name, id := g.name(), g.sampleID(id)
	var out []json.RawMessage
	for _, el := range s.elements() {
		out = append(out, g.tag(g.fill(el, ids, id, name), inner...))
	}
	return out
}

// turns builds alternating turns of blocks (Anthropic) or parts (Gemini):
// a user turn opens with the results of the calls before it, a model turn
// with its thinking (thinking names the thinking kind, "" for none), then
// blocks of its role and calls.
func (g *fieldsGen) turns(steps int, user, model, thinking string) []json.RawMessage {
	key := "content"
	if model == "model" {
		key = "parts"
	}
	var out []json.RawMessage
	var pending []struct{ id, name string }
	for step := 0; step <= steps; step++ {
		var blocks []json.RawMessage
		for _, c := range pending {
			s := g.answer("")
			blocks = append(blocks, g.block(s, c.id, c.name)...)
		}
		pending = nil
		for n := g.rng.IntN(3); n > 0 || len(blocks) == 0; n-- {
			blocks = append(blocks, g.block(g.pick(user), "", g.name())...)
		}
		out = append(out, []byte(`{"role":"user","`+key+`":[`+joinRaw(blocks)+`]}`))
		if step == steps {
			break
		}
		blocks = nil
		if thinking != "" && g.rng.IntN(2) == 0 {
			blocks = append(blocks, g.block(g.pick(thinking), "", "")...)
		}
		for n := g.rng.IntN(3); n > 0; n-- {
			blocks = append(blocks, g.block(g.pick(model), "", g.name())...)
		}
		for n := g.rng.IntN(3); n > 0 || len(blocks) == 0; n-- {
			c := struct{ id, name string }{g.callID(), g.name()}
			blocks = append(blocks, g.block(g.pick("call"), c.id, c.name)...)
			pending = append(pending, c)
		}
		out = append(out, []byte(`{"role":"`+model+`","`+key+`":[`+joinRaw(blocks)+`]}`))
	}
	return out
}

// block fills and tags a sample's blocks, leaving the cache_control
// fields out of those past Anthropic's four.
func (g *fieldsGen) block(s *FieldsSample, id, name string) []json.RawMessage {
	id = g.sampleID(id)
	var out []json.RawMessage
	for _, el := range s.elements() {
		raw := g.fill(el, nil, id, name)
		if n := bytes.Count(raw, []byte(`"cache_control"`)); n > 0 {
			if g.breakpoints+n > maxCacheBreakpoints {
				raw = withoutKey(raw, "cache_control")
			} else {
				g.breakpoints += n
			}
		}
		out = append(out, g.tag(raw))
	}
	return out
}

// withoutKey is a JSON value with key left out of every object in it.
func withoutKey(raw json.RawMessage, key string) json.RawMessage {
	if fields, err := objectFields(raw); err == nil {
		fields = deleteField(fields, key)
		for k := range fields {
			fields[k].value = withoutKey(fields[k].value, key)
		}
		return writeObject(fields)
	}
	var elems []json.RawMessage
	if json.Unmarshal(raw, &elems) == nil {
		for k := range elems {
			elems[k] = withoutKey(elems[k], key)
		}
		return writeArray(elems)
	}
	return raw
}

// patchable are the fields whose values a splice may write again where the
// compile changed a part: texts, a result's content and error flag, a
// call's arguments. Every other field of a tagged object must keep its
// bytes.
var patchable = map[string]bool{"text": true, "refusal": true, "arguments": true, "input": true, "args": true,
	"response": true, "is_error": true, "output": true, "content": true}

// keptChecker compares a spliced body with the body it came from.
type keptChecker struct {
	format agentstate.RenderFormat
	in     map[string]json.RawMessage // tagged objects of the input, by tag
	seen   map[string]bool
	// breakpoints is how many cache_control fields the output carries.
	breakpoints int
	problems    []string
}

func (c *keptChecker) fail(path, format string, args ...any) {
	c.problems = append(c.problems, path+": "+fmt.Sprintf(format, args...))
}

// tagOf is an object's tag ("" for none).
func tagOf(raw json.RawMessage) string {
	if !bytes.Contains(raw, []byte(TagKey)) {
		return ""
	}
	fields, err := objectFields(raw)
	if err != nil {
		return ""
	}
	v, _ := fieldValue(fields, TagKey)
	var tag string
	_ = json.Unmarshal(v, &tag)
	return tag
}

// collect records the tagged objects of a JSON value.
func (c *keptChecker) collect(raw json.RawMessage) {
	if fields, err := objectFields(raw); err == nil {
		if tag := tagOf(raw); tag != "" {
			c.in[tag] = raw
		}
		for _, f := range fields {
			c.collect(f.value)
		}
		return
	}
	var elems []json.RawMessage
	if json.Unmarshal(raw, &elems) == nil {
		for _, e := range elems {
			c.collect(e)
		}
	}
}

// FieldsKept checks a body spliced from in (out, in's bytes when the
// compile left it as it was): every field but the conversation keeps its
// bytes; every tagged object of out is one of in, sent once, with the same
// fields in the same order and each value the same bytes, but for the
// patchable fields of a part the compile changed and the elements of its
// conversation arrays that were left out (and, for Anthropic, the
// breakpoint Splice places, and the client's it drops beyond four); an
// untagged object, which ctxc made (a summary, a placeholder), is only
// text; and an Anthropic assistant turn that used tools, the last of in,
// keeps its thinking blocks wherever its calls are kept.
func FieldsKept(format agentstate.RenderFormat, in, out []byte) error {
	c := &keptChecker{format: format, in: map[string]json.RawMessage{}, seen: map[string]bool{}}
	key, _ := conversationKey(format)
	inFields, err := objectFields(in)
	if err != nil {
		return fmt.Errorf("input: %w", err)
	}
	outFields, err := objectFields(out)
	if err != nil {
		return fmt.Errorf("output: %w", err)
	}
	if len(inFields) != len(outFields) {
		c.fail("body", "%d fields became %d", len(inFields), len(outFields))
	}
	var inConv, outConv json.RawMessage
	for k := range min(len(inFields), len(outFields)) {
		switch {
		case inFields[k].key != outFields[k].key:
			c.fail("body", "field %d: %q became %q", k, inFields[k].key, outFields[k].key)
		case inFields[k].key == key:
			inConv, outConv = inFields[k].value, outFields[k].value
		case !bytes.Equal(inFields[k].value, outFields[k].value):
			c.fail(inFields[k].key, "changed")
		}
	}
	c.collect(inConv)
	c.breakpoints = bytes.Count(out, []byte(`"cache_control"`))
	var elems []json.RawMessage
	if err := json.Unmarshal(outConv, &elems); err != nil {
		return fmt.Errorf("output %s: %w", key, err)
	}
	for i, el := range elems {
		path := fmt.Sprintf("%s[%d]", key, i)
		switch {
		case format == agentstate.RenderAnthropic || format == agentstate.RenderGemini:
			c.turn(path, el)
		case tagOf(el) != "":
			c.tagged(path, el)
		default:
			c.made(path, el)
		}
	}
	switch format {
	case agentstate.RenderAnthropic:
		c.thinkingKept(inConv)
	case agentstate.RenderOpenAIResponses:
		c.reasoningKept(inConv)
	}
	if len(c.problems) > 0 {
		return fmt.Errorf("%s", strings.Join(c.problems, "\n"))
	}
	return nil
}

// turn checks an Anthropic or Gemini turn: a role and blocks, each tagged
// or made by ctxc.
func (c *keptChecker) turn(path string, raw json.RawMessage) {
	fields, err := objectFields(raw)
	if err != nil {
		c.fail(path, "not an object")
		return
	}
	blocksKey := "content"
	if c.format == agentstate.RenderGemini {
		blocksKey = "parts"
	}
	for _, f := range fields {
		switch f.key {
		case "role":
		case blocksKey:
			var blocks []json.RawMessage
			if json.Unmarshal(f.value, &blocks) != nil {
				// A string content: the client's own message, or ctxc's.
				continue
			}
			for j, b := range blocks {
				p := fmt.Sprintf("%s.%s[%d]", path, blocksKey, j)
				if tagOf(b) != "" {
					c.tagged(p, b)
				} else {
					c.made(p, b)
				}
			}
		default:
			c.fail(path, "field %q in a turn", f.key)
		}
	}
}

// tagged checks an object of the output that has a tag.
func (c *keptChecker) tagged(path string, out json.RawMessage) {
	tag := tagOf(out)
	in, ok := c.in[tag]
	if !ok {
		c.fail(path, "tag %s is no object of the input", tag)
		return
	}
	if c.seen[tag] {
		c.fail(path, "the input's %s is sent twice", tag)
	}
	c.seen[tag] = true
	c.object(path+"("+tag+")", in, out)
}

// object compares an object of the input with what became of it.
func (c *keptChecker) object(path string, in, out json.RawMessage) {
	if bytes.Equal(in, out) {
		return
	}
	inF, err := objectFields(in)
	if err != nil {
		c.fail(path, "input not an object")
		return
	}
	outF, err := objectFields(out)
	if err != nil {
		c.fail(path, "not an object")
		return
	}
	if c.format == agentstate.RenderAnthropic {
		// The breakpoint Splice places (on a block without one), and the
		// client's it drops while the body would carry more than four.
		if _, had := fieldValue(inF, "cache_control"); !had {
			if v, ok := fieldValue(outF, "cache_control"); ok && string(v) == `{"type":"ephemeral"}` && outF[len(outF)-1].key == "cache_control" {
				outF = outF[:len(outF)-1]
			}
		} else if _, kept := fieldValue(outF, "cache_control"); !kept && c.breakpoints >= maxCacheBreakpoints {
			inF = deleteField(slices.Clone(inF), "cache_control")
		}
	}
	inKeys, outKeys := keysOf(inF), keysOf(outF)
	if !slices.Equal(inKeys, outKeys) {
		c.fail(path, "fields %v became %v", inKeys, outKeys)
		return
	}
	for k := range inF {
		a, b := inF[k].value, outF[k].value
		if bytes.Equal(a, b) {
			continue
		}
		p := path + "." + inF[k].key
		switch {
		case isArray(a) && isArray(b) && (hasTagged(a) || !patchable[inF[k].key]):
			c.array(p, a, b)
		case isObject(a) && isObject(b) && !patchable[inF[k].key]:
			c.object(p, a, b)
		case patchable[inF[k].key]:
		default:
			c.fail(p, "changed: %s became %s", a, b)
		}
	}
}

// array compares an array of the input with what became of it: an array of
// tagged objects keeps those it keeps in order, and may hold texts ctxc
// added; any other array keeps its bytes.
func (c *keptChecker) array(path string, in, out json.RawMessage) {
	var inE, outE []json.RawMessage
	_ = json.Unmarshal(in, &inE)
	_ = json.Unmarshal(out, &outE)
	if !hasTagged(in) {
		c.fail(path, "changed: %s became %s", in, out)
		return
	}
	at := 0
	for j, e := range outE {
		p := fmt.Sprintf("%s[%d]", path, j)
		tag := tagOf(e)
		if tag == "" {
			c.made(p, e)
			continue
		}
		k := slices.IndexFunc(inE[at:], func(x json.RawMessage) bool { return tagOf(x) == tag })
		if k < 0 {
			c.fail(p, "%s is not among the input's, in order", tag)
			continue
		}
		at += k + 1
		c.tagged(p, e)
	}
}

// made checks an untagged object ctxc made: text only (a summary, a
// placeholder, the leading user text, a text part of one), never a call, a
// result or anything that should have been the client's.
func (c *keptChecker) made(path string, raw json.RawMessage) {
	fields, err := objectFields(raw)
	if err != nil {
		c.fail(path, "ctxc made %s", raw)
		return
	}
	for _, f := range fields {
		var s string
		switch {
		case f.key == "role" || f.key == "type" && json.Unmarshal(f.value, &s) == nil && (s == "text" || s == "message" || s == "input_text" || s == "output_text"):
		case f.key == "text" && isJSONString(f.value):
		case f.key == "cache_control" && string(f.value) == `{"type":"ephemeral"}`:
		case f.key == "content" && isJSONString(f.value):
		case f.key == "content" && isArray(f.value):
			var parts []json.RawMessage
			_ = json.Unmarshal(f.value, &parts)
			for j, p := range parts {
				c.made(fmt.Sprintf("%s.content[%d]", path, j), p)
			}
		default:
			c.fail(path, "ctxc made %s (field %q): only texts are ctxc's", raw, f.key)
			return
		}
	}
}

// thinkingKept checks Anthropic's rule for the last assistant turn of the
// input that used tools: where its tool_use blocks are sent, its thinking
// blocks are sent with them, unmodified.
func (c *keptChecker) thinkingKept(inConv json.RawMessage) {
	var msgs []struct {
		Role    string            `json:"role"`
		Content []json.RawMessage `json:"content"`
	}
	_ = json.Unmarshal(inConv, &msgs)
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role != "assistant" {
			continue
		}
		var thinking []string
		calls := false
		for _, b := range m.Content {
			var blk struct {
				Type string `json:"type"`
			}
			_ = json.Unmarshal(b, &blk)
			switch blk.Type {
			case "thinking", "redacted_thinking":
				thinking = append(thinking, tagOf(b))
			case "tool_use":
				calls = calls || c.seen[tagOf(b)]
			}
		}
		if calls {
			for _, tag := range thinking {
				if !c.seen[tag] {
					c.fail(fmt.Sprintf("messages[%d]", i), "the last assistant turn's thinking block %s is not sent with its tool_use", tag)
				}
			}
		}
		return
	}
}

// hasTagged reports whether an array holds a tagged object.
func hasTagged(raw json.RawMessage) bool {
	var elems []json.RawMessage
	_ = json.Unmarshal(raw, &elems)
	return slices.ContainsFunc(elems, func(e json.RawMessage) bool { return tagOf(e) != "" })
}

// reasoningKept checks the Responses API's rule for a call item that
// carries its id: where it is sent, the reasoning item it came with (the
// last one before it in its turn) is sent too.
func (c *keptChecker) reasoningKept(inConv json.RawMessage) {
	var items []json.RawMessage
	_ = json.Unmarshal(inConv, &items)
	reasoning := ""
	for i, raw := range items {
		var it struct {
			Type string `json:"type"`
			Role string `json:"role"`
			ID   string `json:"id"`
		}
		_ = json.Unmarshal(raw, &it)
		switch {
		case it.Type == "reasoning":
			reasoning = tagOf(raw)
		case (it.Type == "function_call" || it.Type == "custom_tool_call") && it.ID != "":
			if reasoning != "" && c.seen[tagOf(raw)] && !c.seen[reasoning] {
				c.fail(fmt.Sprintf("input[%d]", i), "%s %s is sent without the reasoning item %s it came with", it.Type, it.ID, reasoning)
			}
		case (it.Type == "" || it.Type == "message") && it.Role != "assistant" || strings.HasSuffix(it.Type, "_output"):
			reasoning = ""
		}
	}
}

func keysOf(fields []field) []string {
	keys := make([]string, len(fields))
	for k, f := range fields {
		keys[k] = f.key
	}
	return keys
}

func isArray(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '['
}

func isObject(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '{'
}

// FieldsMutation is a body with one field of one tagged object left out.
type FieldsMutation struct {
	What string
	Body []byte
}

// FieldsMutations are out with each field (but the tag) of each tagged
// object left out, one at a time: each field the client sent (in), not one
// ctxc adds (Anthropic's breakpoint).
func FieldsMutations(in, out []byte) []FieldsMutation {
	c := &keptChecker{in: map[string]json.RawMessage{}}
	c.collect(in)
	var found []json.RawMessage
	var walk func(raw json.RawMessage)
	walk = func(raw json.RawMessage) {
		if fields, err := objectFields(raw); err == nil {
			if tagOf(raw) != "" {
				found = append(found, raw)
			}
			for _, f := range fields {
				walk(f.value)
			}
			return
		}
		var elems []json.RawMessage
		if json.Unmarshal(raw, &elems) == nil {
			for _, e := range elems {
				walk(e)
			}
		}
	}
	walk(out)
	var muts []FieldsMutation
	for _, obj := range found {
		fields, _ := objectFields(obj)
		inFields, _ := objectFields(c.in[tagOf(obj)])
		for k, f := range fields {
			if _, sent := fieldValue(inFields, f.key); f.key == TagKey || !sent {
				continue
			}
			less := writeObject(slices.Delete(slices.Clone(fields), k, k+1))
			at := bytes.Index(out, obj)
			if at < 0 {
				continue
			}
			body := append(append(append([]byte(nil), out[:at]...), less...), out[at+len(obj):]...)
			muts = append(muts, FieldsMutation{What: fmt.Sprintf("%s without %q", tagOf(obj), f.key), Body: body})
		}
	}
	return muts
}

// TestFieldsBodies: the bodies FieldsBody builds are what their provider
// takes (its validator passes), Import reads every part of them, and a
// compile that changes nothing sends them back as they are, which
// FieldsKept accepts.
func TestFieldsBodies(t *testing.T) {
	for _, format := range FieldsFormats {
		t.Run(format.String(), func(t *testing.T) {
			samples := LoadFieldsCorpus(t, format)
			for seed := range uint64(20) {
				body := FieldsBody(format, samples, seed, 8)
				if err := validatorOf(format)(body); err != nil {
					t.Fatalf("seed %d: %v\n%s", seed, err, body)
				}
				im, err := Import(format, body)
				if err != nil {
					t.Fatalf("seed %d: %v\n%s", seed, err, body)
				}
				out, changed, err := Splice(format, body, im, Input{View: agentstate.EntriesFromLog(im.Messages)})
				if err != nil || changed {
					t.Fatalf("seed %d: unchanged splice: changed %v, %v", seed, changed, err)
				}
				if err := FieldsKept(format, body, out); err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
			}
		})
	}
}

// sdkDirs are the node_modules the providers' SDKs are installed in (make
// test runs npm ci in both): every version the repository pins is checked.
var sdkDirs = []string{
	filepath.Join("..", "scriptedmodel", "testdata", "sdk", "node_modules"),
	filepath.Join("..", "..", "integration", "testdata", "proxy-clients", "node_modules"),
}

// sdkTypes says where each format's message and part types are defined:
// the SDK's file, the unions (type aliases) listing them, and the inline
// unions of an interface's property (interface.property). Gemini's Part is
// one interface whose fields are its kinds of data and metadata.
var sdkTypes = map[agentstate.RenderFormat]struct {
	file       string
	unions     []string
	properties []string
	fieldsOf   string
}{
	agentstate.RenderOpenAI: {file: "openai/resources/chat/completions/completions.d.ts",
		unions:     []string{"ChatCompletionMessageParam", "ChatCompletionContentPart", "ChatCompletionMessageToolCall"},
		properties: []string{"ChatCompletionAssistantMessageParam.content", "ChatCompletionToolMessageParam.content"}},
	agentstate.RenderOpenAIResponses: {file: "openai/resources/responses/responses.d.ts",
		unions:     []string{"ResponseInputItem", "ResponseInputContent", "ResponseFunctionCallOutputItem"},
		properties: []string{"ResponseOutputMessage.content"}},
	agentstate.RenderAnthropic: {file: "@anthropic-ai/sdk/resources/messages/messages.d.ts",
		unions:     []string{"ContentBlockParam", "TextCitationParam"},
		properties: []string{"ToolResultBlockParam.content", "DocumentBlockParam.source", "ImageBlockParam.source"}},
	agentstate.RenderGemini: {file: "@google/genai/dist/genai.d.ts", fieldsOf: "Part"},
}

// sdkTypeNames lists the types (fields) a .d.ts defines for a format.
func sdkTypeNames(dts string, format agentstate.RenderFormat) ([]string, error) {
	spec := sdkTypes[format]
	var names []string
	members := func(union string) []string {
		var out []string
		for _, m := range regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_.]*`).FindAllString(union, -1) {
			switch m {
			case "string", "number", "boolean", "null", "undefined", "unknown", "Array":
				continue
			}
			out = append(out, m)
		}
		return out
	}
	for _, u := range spec.unions {
		m := regexp.MustCompile(`(?m)^export type ` + u + ` = ([^;]+);`).FindStringSubmatch(dts)
		if m == nil {
			return nil, fmt.Errorf("no union %s", u)
		}
		names = append(names, members(m[1])...)
	}
	for _, p := range spec.properties {
		iface, prop, _ := strings.Cut(p, ".")
		body, ok := interfaceBody(dts, iface)
		if !ok {
			return nil, fmt.Errorf("no interface %s", iface)
		}
		m := regexp.MustCompile(`(?m)^    ` + prop + `\??: ([^;]+);`).FindStringSubmatch(body)
		if m == nil {
			return nil, fmt.Errorf("no property %s", p)
		}
		names = append(names, members(m[1])...)
	}
	if spec.fieldsOf != "" {
		body, ok := interfaceBody(dts, spec.fieldsOf)
		if !ok {
			return nil, fmt.Errorf("no interface %s", spec.fieldsOf)
		}
		for _, m := range regexp.MustCompile(`(?m)^    ([a-zA-Z]+)\??: `).FindAllStringSubmatch(body, -1) {
			names = append(names, m[1])
		}
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// interfaceBody is the body of an exported interface (or class) of a .d.ts.
func interfaceBody(dts, name string) (string, bool) {
	m := regexp.MustCompile(`(?m)^export (?:declare )?(?:interface|class) ` + name + ` \{\n`).FindStringIndex(dts)
	if m == nil {
		return "", false
	}
	rest := dts[m[1]:]
	end := strings.Index(rest, "\n}")
	if end < 0 {
		return "", false
	}
	return rest[:end], true
}

// TestFieldsCorpusCoversTheSDKs: the fields corpus has an example of every
// message and part type of the providers' SDKs at every version the
// repository pins (openai's Chat Completions and Responses unions,
// @anthropic-ai/sdk's content blocks, citations and sources, every field of
// @google/genai's Part), and names no type none of them defines.
func TestFieldsCorpusCoversTheSDKs(t *testing.T) {
	for _, format := range FieldsFormats {
		t.Run(format.String(), func(t *testing.T) {
			covered := map[string]bool{}
			for _, s := range LoadFieldsCorpus(t, format) {
				for _, c := range s.Covers {
					covered[c] = true
				}
			}
			defined := map[string]bool{}
			read := 0
			for _, dir := range sdkDirs {
				data, err := os.ReadFile(filepath.Join(dir, sdkTypes[format].file))
				if errors.Is(err, fs.ErrNotExist) {
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				read++
				// @google/genai's type definitions end their lines with \r\n.
				names, err := sdkTypeNames(strings.ReplaceAll(string(data), "\r\n", "\n"), format)
				if err != nil {
					t.Fatalf("%s: %v", filepath.Join(dir, sdkTypes[format].file), err)
				}
				if len(names) < 3 {
					t.Fatalf("%s: only %v", filepath.Join(dir, sdkTypes[format].file), names)
				}
				for _, n := range names {
					defined[n] = true
					if !covered[n] {
						t.Errorf("%s defines %s, and testdata/fields/%s.json has no example of it", filepath.Join(dir, sdkTypes[format].file), n, format)
					}
				}
			}
			if read == 0 {
				msg := "needs the providers' SDKs: npm ci in internal/scriptedmodel/testdata/sdk and integration/testdata/proxy-clients (make test runs it)"
				if os.Getenv("CI") == "true" {
					t.Fatal(msg)
				}
				t.Skip(msg)
			}
			if read == len(sdkDirs) {
				for c := range covered {
					if !defined[c] {
						t.Errorf("testdata/fields/%s.json covers %s, which no SDK defines", format, c)
					}
				}
			}
		})
	}
}
