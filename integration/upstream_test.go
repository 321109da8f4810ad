//go:build integration

package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contextcompiler/ctxc/internal/providers"
	"github.com/contextcompiler/ctxc/internal/scriptedmodel"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// scriptedUpstream is a model provider in the test: a real HTTP server that
// speaks OpenAI Chat Completions and Responses and Anthropic Messages (and
// count_tokens) through internal/scriptedmodel, and Gemini generateContent
// and streamGenerateContent and Ollama /api/chat itself, SSE and NDJSON
// streams included. It records every request it receives with its
// credentials, checks each with the provider's validator (package
// providers), and answers with the turn its script gives for the
// conversation it read.
//
// newStrictUpstream's is a model that thinks, as the real ones do, and
// holds every request to what the real APIs accept (scriptedmodel.Strict).
type scriptedUpstream struct {
	*httptest.Server
	mu       sync.Mutex
	received []upstreamRequest
	script   modelScript
	calls    int
	// model answers Anthropic's and OpenAI's protocols (and Gemini's,
	// strict).
	model *scriptedmodel.Server
	// strict: the model refuses what the real APIs refuse, answers Gemini
	// too, and thinks whenever a request asks it to (its replies carry
	// signed thinking, encrypted reasoning, thought signatures).
	strict bool
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
	// Conversation is the body read back for the script (nil when it could not be).
	Conversation *providers.Imported
}

// modelTurn is what the scripted model answers: text, tool calls, or both.
type modelTurn struct {
	Text  string
	Calls []agentstate.ToolCall
}

// modelScript decides the model's turn from the request (its endpoint and
// conversation); nil answers "OK." to everything.
type modelScript func(req upstreamRequest) modelTurn

func newScriptedUpstream(t testing.TB, script modelScript) *scriptedUpstream {
	t.Helper()
	u := &scriptedUpstream{script: script}
	u.model = scriptedmodel.New(u.scriptedModel)
	u.Server = httptest.NewServer(http.HandlerFunc(u.serve))
	t.Cleanup(u.Close)
	return u
}

// newStrictUpstream is a scripted upstream whose model thinks whenever a
// request asks it to and refuses, with the provider's 400, every request
// the real API would refuse: calls and results that do not pair, roles out
// of turn, and a signature or encrypted reasoning it gave sent back changed
// or left out where the API wants it (scriptedmodel.Strict).
func newStrictUpstream(t testing.TB, script modelScript) *scriptedUpstream {
	t.Helper()
	u := &scriptedUpstream{script: script, strict: true}
	u.model = scriptedmodel.New(u.scriptedModel, scriptedmodel.Strict())
	u.Server = httptest.NewServer(http.HandlerFunc(u.serve))
	t.Cleanup(u.Close)
	return u
}

// strictness is what a strict upstream's model made of the requests it
// read: why it refused each one it refused, and how many signatures of its
// own came back.
type strictness struct {
	rejected []string
	verified int
}

func (u *scriptedUpstream) strictness() strictness {
	var s strictness
	for _, r := range u.model.Requests() {
		if r.Rejected != "" {
			s.rejected = append(s.rejected, fmt.Sprintf("request %d (%s): %s", r.Seq, r.Protocol, r.Rejected))
		}
		s.verified += r.Verified
	}
	return s
}

func (u *scriptedUpstream) requests() []upstreamRequest {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]upstreamRequest(nil), u.received...)
}

// endpointOf names the API a path belongs to, with its format.
func endpointOf(path string) (string, agentstate.RenderFormat) {
	switch {
	case path == "/v1/messages":
		return "messages", agentstate.RenderAnthropic
	case path == "/v1/messages/count_tokens":
		return "count_tokens", agentstate.RenderAnthropic
	case path == "/v1/chat/completions":
		return "chat_completions", agentstate.RenderOpenAI
	case path == "/v1/responses":
		return "responses", agentstate.RenderOpenAIResponses
	case strings.HasSuffix(path, ":streamGenerateContent"):
		return "stream_generate_content", agentstate.RenderGemini
	case strings.HasSuffix(path, ":generateContent"):
		return "generate_content", agentstate.RenderGemini
	case path == "/api/chat":
		return "chat", agentstate.RenderOllama
	}
	return "", agentstate.RenderNone
}

