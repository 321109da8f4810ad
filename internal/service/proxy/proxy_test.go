package proxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contextcompiler/ctxc/internal/adapter"

	"github.com/google/go-cmp/cmp"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/internal/compiler"
	"github.com/contextcompiler/ctxc/internal/compiler/compilertest"
	"github.com/contextcompiler/ctxc/internal/service"
)

// These tests run the proxy in front of a real gRPC server and gateway, over
// the application layer with compilertest's catalog, which keeps every
// message: they test the transport (routing, forwarding, streaming, errors,
// headers, credentials, limits). What compaction does to a forwarded body is
// tested against the real binary and real clients in integration/.

// received is one request the upstream got.
type received struct {
	Path, Query string
	Header      http.Header
	Body        []byte
}

// upstream is an HTTP server in the test that records what it receives and
// answers with answer.
type upstream struct {
	*httptest.Server
	mu     sync.Mutex
	got    []received
	answer func(w http.ResponseWriter, r *http.Request)
}

func newUpstream(t *testing.T, answer func(w http.ResponseWriter, r *http.Request)) *upstream {
	t.Helper()
	u := &upstream{answer: answer}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.got = append(u.got, received{Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body})
		u.mu.Unlock()
		u.answer(w, r)
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *upstream) requests() []received {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]received(nil), u.got...)
}

func (u *upstream) base(t *testing.T) *url.URL {
	t.Helper()
	b, err := url.Parse(u.URL)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// observed records what the proxy tells its observer.
type observed struct {
	mu       sync.Mutex
	outcomes []string
	saved    int
}

func (o *observed) Proxied(upstream, endpoint, outcome string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.outcomes = append(o.outcomes, upstream+"/"+endpoint+"/"+outcome)
}
func (o *observed) UpstreamAnswered(string, string, time.Duration) {}
func (o *observed) Compiled(_ string, before, after int, _ bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.saved += before - after
}

func (o *observed) list() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.outcomes...)
}

// harness is the proxy behind a gateway in front of a gRPC server.
type harness struct {
	url  string
	logs *bytes.Buffer
	obs  *observed
}

