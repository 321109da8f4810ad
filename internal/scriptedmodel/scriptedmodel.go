// Package scriptedmodel owns a scripted LLM server for tests and recordings:
// an http.Handler that speaks the providers' own wire protocols (Anthropic
// Messages, OpenAI Chat Completions and OpenAI Responses, each as JSON and as
// server-sent events with the providers' event sequences), answers every call
// with what a Go script decides from the request, and records every request
// it received (headers without credentials, and the body as sent).
//
// A real agent CLI or SDK pointed at it (httptest.NewServer(New(script)).URL
// as its base URL) runs its own tools on the script's tool calls, so a
// multi-step task can be driven by rules such as "if the last tool result
// says the build failed, read the file":
//
//	srv := httptest.NewServer(scriptedmodel.New(func(r *scriptedmodel.Request) (scriptedmodel.Reply, error) {
//		if res, ok := r.LastToolResult(); ok && res.IsError {
//			return scriptedmodel.Reply{ToolCalls: []scriptedmodel.ToolCall{{Name: "Read", Input: `{"file_path":"main.go"}`}}}, nil
//		}
//		return scriptedmodel.Reply{Text: "Done."}, nil
//	}))
//
// Endpoints: POST /v1/messages (and /v1/messages/count_tokens), POST
// /v1/chat/completions, POST /v1/responses, and Gemini's POST
// .../models/<model>:generateContent and :streamGenerateContent (?alt=sse);
// a query string (Claude Code sends ?beta=true) is ignored and a path
// prefix before /v1 is accepted, so any base URL works. Anything else is
// answered 404 in the provider's error shape and recorded too.
//
// With Strict, the server refuses what the real APIs refuse (calls and
// results that do not pair, signatures and encrypted reasoning sent back
// changed or left out), as they do: with a 400 in the provider's shape.
package scriptedmodel

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
)

// Protocol is the wire protocol of a request.
type Protocol string

// The protocols the server speaks, by endpoint.
const (
	// AnthropicMessages is POST /v1/messages.
	AnthropicMessages Protocol = "anthropic-messages"
	// AnthropicCountTokens is POST /v1/messages/count_tokens; the script is
	// not asked, the server answers an estimate.
	AnthropicCountTokens Protocol = "anthropic-count-tokens"
	// ChatCompletions is POST /v1/chat/completions.
	ChatCompletions Protocol = "openai-chat-completions"
	// Responses is POST /v1/responses.
	Responses Protocol = "openai-responses"
	// GeminiGenerateContent is POST .../models/<model>:generateContent and
	// :streamGenerateContent.
	GeminiGenerateContent Protocol = "gemini-generate-content"
	// Unknown is any other path (answered 404).
	Unknown Protocol = "unknown"
)

// MaxBodyBytes is the largest request body the server reads; a larger one is
// answered 413 (and recorded without its body).
const MaxBodyBytes = 32 << 20

// Script decides the reply to one model call. An error is answered 500 in
// the provider's error shape, and the client sees a failed call.
type Script func(*Request) (Reply, error)

// Reply is what the scripted model answers: text, tool calls, or both (the
// text first). With tool calls the stop reason is the provider's "tool use"
// one (tool_use, tool_calls, or function call items); otherwise the turn ends.
type Reply struct {
	// Thinking, when set, is sent as a reasoning block before the text
	// (Anthropic: a thinking block with the server's signature of its text;
	// Responses: a reasoning item with a summary, and its encrypted content
	// when the request includes reasoning.encrypted_content; Gemini: a
	// thought part). Chat Completions has no such block and leaves it out.
	Thinking  string
	Text      string
	ToolCalls []ToolCall
	// Usage overrides the token counts reported; zero fields are estimated
	// (four bytes of the body, or of the output, per token).
	Usage Usage
}

// ToolCall is one call the model makes, or one it made earlier in a request.
type ToolCall struct {
	// ID is the call's id; empty in a Reply for one made up from the request's
	// sequence number (toolu_…, call_…), so recordings are reproducible.
	ID   string
	Name string
	// Input is the JSON object of a function tool's arguments, or the text of
	// a custom (freeform) tool's input, such as Codex's apply_patch grammar:
	// the server sends a Responses custom_tool_call when the request defines
	// the tool with type "custom".
	Input string
}

// Usage is the token usage a reply reports.
type Usage struct {
	InputTokens  int
	OutputTokens int
}

