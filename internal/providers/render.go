package providers

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"

	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// DefaultMaxTokens is Anthropic's max_tokens when neither the budget nor the
// model gives an output reservation: the field is required.
const DefaultMaxTokens = 4096

// LeadingUserText opens an Anthropic or Gemini body whose first message would
// be the assistant's: both APIs require the conversation to start with a user turn.
const LeadingUserText = "[start of conversation]"

// ToolErrorPrefix marks a failed tool result's content for OpenAI and Ollama,
// whose tool messages have no error flag; Import strips it and sets IsError.
const ToolErrorPrefix = "[tool error] "

// rawArgumentsKey wraps call arguments that are not a JSON object for the
// providers that need an object (Anthropic, Gemini, Ollama); Import unwraps it.
const rawArgumentsKey = "_raw"

// Input is what a body is rendered from: the compiled context of one run.
type Input struct {
	// State gives the system prompt, the tools, the response format and,
	// unless Model names one, the model.
	State *agentstate.State
	// Model is the resolved model: its name, window and output limit.
	Model agentstate.ModelInfo
	// Budget, when set, gives the window and the output reservation, which
	// win over the model's.
	Budget *agentstate.Budget
	// View is the compiled context, in order. An entry marked Unsettled ends
	// the stable prefix, where Anthropic's body places its cache breakpoint.
	View []agentstate.Entry
	// MaxReplyBytes, when set, bounds the reply that carries View's messages
	// and the body: a body that could not fit beside them is refused (a
	// *agentstate.LimitError) before it is built.
	MaxReplyBytes int
}

// contentBytes is a floor of what the view's messages take in a reply, and
// of the body that renders them: their texts, calls, results and images
// (inline images as base64, as every provider's body carries them).
func contentBytes(view []agentstate.Entry) (messages, body int) {
	for i := range view {
		for _, p := range view[i].Message.Parts {
			n := len(p.Text) + len(p.ToolCall.ArgumentsJSON) + len(p.ToolResult.Content) + len(p.Reasoning.Text) + len(p.Image.URL)
			messages += n + len(p.Image.Data)
			body += n + base64.StdEncoding.EncodedLen(len(p.Image.Data))
		}
	}
	return messages, body
}

// Render returns the provider request body for the compiled context in in:
// system prompt from in.State.Context.SystemPrompt, messages from in.View,
// tools, the response format where the provider has one, and the model. The
// body is compact JSON that passed the provider's validator; a body that would
// not pass is an error, never output. omitted says, one line each, what the
// provider could not take and was left out ("render openai: 2 reasoning
// part(s) omitted ...").
func Render(format agentstate.RenderFormat, in Input) (body []byte, omitted []string, err error) {
	if in.MaxReplyBytes > 0 {
		messages, body := contentBytes(in.View)
		if messages+body > in.MaxReplyBytes {
			return nil, nil, &agentstate.LimitError{Field: "options.render (the reply, in bytes: the compiled messages and at least that much again rendered)",
				Limit: in.MaxReplyBytes, Got: messages + body}
		}
	}
	c, err := prepare(in)
	if err != nil {
		return nil, nil, err
	}
	if err := renderable(format, c); err != nil {
		return nil, nil, err
	}
	var validate func([]byte) error
	switch format {
	case agentstate.RenderOpenAI:
		body, err = renderOpenAI(c)
		validate = ValidateOpenAI
	case agentstate.RenderAnthropic:
		body, err = renderAnthropic(c)
		validate = ValidateAnthropic
	case agentstate.RenderGemini:
		body, err = renderGemini(c)
		validate = ValidateGemini
	case agentstate.RenderOllama:
		body, err = renderOllama(c)
		validate = ValidateOllama
	case agentstate.RenderOpenAIResponses:
		body, err = renderResponses(c)
		validate = ValidateResponses
	default:
		return nil, nil, fmt.Errorf("render: unsupported format %v", format)
	}
	if err != nil {
		return nil, nil, err
	}
	if err := validate(body); err != nil {
		return nil, nil, fmt.Errorf("render %s: %w", format, err)
	}
	return body, c.notes.list(format), nil
}