// lockedWriter serializes the log's writes.
type lockedWriter struct {
	mu sync.Mutex
	b  *bytes.Buffer
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func startProxy(t *testing.T, cfg Config, tokens *service.Tokens) *harness {
	t.Helper()
	return startProxyOn(t, cfg, service.TransportConfig{Tokens: tokens})
}

// startProxyOn is startProxy on a transport configured as tcfg says.
func startProxyOn(t *testing.T, cfg Config, tcfg service.TransportConfig) *harness {
	t.Helper()
	tokens := tcfg.Tokens
	h := &harness{logs: &bytes.Buffer{}, obs: &observed{}}
	log := slog.New(slog.NewJSONHandler(&lockedWriter{b: h.logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	app, err := compiler.New(compiler.Config{Catalog: compilertest.NewCatalog(), Counters: compilertest.Counters{}, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := adapter.New(adapter.Config{Compiler: app, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	tcfg.Logger = log
	tr := service.NewTransport(svc, tcfg)
	lis, err := service.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- tr.Serve(ctx, lis) }()
	tr.SetServing()
	cfg.Logger, cfg.Observer = log, h.obs
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = 1 << 20
	}
	p, err := New(ctxcv1.NewContextCompilerServiceClient(tr.DirectConn()), cfg)
	if err != nil {
		t.Fatal(err)
	}
	gw, err := service.NewGateway(tr, service.GatewayConfig{Logger: log, Proxy: p, Tokens: tokens})
	if err != nil {
		t.Fatal(err)
	}
	hlis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go gw.Serve(hlis)
	t.Cleanup(func() {
		gw.Shutdown(time.Now().Add(time.Second))
		stop()
		<-served
		gw.Close()
		p.Close()
	})
	h.url = "http://" + hlis.Addr().String()
	return h
}

func post(t *testing.T, url, body string, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, data
}

// chatBody is an OpenAI chat body with fields ctxc does not own, odd white
// space and key order, for gpt-4o (the model compilertest knows).
const chatBody = `{"messages": [ {"role":"system","content":"Be brief."}, {"role":"user","content":"hi"} ],
  "model":"gpt-4o", "temperature": 0.3, "x_future": {"a": [1, 2]}, "stream": false}`

func TestRoute(t *testing.T) {
	tests := []struct {
		path      string
		name      string
		upstream  Upstream
		model     string
		routeable bool
	}{
		{"/v1/chat/completions", "chat_completions", OpenAI, "", true},
		{"/v1/responses", "responses", OpenAI, "", true},
		{"/v1/messages", "messages", Anthropic, "", true},
		{"/v1/messages/count_tokens", "count_tokens", Anthropic, "", true},
		{"/v1beta/models/gemini-2.5-pro:generateContent", "generate_content", Gemini, "gemini-2.5-pro", true},
		{"/v1beta/models/gemini-2.5-flash:streamGenerateContent", "stream_generate_content", Gemini, "gemini-2.5-flash", true},
		{"/v1/models/gemini-2.5-pro:generateContent", "generate_content", Gemini, "gemini-2.5-pro", true},
		{"/api/chat", "chat", Ollama, "", true},
		{"/v1beta/models/gemini-2.5-pro:countTokens", "", "", "", false},
		{"/v1beta/models/a/b:generateContent", "", "", "", false},
		{"/v1beta/models/:generateContent", "", "", "", false},
		{"/v1/models", "", "", "", false},
		{"/ctxc.v1.ContextCompilerService/Compile", "", "", "", false},
	}
	for _, tt := range tests {
		ep, model, ok := route(tt.path)
		if ok != tt.routeable || ep.Name != tt.name || ep.Upstream != tt.upstream || model != tt.model {
			t.Errorf("route(%q) = %s %s %q %v, want %s %s %q %v", tt.path, ep.Name, ep.Upstream, model, ok, tt.name, tt.upstream, tt.model, tt.routeable)
		}
	}
}

// TestUnchangedForwardsTheClientsBytes: a context the compile leaves as it
// was goes upstream as the client's bytes, with the client's headers (its
// key among them, none of ctxc's own) and query; the upstream's status,
// headers and body come back as they were, with headers saying what ctxc did.
func TestUnchangedForwardsTheClientsBytes(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Request-Id", "req_42")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"id":"chatcmpl-1","choices":[]}`)
	})
	base := up.base(t)
	base.Path = "/prefix"
	h := startProxy(t, Config{Upstreams: map[Upstream]*url.URL{OpenAI: base}}, nil)
	resp, body := post(t, h.url+"/v1/chat/completions?api-version=2024", chatBody, map[string]string{
		"Authorization": "Bearer sk-test", "OpenAI-Organization": "org-1", HeaderProfile: "", HeaderMaxContextTokens: "64000"})
	if resp.StatusCode != http.StatusCreated || string(body) != `{"id":"chatcmpl-1","choices":[]}` || resp.Header.Get("X-Request-Id") != "req_42" {
		t.Fatalf("HTTP %d %s %v", resp.StatusCode, body, resp.Header)
	}
	wantHeaders := map[string]string{headerForwarded: OutcomeUnchanged, headerCompacted: "false", headerProfile: "pragmatic"}
	for k, v := range wantHeaders {
		if got := resp.Header.Get(k); got != v {
			t.Errorf("%s: %q, want %q", k, got, v)
		}
	}
	if resp.Header.Get(headerTokensBefore) == "" || resp.Header.Get(headerTokensBefore) != resp.Header.Get(headerTokensAfter) {
		t.Errorf("tokens before %q and after %q", resp.Header.Get(headerTokensBefore), resp.Header.Get(headerTokensAfter))
	}
	got := up.requests()
	if len(got) != 1 {
		t.Fatalf("the upstream got %d requests", len(got))
	}
	r := got[0]
	if string(r.Body) != chatBody {
		t.Errorf("the upstream got\n%s\nwant the client's bytes\n%s", r.Body, chatBody)
	}
	if r.Path != "/prefix/v1/chat/completions" || r.Query != "api-version=2024" {
		t.Errorf("path %q query %q", r.Path, r.Query)
	}
	if r.Header.Get("Authorization") != "Bearer sk-test" || r.Header.Get("OpenAI-Organization") != "org-1" {
		t.Errorf("the client's headers did not reach the upstream: %v", r.Header)
	}
	for k := range r.Header {
		if strings.HasPrefix(k, ctxcHeaderPrefix) {
			t.Errorf("ctxc's own header %s reached the upstream", k)
		}
	}
	if diff := cmp.Diff([]string{"openai/chat_completions/unchanged"}, h.obs.list()); diff != "" {
		t.Errorf("observed (-want +got):\n%s", diff)
	}
}

// TestStreamsAsTheyArrive: an SSE answer reaches the client event by event:
// the upstream sends its next event only once the client has read the one
// before, so a proxy that buffered would hang.
func TestStreamsAsTheyArrive(t *testing.T) {
	read := make(chan struct{})
	events := []string{"event: message_start\ndata: {\"type\":\"message_start\"}\n\n", "event: content_block_delta\ndata: {\"delta\":\"Hi\"}\n\n", "event: message_stop\ndata: {}\n\n"}
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range events {
			_, _ = io.WriteString(w, e)
			w.(http.Flusher).Flush()
			select {
			case <-read:
			case <-time.After(10 * time.Second):
				return
			}
		}
	})
	h := startProxy(t, Config{Upstreams: map[Upstream]*url.URL{Anthropic: up.base(t)}}, nil)
	body := `{"model":"gpt-4o","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"hi"}]}`
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, h.url+"/v1/messages?beta=true", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q", ct)
	}
	br := bufio.NewReader(resp.Body)
	for i, want := range events {
		var got strings.Builder
		for !strings.HasSuffix(got.String(), "\n\n") {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("event %d: %v after %q", i, err, got.String())
			}
			got.WriteString(line)
		}
		if got.String() != want {
			t.Errorf("event %d: %q, want %q", i, got.String(), want)
		}
		read <- struct{}{}
	}
	if rest, _ := io.ReadAll(br); len(rest) > 0 {
		t.Errorf("after the last event: %q", rest)
	}
}