var validators = map[agentstate.RenderFormat]func([]byte) error{
	agentstate.RenderAnthropic: providers.ValidateAnthropic, agentstate.RenderOpenAI: providers.ValidateOpenAI,
	agentstate.RenderOpenAIResponses: providers.ValidateResponses, agentstate.RenderGemini: providers.ValidateGemini,
	agentstate.RenderOllama: providers.ValidateOllama,
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
	u.mu.Lock()
	u.received = append(u.received, req)
	u.calls++
	u.mu.Unlock()

	if format == agentstate.RenderAnthropic || format == agentstate.RenderOpenAI || format == agentstate.RenderOpenAIResponses ||
		u.strict && format == agentstate.RenderGemini {
		// Anthropic's and OpenAI's protocols are internal/scriptedmodel's.
		r.Body = io.NopCloser(bytes.NewReader(body))
		u.model.ServeHTTP(w, r)
		return
	}
	if u.script != nil {
		req.Conversation, _ = providers.Import(format, body)
	}
	turn := u.turn(req)
	u.mu.Lock()
	n := u.calls
	u.mu.Unlock()
	for i := range turn.Calls {
		if turn.Calls[i].ID == "" {
			turn.Calls[i].ID = fmt.Sprintf("call_%d_%d", n, i)
		}
	}
	input := len(body) / 4
	switch endpoint {
	case "generate_content":
		writeJSON(w, geminiResponse(turn, input))
	case "stream_generate_content":
		w.Header().Set("Content-Type", "text/event-stream")
		for _, chunk := range geminiChunks(turn, input) {
			fmt.Fprintf(w, "data: %s\n\n", mustJSON(chunk))
			w.(http.Flusher).Flush()
		}
	case "chat":
		var head struct {
			Model  string `json:"model"`
			Stream *bool  `json:"stream"`
		}
		_ = json.Unmarshal(body, &head)
		lines := ollamaLines(head.Model, turn, input)
		if head.Stream != nil && !*head.Stream {
			writeJSON(w, lines[len(lines)-1])
			return
		}
		// Ollama streams unless told not to.
		w.Header().Set("Content-Type", "application/x-ndjson")
		for _, line := range lines {
			fmt.Fprintf(w, "%s\n", mustJSON(line))
			w.(http.Flusher).Flush()
		}
	}
}

// turn is the script's turn for a request ("OK." without a script).
func (u *scriptedUpstream) turn(req upstreamRequest) modelTurn {
	if u.script == nil {
		return modelTurn{Text: "OK."}
	}
	return u.script(req)
}

// scriptedModel is the scripted upstream's script as internal/scriptedmodel
// takes it: the request read back as the provider's body, the turn as its
// reply.
func (u *scriptedUpstream) scriptedModel(r *scriptedmodel.Request) (scriptedmodel.Reply, error) {
	endpoint, format := endpointOf(r.Path)
	req := upstreamRequest{Endpoint: endpoint, Path: r.Path, Query: r.Query, Header: r.Header, Body: r.Body}
	if u.script != nil {
		req.Conversation, _ = providers.Import(format, r.Body)
	}
	turn := u.turn(req)
	reply := scriptedmodel.Reply{Text: turn.Text}
	if u.strict && r.ThinkingOn {
		// Of its own text at each request, so that each signature is.
		reply.Thinking = fmt.Sprintf("Request %d: the last output decides what to run next.", r.Seq)
	}
	for _, c := range turn.Calls {
		reply.ToolCalls = append(reply.ToolCalls, scriptedmodel.ToolCall{ID: c.ID, Name: c.Name, Input: string(args(c))})
	}
	return reply, nil
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
func args(c agentstate.ToolCall) json.RawMessage {
	if c.ArgumentsJSON == "" {
		return json.RawMessage("{}")
	}
	return json.RawMessage(c.ArgumentsJSON)
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
