//go:build integration

package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/contextcompiler/ctxc/internal/providers/wire"
	"github.com/contextcompiler/ctxc/internal/scriptedmodel"
)

// thinkingTasks are the user's two tasks, each some steps of the thinking
// model: the second comes after the first's answer, so that the first's
// turns are an older turn of the conversation.
var thinkingTasks = []string{
	"The export job's tests fail at random; run step tests 1 through 7, one by one, until they all pass.",
	"Now run step tests 8 through 12 the same way.",
}

// thinkingSteps is how many tool calls the thinking model makes in all.
const thinkingSteps = 12

// thinkingModel thinks before each step of a task ("run step tests N
// through M"): it runs the step after the one the last tool output names
// (compaction leaves out the earlier ones), or the first when the user has
// just asked, and after the last it answers. What it thinks names the step,
// so that each signature is of its own text.
func thinkingModel(r *scriptedmodel.Request) (scriptedmodel.Reply, error) {
	var task []string
	for i := len(r.Messages) - 1; i >= 0 && task == nil; i-- {
		if r.Messages[i].Role == "user" {
			// The user's last task (a summary may come after it).
			task = regexp.MustCompile(`step tests (\d+) through (\d+)`).FindStringSubmatch(r.Messages[i].Text)
		}
	}
	if task == nil {
		return scriptedmodel.Reply{}, fmt.Errorf("no task in %q", r.LastUserText())
	}
	first, last := atoi(task[1]), atoi(task[2])
	step := first - 1
	if res, ok := r.LastToolResult(); ok {
		m := regexp.MustCompile(`TestExportStep(\d+)`).FindStringSubmatch(res.Content)
		if m == nil {
			return scriptedmodel.Reply{}, fmt.Errorf("the last tool output names no step: %.200s", res.Content)
		}
		step = atoi(m[1])
	}
	if step >= last {
		return scriptedmodel.Reply{Thinking: "Every check passed.", Text: fmt.Sprintf("Steps %d to %d pass.", first, last)}, nil
	}
	return scriptedmodel.Reply{Thinking: fmt.Sprintf("Step %d: the last output decides the next command.", step+1),
		Text:      fmt.Sprintf("Running check %d. ", step+1) + plan,
		ToolCalls: []scriptedmodel.ToolCall{{Name: "run_shell", Input: fmt.Sprintf(`{"cmd":"go test ./export/... -run Step%d"}`, step+1)}}}, nil
}

// plan is what the model writes before each call: long enough for the
// compile to cut it in the turns that have left the recent ones, so that
// ctxc changes the model's turns too, not only the tool outputs.
var plan = strings.Repeat("The export job reads every row of the ledger, groups the rows by account and writes one file per account; the step tests check each stage on its own, so the failing one names the stage to look at next. ", 8)

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// shellOutput is a long tool output, different at each step.
func shellOutput(step int) string {
	var b strings.Builder
	for line := range 60 {
		fmt.Fprintf(&b, "=== RUN TestExportStep%d/case_%02d\n--- PASS: TestExportStep%d/case_%02d (0.%02ds) rows=%d\n", step, line, step, line, line, step*1000+line)
	}
	return b.String()
}

// thinkingSession is how one provider's client runs a task: its body of a
// conversation, and, from an answer, the conversation to append (the
// model's turn as the SDKs keep it, then the results of its calls) and
// whether the model answered without a call (the task is done).
type thinkingSession struct {
	name, path string
	header     func(http.Header)
	body       func(conversation []json.RawMessage) []byte
	next       func(t *testing.T, answer []byte, step int) (more []json.RawMessage, done bool)
}