// TestBrokenStreamReachesTheClientBroken: an upstream that closes its
// connection after three chunks of a stream, on every provider's streaming
// endpoint: the client gets the three chunks and then a broken body (an
// error, not a clean end of the answer), Anthropic's stream with its error
// event first when the break falls between events (and without it when it
// falls inside one); the call is logged and counted as the upstream's
// failure.
func TestBrokenStreamReachesTheClientBroken(t *testing.T) {
	chunks := []string{"data: {\"n\":1}\n\n", "data: {\"n\":2}\n\n", "data: {\"n\":3}\n\n"}
	const partial = "event: content_block_delta\ndata: {\"ty"
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range chunks {
			_, _ = io.WriteString(w, c)
			w.(http.Flusher).Flush()
		}
		if r.Header.Get("X-Break-Inside-An-Event") != "" {
			_, _ = io.WriteString(w, partial)
			w.(http.Flusher).Flush()
		}
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		conn.Close()
	})
	h := startProxy(t, Config{Upstreams: map[Upstream]*url.URL{OpenAI: up.base(t), Anthropic: up.base(t), Gemini: up.base(t), Ollama: up.base(t)}}, nil)
	anthropicError := `event: error` + "\n" + `data: {"error":{"message":"ctxc: the anthropic upstream broke off its answer","type":"api_error"},"type":"error"}` + "\n\n"
	messages := `{"model":"gpt-4o","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"hi"}]}`
	for _, c := range []struct {
		path, body string
		inside     bool
		want       string
	}{
		{"/v1/chat/completions", strings.Replace(chatBody, `"stream": false`, `"stream": true`, 1), false, ""},
		{"/v1/responses", `{"model":"gpt-4o","stream":true,"input":"hi"}`, false, ""},
		{"/v1/messages", messages, false, anthropicError},
		{"/v1/messages", messages, true, partial},
		{"/v1beta/models/gpt-4o:streamGenerateContent?alt=sse", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`, false, ""},
		{"/api/chat", `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}`, false, ""},
	} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, h.url+c.path, strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		if c.inside {
			req.Header.Set("X-Break-Inside-An-Event", "1")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if want := strings.Join(chunks, "") + c.want; resp.StatusCode != http.StatusOK || string(got) != want || err == nil {
			t.Errorf("%s (broken inside an event: %v): HTTP %d %q, read error %v; want %q, then an error", c.path, c.inside, resp.StatusCode, got, err, want)
		}
	}
	if n := strings.Count(h.logs.String(), `"reason":"UPSTREAM_BROKE_OFF"`); n != 6 {
		t.Errorf("%d calls logged as broken off, want 6:\n%s", n, h.logs)
	}
	for _, o := range h.obs.list() {
		if !strings.HasSuffix(o, "/"+OutcomeUpstreamFailed) {
			t.Errorf("observed %s, want %s", o, OutcomeUpstreamFailed)
		}
	}
}

// TestUpstreamErrorsPassThrough: the upstream's refusals (a 429 with its
// retry headers, a 5xx, a 400) reach the client as they were.
func TestUpstreamErrorsPassThrough(t *testing.T) {
	for _, status := range []int{http.StatusTooManyRequests, http.StatusServiceUnavailable, http.StatusBadRequest} {
		body := `{"error":{"message":"upstream says no","type":"x"}}`
		up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "7")
			w.Header().Set("X-Ratelimit-Remaining-Requests", "0")
			w.WriteHeader(status)
			_, _ = io.WriteString(w, body)
		})
		h := startProxy(t, Config{Upstreams: map[Upstream]*url.URL{OpenAI: up.base(t)}}, nil)
		resp, got := post(t, h.url+"/v1/chat/completions", chatBody, nil)
		if resp.StatusCode != status || string(got) != body || resp.Header.Get("Retry-After") != "7" || resp.Header.Get("X-Ratelimit-Remaining-Requests") != "0" {
			t.Errorf("HTTP %d %s %v, want %d as the upstream sent it", resp.StatusCode, got, resp.Header, status)
		}
	}
}

// TestRefusalsInTheProvidersShape: what ctxc refuses itself comes back as
// the provider's error JSON and status, and nothing goes upstream.
func TestRefusalsInTheProvidersShape(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { t.Errorf("the upstream was called for %s", r.URL.Path) })
	all := map[Upstream]*url.URL{OpenAI: up.base(t), Anthropic: up.base(t), Gemini: up.base(t), Ollama: up.base(t)}
	h := startProxy(t, Config{Upstreams: all, MaxBodyBytes: 2 << 10}, nil)
	anthropic := `{"model":"gpt-4o","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`
	tests := []struct {
		name, path, body string
		header           map[string]string
		contentType      string
		status           int
		want             string
	}{
		{"unknown profile (openai)", "/v1/chat/completions", chatBody, map[string]string{HeaderProfile: "nope"}, "", http.StatusBadRequest,
			`{"error":{"code":null,"message":"ctxc: unknown profile \"nope\" (known: custom, pragmatic)","param":"X-Ctxc-Profile","type":"invalid_request_error"}}`},
		{"bad window header (anthropic)", "/v1/messages", anthropic, map[string]string{HeaderMaxContextTokens: "lots"}, "", http.StatusBadRequest,
			`{"error":{"message":"ctxc: X-Ctxc-Max-Context-Tokens must be a number of tokens from 1 to 2147483647, got \"lots\"","type":"invalid_request_error"},"type":"error"}`},
		{"not JSON (gemini)", "/v1beta/models/gpt-4o:generateContent", `{}`, nil, "text/plain", http.StatusUnsupportedMediaType,
			`{"error":{"code":415,"message":"ctxc: Content-Type must be application/json","status":"INVALID_ARGUMENT"}}`},
		{"too large (ollama)", "/api/chat", `{"model":"gpt-4o","messages":[{"role":"user","content":"` + strings.Repeat("x", 3<<10) + `"}]}`, nil, "", http.StatusRequestEntityTooLarge,
			`{"error":"ctxc: the request body is larger than max_message_bytes (2048 bytes)"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			header := map[string]string{}
			for k, v := range tt.header {
				header[k] = v
			}
			if tt.contentType != "" {
				header["Content-Type"] = tt.contentType
			}
			resp, body := post(t, h.url+tt.path, tt.body, header)
			if resp.StatusCode != tt.status {
				t.Errorf("HTTP %d, want %d", resp.StatusCode, tt.status)
			}
			var got, want any
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatalf("%s: %v", body, err)
			}
			if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
		})
	}
	resp, err := http.Get(h.url + "/v1/chat/completions")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: HTTP %d", resp.StatusCode)
	}
}

// TestCompileFailure: a body the compile cannot take (here an image part
// without its URL) goes upstream as the client's bytes by default, saying
// why; with on_compile_error refuse it is the provider's error.
func TestCompileFailure(t *testing.T) {
	body := strings.Replace(chatBody, `"content":"hi"`, `"content":[{"type":"image_url","image_url":{"url":""}}]`, 1)
	for _, mode := range []string{OnErrorForward, OnErrorRefuse} {
		t.Run(mode, func(t *testing.T) {
			up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, `{}`) })
			h := startProxy(t, Config{Upstreams: map[Upstream]*url.URL{OpenAI: up.base(t)}, OnCompileError: mode}, nil)
			resp, got := post(t, h.url+"/v1/chat/completions", body, nil)
			if mode == OnErrorForward {
				if resp.StatusCode != http.StatusOK || len(up.requests()) != 1 || string(up.requests()[0].Body) != body ||
					resp.Header.Get(headerForwarded) != OutcomeUncompiled || resp.Header.Get(headerError) != "INVALID_INPUT" {
					t.Errorf("HTTP %d %s %v; upstream got %d", resp.StatusCode, got, resp.Header, len(up.requests()))
				}
				return
			}
			var e struct {
				Error struct{ Type, Code string }
			}
			if err := json.Unmarshal(got, &e); err != nil || resp.StatusCode != http.StatusInternalServerError || e.Error.Code != "ctxc_compile_failed" || len(up.requests()) != 0 {
				t.Errorf("HTTP %d %s; upstream got %d", resp.StatusCode, got, len(up.requests()))
			}
		})
	}
}

// TestOwnTokenInItsOwnHeader: with bearer tokens, a call without ctxc's
// token in X-Ctxc-Token is refused (401, the provider's shape) before
// anything goes upstream, whatever Authorization it carries; with it, the
// call goes through and the token stays here.
func TestOwnTokenInItsOwnHeader(t *testing.T) {
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokenFile, []byte("agent 0123456789abcdef0123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tokens, err := service.LoadTokens(tokenFile, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, `{}`) })
	h := startProxy(t, Config{Upstreams: map[Upstream]*url.URL{Anthropic: up.base(t)}}, tokens)
	body := `{"model":"gpt-4o","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`
	resp, got := post(t, h.url+"/v1/messages", body, map[string]string{"X-Api-Key": "sk-ant-x", "Authorization": "Bearer 0123456789abcdef0123"})
	var e struct {
		Type  string
		Error struct{ Type string }
	}
	if err := json.Unmarshal(got, &e); err != nil || resp.StatusCode != http.StatusUnauthorized || e.Type != "error" || e.Error.Type != "authentication_error" || len(up.requests()) != 0 {
		t.Fatalf("HTTP %d %s; upstream got %d", resp.StatusCode, got, len(up.requests()))
	}
	resp, got = post(t, h.url+"/v1/messages", body, map[string]string{"X-Api-Key": "sk-ant-x", HeaderToken: "0123456789abcdef0123"})
	if resp.StatusCode != http.StatusOK || len(up.requests()) != 1 || up.requests()[0].Header.Get("X-Api-Key") != "sk-ant-x" || up.requests()[0].Header.Get(HeaderToken) != "" {
		t.Fatalf("HTTP %d %s; upstream got %v", resp.StatusCode, got, up.requests())
	}
}

// heldBody is a request body that sends nothing until released.
type heldBody struct{ release <-chan struct{} }

func (b *heldBody) Read([]byte) (int, error) {
	<-b.release
	return 0, io.EOF
}

// TestUnauthenticatedRefusedBeforeTheBody: with bearer tokens, a call that
// announces a 30 MB body and sends none of it, without ctxc's token, gets
// the provider's 401 at once, on every provider's endpoint: nothing waited
// for the body. The refusal is logged as the API's are and counted.
func TestUnauthenticatedRefusedBeforeTheBody(t *testing.T) {
	tokenFile := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokenFile, []byte("agent 0123456789abcdef0123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tokens, err := service.LoadTokens(tokenFile, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, `{}`) })
	h := startProxy(t, Config{Upstreams: map[Upstream]*url.URL{OpenAI: up.base(t), Anthropic: up.base(t), Gemini: up.base(t)},
		MaxBodyBytes: 32 << 20}, tokens)
	release := make(chan struct{})
	defer close(release)
	for _, path := range []string{"/v1/chat/completions", "/v1/messages", "/v1beta/models/gpt-4o:streamGenerateContent"} {
		body := &heldBody{release: release}
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, h.url+path, body)
		req.ContentLength = 30 << 20
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer sk-provider-key")
		status, got, ok := answerWhileHeld(t, req)
		if !ok {
			return
		}
		if status != http.StatusUnauthorized || !strings.Contains(got, HeaderToken) {
			t.Errorf("%s: HTTP %d %s; want 401 naming %s", path, status, got, HeaderToken)
		}
	}
	if len(up.requests()) != 0 || !strings.Contains(h.logs.String(), "unauthenticated request refused") {
		t.Errorf("upstream got %d; log:\n%s", len(up.requests()), h.logs)
	}
	if got := h.obs.list(); !cmp.Equal(got, []string{"openai/chat_completions/refused", "anthropic/messages/refused", "gemini/stream_generate_content/refused"}) {
		t.Errorf("observed %v", got)
	}
}

// TestTooLargeRefusedBeforeTheBody: a body that announces more than the
// limit gets the provider's 413 at once, none of it read.
func TestTooLargeRefusedBeforeTheBody(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, `{}`) })
	h := startProxy(t, Config{Upstreams: map[Upstream]*url.URL{OpenAI: up.base(t)}, MaxBodyBytes: 1 << 20}, nil)
	release := make(chan struct{})
	defer close(release)
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, h.url+"/v1/chat/completions", &heldBody{release: release})
	req.ContentLength = 30 << 20
	req.Header.Set("Content-Type", "application/json")
	status, got, ok := answerWhileHeld(t, req)
	if ok && (status != http.StatusRequestEntityTooLarge || !strings.Contains(got, "max_message_bytes")) {
		t.Errorf("HTTP %d %s; want 413", status, got)
	}
}

