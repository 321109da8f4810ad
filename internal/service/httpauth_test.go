package service

import (
	"context"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contextcompiler/ctxc/internal/adapter"
)

// blockedBody is a request body that sends a little and then nothing until
// the test ends, counting what was read of it.
type blockedBody struct {
	sent    int
	release <-chan struct{}
}

func (b *blockedBody) Read(p []byte) (int, error) {
	if b.sent == 0 {
		b.sent = copy(p, `{"state":`)
		return b.sent, nil
	}
	<-b.release
	return 0, io.EOF
}

// TestGatewayRefusesWithoutTokenBeforeTheBody: with bearer tokens, a call
// without one is answered 401 (the API's JSON error) while its body is
// still on its way; health needs no token.
func TestGatewayRefusesWithoutTokenBeforeTheBody(t *testing.T) {
	tokens, err := LoadTokens(writeTokenFile(t, "agent-1 0123456789abcdef\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	base := startGateway(t, 32<<20, GatewayConfig{Tokens: tokens})
	release := make(chan struct{})
	defer close(release)
	req, _ := http.NewRequest(http.MethodPost, base+"/ctxc.v1.ContextCompilerService/Compile", &blockedBody{release: release})
	req.ContentLength = 20 << 20
	req.Header.Set("Content-Type", "application/json")
	answered := make(chan *http.Response, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			close(answered)
			return
		}
		answered <- resp
	}()
	select {
	case resp, ok := <-answered:
		if !ok {
			return
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), "unauthenticated") || resp.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("HTTP %d %s %q, want 401 with the API's error and a Bearer challenge", resp.StatusCode, body, resp.Header.Get("WWW-Authenticate"))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no answer while the body was still coming: the gateway waited for it")
	}
	resp, err := http.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("health without a token: HTTP %d", resp.StatusCode)
	}
}

// TestGatewayRefusesPathsThatAreNotUTF8: a path that decodes to invalid
// UTF-8 (overlong encodings of ".") is a client's error, 400, on every route.
func TestGatewayRefusesPathsThatAreNotUTF8(t *testing.T) {
	base := startGateway(t, 1<<20, GatewayConfig{Inspector: http.NotFoundHandler()})
	for _, path := range []string{"/ui/%c0%ae%c0%ae/etc/passwd", "/ctxc.v1.ContextCompilerService/%ff", "/%c0%af"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: HTTP %d, want 400", path, resp.StatusCode)
		}
	}
}

type refusalCount struct {
	mu    sync.Mutex
	ports map[string]int
}

func (c *refusalCount) Unauthenticated(port string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ports[port]++
}

// TestRefusalsCountedAndLoggedSparingly: every refusal is counted; a flood
// of them is logged once a second, each line saying how many it stands for,
// with the client's address and what it asked for.
func TestRefusalsCountedAndLoggedSparingly(t *testing.T) {
	logs := &lockedBuffer{}
	count := &refusalCount{ports: map[string]int{}}
	r := newRefusals(slog.New(slog.NewTextHandler(logs, nil)), count)
	now := time.Now()
	r.now = func() time.Time { return now }
	for i := range 100 {
		now = now.Add(5 * time.Millisecond)
		r.refused(context.Background(), "http", "192.0.2.9", "/ctxc.v1.ContextCompilerService/Compile")
		if i == 0 {
			r.refused(context.Background(), "grpc", "192.0.2.9", "/ctxc.v1.ContextCompilerService/Compile")
		}
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "client=192.0.2.9") || !strings.Contains(lines[0], "port=http") {
		t.Errorf("a half-second flood logged:\n%s\nwant one line naming the client and the port", logs.String())
	}
	now = now.Add(time.Second)
	r.refused(context.Background(), "metrics", "192.0.2.9", "/metrics")
	if !strings.Contains(logs.String(), "refused_unlogged_since_last=100") {
		t.Errorf("the next line does not say how many went unlogged:\n%s", logs.String())
	}
	if want := map[string]int{"http": 100, "grpc": 1, "metrics": 1}; !maps.Equal(count.ports, want) {
		t.Errorf("counted %v, want %v", count.ports, want)
	}
}

// readRecorder is a request body that records whether anything read it.
type readRecorder struct{ read bool }

func (b *readRecorder) Read([]byte) (int, error) { b.read = true; return 0, io.EOF }

// fakeProxy records what reached it and answers a refusal with 401.
type fakeProxy struct {
	served, refused int
	caller          string
}

func (p *fakeProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.served++
	p.caller, _ = adapter.CallerFromContext(r.Context())
}
func (p *fakeProxy) Serves(*http.Request) bool { return true }
func (p *fakeProxy) Unauthenticated(w http.ResponseWriter, _ *http.Request) {
	p.refused++
	w.WriteHeader(http.StatusUnauthorized)
}

// TestProxyRefusesWithoutTokenBeforeTheBody: on the proxy's paths a request
// without ctxc's token in X-Ctxc-Token (a bearer token in Authorization is
// the provider's key, not ctxc's) is refused by the proxy, counted and
// logged as the API's refusals are, and nothing reads its body; with the
// token it reaches the proxy as the token's caller.
func TestProxyRefusesWithoutTokenBeforeTheBody(t *testing.T) {
	tokens, err := LoadTokens(writeTokenFile(t, "agent-1 0123456789abcdef\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	logs := &lockedBuffer{}
	count := &refusalCount{ports: map[string]int{}}
	p := &fakeProxy{}
	h := proxyAuth(p, tokens, newRefusals(slog.New(slog.NewTextHandler(logs, nil)), count), nil)
	for _, header := range []map[string]string{
		{},
		{"Authorization": "Bearer 0123456789abcdef"},
		{ProxyTokenHeader: "0123456789abcdeX"},
		{ProxyTokenHeader: "Bearer 0123456789abcdef"},
	} {
		body := &readRecorder{}
		r := httptest.NewRequest(http.MethodPost, "/v1/messages", body)
		r.ContentLength = 30 << 20
		for k, v := range header {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusUnauthorized || body.read {
			t.Errorf("%v: HTTP %d, body read: %v; want 401 with the body unread", header, w.Code, body.read)
		}
	}
	if p.served != 0 || p.refused != 4 || count.ports["http"] != 4 || !strings.Contains(logs.String(), "unauthenticated request refused") {
		t.Errorf("served %d, refused %d, counted %v, logged:\n%s", p.served, p.refused, count.ports, logs.String())
	}
	r := httptest.NewRequest(http.MethodPost, "/v1/messages", strings.NewReader("{}"))
	r.Header.Set(ProxyTokenHeader, "0123456789abcdef")
	h.ServeHTTP(httptest.NewRecorder(), r)
	if p.served != 1 || p.caller != "agent-1" {
		t.Errorf("with the token: served %d as %q, want once as agent-1", p.served, p.caller)
	}
}
