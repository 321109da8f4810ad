package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"gopkg.in/yaml.v3"

	"github.com/contextcompiler/ctxc/internal/llm"
	"github.com/contextcompiler/ctxc/internal/llm/llmtest"
)

func newClient(t *testing.T, url string, change func(*llm.Config), opts llm.Options) *llm.Client {
	t.Helper()
	cfg := llm.DefaultConfig()
	cfg.Model, cfg.BaseURL = "mini", url
	cfg.Timeout = 5 * time.Second
	if change != nil {
		change(&cfg)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.BackoffBase == 0 {
		opts.BackoffBase, opts.BackoffMax = time.Millisecond, 5*time.Millisecond
	}
	c, err := llm.New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestComplete(t *testing.T) {
	long := 10 * time.Second
	tests := []struct {
		name         string
		replies      []llmtest.Reply
		change       func(*llm.Config)
		wantKind     string // "" for success
		wantAttempts int
		wantCalls    int
	}{
		{name: "ok", replies: []llmtest.Reply{{Content: "hello"}}, wantAttempts: 1, wantCalls: 1},
		{name: "500 then ok is retried", replies: []llmtest.Reply{{Status: 500}, {Status: 503}, {Content: "hello"}}, wantAttempts: 3, wantCalls: 3},
		{name: "429 with a short Retry-After is retried", replies: []llmtest.Reply{{Status: 429, RetryAfter: "0"}, {Content: "hello"}}, wantAttempts: 2, wantCalls: 2},
		{name: "429 asking to wait past the deadline fails at once", replies: []llmtest.Reply{{Status: 429, RetryAfter: "3600"}, {Content: "hello"}},
			wantKind: llm.KindRateLimited, wantAttempts: 1, wantCalls: 1},
		{name: "500s beyond max_retries", replies: []llmtest.Reply{{Status: 500}, {Status: 500}, {Status: 500}},
			change: func(c *llm.Config) { c.MaxRetries = 1 }, wantKind: llm.KindServer, wantAttempts: 2, wantCalls: 2},
		{name: "400 is not retried", replies: []llmtest.Reply{{Status: 400}, {Content: "hello"}}, wantKind: llm.KindClient, wantAttempts: 1, wantCalls: 1},
		{name: "slow answer times out", replies: []llmtest.Reply{{Delay: long, Content: "late"}},
			change: func(c *llm.Config) { c.Timeout = 100 * time.Millisecond }, wantKind: llm.KindTimeout, wantAttempts: 1, wantCalls: 1},
		{name: "empty answer", replies: []llmtest.Reply{{Content: " "}}, wantKind: llm.KindEmpty, wantAttempts: 1, wantCalls: 1},
		{name: "an answer over max_reply_bytes is not read to its end", replies: []llmtest.Reply{{Content: strings.Repeat("x", 4<<20)}, {Content: "hello"}},
			change: func(c *llm.Config) { c.MaxReplyBytes = 64 << 10 }, wantKind: llm.KindTooLarge, wantAttempts: 1, wantCalls: 1},
		{name: "an answer just under max_reply_bytes is read", replies: []llmtest.Reply{{Content: "hello" + strings.Repeat(" ", 60<<10)}},
			change: func(c *llm.Config) { c.MaxReplyBytes = 64 << 10 }, wantAttempts: 1, wantCalls: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, tc.replies...)
			c := newClient(t, srv.URL, tc.change, llm.Options{})
			resp, err := c.Complete(context.Background(), llm.Request{System: "s", User: "u", MaxOutputTokens: 50})
			gotKind := ""
			var e *llm.Error
			if errors.As(err, &e) {
				gotKind = e.Kind
				resp.Attempts = e.Attempts
			} else if err != nil {
				t.Fatalf("error %T %v is not *llm.Error", err, err)
			}
			if gotKind != tc.wantKind || resp.Attempts != tc.wantAttempts || srv.Calls() != tc.wantCalls {
				t.Errorf("kind %q attempts %d server calls %d, want %q %d %d (err %v)", gotKind, resp.Attempts, srv.Calls(), tc.wantKind, tc.wantAttempts, tc.wantCalls, err)
			}
			if tc.wantKind == "" {
				resp.Text = strings.TrimSpace(resp.Text)
				want := llm.Response{Text: "hello", Model: "mini-served", InputTokens: 100, OutputTokens: 20, Attempts: tc.wantAttempts}
				if diff := cmp.Diff(want, resp); diff != "" {
					t.Errorf("response (-want +got):\n%s", diff)
				}
				if st := c.Stats(); st.Retries != int64(tc.wantAttempts-1) {
					t.Errorf("stats %+v: want %d retries", st, tc.wantAttempts-1)
				}
			}
		})
	}
}

