// Package llmtest owns a scripted OpenAI-compatible chat completions server
// for tests: a real HTTP server on loopback whose answers a test scripts and
// whose received requests it inspects. Nothing here is used by the server.
package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// Reply is one scripted answer.
type Reply struct {
	// Status is the HTTP status; 0 means 200.
	Status int
	// Content is the assistant message's text for a 200.
	Content string
	// RetryAfter, when set, is sent as the Retry-After header.
	RetryAfter string
	// Delay holds the answer back this long, or until the client gives up.
	Delay time.Duration
	// Raw, when set, is sent as the body verbatim (a malformed answer).
	Raw string
	// InputTokens and OutputTokens are the usage reported; defaults 100 and 20.
	InputTokens, OutputTokens int
}

// Received is one request the server got.
type Received struct {
	Model     string
	System    string
	User      string
	MaxTokens int
	JSON      bool
	Auth      string
}

// Server is a scripted endpoint. Replies are used in order; when they run out
// Fallback answers (nil: 500).
type Server struct {
	URL string
	// Close stops the server (it also stops when the test ends).
	Close func()

	mu       sync.Mutex
	replies  []Reply
	fallback func(Received) Reply
	received []Received
}

// NewServer starts a server on loopback, closed when the test ends.
func NewServer(t testing.TB, replies ...Reply) *Server {
	t.Helper()
	s := &Server{replies: replies}
	ts := httptest.NewServer(http.HandlerFunc(s.handle))
	t.Cleanup(ts.Close)
	s.URL, s.Close = ts.URL+"/v1", ts.Close
	return s
}

// Script replaces the remaining replies and the fallback.
func (s *Server) Script(fallback func(Received) Reply, replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies, s.fallback = replies, fallback
}

// Calls is how many requests the server got.
func (s *Server) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.received)
}

// Received returns the requests so far.
func (s *Server) Received() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Received(nil), s.received...)
}

type chatRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
	MaxTokens      int `json:"max_tokens"`
	ResponseFormat *struct {
		Type string `json:"type"`
	} `json:"response_format"`
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	var req chatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	got := Received{Model: req.Model, MaxTokens: req.MaxTokens, Auth: r.Header.Get("Authorization")}
	got.JSON = req.ResponseFormat != nil && req.ResponseFormat.Type == "json_object"
	for _, m := range req.Messages {
		switch m.Role {
		case "system":
			got.System += m.Content
		case "user":
			got.User += m.Content
		}
	}
	s.mu.Lock()
	s.received = append(s.received, got)
	var reply Reply
	switch {
	case len(s.replies) > 0:
		reply, s.replies = s.replies[0], s.replies[1:]
	case s.fallback != nil:
		reply = s.fallback(got)
	default:
		reply = Reply{Status: http.StatusInternalServerError}
	}
	s.mu.Unlock()

	if reply.Delay > 0 {
		select {
		case <-time.After(reply.Delay):
		case <-r.Context().Done():
			return
		}
	}
	if reply.RetryAfter != "" {
		w.Header().Set("Retry-After", reply.RetryAfter)
	}
	w.Header().Set("Content-Type", "application/json")
	if reply.Status != 0 && reply.Status != http.StatusOK {
		w.WriteHeader(reply.Status)
		fmt.Fprintf(w, `{"error":{"message":"scripted %d","type":"server_error"}}`, reply.Status)
		return
	}
	if reply.Raw != "" {
		fmt.Fprint(w, reply.Raw)
		return
	}
	in, out := reply.InputTokens, reply.OutputTokens
	if in == 0 {
		in = 100
	}
	if out == 0 {
		out = 20
	}
	body, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-test", "object": "chat.completion", "created": 1, "model": req.Model + "-served",
		"choices": []map[string]any{{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": reply.Content}}},
		"usage": map[string]any{"prompt_tokens": in, "completion_tokens": out, "total_tokens": in + out},
	})
	w.Write(body)
}