// answerWhileHeld sends req, whose body sends nothing until released, and
// returns the answer the proxy gave meanwhile; it fails the test when none
// comes within 10 s (the proxy waited for the body). ok is false when the
// call failed (reported).
func answerWhileHeld(t *testing.T, req *http.Request) (status int, body string, ok bool) {
	t.Helper()
	answered := make(chan *http.Response, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
		}
		answered <- resp
	}()
	select {
	case resp := <-answered:
		if resp == nil {
			return 0, "", false
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(got), true
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: no answer while the body was held: the proxy waited for it", req.URL.Path)
		return 0, "", false
	}
}

// TestKeysStayBetweenClientAndUpstream: provider keys in every header and
// Gemini's key parameter reach the upstream, and appear in no log line and
// no answer of ctxc's, refusals and upstream failures included.
func TestKeysStayBetweenClientAndUpstream(t *testing.T) {
	const key = "sk-planted-4f1e9c2b7a"
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, `{"candidates":[]}`) })
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL, _ := url.Parse(dead.URL)
	dead.Close() // nothing listens there now
	h := startProxy(t, Config{Upstreams: map[Upstream]*url.URL{Gemini: up.base(t), OpenAI: deadURL}}, nil)
	headers := map[string]string{"Authorization": "Bearer " + key, "X-Goog-Api-Key": key, "X-Api-Key": key}
	gemini := `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`
	var answers []string
	for _, c := range []struct{ path, body string }{
		{"/v1beta/models/gpt-4o:generateContent?key=" + key, gemini},
		{"/v1beta/models/gpt-4o:streamGenerateContent?alt=sse&key=" + key, `{"contents":[{"role":"user","parts":[{"executableCode":{}}]}]}`}, // fails to compile: forwarded
		{"/v1/chat/completions?key=" + key, chatBody},                                                                                        // the upstream is down: 502
		{"/v1/chat/completions?key=" + key, strings.Replace(chatBody, `"messages"`, `"messages_"`, 1)},
	} {
		resp, body := post(t, h.url+c.path, c.body, headers)
		answers = append(answers, string(body))
		for k, vs := range resp.Header {
			answers = append(answers, k+": "+strings.Join(vs, ","))
		}
	}
	got := up.requests()
	if len(got) != 2 || got[0].Header.Get("X-Goog-Api-Key") != key || !strings.Contains(got[0].Query, "key="+key) {
		t.Fatalf("the upstream got %v", got)
	}
	for _, where := range []struct{ name, text string }{{"the log", h.logs.String()}, {"the answers", strings.Join(answers, "\n")}} {
		if strings.Contains(where.text, key) {
			t.Errorf("%s holds the provider key:\n%s", where.name, where.text)
		}
	}
	if !strings.Contains(h.logs.String(), `"outcome":"upstream_failed"`) {
		t.Errorf("no upstream failure was logged:\n%s", h.logs)
	}
}

