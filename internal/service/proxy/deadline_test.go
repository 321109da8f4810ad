package proxy

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// A call whose compile passes its deadline is ctxc's failure, not the
// upstream's: it is answered 504 in the provider's shape naming ctxc,
// nothing goes upstream (whatever on_compile_error says), and the log line
// gives the reason.
func TestCompilePastTheDeadlineNamesCtxc(t *testing.T) {
	const want = "ctxc: compiling the context took longer than the call's deadline"
	for _, tt := range []struct {
		upstream Upstream
		path     string
		body     string
		message  func(t *testing.T, body []byte) string
	}{
		{OpenAI, "/v1/chat/completions", chatBody, func(t *testing.T, body []byte) string {
			var e struct {
				Error struct{ Message, Type, Code string }
			}
			if err := json.Unmarshal(body, &e); err != nil || e.Error.Type != "server_error" || e.Error.Code != "ctxc_compile_timeout" {
				t.Errorf("not OpenAI's shape of a server error: %s", body)
			}
			return e.Error.Message
		}},
		{Anthropic, "/v1/messages", `{"model":"claude-sonnet-4-5","max_tokens":100,"messages":[{"role":"user","content":"hi"}]}`, func(t *testing.T, body []byte) string {
			var e struct {
				Type  string
				Error struct{ Type, Message string }
			}
			if err := json.Unmarshal(body, &e); err != nil || e.Type != "error" || e.Error.Type != "api_error" {
				t.Errorf("not Anthropic's shape of an API error: %s", body)
			}
			return e.Error.Message
		}},
	} {
		t.Run(string(tt.upstream), func(t *testing.T) {
			up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, `{}`) })
			h := startProxy(t, Config{Upstreams: map[Upstream]*url.URL{tt.upstream: up.base(t)}, OnCompileError: OnErrorForward,
				Timeout: 200 * time.Millisecond}, nil)
			// The block profile compiles until the call's context ends.
			resp, got := post(t, h.url+tt.path, tt.body, map[string]string{HeaderProfile: "block"})
			if resp.StatusCode != http.StatusGatewayTimeout || resp.Header.Get(headerError) != ReasonCompileDeadline {
				t.Errorf("HTTP %d, %s %q; want 504, %s", resp.StatusCode, headerError, resp.Header.Get(headerError), ReasonCompileDeadline)
			}
			if msg := tt.message(t, got); !strings.HasPrefix(msg, want) {
				t.Errorf("message %q, want it to start %q", msg, want)
			}
			if n := len(up.requests()); n != 0 {
				t.Errorf("the upstream got %d requests after the deadline passed, want none", n)
			}
			logs := h.logs.String()
			if !strings.Contains(logs, `"reason":"`+ReasonCompileDeadline+`"`) || strings.Contains(logs, "UPSTREAM") {
				t.Errorf("the log does not give the compile as the reason:\n%s", logs)
			}
		})
	}
}
