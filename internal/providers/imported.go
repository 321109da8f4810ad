package providers

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// Error reasons of this package, reported in google.rpc.ErrorInfo.reason.
const (
	// ReasonInvalidInput is a CompileRequest.input_json that Import cannot read.
	ReasonInvalidInput = "INVALID_INPUT"
	// ReasonNotRenderable is a compiled context the requested provider would
	// refuse: no message to send, or a tool name outside the provider's rules.
	ReasonNotRenderable = "NOT_RENDERABLE"
)

// maxViolations bounds the violations one error lists: a broken body of a
// million messages must not make a million-line error.
const maxViolations = 50

// Imported is a provider request body read back into the domain.
type Imported struct {
	SystemPrompt string
	Messages     []agentstate.Message
	Tools        []agentstate.ToolDefinition
	Model        string
	// MaxOutputTokens is the answer's length limit the body asks for
	// (max_tokens, max_completion_tokens, max_output_tokens,
	// generationConfig.maxOutputTokens, options.num_predict); 0 when none.
	MaxOutputTokens int
	// ContextWindow is the window the body gives the model (Ollama's
	// options.num_ctx); 0 when none.
	ContextWindow int
	// Origins says, for each of Messages, where in the body it was read
	// from, in order: Splice puts a message the compile left as it was back
	// as those bytes.
	Origins [][]Ref
	// Preamble is how many leading messages of the body (system and
	// developer messages of OpenAI, Ollama and OpenAI Responses) were read
	// into SystemPrompt.
	Preamble int
	// CustomCalls holds the ids of OpenAI Responses custom tool calls
	// (free-form input rather than JSON arguments), so that a call or
	// output rendered again keeps its item type.
	CustomCalls map[string]bool
	// SyntheticCallIDs holds the call ids Import made up for calls the body
	// gave none (Gemini, Ollama), which Splice does not send.
	SyntheticCallIDs map[string]bool
}

// Ref is a place in a provider body's conversation: a message (an item of
// OpenAI Responses' input) and one of its blocks (Anthropic content blocks,
// Gemini parts), or the whole message when Block is WholeMessage.
type Ref struct{ Message, Block int }

// WholeMessage is the Block of a Ref to a whole message: one read from a
// string content, or a provider whose messages have no blocks.
const WholeMessage = -1

// Import reads a provider request body (CompileRequest.input_json written in
// input_format). Messages get the ids "in-1", "in-2"... in order; every tool
// result becomes its own RoleTool message naming its call id (Gemini and
// Ollama bodies without ids get synthesized ones, see the package doc). Errors
// are *agentstate.InvalidArgumentError with Reason ReasonInvalidInput and
// fields such as "input_json.messages[3].tool_calls[0].function.name".
func Import(format agentstate.RenderFormat, body []byte) (*Imported, error) {
	return ImportContext(context.Background(), format, body, 0)
}

// ImportContext is Import for a call: it looks at ctx between messages
// (every checkEvery) and before and after decoding the body, and once ctx
// ends returns its error, with nothing imported. Measure, before it, bounds
// what it makes; messages is what Measure counted (0: unknown), the room
// made for the messages at once rather than grown to.
func ImportContext(ctx context.Context, format agentstate.RenderFormat, body []byte, messages int) (*Imported, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	start := func() *importer {
		im := &importer{ctx: ctx}
		if messages > 0 {
			im.out.Messages, im.out.Origins = make([]agentstate.Message, 0, messages), make([][]Ref, 0, messages)
		}
		return im
	}
	im := start()
	switch format {
	case agentstate.RenderOpenAI:
		if !importOpenAICommon(im, body) && im.err == nil {
			im = start()
			importOpenAI(im, body)
		}
	case agentstate.RenderAnthropic:
		importAnthropic(im, body)
	case agentstate.RenderGemini:
		importGemini(im, body)
	case agentstate.RenderOllama:
		importOllama(im, body)
	case agentstate.RenderOpenAIResponses:
		importResponses(im, body)
	default:
		return nil, &agentstate.InvalidArgumentError{Reason: ReasonInvalidInput, Violations: []agentstate.FieldViolation{{
			Field: "input_format", Description: fmt.Sprintf("unsupported input format %v", format)}}}
	}
	return im.result()
}

