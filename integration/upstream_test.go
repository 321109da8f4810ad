package integration

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/providers"
)

// scriptedUpstream is a model provider in the test: a real HTTP server that
// speaks OpenAI Chat Completions and Responses, Anthropic Messages (and
// count_tokens), Gemini generateContent and streamGenerateContent, and Ollama
// /api/chat, SSE and NDJSON streams included. It records every request it
// receives, checks each with the provider's validator (package providers),
// and answers with the turn its script gives for the conversation it read.
type scriptedUpstream struct {
	*httptest.Server
	mu       sync.Mutex
	received []upstreamRequest
	script   modelScript
	calls    int
}

// upstreamRequest is one request the upstream received.
type upstreamRequest struct {
	Endpoint string // messages, count_tokens, chat_completions, responses, generate_content, chat
	Path     string
	Query    string
	Header   http.Header
	Body     []byte
	// Invalid is what the provider's validator found wrong ("" for a valid body).
	Invalid string
	// Conversation is the body read back (nil when it could not be).
	Conversation *providers.Imported
}

// modelTurn is what the scripted model answers: text, tool calls, or both.
type modelTurn struct {
	Text  string
	Calls []policies.ToolCall
}

// modelScript decides the model's turn from the request (its endpoint and
// conversation); nil answers "OK." to everything.
type modelScript func(req upstreamRequest) modelTurn

func newScriptedUpstream(t testing.TB, script modelScript) *scriptedUpstream {
	t.Helper()
	u := &scriptedUpstream{script: script}
	u.Server = httptest.NewServer(http.HandlerFunc(u.serve))
	t.Cleanup(u.Close)
	return u
}

func (u *scriptedUpstream) requests() []upstreamRequest {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]upstreamRequest(nil), u.received...)
}

// endpointOf names the API a path belongs to, with its format.
func endpointOf(path string) (string, policies.RenderFormat) {
	switch {
	case path == "/v1/messages":
		return "messages", policies.RenderAnthropic
	case path == "/v1/messages/count_tokens":
		return "count_tokens", policies.RenderAnthropic
	case path == "/v1/chat/completions":
		return "chat_completions", policies.RenderOpenAI
	case path == "/v1/responses":
		return "responses", policies.RenderOpenAIResponses
	case strings.HasSuffix(path, ":streamGenerateContent"):
		return "stream_generate_content", policies.RenderGemini
	case strings.HasSuffix(path, ":generateContent"):
		return "generate_content", policies.RenderGemini
	case path == "/api/chat":
		return "chat", policies.RenderOllama
	}
	return "", policies.RenderNone
}

var validators = map[policies.RenderFormat]func([]byte) error{
	policies.RenderAnthropic: providers.ValidateAnthropic, policies.RenderOpenAI: providers.ValidateOpenAI,
	policies.RenderOpenAIResponses: providers.ValidateResponses, policies.RenderGemini: providers.ValidateGemini,
	policies.RenderOllama: providers.ValidateOllama,
}

