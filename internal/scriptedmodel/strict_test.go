package scriptedmodel_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/contextcompiler/ctxc/internal/scriptedmodel"
)

// thinkingScript thinks and calls read_file, then answers the result.
func thinkingScript(r *scriptedmodel.Request) (scriptedmodel.Reply, error) {
	if _, ok := r.LastToolResult(); ok {
		return scriptedmodel.Reply{Text: "Done."}, nil
	}
	return scriptedmodel.Reply{Thinking: "The file names the bug.", Text: "Reading it.",
		ToolCalls: []scriptedmodel.ToolCall{{Name: "read_file", Input: `{"path":"main.go"}`}}}, nil
}

// TestStrict: a strict server takes a conversation that gives back what it
// was given (thinking and its signature, encrypted reasoning, thought
// signatures) with the calls' results, and refuses, as the real APIs do,
// each way of giving it back wrong.
func TestStrict(t *testing.T) {
	sm := scriptedmodel.New(thinkingScript, scriptedmodel.Strict())
	srv := httptest.NewServer(sm)
	defer srv.Close()
	// first is the server's answer to a first request, as JSON.
	first := func(path, body string) map[string]json.RawMessage {
		code, got := post(t, srv.URL+path, body, nil)
		if code != http.StatusOK {
			t.Fatalf("%s: %d %s", path, code, got)
		}
		var v map[string]json.RawMessage
		if err := json.Unmarshal([]byte(got), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	edit := func(s string, pairs ...string) string { return strings.NewReplacer(pairs...).Replace(s) }

	// Anthropic: the assistant's content as given, then the result.
	msg := first("/v1/messages", `{"model":"m","max_tokens":100,"thinking":{"type":"enabled","budget_tokens":1024},"messages":[{"role":"user","content":"fix it"}]}`)
	var blocks []map[string]any
	_ = json.Unmarshal(msg["content"], &blocks)
	toolID := blocks[2]["id"].(string)
	anthropic := `{"model":"m","max_tokens":100,"thinking":{"type":"enabled","budget_tokens":1024},"messages":[{"role":"user","content":"fix it"},` +
		`{"role":"assistant","content":` + string(msg["content"]) + `},{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + toolID + `","content":"package main"}]}]}`
	thinking, _ := json.Marshal(blocks[0])

	// Responses, stateless: the output items as given, then the output.
	resp := first("/v1/responses", `{"model":"m","store":false,"include":["reasoning.encrypted_content"],"input":"fix it"}`)
	var items []map[string]any
	_ = json.Unmarshal(resp["output"], &items)
	callID := items[2]["call_id"].(string)
	output := string(resp["output"])
	responses := `{"model":"m","store":false,"input":[{"role":"user","content":"fix it"},` + output[1:len(output)-1] +
		`,{"type":"function_call_output","call_id":"` + callID + `","output":"package main"}]}`
	reasoning, _ := json.Marshal(items[0])

	// Gemini: the candidate's content as given, then the response.
	gem := first("/v1beta/models/g:generateContent", `{"contents":[{"role":"user","parts":[{"text":"fix it"}]}]}`)
	var cands []struct {
		Content json.RawMessage `json:"content"`
	}
	_ = json.Unmarshal(gem["candidates"], &cands)
	gemini := `{"contents":[{"role":"user","parts":[{"text":"fix it"}]},` + string(cands[0].Content) +
		`,{"role":"user","parts":[{"functionResponse":{"name":"read_file","response":{"output":"package main"}}}]}]}`
	var content struct {
		Parts []map[string]any `json:"parts"`
	}
	_ = json.Unmarshal(cands[0].Content, &content)
	sig := content.Parts[2]["thoughtSignature"].(string)

	// verified is, for a request taken, how many signatures it brings back.
	tests := []struct {
		name, path, body, want string
		verified               int
	}{
		{"anthropic as given", "/v1/messages", anthropic, "", 1},
		{"anthropic thinking left out", "/v1/messages", edit(anthropic, string(thinking)+",", ""), "must start with a thinking block", 0},
		{"anthropic thinking changed", "/v1/messages", edit(anthropic, "The file names the bug.", "The file names a bug."), "Invalid `signature` in `thinking` block", 0},
		{"anthropic thinking with another's signature", "/v1/messages", edit(anthropic, `"signature":"`, `"signature":"AAAA`), "Invalid `signature`", 0},
		{"anthropic result without its call", "/v1/messages", edit(anthropic, `"tool_use_id":"`+toolID, `"tool_use_id":"toolu_other`), "must have a corresponding `tool_use` block", 0},
		{"anthropic thinking off, left out", "/v1/messages", edit(anthropic, string(thinking)+",", "", `"thinking":{"type":"enabled","budget_tokens":1024},`, ""), "", 0},
		{"responses as given", "/v1/responses", responses, "", 1},
		{"responses reasoning left out", "/v1/responses", edit(responses, string(reasoning)+",", ""), "without its required 'reasoning' item", 0},
		{"responses reasoning changed", "/v1/responses", edit(responses, "The file names the bug.", "The file names a bug."), "could not be verified", 0},
		{"responses reasoning without its content", "/v1/responses", edit(responses, `"encrypted_content":`, `"x_encrypted_content":`), "Items are not persisted when `store` is set to false", 0},
		{"responses output without its call", "/v1/responses", edit(responses, `"call_id":"`+callID+`","output"`, `"call_id":"call_other","output"`), "No tool call found for function call output with call_id call_other", 0},
		{"gemini as given", "/v1beta/models/g:generateContent", gemini, "", 1},
		{"gemini signature left out", "/v1beta/models/g:generateContent", edit(gemini, `,"thoughtSignature":"`+sig+`"`, ""), "missing a thought_signature", 0},
		{"gemini signature changed", "/v1beta/models/g:generateContent", edit(gemini, sig, "AAAA"+sig[4:]), "Corrupted thought signature", 0},
		{"gemini response without its call", "/v1beta/models/g:generateContent", edit(gemini, `"functionResponse":{"name":"read_file"`, `"functionResponse":{"name":"other"`), "number of function response parts", 0},
		{"chat tool message without its call", "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"x"},{"role":"tool","tool_call_id":"c1","content":"y"}]}`, "must be a response to a preceeding message with 'tool_calls'", 0},
		{"chat call without its tool message", "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"x"},{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"user","content":"z"}]}`, "did not have response messages: c1", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, got := post(t, srv.URL+tt.path, tt.body, nil)
			if tt.want == "" {
				if code != http.StatusOK {
					t.Fatalf("refused: %d %s\n%s", code, got, tt.body)
				}
				reqs := sm.Requests()
				if last := reqs[len(reqs)-1]; last.Verified != tt.verified {
					t.Errorf("%d signatures verified, want %d", last.Verified, tt.verified)
				}
				return
			}
			if code != http.StatusBadRequest || !strings.Contains(got, tt.want) {
				t.Fatalf("%d %s, want 400 saying %q\n%s", code, got, tt.want, tt.body)
			}
			reqs := sm.Requests()
			if last := reqs[len(reqs)-1]; !strings.Contains(last.Rejected, tt.want) {
				t.Errorf("recorded as rejected for %q", last.Rejected)
			}
		})
	}
}

// TestThinkingOn: a request asks the model to think in its provider's own
// setting, and only there.
func TestThinkingOn(t *testing.T) {
	tests := []struct {
		name, path, body string
		want             bool
	}{
		{"anthropic enabled", "/v1/messages", `{"model":"m","max_tokens":9,"thinking":{"type":"enabled","budget_tokens":1024},"messages":[{"role":"user","content":"x"}]}`, true},
		{"anthropic adaptive", "/v1/messages", `{"model":"m","max_tokens":9,"thinking":{"type":"adaptive","display":"omitted"},"messages":[{"role":"user","content":"x"}]}`, true},
		{"anthropic disabled", "/v1/messages", `{"model":"m","max_tokens":9,"thinking":{"type":"disabled"},"messages":[{"role":"user","content":"x"}]}`, false},
		{"anthropic without", "/v1/messages", `{"model":"m","max_tokens":9,"messages":[{"role":"user","content":"x"}]}`, false},
		{"responses reasoning", "/v1/responses", `{"model":"m","reasoning":{"effort":"medium"},"input":"x"}`, true},
		{"responses encrypted content", "/v1/responses", `{"model":"m","include":["reasoning.encrypted_content"],"input":"x"}`, true},
		{"responses reasoning null", "/v1/responses", `{"model":"m","reasoning":null,"input":"x"}`, false},
		{"gemini thoughts", "/v1beta/models/g:generateContent", `{"generationConfig":{"thinkingConfig":{"includeThoughts":true,"thinkingBudget":8192}},"contents":[{"role":"user","parts":[{"text":"x"}]}]}`, true},
		{"gemini budget only", "/v1beta/models/g:generateContent", `{"generationConfig":{"thinkingConfig":{"thinkingBudget":0}},"contents":[{"role":"user","parts":[{"text":"x"}]}]}`, false},
		{"chat reasoning effort", "/v1/chat/completions", `{"model":"m","reasoning_effort":"high","messages":[{"role":"user","content":"x"}]}`, false},
	}
	sm := scriptedmodel.New(func(*scriptedmodel.Request) (scriptedmodel.Reply, error) {
		return scriptedmodel.Reply{Text: "OK."}, nil
	})
	srv := httptest.NewServer(sm)
	defer srv.Close()
	for i, tt := range tests {
		if code, got := post(t, srv.URL+tt.path, tt.body, nil); code != http.StatusOK {
			t.Fatalf("%s: %d %s", tt.name, code, got)
		}
		if got := sm.Requests()[i].ThinkingOn; got != tt.want {
			t.Errorf("%s: ThinkingOn %v, want %v", tt.name, got, tt.want)
		}
	}
}
