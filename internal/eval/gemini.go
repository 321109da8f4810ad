package eval

import (
	"encoding/json"
	"fmt"
	"strings"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/internal/providers/wire"
)

// geminiRecord is a line of a Gemini CLI chat file
// (<GEMINI home>/tmp/<project>/chats/session-….jsonl): the session's
// metadata first, then its messages as they are written, a message written
// again (with its tool calls) under the same id, and "$set" lines that
// update the metadata or set the whole message list.
type geminiRecord struct {
	SessionID string            `json:"sessionId"`
	ID        string            `json:"id"`
	Type      string            `json:"type"`
	Content   json.RawMessage   `json:"content"`
	Model     string            `json:"model"`
	ToolCalls []geminiToolCall  `json:"toolCalls"`
	Set       *geminiSetMessage `json:"$set"`
}

type geminiSetMessage struct {
	Messages []json.RawMessage `json:"messages"`
}

// geminiToolCall is a call of a gemini message (the API's function call
// with the CLI's status), with its result as the function parts the CLI
// sent back.
type geminiToolCall struct {
	wire.GeminiFunctionCall
	Status string            `json:"status"`
	Result []wire.GeminiPart `json:"result"`
}

// readGeminiCLI reads a Gemini CLI chat file: its user and gemini
// messages in the order they were first written, each as it was last
// written, from the last list a resumed session set on; a tagged block the CLI writes itself (<session_context>) is an
// event; a call's result is the function response the CLI sent, an error
// when the call's status says so or the output ends with a non-zero exit
// code.
func readGeminiCLI(lines []rawLine) (*conversation, error) {
	c := &conversation{}
	var order []string
	byID := map[string]geminiRecord{}
	lineOf := map[string]int{}
	add := func(n int, r geminiRecord) {
		if _, seen := byID[r.ID]; !seen {
			order = append(order, r.ID)
			lineOf[r.ID] = n
		}
		byID[r.ID] = r
	}
	for _, l := range lines {
		var r geminiRecord
		if err := decodeObject(l, &r); err != nil {
			return nil, err
		}
		switch {
		case r.SessionID != "" && r.Type == "":
			if c.id == "" {
				c.id = r.SessionID
			}
		case r.Set != nil && r.Set.Messages != nil:
			// A resumed session sets the whole list again as the CLI
			// reloaded it (calls as the API's functionCall parts, each
			// response twice): what it holds from then on is the
			// session, whatever was written before.
			order, byID = nil, map[string]geminiRecord{}
			for i, raw := range r.Set.Messages {
				var m geminiRecord
				if err := json.Unmarshal(raw, &m); err != nil {
					return nil, lineErr(l.n, "$set.messages", "[%d]: %v", i, err)
				}
				if m.ID == "" {
					return nil, lineErr(l.n, "$set.messages", "[%d].id: required", i)
				}
				if _, seen := byID[m.ID]; seen {
					// The list repeats a call's id for its doubled
					// response: keep both, in order.
					m.ID = fmt.Sprintf("%s#%d", m.ID, i)
				}
				add(l.n, m)
			}
		case r.Type != "":
			if r.ID == "" {
				return nil, lineErr(l.n, "id", "required on a message line")
			}
			add(l.n, r)
		}
	}
	sent := map[string]bool{} // calls whose results are in
	status := map[string]string{}
	// Calls a user message answers; the others' results are read from the call.
	answered := map[string]bool{}
	for _, id := range order {
		if r := byID[id]; r.Type == "user" {
			var parts []wire.GeminiPart
			_ = json.Unmarshal(r.Content, &parts)
			for _, p := range parts {
				if p.FunctionResponse != nil {
					answered[p.FunctionResponse.ID] = true
				}
			}
		}
	}
	for _, id := range order {
		r, n := byID[id], lineOf[id]
		switch r.Type {
		case "user":
			var parts []wire.GeminiPart
			if err := json.Unmarshal(r.Content, &parts); err != nil {
				return nil, lineErr(n, "content", "not an array of parts: %v", err)
			}
			var text []string
			var results []*ctxcv1.ToolResult
			for _, p := range parts {
				switch {
				case p.FunctionResponse != nil && !sent[p.FunctionResponse.ID]:
					fr := p.FunctionResponse
					sent[fr.ID] = true
					results = append(results, geminiResult(fr.ID, fr.Name, fr.Response, status[fr.ID]))
				case deref(p.Text) != "":
					text = append(text, *p.Text)
				}
			}
			if len(results) > 0 {
				c.messages = append(c.messages, convMessage{line: n, kind: "tool", results: results})
			}
			if len(text) > 0 {
				t := strings.Join(text, "\n")
				kind := "user"
				if m := contextBlock.FindStringSubmatch(t); m != nil && m[1] == m[2] {
					kind = "event"
				}
				c.messages = append(c.messages, convMessage{line: n, kind: kind, text: t})
			}
		case "gemini":
			if c.model == "" {
				c.model = r.Model
			}
			text, ok := contentText(r.Content)
			if !ok {
				return nil, lineErr(n, "content", "neither a string nor an array of parts")
			}
			m := convMessage{line: n, kind: "assistant", text: text}
			if len(r.ToolCalls) == 0 {
				// Calls only as the API's functionCall parts.
				var parts []wire.GeminiPart
				_ = json.Unmarshal(r.Content, &parts)
				for _, p := range parts {
					if fc := p.FunctionCall; fc != nil && fc.ID != "" {
						m.calls = append(m.calls, &ctxcv1.ToolCall{Id: fc.ID, Name: fc.Name, ArgumentsJson: compactJSON(fc.Args)})
					}
				}
			}
			var results []*ctxcv1.ToolResult
			for _, tc := range r.ToolCalls {
				if tc.ID == "" {
					return nil, lineErr(n, "toolCalls.id", "required")
				}
				m.calls = append(m.calls, &ctxcv1.ToolCall{Id: tc.ID, Name: tc.Name, ArgumentsJson: compactJSON(tc.Args)})
				status[tc.ID] = tc.Status
				// A result the CLI kept only with its call (no user message
				// of function responses follows) is read from there.
				for _, p := range tc.Result {
					if fr := p.FunctionResponse; fr != nil && !sent[fr.ID] && !answered[fr.ID] {
						sent[fr.ID] = true
						results = append(results, geminiResult(fr.ID, fr.Name, fr.Response, tc.Status))
					}
				}
			}
			c.messages = append(c.messages, m)
			if len(results) > 0 {
				c.messages = append(c.messages, convMessage{line: n, kind: "tool", results: results})
			}
		}
	}
	return c, nil
}

// geminiResult is a function response as a tool result: its output (or
// its error), an error when the call failed or exited non-zero.
func geminiResult(id, name string, response json.RawMessage, status string) *ctxcv1.ToolResult {
	var r wire.GeminiResult
	content := compactJSON(response)
	isError := status == "error" || status == "cancelled"
	if json.Unmarshal(response, &r) == nil {
		switch {
		case r.Output != nil:
			content = *r.Output
		case r.Error != nil:
			content, isError = *r.Error, true
		}
	}
	return &ctxcv1.ToolResult{ToolCallId: id, Name: name, Content: content, IsError: isError || exitFailure(content)}
}