// TestConcurrencyLimit: past max_concurrent_calls a call gets the
// provider's 429 with Retry-After.
func TestConcurrencyLimit(t *testing.T) {
	release := make(chan struct{})
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { <-release; _, _ = io.WriteString(w, `{}`) })
	h := startProxy(t, Config{Upstreams: map[Upstream]*url.URL{OpenAI: up.base(t)}, MaxConcurrentCalls: 1}, nil)
	done := make(chan int)
	go func() {
		resp, _ := post(t, h.url+"/v1/chat/completions", chatBody, nil)
		done <- resp.StatusCode
	}()
	for deadline := time.Now().Add(10 * time.Second); len(up.requests()) == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the first call never reached the upstream")
		}
	}
	resp, body := post(t, h.url+"/v1/chat/completions", chatBody, nil)
	close(release)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "1" || !strings.Contains(string(body), "rate_limit_exceeded") {
		t.Errorf("HTTP %d %s %v", resp.StatusCode, body, resp.Header)
	}
	if code := <-done; code != http.StatusOK {
		t.Errorf("the first call: HTTP %d", code)
	}
}

// TestCallerQuota: a caller at its quota gets the provider's 429 with
// Retry-After naming the quota, and the call is not forwarded.
func TestCallerQuota(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, `{}`) })
	h := startProxyOn(t, Config{Upstreams: map[Upstream]*url.URL{OpenAI: up.base(t)}},
		service.TransportConfig{Quotas: service.Quotas{Default: service.Quota{CallsPerSecond: 0.01, Burst: 1}}})
	if resp, body := post(t, h.url+"/v1/chat/completions", chatBody, nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("the first call: HTTP %d %s", resp.StatusCode, body)
	}
	resp, body := post(t, h.url+"/v1/chat/completions", chatBody, nil)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "100" ||
		!strings.Contains(string(body), "ctxc: caller anonymous: quota calls_per_second 0.01 reached") || !strings.Contains(string(body), "rate_limit_exceeded") {
		t.Errorf("HTTP %d %s %v", resp.StatusCode, body, resp.Header)
	}
	if n := len(up.requests()); n != 1 {
		t.Errorf("the upstream got %d calls, want the first only", n)
	}
}

