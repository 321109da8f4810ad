package scriptedmodel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/contextcompiler/ctxc/internal/providers/wire"
)

// Gemini generateContent and streamGenerateContent (REST, camelCase): the
// model comes from the path (/v1beta/models/<model>:generateContent), a
// stream is asked for by the method (:streamGenerateContent, with ?alt=sse
// for server-sent events, as the SDKs send it).

// geminiModel is the model a Gemini path names.
func geminiModel(path string) string {
	_, rest, ok := strings.Cut(path, "/models/")
	if !ok {
		return ""
	}
	model, _, _ := strings.Cut(rest, ":")
	return model
}

// geminiResponseText is a functionResponse.response as a result's text: its
// "output" (or "error") when a string, else its JSON.
func geminiResponseText(raw json.RawMessage) (string, bool) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) == nil {
		for _, key := range []string{"output", "error"} {
			var s string
			if v, ok := fields[key]; ok && json.Unmarshal(v, &s) == nil {
				return s, key == "error"
			}
		}
	}
	return string(bytes.TrimSpace(raw)), false
}

func decodeGemini(req *Request) error {
	var body wire.GeminiRequest
	if err := json.Unmarshal(req.Body, &body); err != nil {
		return err
	}
	req.Model = geminiModel(req.Path)
	req.Stream = strings.HasSuffix(req.Path, ":streamGenerateContent")
	if si := body.SystemInstruction; si != nil {
		var texts []string
		for _, p := range si.Parts {
			if p.Text != nil {
				texts = append(texts, *p.Text)
			}
		}
		req.System = strings.Join(texts, "\n")
	}
	for _, t := range body.Tools {
		for _, d := range t.FunctionDeclarations {
			req.Tools = append(req.Tools, d.Name)
		}
	}
	for i, c := range body.Contents {
		role := "user"
		switch c.Role {
		case "model":
			role = "assistant"
		case "user", "":
		default:
			return errField(fmt.Sprintf("contents[%d].role", i), fmt.Errorf("%q is not user or model", c.Role))
		}
		msg := Turn{Role: role}
		var texts []string
		for _, p := range c.Parts {
			switch {
			case p.Text != nil && !p.Thought:
				texts = append(texts, *p.Text)
			case p.FunctionCall != nil:
				// Gemini pairs a call without an id with its response by
				// name: the name is its id here.
				id := p.FunctionCall.ID
				if id == "" {
					id = p.FunctionCall.Name
				}
				msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: id, Name: p.FunctionCall.Name, Input: string(p.FunctionCall.Args)})
			case p.FunctionResponse != nil:
				content, isErr := geminiResponseText(p.FunctionResponse.Response)
				id := p.FunctionResponse.ID
				if id == "" {
					id = p.FunctionResponse.Name
				}
				msg.ToolResults = append(msg.ToolResults, ToolResult{CallID: id, Content: content, IsError: isErr})
			}
		}
		msg.Text = strings.Join(texts, "\n")
		req.Messages = append(req.Messages, msg)
	}
	return nil
}

// geminiParts are the reply's parts: its thought, its text, its calls, the
// first call carrying the thought signature the API wants back with it
// (Gemini's ids are the client's to give: the calls carry none).
func (rw *replyWriter) geminiParts() []map[string]any {
	r := rw.reply
	var parts []map[string]any
	if r.Thinking != "" {
		parts = append(parts, map[string]any{"text": r.Thinking, "thought": true})
	}
	if r.Text != "" {
		parts = append(parts, map[string]any{"text": r.Text})
	}
	for i, c := range r.ToolCalls {
		p := map[string]any{"functionCall": map[string]any{"name": c.Name, "args": inputObject(c.Input)}}
		if i == 0 {
			p["thoughtSignature"] = thoughtSignature(rw.req.Seq, c.Name)
		}
		parts = append(parts, p)
	}
	return parts
}

func (rw *replyWriter) geminiResponse(parts []map[string]any, final bool) map[string]any {
	cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
	resp := map[string]any{"candidates": []any{cand}, "modelVersion": rw.req.Model, "responseId": rw.id("scripted-")}
	u := rw.reply.Usage
	if final {
		cand["finishReason"] = "STOP"
		resp["usageMetadata"] = map[string]any{"promptTokenCount": u.InputTokens, "candidatesTokenCount": u.OutputTokens,
			"totalTokenCount": u.InputTokens + u.OutputTokens}
	}
	return resp
}

func (rw *replyWriter) gemini() {
	parts := rw.geminiParts()
	if !rw.req.Stream {
		writeJSON(rw.w, rw.geminiResponse(parts, true))
		return
	}
	rw.startStream()
	// Thought and text in deltas, then the calls with the finish and usage.
	var calls []map[string]any
	for _, p := range parts {
		if _, ok := p["functionCall"]; ok {
			calls = append(calls, p)
			continue
		}
		for _, s := range chunks(p["text"].(string)) {
			delta := map[string]any{"text": s}
			if p["thought"] == true {
				delta["thought"] = true
			}
			rw.event("", rw.geminiResponse([]map[string]any{delta}, false))
		}
	}
	if calls == nil {
		calls = []map[string]any{{"text": ""}}
	}
	rw.event("", rw.geminiResponse(calls, true))
	rw.flush()
}