// Request is one recorded request, decoded into a protocol-neutral view of
// the conversation; Body is exactly what the client sent.
type Request struct {
	// Seq is the request's 0-based place among everything the server received.
	Seq      int
	Protocol Protocol
	Method   string
	// Path is the URL path (without the query); Query the raw query.
	Path   string
	Query  string
	Header http.Header
	Body   json.RawMessage
	// Stream says whether the client asked for server-sent events.
	Stream bool
	Model  string
	// System is the system prompt (Anthropic system blocks, Chat system and
	// developer messages, Responses instructions and developer messages),
	// joined by blank lines.
	System   string
	Messages []Turn
	// Tools are the names of the tools the request offers, in order.
	Tools []string
	// CustomTools are those of Tools defined as freeform (type "custom").
	CustomTools map[string]bool
	// ThinkingOn says the request asks the model to think: Anthropic's
	// thinking enabled or adaptive, a Responses reasoning setting or
	// reasoning.encrypted_content included, Gemini's thinkingConfig with
	// includeThoughts. A script gives Reply.Thinking when it is, as a
	// thinking model would; Chat Completions has no such setting here.
	ThinkingOn bool
	// Rejected is why a Strict server refused the request ("" when it did not).
	Rejected string
	// Verified is how many of this server's signatures a Strict server
	// checked in the request and found as it gave them: Anthropic thinking
	// signatures, Responses reasoning items' encrypted content, Gemini
	// thought signatures. A request that brings none back counts 0, so a
	// run that must carry them back can say it did.
	Verified int
}

// Turn is one message of a request's conversation, as the scripted model reads it.
type Turn struct {
	// Role is "user" or "assistant" (Gemini's "model"); a Chat "tool"
	// message or a Responses function_call_output item becomes a user
	// message with a ToolResult, as in Anthropic's shape.
	Role        string
	Text        string
	ToolCalls   []ToolCall
	ToolResults []ToolResult
}

// ToolResult is a tool's output the client sends back.
type ToolResult struct {
	CallID  string
	Content string
	// IsError is Anthropic's is_error; the OpenAI protocols carry no such
	// flag and leave it false.
	IsError bool
}

// LastUserText is the text of the last user message that has text (tool
// results aside), or "".
func (r *Request) LastUserText() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if m := r.Messages[i]; m.Role == "user" && strings.TrimSpace(m.Text) != "" {
			return m.Text
		}
	}
	return ""
}

// LastToolResult is the last tool result of the request when its last
// message carries one: the output of the model's previous call.
func (r *Request) LastToolResult() (ToolResult, bool) {
	if len(r.Messages) == 0 {
		return ToolResult{}, false
	}
	last := r.Messages[len(r.Messages)-1]
	if len(last.ToolResults) == 0 {
		return ToolResult{}, false
	}
	return last.ToolResults[len(last.ToolResults)-1], true
}

// HasTool reports whether the request offers a tool of that name.
func (r *Request) HasTool(name string) bool {
	for _, t := range r.Tools {
		if t == name {
			return true
		}
	}
	return false
}

// Server is the scripted model: an http.Handler. Its methods are safe for
// concurrent use; the script is called under the server's lock, one request
// at a time, so it may keep state without its own locking.
type Server struct {
	script Script
	strict bool

	mu       sync.Mutex
	requests []*Request
	// thinkingOf is the thinking text given with each Anthropic tool_use
	// id; reasoningOf the reasoning item id given with each Responses
	// function call item id (what Strict wants back with them).
	thinkingOf, reasoningOf map[string]string
}

// New returns a server that answers every model call with script's reply.
func New(script Script, opts ...Option) *Server {
	s := &Server{script: script, thinkingOf: map[string]string{}, reasoningOf: map[string]string{}}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Requests returns every request received so far, in order.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.requests...)
}

// credentialHeaders are never recorded.
var credentialHeaders = []string{"Authorization", "X-Api-Key", "Api-Key", "X-Goog-Api-Key", "Cookie", "Proxy-Authorization", "Openai-Organization", "Openai-Project", "Chatgpt-Account-Id"}

