//go:build integration

package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/contextcompiler/ctxc/internal/testtools"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// plantedKey is a provider key the proxy tests send with every call: it must
// reach the upstream and appear nowhere else (logs, metrics, answers).
const plantedKey = "sk-planted-0d6b1e94c3a7f285"

// proxyClients is the npm package of the real clients the proxy tests
// drive (the OpenAI and Anthropic SDKs, Claude Code), installed by
// `make test` with npm ci.
var proxyClients = filepath.Join("testdata", "proxy-clients")

// needProxyClients fails a test when the clients are not installed.
func needProxyClients(t *testing.T) string {
	t.Helper()
	needProgram(t, "node", "make deps")
	dir := filepath.Join(repoRoot, "integration", proxyClients)
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "openai", "package.json")); err != nil {
		testtools.Missing(t, "the proxy tests' npm clients are not installed", "cd integration/"+proxyClients+" && npm ci")
	}
	return dir
}

// startProxyServer runs ctxc serve with its HTTP port, metrics and the
// given upstreams (flag name without --proxy- and -upstream, to URL); it
// returns the server and the proxy's base URL.
func startProxyServer(t *testing.T, upstreams map[string]string, args ...string) (*server, string) {
	t.Helper()
	all := []string{"--http-listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0"}
	for name, url := range upstreams {
		all = append(all, "--proxy-"+name+"-upstream", url)
	}
	s := startServer(t, append(all, args...)...)
	return s, "http://" + s.httpAddr(t)
}

// weatherModel is the scripted model the SDK tests talk to: asked a
// question with tools, it calls get_weather for Oslo; given a result, it
// answers with it; given a long build conversation, it names the error code
// it finds in what it was sent.
func weatherModel(req upstreamRequest) modelTurn {
	conv := req.Conversation
	if conv == nil || len(conv.Messages) == 0 {
		return modelTurn{Text: "OK."}
	}
	last := conv.Messages[len(conv.Messages)-1]
	text := last.Text()
	switch {
	case last.Role == agentstate.RoleTool:
		return modelTurn{Text: "Oslo now: " + last.Parts[0].ToolResult.Content}
	case strings.Contains(text, "ERR_NIGHTLY_42"):
		return modelTurn{Text: "The nightly build fails with ERR_NIGHTLY_42."}
	case strings.Contains(text, "weather") && len(conv.Tools) > 0:
		return modelTurn{Calls: []agentstate.ToolCall{{Name: "get_weather", ArgumentsJSON: `{"city":"Oslo"}`}}}
	}
	return modelTurn{Text: "OK."}
}

// runNode runs a script of the proxy clients' package with env and decodes
// the JSON it prints into out.
func runNode(t *testing.T, dir, script string, env []string, out any) {
	t.Helper()
	cmd := exec.Command("node", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("node %s: %v\nstdout:\n%s\nstderr:\n%s", script, err, stdout.String(), stderr.String())
		}
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("node %s did not finish\nstderr:\n%s", script, stderr.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		t.Fatalf("node %s printed %q: %v\nstderr:\n%s", script, stdout.String(), err, stderr.String())
	}
}

