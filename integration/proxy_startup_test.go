//go:build integration

package integration

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// proxyLine is a "proxy" start-up log line: one an API.
type proxyLine struct {
	API      string `json:"api"`
	Listen   string `json:"listen"`
	Upstream string `json:"upstream"`
}

// TestProxyStartupLines: with two upstreams, the server logs one line each,
// in a fixed order, naming the address its clients call (the HTTP port) and
// the upstream the calls go on to; a call to the logged address reaches the
// logged upstream. The line once named the HTTP port as the upstream
// (`upstream=openai base_url=http://127.0.0.1:8080`).
func TestProxyStartupLines(t *testing.T) {
	t.Parallel()
	openai, anthropic := newScriptedUpstream(t, nil), newScriptedUpstream(t, nil)
	s, base := startProxyServer(t, map[string]string{"openai": openai.URL, "anthropic": anthropic.URL})

	var got []proxyLine
	s.logs.mu.Lock()
	for _, line := range s.logs.lines {
		var entry struct {
			Msg string `json:"msg"`
			proxyLine
		}
		if json.Unmarshal([]byte(line), &entry) == nil && entry.Msg == "proxy" {
			got = append(got, entry.proxyLine)
		}
	}
	s.logs.mu.Unlock()
	want := []proxyLine{
		{API: "openai", Listen: base, Upstream: openai.URL},
		{API: "anthropic", Listen: base, Upstream: anthropic.URL},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("the proxy's start-up lines (-want +got):\n%s", diff)
	}

	for _, c := range []struct {
		line  proxyLine
		up    *scriptedUpstream
		other *scriptedUpstream
		path  string
		body  string
	}{
		{got[0], openai, anthropic, "/v1/chat/completions", `{"model": "gpt-4o", "messages": [{"role": "user", "content": "Hi"}]}`},
		{got[1], anthropic, openai, "/v1/messages", `{"model": "claude-sonnet-4-5", "max_tokens": 64, "messages": [{"role": "user", "content": "Hi"}]}`},
	} {
		before, otherBefore := len(c.up.requests()), len(c.other.requests())
		resp, err := http.Post(c.line.Listen+c.path, "application/json", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s %s: HTTP %d", c.line.API, c.path, resp.StatusCode)
		}
		if len(c.up.requests()) != before+1 || len(c.other.requests()) != otherBefore {
			t.Errorf("a %s call to %s reached %s %d times and the other upstream %d times; want once and never",
				c.line.API, c.line.Listen, c.line.Upstream, len(c.up.requests())-before, len(c.other.requests())-otherBefore)
		}
	}
}
