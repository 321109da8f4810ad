package scriptedmodel_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contextcompiler/ctxc/internal/scriptedmodel"
)

// weatherScript answers a weather question with a get_weather call, and the
// call's result with a sentence quoting it.
func weatherScript(r *scriptedmodel.Request) (scriptedmodel.Reply, error) {
	if res, ok := r.LastToolResult(); ok {
		return scriptedmodel.Reply{Text: "It is " + res.Content + " in Paris.", Usage: scriptedmodel.Usage{OutputTokens: 7}}, nil
	}
	if r.LastUserText() == "fail" {
		return scriptedmodel.Reply{}, errors.New("asked to fail")
	}
	return scriptedmodel.Reply{Thinking: "The user wants today's weather.", Text: "Let me check.", ToolCalls: []scriptedmodel.ToolCall{{Name: "get_weather", Input: `{"city":"Paris"}`}}}, nil
}

// sdkDir holds the providers' SDKs (package-lock.json pins them; make test
// runs npm ci there).
const sdkDir = "testdata/sdk"

// needNodeModules fails under CI=true, and skips otherwise, when the SDKs
// are not installed.
func needNodeModules(t *testing.T, dir string) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(dir, "node_modules"))
	}
	if err != nil {
		msg := "needs node and `npm ci` in " + dir + " (make test runs it): " + err.Error()
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return node
}

// The real SDKs (@anthropic-ai/sdk, openai, @google/genai) read every reply,
// JSON and streamed, of every protocol: thinking, text, tool calls with
// their inputs, stop reasons, usage, and an error in the provider's shape;
// and the turns they send back (thinking with its signature, reasoning,
// Gemini's thought signature) pass the strict server.
func TestRealSDKs(t *testing.T) {
	node := needNodeModules(t, sdkDir)
	sm := scriptedmodel.New(weatherScript, scriptedmodel.Strict())
	srv := httptest.NewServer(sm)
	defer srv.Close()
	cmd := exec.Command(node, "check.mjs")
	cmd.Dir = sdkDir
	cmd.Env = append(os.Environ(), "SCRIPTED_URL="+srv.URL)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node check.mjs: %v\n%s", err, stderr.String())
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	anthropicRound := map[string]any{
		"first":  map[string]any{"stop": "tool_use", "blocks": []any{"thinking", "text", "tool_use"}, "text": "Let me check.", "call": map[string]any{"name": "get_weather", "input": map[string]any{"city": "Paris"}}},
		"second": map[string]any{"stop": "end_turn", "text": "It is 18C and sunny in Paris.", "output_tokens": 7.0},
	}
	chatRound := map[string]any{
		"first":  map[string]any{"finish": "tool_calls", "text": "Let me check.", "call": map[string]any{"name": "get_weather", "input": map[string]any{"city": "Paris"}}},
		"second": map[string]any{"finish": "stop", "text": "It is 18C and sunny in Paris.", "completion_tokens": 7.0},
	}
	responsesRound := map[string]any{
		"first":  map[string]any{"items": []any{"reasoning", "message", "function_call"}, "text": "Let me check.", "call": map[string]any{"name": "get_weather", "input": map[string]any{"city": "Paris"}}},
		"second": map[string]any{"status": "completed", "text": "It is 18C and sunny in Paris.", "output_tokens": 7.0},
	}
	geminiRound := map[string]any{
		"first":  map[string]any{"finish": "STOP", "thought": true, "text": "Let me check.", "call": map[string]any{"name": "get_weather", "input": map[string]any{"city": "Paris"}}, "signed": true},
		"second": map[string]any{"finish": "STOP", "text": "It is 18C and sunny in Paris.", "output_tokens": 7.0},
	}
	want := map[string]any{
		"anthropic": anthropicRound, "anthropic_stream": anthropicRound, "count_tokens": true,
		"chat": chatRound, "chat_stream": chatRound, "responses": responsesRound, "responses_stream": responsesRound,
		"gemini": geminiRound, "gemini_stream": geminiRound,
		"error": map[string]any{"status": 500.0, "type": "api_error"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("what the SDKs read (-want +got):\n%s", d)
	}

	// Every request was recorded, without its credentials, and decoded.
	reqs := sm.Requests()
	if len(reqs) != 18 {
		t.Fatalf("%d requests recorded, want 18", len(reqs))
	}
	for _, r := range reqs {
		if r.Rejected != "" {
			t.Errorf("request %d (%s) was refused: %s", r.Seq, r.Path, r.Rejected)
		}
		for _, h := range []string{"Authorization", "X-Api-Key", "X-Goog-Api-Key"} {
			if r.Header.Get(h) != "" {
				t.Errorf("request %d (%s) recorded the credential header %s", r.Seq, r.Path, h)
			}
		}
		if bytes.Contains(r.Body, []byte("sk-")) {
			t.Errorf("request %d has a key in its body", r.Seq)
		}
	}
	byProtocol := map[scriptedmodel.Protocol]int{}
	for _, r := range reqs {
		byProtocol[r.Protocol]++
		if r.Protocol == scriptedmodel.AnthropicCountTokens || r.LastUserText() == "fail" {
			continue
		}
		if r.System != "You answer briefly." || !r.HasTool("get_weather") || r.LastUserText() != "What is the weather in Paris?" {
			t.Errorf("request %d (%s): system %q, tools %v, last user text %q", r.Seq, r.Protocol, r.System, r.Tools, r.LastUserText())
		}
		if len(r.Messages) == 3 {
			call := r.Messages[1].ToolCalls
			res, _ := r.LastToolResult()
			if len(call) != 1 || call[0].Name != "get_weather" || res.CallID != call[0].ID || res.Content != "18C and sunny" {
				t.Errorf("request %d (%s): the call %+v and its result %+v", r.Seq, r.Protocol, call, res)
			}
		}
	}
	wantCounts := map[scriptedmodel.Protocol]int{scriptedmodel.AnthropicMessages: 5, scriptedmodel.AnthropicCountTokens: 1, scriptedmodel.ChatCompletions: 4, scriptedmodel.Responses: 4, scriptedmodel.GeminiGenerateContent: 4}
	if d := cmp.Diff(wantCounts, byProtocol); d != "" {
		t.Errorf("requests by protocol (-want +got):\n%s", d)
	}
	if !strings.Contains(string(reqs[1].Body), `"tool_result"`) {
		t.Errorf("the recorded body is not what the SDK sent: %s", reqs[1].Body)
	}
}
