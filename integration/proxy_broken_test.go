//go:build integration

package integration

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc/credentials"
)

// breakingUpstream is a provider in the test that begins every streamed
// answer in its provider's protocol (OpenAI Chat Completions chunks,
// Anthropic Messages events), sends three chunks, and closes its connection
// without the stream's end ([DONE], message_stop).
type breakingUpstream struct {
	*httptest.Server
	mu     sync.Mutex
	broken int
}

func newBreakingUpstream(t *testing.T) *breakingUpstream {
	u := &breakingUpstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(u.serve))
	t.Cleanup(u.Close)
	return u
}

// breakingChunks are the three chunks each protocol's stream gets.
var breakingChunks = map[string][]string{
	"/v1/chat/completions": {
		`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1764633600,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}` + "\n\n",
		`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1764633600,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"Oslo is"},"finish_reason":null}]}` + "\n\n",
		`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1764633600,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":" cold"},"finish_reason":null}]}` + "\n\n",
	},
	"/v1/messages": {
		"event: message_start\ndata: " + `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":1}}}` + "\n\n",
		"event: content_block_start\ndata: " + `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n\n",
		"event: content_block_delta\ndata: " + `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Oslo is cold"}}` + "\n\n",
	},
}

func (u *breakingUpstream) serve(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	chunks, ok := breakingChunks[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for _, c := range chunks {
		_, _ = io.WriteString(w, c)
		w.(http.Flusher).Flush()
	}
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(fmt.Sprintf("hijacking the upstream's connection: %v", err))
	}
	conn.Close()
	u.mu.Lock()
	u.broken++
	u.mu.Unlock()
}

// TestBrokenStreamRaisesInTheOfficialSDKs: an upstream that breaks its
// stream off after three chunks: through ctxc, the official openai and
// @anthropic-ai/sdk packages from npm raise an error, iterating the raw
// stream and through their stream helpers, after the text of the chunks
// that came (openai: the connection's "terminated"; Anthropic: its error
// event, which ctxc sends before it aborts, as an APIError naming ctxc); ctxc does not end the answer as if it were whole (when it did,
// the stream helpers noticed the missing end themselves, but iterating the
// raw stream ended without an error). The log says the upstream broke off.
func TestBrokenStreamRaisesInTheOfficialSDKs(t *testing.T) {
	dir := needProxyClients(t)
	up := newBreakingUpstream(t)
	s, base := startProxyServer(t, map[string]string{"openai": up.URL, "anthropic": up.URL})
	var got map[string]struct {
		Raised               bool
		Error, Message, Seen string
	}
	runNode(t, dir, "broken-stream.mjs", []string{"OPENAI_BASE_URL=" + base + "/v1", "OPENAI_API_KEY=" + plantedKey,
		"ANTHROPIC_BASE_URL=" + base, "ANTHROPIC_API_KEY=" + plantedKey}, &got)
	for _, name := range []string{"openaiIterate", "openaiHelper", "anthropicIterate", "anthropicHelper"} {
		r, ok := got[name]
		switch {
		case !ok:
			t.Errorf("%s: not run", name)
		case !r.Raised:
			t.Errorf("%s: the stream ended without an error after %q", name, r.Seen)
		case !strings.HasSuffix(r.Seen, "cold"):
			t.Errorf("%s: raised %s %q after %q, want it after the chunks that came", name, r.Error, r.Message, r.Seen)
		case strings.HasPrefix(name, "anthropic") && (r.Error != "APIError" || !strings.Contains(r.Message, "ctxc: the anthropic upstream broke off its answer")):
			t.Errorf("%s: raised %s %q, want Anthropic's error event as an APIError naming ctxc", name, r.Error, r.Message)
		default:
			t.Logf("%s raised %s %q after %q", name, r.Error, r.Message, r.Seen)
		}
	}
	up.mu.Lock()
	broken := up.broken
	up.mu.Unlock()
	if broken != 4 {
		t.Errorf("the upstream broke %d streams, want 4", broken)
	}
	if n := strings.Count(s.logs.String(), `UPSTREAM_BROKE_OFF`); n != 4 {
		t.Errorf("%d calls logged as broken off, want 4:\n%s", n, s.logs)
	}
}