// importer accumulates the imported conversation and every problem found.
type importer struct {
	ctx context.Context
	// err is ctx's error once the import saw ctx end: it stops there.
	err        error
	out        Imported
	violations []agentstate.FieldViolation
	truncated  bool
	// callNames maps call ids seen so far to tool names, to name results.
	callNames map[string]string
	// functionCall is the id made up for the last Chat Completions
	// function_call not yet answered by a function message.
	functionCall string
	// at is the body message being read; refs, when set, are the places the
	// next message added comes from (else the whole message at).
	at   int
	refs []Ref
}

// fail records a problem at a path below input_json ("" for the body itself).
func (im *importer) fail(path, format string, args ...any) {
	if len(im.violations) >= maxViolations {
		im.truncated = true
		return
	}
	field := "input_json"
	if path != "" {
		field += "." + path
	}
	im.violations = append(im.violations, agentstate.FieldViolation{Field: field, Description: fmt.Sprintf(format, args...)})
}

// decode unmarshals raw into v, recording a failure at path ("not valid
// JSON" for the body itself).
func (im *importer) decode(raw json.RawMessage, v any, path string) bool {
	if err := json.Unmarshal(raw, v); err != nil {
		var syntax *json.SyntaxError
		if path == "" && errors.As(err, &syntax) {
			im.fail("", "not valid JSON")
			return false
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			where := path
			if te.Field != "" {
				if where != "" {
					where += "."
				}
				where += te.Field
			}
			im.fail(where, "expected %s, got JSON %s", te.Type, te.Value)
		} else {
			im.fail(path, "%v", err)
		}
		return false
	}
	return true
}

// add appends a message with the next "in-<n>" id, from im.refs or else the
// whole message im.at; empty messages are skipped.
func (im *importer) add(role agentstate.Role, parts []agentstate.Part) {
	refs := im.refs
	im.refs = nil
	if len(parts) == 0 {
		return
	}
	if refs == nil {
		refs = []Ref{{Message: im.at, Block: WholeMessage}}
	}
	id := "in-" + strconv.Itoa(len(im.out.Messages)+1)
	im.out.Messages = append(im.out.Messages, agentstate.Message{ID: id, Role: role, Parts: parts})
	im.out.Origins = append(im.out.Origins, refs)
}

// addResults appends one RoleTool message per result, the result k read
// from refs[k] (from the whole message im.at when refs is nil).
func (im *importer) addResults(results []agentstate.ToolResult, refs []Ref) {
	for k, r := range results {
		if refs != nil {
			im.refs = refs[k : k+1]
		}
		im.add(agentstate.RoleTool, []agentstate.Part{{Kind: agentstate.PartToolResult, ToolResult: r}})
	}
}

// turn collects one provider message as it is read, for the providers whose
// messages mix tool results with other content (Anthropic, Gemini): the
// results become tool messages of their own and the rest a message of role,
// in the order they came.
type turn struct {
	im      *importer
	role    agentstate.Role
	parts   []agentstate.Part
	results []agentstate.ToolResult
	// partRefs and resultRefs are the blocks parts and results came from.
	partRefs, resultRefs []Ref
}

// next starts a new message before block j of the body message im.at when
// it switches between results and other content.
func (t *turn) next(j int, isResult bool) Ref {
	if isResult && len(t.parts) > 0 || !isResult && len(t.results) > 0 {
		t.flush()
	}
	return Ref{Message: t.im.at, Block: j}
}

// fromBlock records that what block ref added to parts or results came from it.
func (t *turn) fromBlock(ref Ref, parts, results int) {
	if len(t.parts) > parts {
		t.partRefs = append(t.partRefs, ref)
	}
	if len(t.results) > results {
		t.resultRefs = append(t.resultRefs, ref)
	}
}

// flush adds what was collected.
func (t *turn) flush() {
	t.im.addResults(t.results, t.resultRefs)
	t.im.refs = t.partRefs
	if t.im.refs == nil {
		t.im.refs = []Ref{}
	}
	t.im.add(t.role, t.parts)
	t.parts, t.results, t.partRefs, t.resultRefs = nil, nil, nil, nil
}

// syntheticCall records a call id Import made up.
func (im *importer) syntheticCall(id string) {
	if im.out.SyntheticCallIDs == nil {
		im.out.SyntheticCallIDs = make(map[string]bool)
	}
	im.out.SyntheticCallIDs[id] = true
}

