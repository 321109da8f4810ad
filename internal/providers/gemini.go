package providers

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"mime"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/contextcompiler/ctxc/internal/providers/wire"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

func renderGemini(c *conversation) ([]byte, error) {
	req := wire.GeminiRequest{Contents: []wire.GeminiContent{}}
	if c.system != "" {
		system := c.system
		req.SystemInstruction = &wire.GeminiContent{Parts: []wire.GeminiPart{{Text: &system}}}
	}
	if len(c.tools) > 0 {
		decls := make([]wire.GeminiFunctionDeclaration, len(c.tools))
		for i, t := range c.tools {
			decls[i] = wire.GeminiFunctionDeclaration{Name: t.Name, Description: t.Description, ParametersJSONSchema: c.toolSchemas[i]}
		}
		req.Tools = []wire.GeminiTool{{FunctionDeclarations: decls}}
	}
	if rf := parseResponseFormat(c.responseFormat, c.notes); rf != nil {
		req.GenerationConfig = &wire.GeminiGenerationConfig{ResponseMimeType: "application/json", ResponseJSONSchema: rf.schema}
	}
	appendTurn := func(role string, parts []wire.GeminiPart) {
		if len(parts) == 0 {
			return
		}
		if n := len(req.Contents); n > 0 && req.Contents[n-1].Role == role {
			req.Contents[n-1].Parts = append(req.Contents[n-1].Parts, parts...)
			return
		}
		req.Contents = append(req.Contents, wire.GeminiContent{Role: role, Parts: parts})
	}
	for i := range c.messages {
		role, parts := geminiPartsOf(c, &c.messages[i])
		appendTurn(role, parts)
	}
	if len(req.Contents) > 0 && req.Contents[0].Role == "model" {
		text := LeadingUserText
		req.Contents = append([]wire.GeminiContent{{Role: "user", Parts: []wire.GeminiPart{{Text: &text}}}}, req.Contents...)
	}
	return encodeJSON(req)
}

// geminiPartsOf renders one compiled message as the parts of a turn of role.
func geminiPartsOf(c *conversation, m *agentstate.Message) (role string, parts []wire.GeminiPart) {
	role = "user"
	if m.Role == agentstate.RoleAssistant {
		role = "model"
	}
	for _, p := range m.Parts {
		switch {
		case p.Kind == agentstate.PartText:
			if blank(p.Text) {
				c.notes.add("blank text part(s) omitted", 1)
				continue
			}
			parts = append(parts, wire.GeminiPart{Text: &p.Text})
		case p.Kind == agentstate.PartToolCall && role == "model":
			parts = append(parts, wire.GeminiPart{FunctionCall: &wire.GeminiFunctionCall{Name: p.ToolCall.Name, Args: argumentsObject(p.ToolCall.ArgumentsJSON)}})
		case p.Kind == agentstate.PartToolResult && m.Role == agentstate.RoleTool:
			content := p.ToolResult.Content
			res := wire.GeminiResult{Output: &content}
			if p.ToolResult.IsError {
				res = wire.GeminiResult{Error: &content}
			}
			parts = append(parts, wire.GeminiPart{FunctionResponse: &wire.GeminiFunctionResponse{Name: p.ToolResult.Name, Response: rawJSON(res)}})
		case p.Kind == agentstate.PartReasoning && role == "model" && p.Reasoning.Text != "":
			r := p.Reasoning
			gp := wire.GeminiPart{Text: &r.Text, Thought: true}
			if len(r.Signature) > 0 {
				gp.ThoughtSignature = base64.StdEncoding.EncodeToString(r.Signature)
			}
			parts = append(parts, gp)
		case p.Kind == agentstate.PartImage && role == "user" && m.Role != agentstate.RoleTool:
			if mt, data, ok := imageBytes(p.Image); ok {
				parts = append(parts, wire.GeminiPart{InlineData: &wire.GeminiBlob{MimeType: mt, Data: base64.StdEncoding.EncodeToString(data)}})
			} else {
				parts = append(parts, wire.GeminiPart{FileData: &wire.GeminiFileData{MimeType: urlMediaType(p.Image), FileURI: p.Image.URL}})
			}
		case p.Kind == agentstate.PartReasoning && role == "model":
			c.notes.add("reasoning part(s) without text omitted (a thought part needs text)", 1)
		default:
			c.notes.add(fmt.Sprintf("%s part(s) of %s messages omitted", p.Kind, m.Role), 1)
		}
	}
	return role, parts
}

