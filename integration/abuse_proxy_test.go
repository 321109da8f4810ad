//go:build abuse

package integration

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// proxyBodyBytes is what each unauthenticated proxy body announces: under
// the proxy's limit (max_message_bytes less 4 KiB, 32 MiB by default), so
// that only the token check stops it.
const proxyBodyBytes = 30 << 20

// proxyBodyHead is what a body sends before it waits for its answer.
const proxyBodyHead = 64 << 10

// probeBody is a 30 MB body that sends its first 64 KiB, then waits for
// its answer (or 10 s), then sends the rest: a server that waits for the
// whole body before it checks the token answers only after the wait.
type probeBody struct {
	answered <-chan struct{}
	sent     atomic.Int64
}

func (b *probeBody) Read(p []byte) (int, error) {
	sent := b.sent.Load()
	if sent == proxyBodyHead {
		select {
		case <-b.answered:
		case <-time.After(10 * time.Second):
		}
	}
	if sent >= proxyBodyBytes {
		return 0, io.EOF
	}
	n := min(int64(len(p)), proxyBodyBytes-sent)
	if sent < proxyBodyHead {
		n = min(n, proxyBodyHead-sent)
	}
	for i := range n {
		p[i] = 'x'
	}
	b.sent.Add(n)
	return int(n), nil
}

// probeUnauthenticatedProxyBodies: 60 concurrent 30 MB bodies to the proxy's
// endpoints without ctxc's token, from two addresses, each with a provider
// key in Authorization: every one is refused 401 while its body waits after
// its first 64 KiB (so before the body is read), each refusal is counted on
// the HTTP port, the upstream gets nothing, and the server's RSS stays within
// 300 MB of what it was idle.
func probeUnauthenticatedProxyBodies(t *testing.T, report func(string, ...any)) {
	var upstreamGot atomic.Int32 // it must receive nothing
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { upstreamGot.Add(1) }))
	defer up.Close()
	s := startAbuseServer(t, "--auth-token-file", abuseTokens(t), "--http-listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0",
		"--proxy-openai-upstream", up.URL, "--proxy-anthropic-upstream", up.URL)
	base := "http://" + s.httpAddr(t)
	idle := procStatus(t, s.cmd.Process.Pid, "VmRSS:")
	clients := map[string]*http.Client{}
	for _, from := range []string{"127.0.0.2", "127.0.0.3"} {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
		// Keep-alive, as SDKs are: a request that says Connection: close is
		// one net/http's server closes at once after its answer, without the
		// wait that lets a client still sending read the answer.
		clients[from] = &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
	}
	paths := []string{"/v1/chat/completions", "/v1/messages"}
	var unauthorized, answeredFirst, failed atomic.Int32
	var mu sync.Mutex
	var other []string
	start := time.Now()
	var wg sync.WaitGroup
	for i := range 60 {
		wg.Go(func() {
			answered := make(chan struct{})
			body := &probeBody{answered: answered}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+paths[i%2], body)
			req.ContentLength = proxyBodyBytes
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer sk-provider-key")
			req.Header.Set("X-Api-Key", "sk-provider-key")
			resp, err := clients[[]string{"127.0.0.2", "127.0.0.3"}[i%2]].Do(req)
			// The body waits after its head until this answer: if no more of it
			// went, the server answered without waiting for it.
			if body.sent.Load() <= proxyBodyHead {
				answeredFirst.Add(1)
			}
			close(answered)
			if err != nil {
				failed.Add(1)
				mu.Lock()
				other = append(other, err.Error())
				mu.Unlock()
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusUnauthorized {
				unauthorized.Add(1)
			} else {
				mu.Lock()
				other = append(other, resp.Status)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	peak := peakRSS(t, s.cmd.Process.Pid)
	counted := unauthenticatedCount(t, s)
	report("%-24s 60 bodies of 30 MB without a token from 2 addresses: %d answered 401, %d before their body (after its first 64 KiB), %d failed, %d counted unauthenticated on the HTTP port, in %v; upstream got %d",
		"proxy-unauth-bodies", unauthorized.Load(), answeredFirst.Load(), failed.Load(), counted, took.Round(time.Millisecond), upstreamGot.Load())
	report("%-24s peak RSS %4d MiB, idle %d MiB (bound: idle + %d MiB)", "proxy-unauth-bodies", peak>>20, idle>>20, rssSlack>>20)
	if unauthorized.Load() != 60 || answeredFirst.Load() != 60 || counted != 60 || upstreamGot.Load() != 0 {
		t.Errorf("401: %d, answered before the body: %d, counted: %d, upstream: %d, other answers: %v", unauthorized.Load(), answeredFirst.Load(), counted, upstreamGot.Load(), other)
	}
	if peak-idle > rssSlack {
		t.Errorf("peak RSS %d MiB is %d MiB over idle", peak>>20, (peak-idle)>>20)
	}
}

// unauthenticatedCount is ctxc_unauthenticated_total{port="http"}, read
// from /metrics with the abuse token.
func unauthenticatedCount(t *testing.T, s *server) int {
	t.Helper()
	return metricInt(t, s, abuseToken, `ctxc_unauthenticated_total{port="http"}`)
}