var thinkingSessions = []thinkingSession{
	{
		name: "anthropic signed thinking", path: "/v1/messages",
		header: func(h http.Header) { h.Set("X-Api-Key", plantedKey); h.Set("Anthropic-Version", "2023-06-01") },
		body: func(conv []json.RawMessage) []byte {
			return []byte(`{"model":"claude-sonnet-4-5","max_tokens":1024,"thinking":{"type":"enabled","budget_tokens":1024},` +
				`"system":[{"type":"text","text":"You fix the export job.","cache_control":{"type":"ephemeral"}}],` +
				`"tools":[{"name":"run_shell","input_schema":{"type":"object","properties":{"cmd":{"type":"string"}}}}],"messages":[` + joinJSON(conv) + `]}`)
		},
		next: func(t *testing.T, answer []byte, step int) ([]json.RawMessage, bool) {
			var a struct {
				Content json.RawMessage `json:"content"`
				Stop    string          `json:"stop_reason"`
			}
			mustUnmarshal(t, answer, &a)
			turn := json.RawMessage(`{"role":"assistant","content":` + string(a.Content) + `}`)
			if a.Stop != "tool_use" {
				return []json.RawMessage{turn}, true
			}
			var blocks []struct{ Type, ID string }
			mustUnmarshal(t, a.Content, &blocks)
			var results []string
			for _, b := range blocks {
				if b.Type == "tool_use" {
					results = append(results, `{"type":"tool_result","tool_use_id":"`+b.ID+`","content":`+jsonString(shellOutput(step))+`}`)
				}
			}
			return []json.RawMessage{turn, json.RawMessage(`{"role":"user","content":[` + strings.Join(results, ",") + `]}`)}, false
		},
	},
	{
		name: "responses encrypted reasoning", path: "/v1/responses",
		header: func(h http.Header) { h.Set("Authorization", "Bearer "+plantedKey) },
		body: func(conv []json.RawMessage) []byte {
			return []byte(`{"model":"gpt-4o","instructions":"You fix the export job.","store":false,"include":["reasoning.encrypted_content"],` +
				`"max_output_tokens":1024,"tools":[{"type":"function","name":"run_shell","parameters":{"type":"object"},"strict":false}],"input":[` + joinJSON(conv) + `]}`)
		},
		next: func(t *testing.T, answer []byte, step int) ([]json.RawMessage, bool) {
			var a struct {
				Output []json.RawMessage `json:"output"`
			}
			mustUnmarshal(t, answer, &a)
			out := append([]json.RawMessage(nil), a.Output...)
			calls := 0
			for _, item := range a.Output {
				var it wire.ResponsesItem
				mustUnmarshal(t, item, &it)
				if it.Type == "function_call" {
					calls++
					out = append(out, json.RawMessage(`{"type":"function_call_output","id":"fco_`+it.CallID+`","call_id":"`+it.CallID+`","output":`+jsonString(shellOutput(step))+`}`))
				}
			}
			return out, calls == 0
		},
	},
	{
		name: "gemini thought signatures", path: "/v1beta/models/gemini-2.5-pro:generateContent",
		header: func(h http.Header) { h.Set("X-Goog-Api-Key", plantedKey) },
		body: func(conv []json.RawMessage) []byte {
			return []byte(`{"systemInstruction":{"parts":[{"text":"You fix the export job."}]},"generationConfig":{"maxOutputTokens":1024,"thinkingConfig":{"includeThoughts":true}},` +
				`"tools":[{"functionDeclarations":[{"name":"run_shell","parametersJsonSchema":{"type":"object"}}]}],"contents":[` + joinJSON(conv) + `]}`)
		},
		next: func(t *testing.T, answer []byte, step int) ([]json.RawMessage, bool) {
			var a struct {
				Candidates []struct {
					Content json.RawMessage `json:"content"`
				} `json:"candidates"`
			}
			mustUnmarshal(t, answer, &a)
			var content wire.GeminiContent
			mustUnmarshal(t, a.Candidates[0].Content, &content)
			var responses []string
			for _, p := range content.Parts {
				if p.FunctionCall != nil {
					// As Gemini CLI does, the client gives the call an id for its response.
					responses = append(responses, `{"functionResponse":{"id":"`+fmt.Sprintf("%s-%d", p.FunctionCall.Name, step)+`","name":"`+p.FunctionCall.Name+`","response":{"output":`+jsonString(shellOutput(step))+`}}}`)
				}
			}
			if len(responses) == 0 {
				return []json.RawMessage{a.Candidates[0].Content}, true
			}
			return []json.RawMessage{a.Candidates[0].Content, json.RawMessage(`{"role":"user","parts":[` + strings.Join(responses, ",") + `]}`)}, false
		},
	},
}

func joinJSON(elems []json.RawMessage) string {
	parts := make([]string, len(elems))
	for i, e := range elems {
		parts[i] = string(e)
	}
	return strings.Join(parts, ",")
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func mustUnmarshal(t *testing.T, data []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%v: %s", err, data)
	}
}

// thinkingWindow is small beside a session's ~25,000 tokens: ctxc compacts
// it once a few steps have run.
const thinkingWindow = 9000