func (u *scriptedUpstream) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	endpoint, format := endpointOf(r.URL.Path)
	if endpoint == "" || r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	req := upstreamRequest{Endpoint: endpoint, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body}
	if endpoint != "count_tokens" { // a count_tokens body has no max_tokens
		if err := validators[format](body); err != nil {
			req.Invalid = err.Error()
		}
	}
	if u.script != nil {
		req.Conversation, _ = providers.Import(format, body)
	}
	u.mu.Lock()
	u.received = append(u.received, req)
	u.calls++
	n := u.calls
	u.mu.Unlock()

	turn := modelTurn{Text: "OK."}
	if u.script != nil && endpoint != "count_tokens" {
		turn = u.script(req)
	}
	for i := range turn.Calls {
		if turn.Calls[i].ID == "" {
			turn.Calls[i].ID = fmt.Sprintf("call_%d_%d", n, i)
		}
	}
	var head struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
	}
	_ = json.Unmarshal(body, &head)
	input := len(body) / 4
	switch endpoint {
	case "messages":
		if head.Stream {
			anthropicStream(w, head.Model, n, turn, input)
		} else {
			writeJSON(w, anthropicMessage(head.Model, n, turn, input))
		}
	case "count_tokens":
		writeJSON(w, map[string]int{"input_tokens": input})
	case "chat_completions":
		if head.Stream {
			openAIStream(w, head.Model, n, turn, input)
		} else {
			writeJSON(w, openAICompletion(head.Model, n, turn, input))
		}
	case "responses":
		writeJSON(w, responsesObject(head.Model, n, turn, input))
	case "generate_content":
		writeJSON(w, geminiResponse(turn, input))
	case "stream_generate_content":
		w.Header().Set("Content-Type", "text/event-stream")
		for _, chunk := range geminiChunks(turn, input) {
			fmt.Fprintf(w, "data: %s\n\n", mustJSON(chunk))
			w.(http.Flusher).Flush()
		}
	case "chat":
		if head.Stream || !strings.Contains(string(body), `"stream":false`) { // Ollama streams unless told not to
			w.Header().Set("Content-Type", "application/x-ndjson")
			for _, line := range ollamaLines(head.Model, turn, input) {
				fmt.Fprintf(w, "%s\n", mustJSON(line))
				w.(http.Flusher).Flush()
			}
		} else {
			lines := ollamaLines(head.Model, turn, input)
			writeJSON(w, lines[len(lines)-1])
		}
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(mustJSON(v))
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// args is a call's arguments as a JSON object.
func args(c policies.ToolCall) json.RawMessage {
	if c.ArgumentsJSON == "" {
		return json.RawMessage("{}")
	}
	return json.RawMessage(c.ArgumentsJSON)
}

func anthropicMessage(model string, n int, turn modelTurn, input int) map[string]any {
	var content []any
	if turn.Text != "" {
		content = append(content, map[string]any{"type": "text", "text": turn.Text})
	}
	for _, c := range turn.Calls {
		content = append(content, map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": args(c)})
	}
	stop := "end_turn"
	if len(turn.Calls) > 0 {
		stop = "tool_use"
	}
	return map[string]any{"id": fmt.Sprintf("msg_%d", n), "type": "message", "role": "assistant", "model": model, "content": content,
		"stop_reason": stop, "stop_sequence": nil, "usage": map[string]int{"input_tokens": input, "output_tokens": 10}}
}

// anthropicStream writes a turn as Messages SSE events: message_start, each
// block's start, deltas (text in two pieces, a call's input as partial
// JSON) and stop, message_delta, message_stop.
func anthropicStream(w http.ResponseWriter, model string, n int, turn modelTurn, input int) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	event := func(typ string, data any) {
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, mustJSON(data))
		w.(http.Flusher).Flush()
	}
	msg := anthropicMessage(model, n, modelTurn{}, input)
	msg["content"], msg["stop_reason"] = []any{}, nil
	msg["usage"] = map[string]int{"input_tokens": input, "output_tokens": 1}
	event("message_start", map[string]any{"type": "message_start", "message": msg})
	event("ping", map[string]any{"type": "ping"})
	index := 0
	if turn.Text != "" {
		event("content_block_start", map[string]any{"type": "content_block_start", "index": index, "content_block": map[string]any{"type": "text", "text": ""}})
		half := len(turn.Text) / 2
		for _, piece := range []string{turn.Text[:half], turn.Text[half:]} {
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index, "delta": map[string]any{"type": "text_delta", "text": piece}})
		}
		event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	for _, c := range turn.Calls {
		event("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": map[string]any{}}})
		event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": string(args(c))}})
		event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	stop := "end_turn"
	if len(turn.Calls) > 0 {
		stop = "tool_use"
	}
	event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]int{"output_tokens": 10}})
	event("message_stop", map[string]any{"type": "message_stop"})
}

func openAICompletion(model string, n int, turn modelTurn, input int) map[string]any {
	msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil}
	if turn.Text != "" {
		msg["content"] = turn.Text
	}
	finish := "stop"
	if len(turn.Calls) > 0 {
		var calls []any
		for _, c := range turn.Calls {
			calls = append(calls, map[string]any{"id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": string(args(c))}})
		}
		msg["tool_calls"], finish = calls, "tool_calls"
	}
	return map[string]any{"id": fmt.Sprintf("chatcmpl-%d", n), "object": "chat.completion", "created": time.Now().Unix(), "model": model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish, "logprobs": nil}},
		"usage":   map[string]int{"prompt_tokens": input, "completion_tokens": 10, "total_tokens": input + 10}}
}