// TestProxyWithTheOfficialSDKs drives the openai and @anthropic-ai/sdk
// packages from npm through the proxy, with only their base URL changed:
// tool calls, streamed and not, the Responses API and count_tokens all work;
// a long conversation in a small window is rewritten and the SDK does not
// notice; a context that cannot fit is the provider's own error, which the
// SDK raises as its usual exception. Every request the upstream received
// passes its provider's validator, carries the caller's key, and the key
// appears in no log line, metric or answer of ctxc's.
func TestProxyWithTheOfficialSDKs(t *testing.T) {
	dir := needProxyClients(t)
	up := newScriptedUpstream(t, weatherModel)
	s, base := startProxyServer(t, map[string]string{"openai": up.URL, "anthropic": up.URL})

	t.Run("openai", func(t *testing.T) {
		before := len(up.requests())
		var got struct {
			Chat, ChatStream struct {
				Call      string
				Arguments map[string]string
				Answer    string
			}
			Responses struct{ Call, Answer string }
			Compacted struct {
				Answer, Forwarded, Compacted string
				Before, After                int
			}
			Refused struct {
				Error, Code, Type, Param string
				Status                   int
			}
		}
		runNode(t, dir, "openai.mjs", []string{"OPENAI_BASE_URL=" + base + "/v1", "OPENAI_API_KEY=" + plantedKey}, &got)
		for name, loop := range map[string]struct {
			Call      string
			Arguments map[string]string
			Answer    string
		}{"chat": got.Chat, "streamed chat": got.ChatStream} {
			if loop.Call != "get_weather" || loop.Arguments["city"] != "Oslo" || !strings.Contains(loop.Answer, `"celsius":-3`) {
				t.Errorf("%s: %+v", name, loop)
			}
		}
		if got.Responses.Call != "get_weather" || !strings.Contains(got.Responses.Answer, `"celsius":-3`) {
			t.Errorf("responses: %+v", got.Responses)
		}
		checkCompacted(t, got.Compacted.Answer, got.Compacted.Forwarded, got.Compacted.Compacted, got.Compacted.Before, got.Compacted.After)
		if diff := cmp.Diff(struct {
			Error, Code, Type, Param string
			Status                   int
		}{"BadRequestError", "context_length_exceeded", "invalid_request_error", "messages", http.StatusBadRequest}, got.Refused); diff != "" {
			t.Errorf("the refusal (-want +got):\n%s", diff)
		}
		// Two chat loops, one Responses loop, the compacted call; the refused one never left.
		checkUpstream(t, up.requests()[before:], map[string]int{"chat_completions": 5, "responses": 2})
	})

	t.Run("anthropic", func(t *testing.T) {
		before := len(up.requests())
		var got struct {
			Messages, MessagesStream struct {
				Call, Answer, Stop string
				Input              map[string]string
			}
			CountTokens struct {
				InputTokens int `json:"input_tokens"`
			}
			Compacted struct {
				Answer, Forwarded, Compacted string
				Before, After                int
			}
			Refused struct {
				Error, Type, Message string
				Status               int
			}
		}
		runNode(t, dir, "anthropic.mjs", []string{"ANTHROPIC_BASE_URL=" + base, "ANTHROPIC_API_KEY=" + plantedKey}, &got)
		for name, loop := range map[string]struct {
			Call, Answer, Stop string
			Input              map[string]string
		}{"messages": got.Messages, "streamed messages": got.MessagesStream} {
			if loop.Call != "get_weather" || loop.Input["city"] != "Oslo" || !strings.Contains(loop.Answer, `"celsius":-3`) || loop.Stop != "end_turn" {
				t.Errorf("%s: %+v", name, loop)
			}
		}
		if got.CountTokens.InputTokens <= 0 {
			t.Errorf("count_tokens: %+v", got.CountTokens)
		}
		checkCompacted(t, got.Compacted.Answer, got.Compacted.Forwarded, got.Compacted.Compacted, got.Compacted.Before, got.Compacted.After)
		if got.Refused.Error != "BadRequestError" || got.Refused.Status != http.StatusBadRequest || got.Refused.Type != "invalid_request_error" ||
			!strings.HasPrefix(got.Refused.Message, "prompt is too long: ") {
			t.Errorf("the refusal: %+v", got.Refused)
		}
		checkRefusalAddsUp(t, got.Refused.Message)
		reqs := up.requests()[before:]
		checkUpstream(t, reqs, map[string]int{"messages": 5, "count_tokens": 1})
		// The compacted call kept what ctxc does not own: thinking, the
		// system prompt's breakpoint, the tools.
		last := reqs[len(reqs)-1]
		for _, field := range []string{`"thinking":{"type":"enabled","budget_tokens":256}`, `"cache_control":{"type":"ephemeral"}`, `"name":"read_log"`} {
			if !bytes.Contains(last.Body, []byte(field)) {
				t.Errorf("the compacted body lost %s:\n%s", field, last.Body)
			}
		}
	})

	checkKeyStaysPut(t, s, nil)
}