func TestUpstreamURL(t *testing.T) {
	tests := []struct{ base, path, query, want string }{
		{"https://api.openai.com", "/v1/chat/completions", "", "https://api.openai.com/v1/chat/completions"},
		{"https://gw.example.com/openai/", "/v1/responses", "a=1", "https://gw.example.com/openai/v1/responses?a=1"},
		{"http://127.0.0.1:11434", "/api/chat", "", "http://127.0.0.1:11434/api/chat"},
		{"https://generativelanguage.googleapis.com", "/v1beta/models/gemini-2.5-pro:streamGenerateContent", "alt=sse", "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"},
	}
	for _, tt := range tests {
		base, err := url.Parse(tt.base)
		if err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequest(http.MethodPost, tt.path+"?"+tt.query, nil)
		if tt.query == "" {
			r = httptest.NewRequest(http.MethodPost, tt.path, nil)
		}
		c := &call{base: base, r: r}
		if got := c.upstreamURL(); got != tt.want {
			t.Errorf("%s + %s: %s, want %s", tt.base, tt.path, got, tt.want)
		}
	}
}

func TestCredentialsOnlyOverTLSOrToThisMachine(t *testing.T) {
	for raw, want := range map[string]bool{
		"https://api.openai.com": true, "http://127.0.0.1:11434": true, "http://localhost:8080": true, "http://[::1]:1": true,
		"http://ollama.internal:11434": false, "http://10.0.0.5": false,
	} {
		u, _ := url.Parse(raw)
		if got := credentialsAllowed(u); got != want {
			t.Errorf("%s: %v, want %v", raw, got, want)
		}
	}
}