// urlMediaType is an image URL's media type: given, else guessed from the
// path's extension, else image/jpeg (fileData needs one).
func urlMediaType(img agentstate.Image) string {
	if img.MediaType != "" {
		return img.MediaType
	}
	if mt := mime.TypeByExtension(path.Ext(img.URL)); strings.HasPrefix(mt, "image/") {
		return mt
	}
	return "image/jpeg"
}

// ValidateGemini checks the generateContent rules a rendered body must meet:
// systemInstruction holds only text; at least one content; roles user and
// model alternating, starting with user; every part holds exactly one datum;
// function calls named with object args; each model turn with N
// functionCalls is followed by a user turn with exactly N functionResponses
// of the same names, and functionResponses appear nowhere else.
func ValidateGemini(body []byte) error {
	var req wire.GeminiRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return fmt.Errorf("invalid gemini body: %w", err)
	}
	var c checker
	if si := req.SystemInstruction; si != nil {
		for j, p := range si.Parts {
			if p.Text == nil || geminiData(p) != 1 {
				c.fail("systemInstruction.parts[%d]: only text", j)
			}
		}
	}
	if len(req.Contents) == 0 {
		c.fail("contents is empty")
	}
	for i, t := range req.Tools {
		for j, d := range t.FunctionDeclarations {
			if d.Name == "" {
				c.fail("tools[%d].functionDeclarations[%d]: empty name", i, j)
			}
			if len(d.ParametersJSONSchema) > 0 && !isJSONObject(d.ParametersJSONSchema) {
				c.fail("tools[%d].functionDeclarations[%d]: parametersJsonSchema must be an object", i, j)
			}
		}
	}
	var calls []string // names called by the previous model turn
	for i, content := range req.Contents {
		want := "user"
		if i%2 == 1 {
			want = "model"
		}
		if content.Role != want {
			c.fail("contents[%d]: role %q, want %q (roles alternate, starting with user)", i, content.Role, want)
		}
		if len(content.Parts) == 0 {
			c.fail("contents[%d]: no parts", i)
		}
		var called, answered []string
		for j, p := range content.Parts {
			if geminiData(p) != 1 {
				c.fail("contents[%d].parts[%d]: a part holds exactly one of text, inlineData, fileData, functionCall, functionResponse, executableCode, codeExecutionResult, toolCall, toolResponse, audioTranscription", i, j)
			}
			if p.Text != nil && !p.Thought && blank(*p.Text) {
				c.fail("contents[%d].parts[%d]: blank text", i, j)
			}
			if fc := p.FunctionCall; fc != nil {
				if content.Role != "model" || fc.Name == "" || !isJSONObject(fc.Args) {
					c.fail("contents[%d].parts[%d]: functionCall needs a model turn, a name and object args", i, j)
				}
				called = append(called, fc.Name)
			}
			if fr := p.FunctionResponse; fr != nil {
				if content.Role != "user" || !isJSONObject(fr.Response) {
					c.fail("contents[%d].parts[%d]: functionResponse needs a user turn and an object response", i, j)
				}
				answered = append(answered, fr.Name)
			}
		}
		if content.Role != "model" && !sameNames(calls, answered) {
			c.fail("contents[%d]: %d functionResponse(s) %v for the previous turn's %d functionCall(s) %v", i, len(answered), answered, len(calls), calls)
		}
		if content.Role == "model" && len(answered) > 0 {
			c.fail("contents[%d]: functionResponse in a model turn", i)
		}
		calls = called
	}
	if len(calls) > 0 {
		c.fail("the last turn's functionCall(s) %v have no functionResponse", calls)
	}
	return c.err("gemini")
}

// geminiData counts the data fields set on a part.
func geminiData(p wire.GeminiPart) int {
	n := 0
	for _, set := range []bool{p.Text != nil, p.InlineData != nil, p.FileData != nil, p.FunctionCall != nil, p.FunctionResponse != nil,
		p.ExecutableCode != nil, p.CodeExecutionResult != nil, p.ToolCall != nil, p.ToolResponse != nil, p.AudioTranscription != nil} {
		if set {
			n++
		}
	}
	return n
}