// TestProxyThinkingSessions runs two tasks of a model that thinks before
// every call through the real proxy, in a window a third of the session's
// size,
// against the scripted model in its strict mode, which refuses what the
// real APIs refuse: Anthropic's signed thinking (the last assistant turn
// that used tools must bring its thinking block back, unmodified),
// Responses' encrypted reasoning with store false (each reasoning item
// back as given, before the calls given with it; no output without its
// call), Gemini's thought signatures (each function call of the current
// turn with the signature given with it). Each client sends the model's
// turns back as the SDKs keep them. Every request reaches the model and
// none is refused, compaction rewrites the later ones, and the tasks end.
func TestProxyThinkingSessions(t *testing.T) {
	t.Parallel()
	sm := scriptedmodel.New(thinkingModel, scriptedmodel.Strict())
	up := httptest.NewServer(sm)
	t.Cleanup(up.Close)
	_, base := startProxyServer(t, map[string]string{"openai": up.URL, "anthropic": up.URL, "gemini": up.URL})
	for _, sess := range thinkingSessions {
		t.Run(sess.name, func(t *testing.T) {
			conv := []json.RawMessage{userTurn(sess.path, thinkingTasks[0])}
			rewritten, task := 0, 0
			for step := 1; ; step++ {
				if step > thinkingSteps+len(thinkingTasks) {
					t.Fatalf("the tasks did not end after %d steps", step-1)
				}
				req, err := http.NewRequest(http.MethodPost, base+sess.path, bytes.NewReader(sess.body(conv)))
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("X-Ctxc-Max-Context-Tokens", strconv.Itoa(thinkingWindow))
				sess.header(req.Header)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				answer, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil {
					t.Fatal(err)
				}
				if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Ctxc-Error") != "" {
					t.Fatalf("step %d: HTTP %d (forwarded %s, ctxc error %q): %s", step, resp.StatusCode,
						resp.Header.Get("X-Ctxc-Forwarded"), resp.Header.Get("X-Ctxc-Error"), answer)
				}
				if resp.Header.Get("X-Ctxc-Forwarded") == "rewritten" {
					rewritten++
				}
				more, done := sess.next(t, answer, step)
				conv = append(conv, more...)
				if done {
					if task++; task == len(thinkingTasks) {
						break
					}
					conv = append(conv, userTurn(sess.path, thinkingTasks[task]))
				}
			}
			t.Logf("%d requests rewritten by ctxc", rewritten)
			if rewritten < 4 {
				t.Errorf("ctxc rewrote %d requests: the session did not test what compaction keeps", rewritten)
			}
		})
	}
	for _, r := range sm.Requests() {
		if r.Rejected != "" {
			t.Errorf("the strict model refused request %d (%s): %s", r.Seq, r.Protocol, r.Rejected)
		}
		if err := idsIntact(r); err != nil {
			t.Errorf("request %d (%s): %v", r.Seq, r.Protocol, err)
		}
	}
}

// userTurn is a task as a client of the endpoint at path sends it.
func userTurn(path, task string) json.RawMessage {
	if strings.Contains(path, ":generateContent") {
		return json.RawMessage(`{"role":"user","parts":[{"text":` + jsonString(task) + `}]}`)
	}
	return json.RawMessage(`{"role":"user","content":` + jsonString(task) + `}`)
}

// idsIntact checks what the strict model does not refuse but a client needs
// back: each Responses output keeps the id its client gave it (fco_ and its
// call's id), each Gemini functionResponse the id its client gave it, and
// each Gemini model turn's first function call its thought signature.
func idsIntact(r *scriptedmodel.Request) error {
	switch r.Protocol {
	case scriptedmodel.Responses:
		var b wire.ResponsesRequest
		var items []wire.ResponsesItem
		if err := json.Unmarshal(r.Body, &b); err != nil {
			return err
		}
		if err := json.Unmarshal(b.Input, &items); err != nil {
			return err
		}
		for i, it := range items {
			if it.Type == "function_call_output" && it.ID != "fco_"+it.CallID {
				return fmt.Errorf("input[%d]: the output of %s has id %q, its client gave it %q", i, it.CallID, it.ID, "fco_"+it.CallID)
			}
		}
	case scriptedmodel.GeminiGenerateContent:
		var b wire.GeminiRequest
		if err := json.Unmarshal(r.Body, &b); err != nil {
			return err
		}
		for i, c := range b.Contents {
			first := true
			for j, p := range c.Parts {
				if p.FunctionResponse != nil && !strings.HasPrefix(p.FunctionResponse.ID, "run_shell-") {
					return fmt.Errorf("contents[%d].parts[%d]: the functionResponse lost its id (%q)", i, j, p.FunctionResponse.ID)
				}
				if p.FunctionCall != nil {
					if first && p.ThoughtSignature == "" {
						return fmt.Errorf("contents[%d].parts[%d]: the functionCall lost its thought signature", i, j)
					}
					first = false
				}
			}
		}
	}
	return nil
}