// openAIStream writes a turn as Chat Completions chunks: the role, the text
// in two pieces, each call's name then its arguments, the finish reason, the
// usage, and [DONE].
func openAIStream(w http.ResponseWriter, model string, n int, turn modelTurn, input int) {
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta map[string]any, finish any, usage any) {
		choices := []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": nil}}
		if usage != nil {
			choices = []any{}
		}
		c := map[string]any{"id": fmt.Sprintf("chatcmpl-%d", n), "object": "chat.completion.chunk", "created": time.Now().Unix(), "model": model, "choices": choices}
		if usage != nil {
			c["usage"] = usage
		}
		fmt.Fprintf(w, "data: %s\n\n", mustJSON(c))
		w.(http.Flusher).Flush()
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil, nil)
	if turn.Text != "" {
		half := len(turn.Text) / 2
		chunk(map[string]any{"content": turn.Text[:half]}, nil, nil)
		chunk(map[string]any{"content": turn.Text[half:]}, nil, nil)
	}
	for i, c := range turn.Calls {
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": ""}}}}, nil, nil)
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": string(args(c))}}}}, nil, nil)
	}
	finish := "stop"
	if len(turn.Calls) > 0 {
		finish = "tool_calls"
	}
	chunk(map[string]any{}, finish, nil)
	chunk(nil, nil, map[string]int{"prompt_tokens": input, "completion_tokens": 10, "total_tokens": input + 10})
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func responsesObject(model string, n int, turn modelTurn, input int) map[string]any {
	var output []any
	if turn.Text != "" {
		output = append(output, map[string]any{"type": "message", "id": fmt.Sprintf("msg_%d", n), "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": turn.Text, "annotations": []any{}}}})
	}
	for i, c := range turn.Calls {
		output = append(output, map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%d_%d", n, i), "status": "completed",
			"call_id": c.ID, "name": c.Name, "arguments": string(args(c))})
	}
	return map[string]any{"id": fmt.Sprintf("resp_%d", n), "object": "response", "created_at": time.Now().Unix(), "status": "completed",
		"model": model, "output": output, "parallel_tool_calls": true, "tool_choice": "auto", "tools": []any{},
		"usage": map[string]any{"input_tokens": input, "output_tokens": 10, "total_tokens": input + 10,
			"input_tokens_details": map[string]int{"cached_tokens": 0}, "output_tokens_details": map[string]int{"reasoning_tokens": 0}}}
}

func geminiParts(turn modelTurn) []any {
	var parts []any
	if turn.Text != "" {
		parts = append(parts, map[string]any{"text": turn.Text})
	}
	for _, c := range turn.Calls {
		parts = append(parts, map[string]any{"functionCall": map[string]any{"name": c.Name, "args": args(c)}})
	}
	return parts
}

func geminiResponse(turn modelTurn, input int) map[string]any {
	return map[string]any{"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": geminiParts(turn)}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]int{"promptTokenCount": input, "candidatesTokenCount": 10, "totalTokenCount": input + 10}}
}

// geminiChunks are a turn as streamGenerateContent's chunks: each part in its own.
func geminiChunks(turn modelTurn, input int) []map[string]any {
	var out []map[string]any
	parts := geminiParts(turn)
	for i, p := range parts {
		c := map[string]any{"content": map[string]any{"role": "model", "parts": []any{p}}, "index": 0}
		if i == len(parts)-1 {
			c["finishReason"] = "STOP"
		}
		out = append(out, map[string]any{"candidates": []any{c}})
	}
	out[len(out)-1]["usageMetadata"] = map[string]int{"promptTokenCount": input, "candidatesTokenCount": 10, "totalTokenCount": input + 10}
	return out
}

// ollamaLines are a turn as /api/chat's NDJSON lines, the last one done.
func ollamaLines(model string, turn modelTurn, input int) []map[string]any {
	msg := map[string]any{"role": "assistant", "content": turn.Text}
	if len(turn.Calls) > 0 {
		var calls []any
		for _, c := range turn.Calls {
			calls = append(calls, map[string]any{"function": map[string]any{"name": c.Name, "arguments": args(c)}})
		}
		msg["tool_calls"] = calls
	}
	return []map[string]any{
		{"model": model, "created_at": time.Now().UTC().Format(time.RFC3339Nano), "message": msg, "done": false},
		{"model": model, "created_at": time.Now().UTC().Format(time.RFC3339Nano), "message": map[string]any{"role": "assistant", "content": ""},
			"done": true, "done_reason": "stop", "prompt_eval_count": input, "eval_count": 10},
	}
}