// ServeHTTP answers one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, hr *http.Request) {
	query := hr.URL.Query()
	query.Del("key") // Gemini's key, when it comes as a parameter
	req := &Request{Method: hr.Method, Path: hr.URL.Path, Query: query.Encode(), Header: hr.Header.Clone(), Protocol: protocolOf(hr)}
	for _, h := range credentialHeaders {
		req.Header.Del(h)
	}
	body, err := io.ReadAll(io.LimitReader(hr.Body, MaxBodyBytes+1))
	s.mu.Lock()
	defer s.mu.Unlock()
	req.Seq = len(s.requests)
	s.requests = append(s.requests, req)
	switch {
	case err != nil:
		writeError(w, req.Protocol, http.StatusBadRequest, "reading the body: "+err.Error())
		return
	case len(body) > MaxBodyBytes:
		writeError(w, req.Protocol, http.StatusRequestEntityTooLarge, fmt.Sprintf("the body is over %d bytes", MaxBodyBytes))
		return
	}
	req.Body = json.RawMessage(body)
	if req.Protocol == Unknown {
		writeError(w, req.Protocol, http.StatusNotFound, "no such endpoint: "+hr.Method+" "+hr.URL.Path)
		return
	}
	if hr.Method != http.MethodPost {
		writeError(w, req.Protocol, http.StatusMethodNotAllowed, hr.Method+" is not allowed; use POST")
		return
	}
	if err := decode(req); err != nil {
		writeError(w, req.Protocol, http.StatusBadRequest, err.Error())
		return
	}
	if s.strict {
		if why := s.check(req); why != "" {
			req.Rejected = why
			writeError(w, req.Protocol, http.StatusBadRequest, why)
			return
		}
	}
	if req.Protocol == AnthropicCountTokens {
		writeJSON(w, map[string]int{"input_tokens": estimate(len(body))})
		return
	}
	reply, err := s.script(req)
	if err != nil {
		writeError(w, req.Protocol, http.StatusInternalServerError, "script: "+err.Error())
		return
	}
	if reply.Usage.InputTokens == 0 {
		reply.Usage.InputTokens = estimate(len(body))
	}
	if reply.Usage.OutputTokens == 0 {
		n := len(reply.Thinking) + len(reply.Text)
		for _, c := range reply.ToolCalls {
			n += len(c.Name) + len(c.Input)
		}
		reply.Usage.OutputTokens = estimate(n)
	}
	for i := range reply.ToolCalls {
		if reply.ToolCalls[i].ID == "" {
			reply.ToolCalls[i].ID = fmt.Sprintf("%s%03d_%d", callPrefix(req.Protocol), req.Seq, i)
		}
	}
	s.given(req, reply)
	out := replyWriter{w: w, req: req, reply: reply}
	switch req.Protocol {
	case AnthropicMessages:
		out.anthropic()
	case ChatCompletions:
		out.chat()
	case Responses:
		out.responses()
	case GeminiGenerateContent:
		out.gemini()
	}
}

// given records the thinking given with the reply's calls, which Strict
// wants back with them.
func (s *Server) given(req *Request, reply Reply) {
	if reply.Thinking == "" {
		return
	}
	for i, c := range reply.ToolCalls {
		switch req.Protocol {
		case AnthropicMessages:
			s.thinkingOf[c.ID] = reply.Thinking
		case Responses:
			s.reasoningOf[fmt.Sprintf("fc_scripted_%04d_%d", req.Seq, i)] = fmt.Sprintf("rs_scripted_%04d", req.Seq)
		}
	}
}

func protocolOf(hr *http.Request) Protocol {
	path := strings.TrimSuffix(hr.URL.Path, "/")
	switch {
	case strings.HasSuffix(path, "/v1/messages/count_tokens"):
		return AnthropicCountTokens
	case strings.HasSuffix(path, "/v1/messages"):
		return AnthropicMessages
	case strings.HasSuffix(path, "/chat/completions"):
		return ChatCompletions
	case strings.HasSuffix(path, "/responses"):
		return Responses
	case strings.Contains(path, "/models/") && (strings.HasSuffix(path, ":generateContent") || strings.HasSuffix(path, ":streamGenerateContent")):
		return GeminiGenerateContent
	}
	return Unknown
}

func callPrefix(p Protocol) string {
	if p == AnthropicMessages {
		return "toolu_"
	}
	return "call_"
}

// estimate is a token count for n bytes: four bytes a token, at least one.
func estimate(n int) int {
	return max(1, (n+3)/4)
}

func writeJSON(w http.ResponseWriter, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(buf.Bytes())
}

// writeError answers in the provider's error shape, so the client's own
// error handling reads it.
func writeError(w http.ResponseWriter, p Protocol, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	var v any
	switch p {
	case AnthropicMessages, AnthropicCountTokens:
		kind := "invalid_request_error"
		switch code {
		case http.StatusNotFound:
			kind = "not_found_error"
		case http.StatusInternalServerError:
			kind = "api_error"
		case http.StatusRequestEntityTooLarge:
			kind = "request_too_large"
		}
		v = map[string]any{"type": "error", "error": map[string]string{"type": kind, "message": msg}}
	case GeminiGenerateContent:
		status := map[int]string{http.StatusBadRequest: "INVALID_ARGUMENT", http.StatusNotFound: "NOT_FOUND",
			http.StatusMethodNotAllowed: "INVALID_ARGUMENT", http.StatusRequestEntityTooLarge: "INVALID_ARGUMENT"}[code]
		if status == "" {
			status = "INTERNAL"
		}
		v = map[string]any{"error": map[string]any{"code": code, "message": msg, "status": status}}
	default:
		kind := "invalid_request_error"
		if code >= 500 {
			kind = "server_error"
		}
		v = map[string]any{"error": map[string]any{"message": msg, "type": kind, "param": nil, "code": nil}}
	}
	json.NewEncoder(w).Encode(v)
}

// errField names a field of the body that could not be read.
func errField(field string, err error) error {
	return fmt.Errorf("%s: %w", field, err)
}

var errNotString = errors.New("expected a string or an array of content blocks")
