package scriptedmodel_test

import (
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contextcompiler/ctxc/internal/scriptedmodel"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func post(t *testing.T, url, body string, header map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(out)
}

// The wire form of each protocol's reply, JSON and streamed, is kept in
// golden files (go test -update rewrites them): the event sequences the
// package doc promises, byte for byte.
func TestReplyWireForms(t *testing.T) {
	reply := scriptedmodel.Reply{Thinking: "The build output names the file.", Text: "I will read the file the compiler names.",
		ToolCalls: []scriptedmodel.ToolCall{{Name: "Read", Input: `{"file_path":"internal/store/store.go"}`}, {Name: "apply_patch", Input: "*** Begin Patch\n*** End Patch\n"}}}
	srv := httptest.NewServer(scriptedmodel.New(func(*scriptedmodel.Request) (scriptedmodel.Reply, error) { return reply, nil }))
	defer srv.Close()
	tests := []struct {
		name, path, body string
	}{
		{"anthropic.json", "/v1/messages", `{"model":"claude-sonnet-4-5","max_tokens":100,"messages":[{"role":"user","content":"fix it"}]}`},
		{"anthropic.sse", "/v1/messages?beta=true", `{"model":"claude-sonnet-4-5","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"fix it"}]}`},
		{"chat.json", "/v1/chat/completions", `{"model":"gpt-4o","messages":[{"role":"user","content":"fix it"}]}`},
		{"chat.sse", "/v1/chat/completions", `{"model":"gpt-4o","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"fix it"}]}`},
		{"responses.json", "/v1/responses", `{"model":"gpt-5","input":"fix it","tools":[{"type":"function","name":"Read"},{"type":"custom","name":"apply_patch"}]}`},
		{"responses.sse", "/api/v1/responses", `{"model":"gpt-5","stream":true,"input":"fix it","tools":[{"type":"function","name":"Read"},{"type":"custom","name":"apply_patch"}]}`},
		{"responses-encrypted.json", "/v1/responses", `{"model":"gpt-5","store":false,"include":["reasoning.encrypted_content"],"input":"fix it","tools":[{"type":"function","name":"Read"}]}`},
		{"gemini.json", "/v1beta/models/gemini-2.5-pro:generateContent", `{"contents":[{"role":"user","parts":[{"text":"fix it"}]}]}`},
		{"gemini.sse", "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse", `{"contents":[{"role":"user","parts":[{"text":"fix it"}]}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, got := post(t, srv.URL+tt.path, tt.body, nil)
			if code != http.StatusOK {
				t.Fatalf("status %d: %s", code, got)
			}
			golden := filepath.Join("testdata", tt.name+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(string(want), got); d != "" {
				t.Errorf("(-%s +got):\n%s", golden, d)
			}
		})
	}
}

// Every request is decoded into the neutral view, whatever its protocol.
func TestDecode(t *testing.T) {
	tests := []struct {
		name, path, body string
		want             []scriptedmodel.Turn
		system           string
	}{
		{
			name: "anthropic blocks", path: "/v1/messages",
			body: `{"model":"m","system":[{"type":"text","text":"Be brief."}],"messages":[{"role":"user","content":[{"type":"text","text":"build it"}]},` +
				`{"role":"assistant","content":[{"type":"thinking","thinking":"x","signature":"s"},{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"go build ./..."}}]},` +
				`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":[{"type":"text","text":"./a.go:3:2: undefined: x"}]}]}]}`,
			system: "Be brief.",
			want: []scriptedmodel.Turn{{Role: "user", Text: "build it"},
				{Role: "assistant", ToolCalls: []scriptedmodel.ToolCall{{ID: "t1", Name: "Bash", Input: `{"command":"go build ./..."}`}}},
				{Role: "user", ToolResults: []scriptedmodel.ToolResult{{CallID: "t1", Content: "./a.go:3:2: undefined: x", IsError: true}}}},
		},
		{
			name: "chat with two tool messages", path: "/v1/chat/completions",
			body: `{"model":"m","messages":[{"role":"developer","content":"Be brief."},{"role":"user","content":"go"},` +
				`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"a","arguments":"{}"}},{"id":"c2","type":"function","function":{"name":"b","arguments":"{}"}}]},` +
				`{"role":"tool","tool_call_id":"c1","content":"one"},{"role":"tool","tool_call_id":"c2","content":[{"type":"text","text":"two"}]}]}`,
			system: "Be brief.",
			want: []scriptedmodel.Turn{{Role: "user", Text: "go"},
				{Role: "assistant", ToolCalls: []scriptedmodel.ToolCall{{ID: "c1", Name: "a", Input: "{}"}, {ID: "c2", Name: "b", Input: "{}"}}},
				{Role: "user", ToolResults: []scriptedmodel.ToolResult{{CallID: "c1", Content: "one"}, {CallID: "c2", Content: "two"}}}},
		},
		{
			name: "responses items", path: "/v1/responses",
			body: `{"model":"m","instructions":"Be brief.","input":[{"type":"message","role":"developer","content":[{"type":"input_text","text":"Sandbox: none."}]},` +
				`{"type":"message","role":"user","content":[{"type":"input_text","text":"fix"}]},{"type":"reasoning","summary":[]},` +
				`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Patching."}]},{"type":"custom_tool_call","call_id":"c1","name":"apply_patch","input":"*** Begin Patch"},` +
				`{"type":"custom_tool_call_output","call_id":"c1","output":"Success."},{"type":"function_call","call_id":"c2","name":"shell","arguments":"{\"command\":[\"go\",\"test\"]}"},` +
				`{"type":"function_call_output","call_id":"c2","output":"ok"}]}`,
			system: "Be brief.\n\nSandbox: none.",
			want: []scriptedmodel.Turn{{Role: "user", Text: "fix"},
				{Role: "assistant", Text: "Patching.", ToolCalls: []scriptedmodel.ToolCall{{ID: "c1", Name: "apply_patch", Input: "*** Begin Patch"}}},
				{Role: "user", ToolResults: []scriptedmodel.ToolResult{{CallID: "c1", Content: "Success."}}},
				{Role: "assistant", ToolCalls: []scriptedmodel.ToolCall{{ID: "c2", Name: "shell", Input: `{"command":["go","test"]}`}}},
				{Role: "user", ToolResults: []scriptedmodel.ToolResult{{CallID: "c2", Content: "ok"}}}},
		},
	}
	tests = append(tests, struct {
		name, path, body string
		want             []scriptedmodel.Turn
		system           string
	}{
		name: "gemini contents", path: "/v1beta/models/gemini-2.5-pro:generateContent",
		body: `{"systemInstruction":{"parts":[{"text":"Be brief."}]},"contents":[{"role":"user","parts":[{"text":"build it"}]},` +
			`{"role":"model","parts":[{"text":"x","thought":true},{"functionCall":{"name":"run","args":{"cmd":"go build"}},"thoughtSignature":"c2ln"}]},` +
			`{"role":"user","parts":[{"functionResponse":{"id":"r1","name":"run","response":{"output":"ok"}}}]}]}`,
		system: "Be brief.",
		want: []scriptedmodel.Turn{{Role: "user", Text: "build it"},
			{Role: "assistant", ToolCalls: []scriptedmodel.ToolCall{{ID: "run", Name: "run", Input: `{"cmd":"go build"}`}}},
			{Role: "user", ToolResults: []scriptedmodel.ToolResult{{CallID: "r1", Content: "ok"}}}},
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *scriptedmodel.Request
			srv := httptest.NewServer(scriptedmodel.New(func(r *scriptedmodel.Request) (scriptedmodel.Reply, error) {
				got = r
				return scriptedmodel.Reply{Text: "ok"}, nil
			}))
			defer srv.Close()
			if code, body := post(t, srv.URL+tt.path, tt.body, nil); code != http.StatusOK {
				t.Fatalf("status %d: %s", code, body)
			}
			if d := cmp.Diff(tt.want, got.Messages); d != "" {
				t.Errorf("messages (-want +got):\n%s", d)
			}
			if got.System != tt.system {
				t.Errorf("system %q, want %q", got.System, tt.system)
			}
		})
	}
}