// checkRefusalAddsUp: a refusal in the provider's shape names each part
// that must be kept with its size ("(ctxc: … (tokens: system prompt 1,234,
// tools 0, …))"), and the sizes add up to the tokens it says are needed.
func checkRefusalAddsUp(t *testing.T, message string) {
	t.Helper()
	var needed int
	if _, err := fmt.Sscanf(message, "prompt is too long: %d tokens", &needed); err != nil {
		t.Fatalf("the refusal %q does not say how many tokens are needed: %v", message, err)
	}
	_, list, ok := strings.Cut(message, "(tokens: ")
	if !ok {
		t.Fatalf("the refusal %q does not name the parts that must be kept", message)
	}
	list, _, _ = strings.Cut(list, ")")
	sum := 0
	for _, part := range strings.Split(list, ", ") {
		fields := strings.Fields(part)
		n, err := strconv.Atoi(strings.ReplaceAll(fields[len(fields)-1], ",", ""))
		if err != nil {
			t.Fatalf("the part %q of the refusal %q has no size", part, message)
		}
		sum += n
	}
	if sum != needed {
		t.Errorf("the parts of the refusal add up to %d, not the %d it says are needed: %s", sum, needed, message)
	}
}

// checkCompacted checks what the SDK saw of the long conversation's call:
// the model's answer, and headers saying ctxc rewrote and compacted it.
func checkCompacted(t *testing.T, answer, forwarded, compacted string, before, after int) {
	t.Helper()
	if answer != "The nightly build fails with ERR_NIGHTLY_42." || forwarded != "rewritten" || compacted != "true" || after >= before || after == 0 {
		t.Errorf("the long conversation: answer %q, forwarded %q, compacted %q, %d -> %d tokens", answer, forwarded, compacted, before, after)
	}
}

// checkUpstream checks the requests the upstream received: how many of each
// endpoint, each valid for its provider and carrying the caller's key (in
// x-api-key or as the bearer token, as the SDK sends it).
func checkUpstream(t *testing.T, reqs []upstreamRequest, want map[string]int) {
	t.Helper()
	got := map[string]int{}
	for i, r := range reqs {
		got[r.Endpoint]++
		if r.Invalid != "" {
			t.Errorf("request %d (%s) is invalid: %s\n%s", i, r.Endpoint, r.Invalid, r.Body)
		}
		if r.Header.Get("Authorization") != "Bearer "+plantedKey && r.Header.Get("X-Api-Key") != plantedKey {
			t.Errorf("request %d (%s) did not carry the caller's key: %v", i, r.Endpoint, r.Header)
		}
		for k := range r.Header {
			if strings.HasPrefix(k, "X-Ctxc-") {
				t.Errorf("request %d carried ctxc's own header %s upstream", i, k)
			}
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("requests by endpoint (-want +got):\n%s", diff)
	}
}

// checkKeyStaysPut: the planted key is in no log line of the server and no
// metric it exposes, nor in extra (answers a test collected).
func checkKeyStaysPut(t *testing.T, s *server, extra []string) {
	t.Helper()
	resp, err := http.Get(s.metricsURL(t))
	if err != nil {
		t.Fatal(err)
	}
	scrape, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for name, text := range map[string]string{"the server log": s.logs.String(), "the metrics": string(scrape), "the answers": strings.Join(extra, "\n")} {
		if strings.Contains(text, plantedKey) {
			t.Errorf("%s holds the provider key", name)
		}
	}
	if !strings.Contains(string(scrape), "ctxc_proxy_calls_total") {
		t.Error("the metrics hold no proxy calls")
	}
}