// Function name rules of the providers' APIs. Ollama documents none.
var (
	openAIToolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	geminiToolName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$`)
)

// renderable reports, as bad input rather than a failed render, what the
// provider would refuse whatever ctxc did: a context with nothing to send
// (Anthropic and Gemini need a message besides the system prompt) and tool
// names outside the provider's rules. What the validators find after this is
// a bug in a renderer.
func renderable(format agentstate.RenderFormat, c *conversation) error {
	var problems []agentstate.FieldViolation
	bad := func(format string, args ...any) {
		problems = append(problems, agentstate.FieldViolation{Field: "options.render", Description: fmt.Sprintf(format, args...)})
	}
	needsMessage := format == agentstate.RenderAnthropic || format == agentstate.RenderGemini || format == agentstate.RenderOpenAIResponses
	if len(c.messages) == 0 && (needsMessage || c.system == "") {
		bad("%s needs a message to send, and the compiled context has none (empty log, or only calls still waiting for results)", format)
	}
	var rule *regexp.Regexp
	var ruleText string
	switch format {
	case agentstate.RenderOpenAI, agentstate.RenderAnthropic, agentstate.RenderOpenAIResponses:
		rule, ruleText = openAIToolName, "letters, digits, '_' and '-', 1 to 64 of them"
	case agentstate.RenderGemini:
		rule, ruleText = geminiToolName, "a letter or '_' first, then letters, digits, '_', '.', ':' and '-', 64 at most"
	}
	if rule != nil {
		for i := range c.tools {
			if name := c.tools[i].Name; !rule.MatchString(name) && len(problems) < maxViolations {
				bad("tool %q (tools[%d]) is not a valid %s function name: %s", name, i, format, ruleText)
			}
		}
		for i := range c.messages {
			for _, p := range c.messages[i].Parts {
				if p.Kind == agentstate.PartToolCall && !rule.MatchString(p.ToolCall.Name) && len(problems) < maxViolations {
					bad("message %q calls tool %q, not a valid %s function name: %s", c.messages[i].ID, p.ToolCall.Name, format, ruleText)
				}
			}
		}
	}
	if len(problems) > 0 {
		return &agentstate.InvalidArgumentError{Reason: ReasonNotRenderable, Violations: problems}
	}
	return nil
}

// conversation is the compiled context as every renderer reads it.
type conversation struct {
	model          string
	system         string
	messages       []agentstate.Message
	tools          []agentstate.ToolDefinition
	toolSchemas    []json.RawMessage // compact objects, nil when a tool has no schema
	responseFormat string
	contextWindow  int
	maxTokens      int
	notes          notes
	// stable is how many of messages come from the stable prefix of the view.
	stable int
}

// prepare copies what the renderers need out of in. Calls without a result
// anywhere in the view (the running execution's pending calls) are left out:
// every provider rejects a call that is not answered.
func prepare(in Input) (*conversation, error) {
	c := &conversation{notes: notes{}}
	if in.State != nil {
		c.model = in.State.Model.Name
		c.system = in.State.Context.SystemPrompt
		c.tools = in.State.Context.Tools
		c.responseFormat = in.State.Context.ResponseFormat
	}
	if in.Model.Name != "" {
		c.model = in.Model.Name
	}
	c.contextWindow, c.maxTokens = in.Model.ContextWindow, in.Model.MaxOutputTokens
	if b := in.Budget; b != nil {
		if b.ContextWindow > 0 {
			c.contextWindow = b.ContextWindow
		}
		if b.ReservedOutput > 0 {
			c.maxTokens = b.ReservedOutput
		}
	}
	if c.maxTokens <= 0 {
		c.maxTokens = DefaultMaxTokens
	}
	schemas, err := toolSchemas(c.tools)
	if err != nil {
		return nil, err
	}
	c.toolSchemas = schemas

	answered := make(map[string]bool)
	for i := range in.View {
		for _, p := range in.View[i].Message.Parts {
			if p.Kind == agentstate.PartToolResult {
				answered[p.ToolResult.ToolCallID] = true
			}
		}
	}
	c.messages = make([]agentstate.Message, 0, len(in.View))
	settled := true
	for i := range in.View {
		settled = settled && !in.View[i].Unsettled
		m := in.View[i].Message
		pending := 0
		for _, p := range m.Parts {
			if p.Kind == agentstate.PartToolCall && !answered[p.ToolCall.ID] {
				pending++
			}
		}
		if pending > 0 {
			parts := make([]agentstate.Part, 0, len(m.Parts)-pending)
			for _, p := range m.Parts {
				if p.Kind != agentstate.PartToolCall || answered[p.ToolCall.ID] {
					parts = append(parts, p)
				}
			}
			m.Parts = parts
			c.notes.add("tool call(s) without a result omitted (pending calls of the running execution)", pending)
		}
		if len(m.Parts) > 0 {
			c.messages = append(c.messages, m)
			if settled {
				c.stable = len(c.messages)
			}
		}
	}
	return c, nil
}

// toolSchemas checks that every tool's parameters are a JSON object: providers
// take the schema as an object, and a broken one is the caller's to fix.
func toolSchemas(tools []agentstate.ToolDefinition) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, len(tools))
	var bad []agentstate.FieldViolation
	for i, t := range tools {
		if strings.TrimSpace(t.ParametersJSON) == "" {
			continue
		}
		obj, ok := jsonObject(t.ParametersJSON)
		if !ok {
			bad = append(bad, agentstate.FieldViolation{
				Field:       fmt.Sprintf("state.context.tools[%d].parameters_json", i),
				Description: fmt.Sprintf("tool %q: parameters must be a JSON object (a JSON schema) to be rendered", t.Name),
			})
			continue
		}
		out[i] = obj
	}
	if len(bad) > 0 {
		return nil, &agentstate.InvalidArgumentError{Reason: agentstate.ReasonInvalidState, Violations: bad}
	}
	return out, nil
}

// notes counts what a renderer left out, by what and why.
type notes map[string]int

func (n notes) add(what string, count int) { n[what] += count }

func (n notes) list(format agentstate.RenderFormat) []string {
	out := make([]string, 0, len(n))
	for what, count := range n {
		out = append(out, fmt.Sprintf("render %s: %d %s", format, count, what))
	}
	sort.Strings(out)
	return out
}

// encodeJSON marshals v compactly without HTML escaping: bodies carry code and
// markup, and "\u003c" for "<" only makes them harder to read.
func encodeJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// rawJSON is encodeJSON for values that cannot fail (strings, slices of plain structs).
func rawJSON(v any) json.RawMessage {
	b, err := encodeJSON(v)
	if err != nil {
		panic(fmt.Sprintf("render: encoding %T: %v", v, err))
	}
	return b
}

// jsonObject returns s compacted when it is one JSON object.
func jsonObject(s string) (json.RawMessage, bool) {
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "{") || !json.Valid([]byte(t)) {
		return nil, false
	}
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(t)); err != nil {
		return nil, false
	}
	return b.Bytes(), true
}

// argumentsObject returns call arguments as the JSON object that Anthropic,
// Gemini and Ollama require: empty arguments become {}, anything that is not
// a JSON object is kept verbatim as {"_raw": "<arguments>"}.
func argumentsObject(args string) json.RawMessage {
	if strings.TrimSpace(args) == "" {
		return json.RawMessage("{}")
	}
	if obj, ok := jsonObject(args); ok {
		return obj
	}
	return rawJSON(map[string]string{rawArgumentsKey: args})
}

// argumentsFromObject reverses argumentsObject: {"_raw": "<s>"} gives s, any
// other value its compact JSON text, an absent value "{}".
func argumentsFromObject(raw json.RawMessage) string {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return "{}"
	}
	var wrapped map[string]json.RawMessage
	if json.Unmarshal(t, &wrapped) == nil && len(wrapped) == 1 {
		var s string
		if v, ok := wrapped[rawArgumentsKey]; ok && json.Unmarshal(v, &s) == nil {
			return s
		}
	}
	var b bytes.Buffer
	if json.Compact(&b, t) != nil {
		return string(t)
	}
	return b.String()
}

// imageBytes returns an image's media type and bytes when it is given inline,
// as data or as a base64 data: URL.
func imageBytes(img agentstate.Image) (mediaType string, data []byte, ok bool) {
	if img.Source == agentstate.ImageSourceData || (img.URL == "" && len(img.Data) > 0) {
		return mediaTypeOf(img.MediaType, img.Data), img.Data, true
	}
	if mt, d, ok := parseDataURL(img.URL); ok {
		return mediaTypeOf(mt, d), d, true
	}
	return "", nil, false
}

// mediaTypeOf returns mt, else the type sniffed from the bytes: every
// provider needs one for inline images.
func mediaTypeOf(mt string, data []byte) string {
	if mt != "" {
		return mt
	}
	return http.DetectContentType(data)
}

func dataURL(mediaType string, data []byte) string {
	return "data:" + mediaType + ";base64," + base64.StdEncoding.EncodeToString(data)
}

// parseDataURL reads "data:<type>;base64,<data>"; other data: URLs are not inline images here.
func parseDataURL(u string) (mediaType string, data []byte, ok bool) {
	rest, found := strings.CutPrefix(u, "data:")
	if !found {
		return "", nil, false
	}
	meta, payload, found := strings.Cut(rest, ",")
	if !found {
		return "", nil, false
	}
	mt, found := strings.CutSuffix(meta, ";base64")
	if !found {
		return "", nil, false
	}
	d, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		return "", nil, false
	}
	return mt, d, true
}

func blank(s string) bool { return strings.TrimSpace(s) == "" }

// responseSchema reads Context.ResponseFormat: an OpenAI response_format
// object ({"type":"json_schema"|"json_object"|"text",...}) or a bare JSON
// schema. jsonOnly is set for json_object; schema is nil when there is none.
type responseSchema struct {
	openAI   json.RawMessage // the value to send as OpenAI's response_format
	schema   json.RawMessage
	jsonOnly bool
}

func parseResponseFormat(s string, n notes) *responseSchema {
	if blank(s) {
		return nil
	}
	obj, ok := jsonObject(s)
	if !ok {
		n.add("response format(s) omitted (not a JSON object)", 1)
		return nil
	}
	var head struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	}
	_ = json.Unmarshal(obj, &head)
	switch {
	case head.Type == "text":
		return nil
	case head.Type == "json_object":
		return &responseSchema{openAI: obj, jsonOnly: true}
	case head.Type == "json_schema" && head.JSONSchema != nil:
		return &responseSchema{openAI: obj, schema: head.JSONSchema.Schema}
	}
	wrapped := rawJSON(struct {
		Type       string `json:"type"`
		JSONSchema struct {
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	}{Type: "json_schema", JSONSchema: struct {
		Name   string          `json:"name"`
		Schema json.RawMessage `json:"schema"`
	}{Name: "response", Schema: obj}})
	return &responseSchema{openAI: wrapped, schema: obj}
}