func TestCheckUpstream(t *testing.T) {
	for raw, ok := range map[string]bool{
		"https://api.anthropic.com": true, "http://127.0.0.1:11434": true, "https://gw.example.com/v": true,
		"ftp://x": false, "api.openai.com": false, "https://x/?key=1": false, "https://user:pw@x": false, "": false,
	} {
		if err := CheckUpstream(raw); (err == nil) != ok {
			t.Errorf("%q: %v", raw, err)
		}
	}
}

// TestNoCredentialsOverPlainHTTPElsewhere: an upstream on another host over
// plain HTTP gets the call without the caller's credentials, in headers or
// in Gemini's key parameter.
func TestNoCredentialsOverPlainHTTPElsewhere(t *testing.T) {
	var got *http.Request
	p, err := New(ctxcv1.NewContextCompilerServiceClient(nil), Config{Upstreams: map[Upstream]*url.URL{}, Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		got = r
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("{}"))}, nil
	})})
	if err != nil {
		t.Fatal(err)
	}
	base, _ := url.Parse("http://ollama.internal:11434")
	r := httptest.NewRequest(http.MethodPost, "/v1beta/models/m:generateContent?alt=sse&key=secret", nil)
	r.Header.Set("Authorization", "Bearer secret")
	r.Header.Set("X-Goog-Api-Key", "secret")
	c := &call{p: p, ep: endpoints[4], base: base, w: httptest.NewRecorder(), r: r, start: time.Now()}
	c.forward(t.Context(), []byte("{}"))
	if got == nil {
		t.Fatal("nothing was sent")
	}
	if got.Header.Get("Authorization") != "" || got.Header.Get("X-Goog-Api-Key") != "" || got.URL.Query().Has("key") || got.URL.Query().Get("alt") != "sse" {
		t.Errorf("sent %s with %v", got.URL, got.Header)
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestReadBody: a body of announced length is read whole, one that ends
// before its length is an error, and one of unknown length is read to its
// end; a body over the limit is never read past it.
func TestReadBody(t *testing.T) {
	tests := []struct {
		name          string
		body          string
		length, limit int64
		want          string
		wantErr       bool
	}{
		{"announced", "hello", 5, 10, "hello", false},
		{"ends early", "hel", 5, 10, "", true},
		{"unknown length", "hello", -1, 10, "hello", false},
		{"over the limit", "hello world", 11, 10, "", true},
		{"over the limit, unannounced", "hello world", -1, 10, "", true},
		{"large, unannounced", strings.Repeat("x", 300<<10), -1, 1 << 20, strings.Repeat("x", 300<<10), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := http.MaxBytesReader(httptest.NewRecorder(), io.NopCloser(strings.NewReader(tt.body)), tt.limit)
			got, err := readBody(r, tt.length, tt.limit)
			if (err != nil) != tt.wantErr {
				t.Fatalf("error %v, want error %v", err, tt.wantErr)
			}
			if err == nil && string(got) != tt.want {
				t.Errorf("read %q, want %q", got, tt.want)
			}
		})
	}
}