func TestRequestDeadlineBoundsRetries(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Script(func(llmtest.Received) llmtest.Reply { return llmtest.Reply{Status: 500} })
	c := newClient(t, srv.URL, func(c *llm.Config) { c.MaxRetries = 10 }, llm.Options{BackoffBase: time.Second, BackoffMax: time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := c.Complete(ctx, llm.Request{System: "s", User: "u"})
	var e *llm.Error
	if !errors.As(err, &e) || e.Attempts > 2 {
		t.Fatalf("err %v: want a failure after at most 2 attempts within the deadline", err)
	}
}

func TestBreakerOpensAfterFailures(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Script(func(llmtest.Received) llmtest.Reply { return llmtest.Reply{Status: 502} })
	breakers := llm.NewBreakers()
	change := func(c *llm.Config) { c.MaxRetries, c.BreakerFailures, c.BreakerCooldown = 0, 3, time.Hour }
	planner := newClient(t, srv.URL, change, llm.Options{Breakers: breakers})
	summarizer := newClient(t, srv.URL, func(c *llm.Config) { change(c); c.Model = "other" }, llm.Options{Breakers: breakers})
	var kinds []string
	for i := 0; i < 4; i++ {
		_, err := planner.Complete(context.Background(), llm.Request{System: "s", User: "u"})
		var e *llm.Error
		errors.As(err, &e)
		kinds = append(kinds, e.Kind)
	}
	_, err := summarizer.Complete(context.Background(), llm.Request{System: "s", User: "u"})
	var e *llm.Error
	errors.As(err, &e)
	kinds = append(kinds, e.Kind)
	want := []string{llm.KindServer, llm.KindServer, llm.KindServer, llm.KindBreakerOpen, llm.KindBreakerOpen}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
	if srv.Calls() != 3 || !planner.BreakerOpen() {
		t.Errorf("server saw %d calls, breaker open %v: want 3 and open (shared by the endpoint's clients)", srv.Calls(), planner.BreakerOpen())
	}
}

// TestErrorLeavesOutTheEndpoint: an error's text reaches clients as a
// degraded reason, so it names the model, the kind and the HTTP status but
// not the endpoint's URL or what it answered; the server log gets those.
func TestErrorLeavesOutTheEndpoint(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Reply{Status: http.StatusBadRequest})
	var logs strings.Builder
	c := newClient(t, srv.URL, nil, llm.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	_, err := c.Complete(context.Background(), llm.Request{System: "s", User: "u"})
	if err == nil {
		t.Fatal("want an error")
	}
	if got, want := err.Error(), "mini client_error after 1 attempt(s) (HTTP 400)"; got != want {
		t.Errorf("error %q, want %q", got, want)
	}
	if !strings.Contains(logs.String(), "scripted 400") || !strings.Contains(logs.String(), srv.URL) {
		t.Errorf("the log lacks the endpoint's answer and address:\n%s", logs.String())
	}

	// Nothing listens here: the connection error's text has the URL.
	gone := llmtest.NewServer(t)
	url := gone.URL
	gone.Close()
	c = newClient(t, url, func(c *llm.Config) { c.MaxRetries = 0 }, llm.Options{Logger: slog.New(slog.DiscardHandler)})
	_, err = c.Complete(context.Background(), llm.Request{System: "s", User: "u"})
	if err == nil || strings.Contains(err.Error(), "127.0.0.1") || err.Error() != "mini connection_error after 1 attempt(s)" {
		t.Errorf("error %v: want %q", err, "mini connection_error after 1 attempt(s)")
	}
}

// TestCallLeavesTimeForTheFallback: a model that hangs makes the call give
// up while a share of the caller's time is left for the fallback.
func TestCallLeavesTimeForTheFallback(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Reply{Delay: time.Minute, Content: "late"})
	c := newClient(t, srv.URL, func(c *llm.Config) { c.Timeout, c.FallbackReserve = time.Minute, 0.5 }, llm.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	_, err := c.Complete(ctx, llm.Request{System: "s", User: "u"})
	var e *llm.Error
	if !errors.As(err, &e) || e.Kind != llm.KindTimeout {
		t.Fatalf("err %v: want a timeout", err)
	}
	deadline, _ := ctx.Deadline()
	if ctx.Err() != nil || time.Until(deadline) < time.Second {
		t.Errorf("the call returned with %v left of the caller's 4s: want about 2s (half) for the fallback", time.Until(deadline))
	}
}

func TestAPIKeyOnlyOverHTTPSOrLoopback(t *testing.T) {
	for url, ok := range map[string]bool{
		"https://api.example.com/v1": true,
		"http://127.0.0.1:11434/v1":  true,
		"http://localhost:11434/v1":  true,
		"http://[::1]:8000/v1":       true,
		"http://10.1.2.3:8000/v1":    false,
		"http://llm.internal/v1":     false,
	} {
		cfg := llm.DefaultConfig()
		cfg.Model, cfg.BaseURL, cfg.APIKeyEnv = "m", url, "KEY"
		err := cfg.Validate()
		if ok != (err == nil) {
			t.Errorf("%s with a key: error %v, want ok=%v", url, err, ok)
		}
		if err != nil && !strings.Contains(err.Error(), "api_key_env: the key in KEY would travel in plain text") {
			t.Errorf("%s: error %q does not say why", url, err)
		}
		cfg.APIKeyEnv = ""
		if err := cfg.Validate(); err != nil {
			t.Errorf("%s without a key: %v", url, err)
		}
	}
}

func TestAPIKey(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "must-not-leak")
	srv := llmtest.NewServer(t, llmtest.Reply{Content: "a"}, llmtest.Reply{Content: "b"})
	keyless := newClient(t, srv.URL, nil, llm.Options{})
	keyed := newClient(t, srv.URL, func(c *llm.Config) { c.APIKeyEnv = "CTXC_TEST_KEY" },
		llm.Options{Getenv: func(k string) string { return map[string]string{"CTXC_TEST_KEY": "sk-test"}[k] }})
	for _, c := range []*llm.Client{keyless, keyed} {
		if _, err := c.Complete(context.Background(), llm.Request{System: "s", User: "u"}); err != nil {
			t.Fatal(err)
		}
	}
	var auth []string
	for _, r := range srv.Received() {
		auth = append(auth, r.Auth)
	}
	if diff := cmp.Diff([]string{"", "Bearer sk-test"}, auth); diff != "" {
		t.Errorf("Authorization headers (-want +got):\n%s", diff)
	}
	cfg := llm.DefaultConfig()
	cfg.Model, cfg.BaseURL, cfg.APIKeyEnv = "m", srv.URL, "CTXC_UNSET_KEY"
	if _, err := llm.New(cfg, llm.Options{Getenv: func(string) string { return "" }}); err == nil {
		t.Error("New with an empty key variable: want an error")
	}
}

func TestSpanFollowsGenAIConventions(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	srv := llmtest.NewServer(t, llmtest.Reply{Content: "ok", InputTokens: 7, OutputTokens: 3}, llmtest.Reply{Status: http.StatusBadRequest})
	c := newClient(t, srv.URL, func(c *llm.Config) { c.Provider = "ollama" }, llm.Options{TracerProvider: tp})
	c.Complete(context.Background(), llm.Request{System: "s", User: "u"})
	c.Complete(context.Background(), llm.Request{System: "s", User: "u"})
	spans := rec.Ended()
	if len(spans) != 2 {
		t.Fatalf("%d spans, want 2", len(spans))
	}
	got := map[string]string{}
	for _, kv := range spans[0].Attributes() {
		got[string(kv.Key)] = kv.Value.Emit()
	}
	got["name"] = spans[0].Name()
	for _, kv := range spans[1].Attributes() {
		if kv.Key == "error.type" {
			got["second error.type"] = kv.Value.Emit()
		}
	}
	delete(got, "server.port")
	want := map[string]string{
		"name": "chat mini", "gen_ai.operation.name": "chat", "gen_ai.system": "ollama", "gen_ai.provider.name": "ollama",
		"gen_ai.request.model": "mini", "gen_ai.response.model": "mini-served", "gen_ai.usage.input_tokens": "7",
		"gen_ai.usage.output_tokens": "3", "server.address": "127.0.0.1", "ctxc.llm.attempts": "1",
		"second error.type": llm.KindClient,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("span attributes (-want +got):\n%s", diff)
	}
}

func TestConfigValidate(t *testing.T) {
	c := llm.Config{BaseURL: "ftp://x", MaxRetries: -1, FallbackReserve: 2}
	err := c.Validate()
	if err == nil {
		t.Fatal("want errors")
	}
	for _, field := range []string{"model:", "base_url:", "timeout:", "max_retries:", "context_window:", "breaker_failures:", "breaker_cooldown:", "max_reply_bytes:", "fallback_reserve:"} {
		if !strings.Contains(err.Error(), field) {
			t.Errorf("error %q does not name %s", err, field)
		}
	}
}

func TestYAMLDecodesOverDefaults(t *testing.T) {
	var models llm.ModelsConfig
	src := "summarizer:\n  model: llama3.2\n  base_url: http://localhost:11434/v1\n  timeout: 5s\n"
	if err := yaml.Unmarshal([]byte(src), &models); err != nil {
		t.Fatal(err)
	}
	want := llm.DefaultConfig()
	want.Model, want.BaseURL, want.Timeout = "llama3.2", "http://localhost:11434/v1", 5*time.Second
	if diff := cmp.Diff(&want, models.Summarizer); diff != "" || models.Planner != nil {
		t.Errorf("decoded (-want +got):\n%s planner %v", diff, models.Planner)
	}
	if err := models.Validate(); err != nil {
		t.Error(err)
	}
}

// TestWireFormat checks the request ctxc sends and how it reads the answers
// that are not a completion, against a server that records the raw body.
func TestWireFormat(t *testing.T) {
	var got []map[string]any
	var path, contentType string
	answers := []func(w http.ResponseWriter){
		func(w http.ResponseWriter) {
			w.Write([]byte(`{"model":"mini-1","choices":[{"message":{"role":"assistant","content":"hi"}}],"usage":{"prompt_tokens":5,"completion_tokens":1}}`))
		},
		func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"error":{"message":"max_tokens is too large","type":"invalid_request_error"}}`))
		},
		func(w http.ResponseWriter) { w.Write([]byte(`<html>proxy error</html>`)) },
		func(w http.ResponseWriter) {
			w.Write([]byte(`{"choices":[{"message":{"content":"` + strings.Repeat("x", 9<<20) + `"}}]}`))
		},
	}
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Errorf("request body: %v", err)
		}
		path, contentType = r.URL.Path, r.Header.Get("Content-Type")
		answers[len(got)](w)
		got = append(got, body)
	}))
	defer srv.Close()
	c := newClient(t, srv.URL+"/v1/", func(c *llm.Config) { c.MaxRetries = 0 }, llm.Options{})

	resp, err := c.Complete(context.Background(), llm.Request{System: "sys", User: "usr", MaxOutputTokens: 300, JSON: true})
	if err != nil {
		t.Fatal(err)
	}
	wantResp := llm.Response{Text: "hi", Model: "mini-1", InputTokens: 5, OutputTokens: 1, Attempts: 1}
	if diff := cmp.Diff(wantResp, resp); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
	wantBody := map[string]any{
		"model":           "mini",
		"messages":        []any{map[string]any{"role": "system", "content": "sys"}, map[string]any{"role": "user", "content": "usr"}},
		"temperature":     0.0,
		"max_tokens":      300.0,
		"response_format": map[string]any{"type": "json_object"},
	}
	if diff := cmp.Diff(wantBody, got[0]); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
	if path != "/v1/chat/completions" || contentType != "application/json" {
		t.Errorf("POST %s with Content-Type %q, want /v1/chat/completions and application/json", path, contentType)
	}

	// The detail is in the wrapped error (for the log), not in the error's
	// own text, which reaches clients.
	for _, want := range []struct{ kind, text string }{
		{llm.KindClient, "HTTP 400 Bad Request: max_tokens is too large"},
		{llm.KindServer, "decoding the answer"},
		{llm.KindTooLarge, "larger than max_reply_bytes"},
	} {
		_, err := c.Complete(context.Background(), llm.Request{System: "s", User: "u"})
		var e *llm.Error
		if !errors.As(err, &e) || e.Kind != want.kind || !strings.Contains(e.Err.Error(), want.text) || strings.Contains(err.Error(), want.text) {
			t.Errorf("got %v (%v), want kind %s and %q in the detail only", err, errors.Unwrap(err), want.kind, want.text)
		}
	}
	if _, ok := got[1]["max_tokens"]; ok {
		t.Errorf("max_tokens sent without a limit: %v", got[1])
	}
}
