package proxy

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// kind is what a refusal is, which picks each provider's error type.
type kind int

const (
	kindInvalid kind = iota
	kindContextLength
	kindUnauthenticated
	kindOverloaded
	kindTooLarge
	kindUpstream
	kindCompile
	kindCompileTimeout
)

// refusal is an answer of ctxc's own, written in the provider's error shape
// so that the SDKs raise the exception their users already handle.
type refusal struct {
	status  int
	kind    kind
	message string
	// param names what was wrong (OpenAI's param).
	param string
	// reason is the ErrorInfo reason behind it, for X-Ctxc-Error.
	reason     string
	retryAfter time.Duration
}

func overloaded(message string, retry time.Duration) *refusal {
	return &refusal{status: http.StatusTooManyRequests, kind: kindOverloaded, message: message, retryAfter: retry, reason: "OVERLOADED"}
}

// writeError writes rf as upstream's API writes its errors:
//
//	openai     {"error": {"message", "type", "param", "code"}}
//	anthropic  {"type": "error", "error": {"type", "message"}}
//	gemini     {"error": {"code", "message", "status"}} (google.rpc.Status)
//	ollama     {"error": "message"}
func writeError(w http.ResponseWriter, u Upstream, rf *refusal) {
	var body any
	switch u {
	case OpenAI:
		typ, code := openAIError(rf.kind)
		var param *string
		if rf.param != "" {
			param = &rf.param
		}
		body = map[string]any{"error": map[string]any{"message": rf.message, "type": typ, "param": param, "code": code}}
	case Anthropic:
		body = map[string]any{"type": "error", "error": map[string]any{"type": anthropicError(rf.kind, rf.status), "message": rf.message}}
	case Gemini:
		body = map[string]any{"error": map[string]any{"code": rf.status, "message": rf.message, "status": geminiStatus(rf.kind)}}
	default:
		body = map[string]any{"error": rf.message}
	}
	data, _ := json.Marshal(body) // maps of strings and numbers
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if rf.reason != "" {
		h.Set(headerError, rf.reason)
	}
	if rf.retryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(max(1, int(rf.retryAfter.Round(time.Second)/time.Second))))
	}
	w.WriteHeader(rf.status)
	_, _ = w.Write(data)
}

// openAIError is OpenAI's error type and code for a kind.
func openAIError(k kind) (typ string, code *string) {
	str := func(s string) *string { return &s }
	switch k {
	case kindContextLength:
		return "invalid_request_error", str("context_length_exceeded")
	case kindUnauthenticated:
		return "invalid_request_error", str("ctxc_token_invalid")
	case kindOverloaded:
		return "rate_limit_exceeded", str("ctxc_overloaded")
	case kindTooLarge:
		return "invalid_request_error", str("request_too_large")
	case kindUpstream:
		return "server_error", str("upstream_unreachable")
	case kindCompile:
		return "server_error", str("ctxc_compile_failed")
	case kindCompileTimeout:
		return "server_error", str("ctxc_compile_timeout")
	}
	return "invalid_request_error", nil
}

// anthropicError is Anthropic's error type for a kind.
func anthropicError(k kind, status int) string {
	switch k {
	case kindUnauthenticated:
		return "authentication_error"
	case kindOverloaded:
		return "rate_limit_error"
	case kindTooLarge:
		return "request_too_large"
	case kindUpstream, kindCompile, kindCompileTimeout:
		return "api_error"
	}
	if status == http.StatusNotFound {
		return "not_found_error"
	}
	return "invalid_request_error"
}

// geminiStatus is the google.rpc code name Gemini answers for a kind.
func geminiStatus(k kind) string {
	switch k {
	case kindUnauthenticated:
		return "UNAUTHENTICATED"
	case kindOverloaded:
		return "RESOURCE_EXHAUSTED"
	case kindUpstream:
		return "UNAVAILABLE"
	case kindCompile:
		return "INTERNAL"
	case kindCompileTimeout:
		return "DEADLINE_EXCEEDED"
	}
	return "INVALID_ARGUMENT"
}