// trickle is a body that sends size bytes in pieces of piece, recording the
// most room it was offered beyond what it had sent.
type trickle struct {
	size, piece, sent int
	worst             int // room offered minus max(firstBodyBuffer, sent), at its largest
}

func (b *trickle) Read(p []byte) (int, error) {
	b.worst = max(b.worst, len(p)-max(firstBodyBuffer, b.sent))
	if b.sent == b.size {
		return 0, io.EOF
	}
	n := copy(p, bytes.Repeat([]byte("x"), min(b.piece, b.size-b.sent)))
	b.sent += n
	return n, nil
}

// TestReadBodyGrowsWithWhatArrives: a body that announces 30 MB and sends
// 1 MB is never given a buffer of its announced length: the room offered
// for the next read is at most what arrived (or the first 64 KiB); one of
// unannounced length is never given room far past the limit.
func TestReadBodyGrowsWithWhatArrives(t *testing.T) {
	body := &trickle{size: 1 << 20, piece: 4 << 10}
	if _, err := readBody(body, 30<<20, 32<<20); err != io.ErrUnexpectedEOF {
		t.Fatalf("error %v, want io.ErrUnexpectedEOF (the body ended before its length)", err)
	}
	if body.sent != 1<<20 || body.worst > 0 {
		t.Errorf("sent %d; the buffer had room for %d bytes more than what had arrived", body.sent, body.worst)
	}
	const limit = 3<<20 + 1000
	body = &trickle{size: limit, piece: 32 << 10}
	got, err := readBody(body, -1, limit)
	if err != nil || len(got) != limit || cap(got) > limit+512 {
		t.Errorf("read %d bytes into %d, error %v; want %d into at most %d", len(got), cap(got), err, limit, limit+512)
	}
}