// TestBrokenStreamOverHTTP2: over HTTPS with HTTP/2, an answer the upstream
// broke off after three chunks reaches the client as its three chunks and
// then a reset stream, an error, not the stream's clean end.
func TestBrokenStreamOverHTTP2(t *testing.T) {
	up := newBreakingUpstream(t)
	ca := newTestCA(t, "ctxc-test-ca")
	certFile, keyFile := ca.issue(t, "ctxc", true)
	s := launch(t, launchOptions{args: []string{"--tls-cert", certFile, "--tls-key", keyFile, "--http-listen", "127.0.0.1:0",
		"--proxy-openai-upstream", up.URL}, creds: credentials.NewTLS(clientTLS(t, ca, "", ""))})
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: clientTLS(t, ca, "", ""), ForceAttemptHTTP2: true}}
	body := `{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"What is the weather in Oslo?"}]}`
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "https://"+s.httpAddr(t)+"/v1/chat/completions", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if resp.ProtoMajor != 2 || resp.StatusCode != http.StatusOK || string(got) != strings.Join(breakingChunks["/v1/chat/completions"], "") || err == nil {
		t.Fatalf("%s %d, read error %v after %q; want HTTP/2 200, the three chunks, then an error", resp.Proto, resp.StatusCode, err, got)
	}
	t.Logf("the client read the three chunks, then: %v", err)
}

// TestProxyTokenWithTheOfficialSDKs: when ctxc has bearer tokens, the
// official openai and @anthropic-ai/sdk clients with only their provider
// key are refused with the provider's 401, which they raise as their
// AuthenticationError, before anything goes upstream; with ctxc's token in
// X-Ctxc-Token (their default headers) they get the model's answer.
func TestProxyTokenWithTheOfficialSDKs(t *testing.T) {
	dir := needProxyClients(t)
	up := newScriptedUpstream(t, nil)
	const token = "0123456789abcdef0123"
	tokens := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte("agent "+token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, base := startProxyServer(t, map[string]string{"openai": up.URL, "anthropic": up.URL}, "--auth-token-file", tokens)
	var got map[string]struct {
		Answer, Error, Message string
		Status                 int
	}
	runNode(t, dir, "token.mjs", []string{"OPENAI_BASE_URL=" + base + "/v1", "OPENAI_API_KEY=" + plantedKey,
		"ANTHROPIC_BASE_URL=" + base, "ANTHROPIC_API_KEY=" + plantedKey, "CTXC_TOKEN=" + token}, &got)
	for _, name := range []string{"openaiWithout", "anthropicWithout"} {
		if r := got[name]; r.Error != "AuthenticationError" || r.Status != http.StatusUnauthorized || !strings.Contains(r.Message, "X-Ctxc-Token") {
			t.Errorf("%s: %+v, want AuthenticationError 401 naming X-Ctxc-Token", name, r)
		}
	}
	for _, name := range []string{"openaiWith", "anthropicWith"} {
		if r := got[name]; r.Answer != "OK." {
			t.Errorf("%s: %+v, want the model's answer", name, r)
		}
	}
	if n := len(up.requests()); n != 2 {
		t.Errorf("the upstream got %d requests, want the 2 with ctxc's token", n)
	}
	if !strings.Contains(s.logs.String(), "unauthenticated request refused") || strings.Contains(s.logs.String(), plantedKey) {
		t.Errorf("no refusal logged, or the provider key was:\n%s", s.logs)
	}
	req, err := http.NewRequest(http.MethodGet, s.metricsURL(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	scrape, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(scrape), `ctxc_unauthenticated_total{port="http"} 2`+"\n") || strings.Contains(string(scrape), plantedKey) {
		t.Errorf("the metrics do not count the 2 refusals on the HTTP port, or hold the provider key:\n%s", scrape)
	}
}
