package server

import (
	"context"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
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