// Bad requests are answered 4xx in the provider's error shape, naming the
// field, and recorded without the credentials they carried.
func TestBadRequests(t *testing.T) {
	called := false
	sm := scriptedmodel.New(func(*scriptedmodel.Request) (scriptedmodel.Reply, error) {
		called = true
		return scriptedmodel.Reply{}, nil
	})
	srv := httptest.NewServer(sm)
	defer srv.Close()
	tests := []struct {
		path, body string
		code       int
		wantInBody string
	}{
		{"/v1/messages", `{"model":"m","messages":[{"role":"tool","content":"x"}]}`, 400, `messages[0].role: \"tool\" is not user, assistant or system`},
		{"/v1/messages", `not json`, 400, `"type":"invalid_request_error"`},
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":7}]}`, 400, `messages[0].content: expected a string or an array of content blocks`},
		{"/v1/responses", `{"input":[{"type":"function_call_output","call_id":"c","output":{}}]}`, 400, `input[0].output`},
		{"/v1/models", `{}`, 404, `no such endpoint: POST /v1/models`},
		{"/v1/messages", ``, 400, `the body is empty`},
	}
	for _, tt := range tests {
		code, body := post(t, srv.URL+tt.path, tt.body, map[string]string{"X-Api-Key": "secret", "Authorization": "Bearer secret", "Anthropic-Version": "2023-06-01"})
		if code != tt.code || !strings.Contains(body, tt.wantInBody) {
			t.Errorf("%s %s: %d %s; want %d with %q", tt.path, tt.body, code, body, tt.code, tt.wantInBody)
		}
	}
	if called {
		t.Error("the script was asked about a bad request")
	}
	reqs := sm.Requests()
	if len(reqs) != len(tests) {
		t.Fatalf("%d recorded, want %d", len(reqs), len(tests))
	}
	for _, r := range reqs {
		if r.Header.Get("X-Api-Key") != "" || r.Header.Get("Authorization") != "" || r.Header.Get("Anthropic-Version") != "2023-06-01" {
			t.Errorf("request %d headers: %v", r.Seq, r.Header)
		}
	}
}