// customCall records the id of a call of a custom tool (free-form input).
func (im *importer) customCall(id string) {
	if im.out.CustomCalls == nil {
		im.out.CustomCalls = map[string]bool{}
	}
	im.out.CustomCalls[id] = true
}

func (im *importer) rememberCall(id, name string) {
	if im.callNames == nil {
		im.callNames = make(map[string]string)
	}
	im.callNames[id] = name
}

// ended reports, every checkEvery messages (i counts them) and after
// decoding (i is 0), whether the call has ended, and then stops the import
// with ctx's error.
func (im *importer) ended(i int) bool {
	if im.err != nil {
		return true
	}
	if im.ctx != nil && i%checkEvery == 0 {
		im.err = im.ctx.Err()
	}
	return im.err != nil
}

func (im *importer) result() (*Imported, error) {
	if im.err != nil || im.ended(0) {
		return nil, im.err
	}
	if len(im.violations) > 0 {
		err := &agentstate.InvalidArgumentError{Reason: ReasonInvalidInput, Violations: im.violations}
		if im.truncated {
			err.Metadata = map[string]string{"violations_truncated": "true"}
		}
		return nil, err
	}
	return &im.out, nil
}

// errorResult splits a tool message's content into the result's content and
// error flag (see ToolErrorPrefix).
func errorResult(content string) (string, bool) {
	if rest, ok := strings.CutPrefix(content, ToolErrorPrefix); ok {
		return rest, true
	}
	return content, false
}

// toolResultContent is what OpenAI and Ollama send for a result.
func toolResultContent(r agentstate.ToolResult) string {
	if r.IsError {
		return ToolErrorPrefix + r.Content
	}
	return r.Content
}

// decodeSignature reads a base64 signature. Only standard padded base64 is
// accepted, so that rendering it again gives the same string byte for byte.
func decodeSignature(s string) ([]byte, bool) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || base64.StdEncoding.EncodeToString(b) != s {
		return nil, false
	}
	return b, true
}

// schemaText is a tool schema as ParametersJSON: compact, "" when absent.
func schemaText(raw json.RawMessage) string {
	if t := strings.TrimSpace(string(raw)); t == "" || t == "null" {
		return ""
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

func textPart(s string) agentstate.Part { return agentstate.TextPart(s) }

func imagePart(img agentstate.Image) agentstate.Part {
	return agentstate.Part{Kind: agentstate.PartImage, Image: img}
}

// checker collects a validator's findings.
type checker struct{ problems []string }

func (c *checker) fail(format string, args ...any) {
	if len(c.problems) < maxViolations {
		c.problems = append(c.problems, fmt.Sprintf(format, args...))
	}
}

func (c *checker) err(provider string) error {
	if len(c.problems) == 0 {
		return nil
	}
	return fmt.Errorf("invalid %s body: %s", provider, strings.Join(c.problems, "; "))
}

// opaqueRun is the longest string without white space that opaqueText keeps:
// longer ones are base64 data, signatures or encrypted content.
const opaqueRun = 128

// opaqueText is what a part ctxc does not read (an Anthropic document or
// server tool block, a Chat audio or file part, a Responses web search or
// file search item, a Gemini executableCode part...) is imported as: a text
// naming its type, then its JSON with every string of more than opaqueRun
// bytes without white space cut to its length, so that the text counts about
// what the part's words do and holds no long run to tokenize. Splice never
// sends this text: it sends the part as the client did, or, when the compile
// changed it, leaves it out whole.
func opaqueText(kind string, raw json.RawMessage) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "[" + kind + "]"
	}
	b, err := encodeJSON(shortenRuns(v))
	if err != nil {
		return "[" + kind + "]"
	}
	return "[" + kind + "] " + string(b)
}

// shortenRuns is opaqueText's cut of a decoded JSON value.
func shortenRuns(v any) any {
	switch v := v.(type) {
	case string:
		if len(v) > opaqueRun && !strings.ContainsAny(v, " \n\t") {
			return fmt.Sprintf("(%d bytes)", len(v))
		}
	case []any:
		for i := range v {
			v[i] = shortenRuns(v[i])
		}
	case map[string]any:
		for k := range v {
			v[k] = shortenRuns(v[k])
		}
	}
	return v
}