// sameNames compares two lists of names as multisets.
func sameNames(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	a, b = append([]string(nil), a...), append([]string(nil), b...)
	sort.Strings(a)
	sort.Strings(b)
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// pendingCall is a call waiting for its result, for bodies that pair results
// with calls by order and name (Gemini, Ollama without ids).
type pendingCall struct{ id, name string }

// takePending removes and returns the id of the first pending call of name.
func takePending(pending *[]pendingCall, name string) (string, bool) {
	for k, pc := range *pending {
		if pc.name == name {
			*pending = append((*pending)[:k], (*pending)[k+1:]...)
			return pc.id, true
		}
	}
	return "", false
}

func importGemini(im *importer, body []byte) {
	var req wire.GeminiRequest
	if !im.decode(body, &req, "") {
		return
	}
	if req.GenerationConfig != nil {
		im.out.MaxOutputTokens = req.GenerationConfig.MaxOutputTokens
	}
	if si := req.SystemInstruction; si != nil {
		var texts []string
		for j, p := range si.Parts {
			if p.Text == nil {
				im.fail(fmt.Sprintf("systemInstruction.parts[%d]", j), "only text parts are supported")
				continue
			}
			texts = append(texts, *p.Text)
		}
		im.out.SystemPrompt = strings.Join(texts, "\n")
	}
	for i, t := range req.Tools {
		for j, d := range t.FunctionDeclarations {
			if d.Name == "" {
				im.fail(fmt.Sprintf("tools[%d].functionDeclarations[%d].name", i, j), "a function needs a name")
			}
			schema := d.ParametersJSONSchema
			if len(schema) == 0 {
				schema = d.Parameters
			}
			im.out.Tools = append(im.out.Tools, agentstate.ToolDefinition{Name: d.Name, Description: d.Description, ParametersJSON: schemaText(schema)})
		}
	}
	g := geminiImport{importer: im, body: body}
	for i, content := range req.Contents {
		if im.ended(i) {
			return
		}
		im.at = i
		g.content(i, content)
	}
}

// geminiImport reads contents in order. Gemini may leave call ids out, so a
// functionResponse without one answers the first call of that name of the
// previous model turn still pending.
type geminiImport struct {
	*importer
	pending []pendingCall
	// body is the body imported; raws its parts as sent, read once a part
	// needs them.
	body []byte
	raws [][]json.RawMessage
}

// raw is part j of content i as sent.
func (g *geminiImport) raw(i, j int) json.RawMessage {
	if g.raws == nil {
		var req struct {
			Contents []struct {
				Parts []json.RawMessage `json:"parts"`
			} `json:"contents"`
		}
		_ = json.Unmarshal(g.body, &req)
		g.raws = make([][]json.RawMessage, len(req.Contents))
		for k, c := range req.Contents {
			g.raws[k] = c.Parts
		}
	}
	if i < len(g.raws) && j < len(g.raws[i]) {
		return g.raws[i][j]
	}
	return nil
}

// geminiTurn is what one content is read into.
type geminiTurn struct {
	turn
	index int // of the content, for synthesized call ids
	calls int
}

func (g *geminiImport) content(i int, content wire.GeminiContent) {
	path := fmt.Sprintf("contents[%d]", i)
	t := geminiTurn{turn: turn{im: g.importer}, index: i}
	switch content.Role {
	case "user", "":
		t.role = agentstate.RoleUser
	case "model":
		t.role = agentstate.RoleAssistant
		g.pending = g.pending[:0]
	default:
		g.fail(path+".role", "unsupported role %q (want user or model)", content.Role)
		return
	}
	for j, p := range content.Parts {
		ref := t.next(j, p.FunctionResponse != nil)
		parts, results := len(t.parts), len(t.results)
		g.part(fmt.Sprintf("%s.parts[%d]", path, j), &t, p, func() json.RawMessage { return g.raw(i, j) })
		t.fromBlock(ref, parts, results)
	}
	t.flush()
}

// part reads one part at path into t (raw gives its bytes); a part that
// cannot be read is reported and left out, and one holding what ctxc does
// not read (executableCode, codeExecutionResult, toolCall...) is imported as
// opaqueText.
func (g *geminiImport) part(path string, t *geminiTurn, p wire.GeminiPart, raw func() json.RawMessage) {
	switch {
	case p.Text != nil && p.Thought:
		r := agentstate.Reasoning{Text: *p.Text}
		if p.ThoughtSignature != "" {
			sig, ok := decodeSignature(p.ThoughtSignature)
			if !ok {
				g.fail(path+".thoughtSignature", "the signature must be standard base64")
				return
			}
			r.Signature = sig
		}
		t.parts = append(t.parts, agentstate.Part{Kind: agentstate.PartReasoning, Reasoning: r})
	case p.Text != nil:
		t.parts = append(t.parts, textPart(*p.Text))
	case p.InlineData != nil:
		data, err := base64.StdEncoding.DecodeString(p.InlineData.Data)
		if err != nil {
			g.fail(path+".inlineData.data", "not base64: %v", err)
			return
		}
		t.parts = append(t.parts, imagePart(agentstate.Image{Source: agentstate.ImageSourceData, Data: data, MediaType: p.InlineData.MimeType}))
	case p.FileData != nil:
		if p.FileData.FileURI == "" {
			g.fail(path+".fileData.fileUri", "a file needs a URI")
			return
		}
		t.parts = append(t.parts, imagePart(agentstate.Image{Source: agentstate.ImageSourceURL, URL: p.FileData.FileURI, MediaType: p.FileData.MimeType}))
	case p.FunctionCall != nil:
		g.functionCall(path, t, p.FunctionCall)
	case p.FunctionResponse != nil:
		g.functionResponse(path, t, p.FunctionResponse)
	default:
		t.parts = append(t.parts, textPart(opaqueText("part", raw())))
	}
}

func (g *geminiImport) functionCall(path string, t *geminiTurn, fc *wire.GeminiFunctionCall) {
	if t.role != agentstate.RoleAssistant {
		g.fail(path+".functionCall", "a functionCall belongs in a model turn")
		return
	}
	if fc.Name == "" {
		g.fail(path+".functionCall.name", "a functionCall needs a name")
	}
	id := fc.ID
	if id == "" {
		id = fmt.Sprintf("gemini-call-%d-%d", t.index, t.calls)
		g.syntheticCall(id)
	}
	t.calls++
	g.pending = append(g.pending, pendingCall{id: id, name: fc.Name})
	g.rememberCall(id, fc.Name)
	t.parts = append(t.parts, agentstate.Part{Kind: agentstate.PartToolCall, ToolCall: agentstate.ToolCall{ID: id, Name: fc.Name, ArgumentsJSON: argumentsFromObject(fc.Args)}})
}

func (g *geminiImport) functionResponse(path string, t *geminiTurn, fr *wire.GeminiFunctionResponse) {
	id := fr.ID
	if k := slices.IndexFunc(g.pending, func(pc pendingCall) bool { return pc.id == id }); id != "" && k >= 0 {
		g.pending = slices.Delete(g.pending, k, k+1)
	} else {
		// No id, or one of the client's own for a call the model gave none
		// (Gemini CLI gives each call an id for its response): the first
		// call of that name still pending.
		pid, ok := takePending(&g.pending, fr.Name)
		switch {
		case ok:
			id = pid
		case id == "":
			g.fail(path+".functionResponse.name", "functionResponse %q answers no functionCall of the previous model turn", fr.Name)
			return
		}
	}
	content, isErr := geminiResponseContent(fr.Response)
	t.results = append(t.results, agentstate.ToolResult{ToolCallID: id, Name: fr.Name, Content: content, IsError: isErr})
}

// geminiResponseContent reads a functionResponse.response: {"output": s} or
// {"error": s} with a string s as the renderer writes it; any other value is
// kept as its JSON text.
func geminiResponseContent(raw json.RawMessage) (string, bool) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) == nil && len(fields) == 1 {
		for key, v := range fields {
			var s string
			if (key == "output" || key == "error") && json.Unmarshal(v, &s) == nil {
				return s, key == "error"
			}
		}
	}
	return schemaText(raw), false
}
