package providers

import (
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contextcompiler/ctxc/internal/statetest"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

func TestImportErrors(t *testing.T) {
	tests := []struct {
		name   string
		format agentstate.RenderFormat
		body   string
		want   []agentstate.FieldViolation
	}{
		{"not JSON", agentstate.RenderOpenAI, `{"messages":`, []agentstate.FieldViolation{{Field: "input_json", Description: "not valid JSON"}}},
		{"openai call without name", agentstate.RenderOpenAI,
			`{"messages":[{"role":"user","content":"x"},{"role":"user","content":"y"},{"role":"user","content":"z"},{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"","arguments":"{}"}}]}]}`,
			[]agentstate.FieldViolation{{Field: "input_json.messages[3].tool_calls[0].function.name", Description: "a tool call needs a function name"}}},
		{"openai wrong type", agentstate.RenderOpenAI, `{"messages":[{"role":7}]}`,
			[]agentstate.FieldViolation{{Field: "input_json.messages[0].role", Description: "expected string, got JSON number"}}},
		{"openai image in an assistant message", agentstate.RenderOpenAI, `{"messages":[{"role":"assistant","content":[{"type":"image_url","image_url":{"url":"https://example.com/a.png"}}]}]}`,
			[]agentstate.FieldViolation{{Field: "input_json.messages[0].content[0].type", Description: `unsupported content part "image_url" here`}}},
		{"openai function message without a function_call", agentstate.RenderOpenAI, `{"messages":[{"role":"user","content":"x"},{"role":"function","name":"f","content":"r"}]}`,
			[]agentstate.FieldViolation{{Field: "input_json.messages[1].role", Description: "a function message answers no function_call before it"}}},
		{"anthropic bad signature", agentstate.RenderAnthropic, `{"messages":[{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"not base64!"}]}]}`,
			[]agentstate.FieldViolation{{Field: "input_json.messages[0].content[0]", Description: "the signature must be standard base64"}}},
		{"anthropic unknown role", agentstate.RenderAnthropic, `{"messages":[{"role":"tool","content":"x"}]}`,
			[]agentstate.FieldViolation{{Field: "input_json.messages[0].role", Description: `unsupported role "tool" (want user, assistant or system)`}}},
		{"anthropic system message with an image", agentstate.RenderAnthropic, `{"messages":[{"role":"system","content":[{"type":"image"}]}]}`,
			[]agentstate.FieldViolation{{Field: "input_json.messages[0].content[0].type", Description: `only text blocks are supported here, got "image"`}}},
		{"gemini unpaired response", agentstate.RenderGemini, `{"contents":[{"role":"user","parts":[{"functionResponse":{"name":"f","response":{}}}]}]}`,
			[]agentstate.FieldViolation{{Field: "input_json.contents[0].parts[0].functionResponse.name", Description: `functionResponse "f" answers no functionCall of the previous model turn`}}},
		{"ollama unpaired tool", agentstate.RenderOllama, `{"messages":[{"role":"tool","content":"r","tool_name":"f"}]}`,
			[]agentstate.FieldViolation{{Field: "input_json.messages[0].tool_name", Description: `tool message "f" answers no tool call of the previous assistant message`}}},
		{"responses item without a type", agentstate.RenderOpenAIResponses, `{"input":[{"role":"user","content":"find it"},{"id":"ws_1","status":"completed"}]}`,
			[]agentstate.FieldViolation{{Field: "input_json.input[1].role", Description: `unsupported role "" (want user, assistant, system or developer)`}}},
		{"responses built-in tool output without its call's id", agentstate.RenderOpenAIResponses, `{"input":[{"type":"shell_call_output","output":[]}]}`,
			[]agentstate.FieldViolation{{Field: "input_json.input[0].call_id", Description: "a shell_call_output needs the id of its call"}}},
		{"responses output without call_id", agentstate.RenderOpenAIResponses, `{"input":[{"type":"function_call_output","output":"x"}]}`,
			[]agentstate.FieldViolation{{Field: "input_json.input[0].call_id", Description: "an output needs the call_id of its call"}}},
		{"unsupported format", agentstate.RenderNone, `{}`,
			[]agentstate.FieldViolation{{Field: "input_format", Description: "unsupported input format none"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Import(tt.format, []byte(tt.body))
			var inv *agentstate.InvalidArgumentError
			if !errors.As(err, &inv) || inv.Reason != ReasonInvalidInput {
				t.Fatalf("err = %#v, want InvalidArgumentError %s", err, ReasonInvalidInput)
			}
			if diff := cmp.Diff(tt.want, inv.Violations); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
		})
	}
}

func TestImportVariants(t *testing.T) {
	tests := []struct {
		name   string
		format agentstate.RenderFormat
		body   string
		want   *Imported
	}{
		{"openai developer prompt and text parts", agentstate.RenderOpenAI,
			`{"model":"gpt-4o","messages":[{"role":"developer","content":[{"type":"text","text":"Be brief."}]},{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AQI="}}]},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"x\":1}"}}]},{"role":"tool","tool_call_id":"c1","content":"[tool error] boom"}]}`,
			&Imported{Model: "gpt-4o", SystemPrompt: "Be brief.", Preamble: 1, Origins: origins(whole(1), whole(2), whole(3)), Messages: []agentstate.Message{
				msg("in-1", agentstate.RoleUser, text("a"), agentstate.Part{Kind: agentstate.PartImage, Image: agentstate.Image{Source: agentstate.ImageSourceData, Data: []byte{1, 2}, MediaType: "image/png"}}),
				msg("in-2", agentstate.RoleAssistant, call("c1", "f", `{"x":1}`)),
				msg("in-3", agentstate.RoleTool, result("c1", "f", "boom", true)),
			}}},
		{"anthropic string contents and block system", agentstate.RenderAnthropic,
			`{"system":[{"type":"text","text":"A"},{"type":"text","text":"B"}],"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{"_raw":"oops"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"r"}]},{"type":"text","text":"next"}]}]}`,
			&Imported{SystemPrompt: "A\nB", Origins: origins(whole(0), blocks(1, 0), blocks(2, 0), blocks(2, 1)), Messages: []agentstate.Message{
				msg("in-1", agentstate.RoleUser, text("hi")),
				msg("in-2", agentstate.RoleAssistant, call("t1", "f", "oops")),
				msg("in-3", agentstate.RoleTool, result("t1", "f", "r", false)),
				msg("in-4", agentstate.RoleUser, text("next")),
			}}},
		{"gemini synthesized ids paired by name", agentstate.RenderGemini,
			`{"contents":[{"role":"user","parts":[{"text":"go"}]},{"role":"model","parts":[{"functionCall":{"name":"a","args":{}}},{"functionCall":{"name":"b"}}]},{"role":"user","parts":[{"functionResponse":{"name":"b","response":{"result":42}}},{"functionResponse":{"name":"a","response":{"output":"A"}}}]}],"tools":[{"googleSearch":{}},{"functionDeclarations":[{"name":"a","parameters":{"type":"OBJECT"}}]}]}`,
			&Imported{Tools: []agentstate.ToolDefinition{{Name: "a", ParametersJSON: `{"type":"OBJECT"}`}}, Origins: origins(blocks(0, 0), blocks(1, 0, 1), blocks(2, 0), blocks(2, 1)),
				SyntheticCallIDs: map[string]bool{"gemini-call-1-0": true, "gemini-call-1-1": true}, Messages: []agentstate.Message{
					msg("in-1", agentstate.RoleUser, text("go")),
					msg("in-2", agentstate.RoleAssistant, call("gemini-call-1-0", "a", "{}"), call("gemini-call-1-1", "b", "{}")),
					msg("in-3", agentstate.RoleTool, result("gemini-call-1-1", "b", `{"result":42}`, false)),
					msg("in-4", agentstate.RoleTool, result("gemini-call-1-0", "a", "A", false)),
				}}},
		{"gemini responses with the client's ids for calls without", agentstate.RenderGemini,
			`{"contents":[{"role":"user","parts":[{"text":"go"}]},{"role":"model","parts":[{"functionCall":{"name":"a","args":{}},"thoughtSignature":"c2ln"}]},{"role":"user","parts":[{"functionResponse":{"id":"a-1712","name":"a","response":{"output":"A"}}}]}]}`,
			&Imported{Origins: origins(blocks(0, 0), blocks(1, 0), blocks(2, 0)),
				SyntheticCallIDs: map[string]bool{"gemini-call-1-0": true}, Messages: []agentstate.Message{
					msg("in-1", agentstate.RoleUser, text("go")),
					msg("in-2", agentstate.RoleAssistant, call("gemini-call-1-0", "a", "{}")),
					msg("in-3", agentstate.RoleTool, result("gemini-call-1-0", "a", "A", false)),
				}}},
		{"ollama without ids", agentstate.RenderOllama,
			`{"model":"llama3.1","messages":[{"role":"user","content":"go"},{"role":"assistant","content":"","thinking":"hm","tool_calls":[{"function":{"name":"a","arguments":{"k":"v"}}}]},{"role":"tool","content":"ok","tool_name":"a"}]}`,
			&Imported{Model: "llama3.1", Origins: origins(whole(0), whole(1), whole(2)), SyntheticCallIDs: map[string]bool{"ollama-call-1-0": true}, Messages: []agentstate.Message{
				msg("in-1", agentstate.RoleUser, text("go")),
				msg("in-2", agentstate.RoleAssistant, reasoning("hm", nil), call("ollama-call-1-0", "a", `{"k":"v"}`)),
				msg("in-3", agentstate.RoleTool, result("ollama-call-1-0", "a", "ok", false)),
			}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Import(tt.format, []byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func origins(refs ...[]Ref) [][]Ref { return refs }

// whole is the origin of a message read from the whole body message i.
func whole(i int) []Ref { return []Ref{{Message: i, Block: WholeMessage}} }

// blocks is the origin of a message read from blocks of the body message i.
func blocks(i int, blocks ...int) []Ref {
	out := make([]Ref, len(blocks))
	for k, b := range blocks {
		out[k] = Ref{Message: i, Block: b}
	}
	return out
}

func FuzzImport(f *testing.F) {
	f.Add(byte(1), []byte(`{"messages":[{"role":"assistant","tool_calls":[{"id":"c","function":{"name":"f","arguments":"x"}}]},{"role":"tool","tool_call_id":"c","content":[{"type":"text","text":"r"}]}]}`))
	f.Add(byte(2), []byte(`{"system":"s","messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"x","content":[{"type":"image"}]},{"type":"thinking","signature":"AQI="}]}]}`))
	f.Add(byte(3), []byte(`{"contents":[{"role":"model","parts":[{"functionCall":{"name":"f","args":[1]}}]},{"parts":[{"functionResponse":{"name":"f","response":null}},{"inlineData":{"data":"%%"}}]}]}`))
	f.Add(byte(4), []byte(`{"messages":[{"role":"tool","tool_name":"f"},{"role":"assistant","images":["??"],"tool_calls":[{"function":{"name":"f","arguments":"s"}}]}]}`))
	f.Add(byte(0), []byte("\x00not json"))
	f.Fuzz(func(t *testing.T, format byte, body []byte) {
		got, err := Import(agentstate.RenderFormat(format%6), body)
		if err == nil && got == nil {
			t.Fatal("nil result without error")
		}
		var inv *agentstate.InvalidArgumentError
		if err != nil && !errors.As(err, &inv) {
			t.Fatalf("error of type %T", err)
		}
	})
}

// TestImportResponsesCodexBody reads the Responses body Codex CLI sends
// (testdata/splice/openai_responses.json): instructions and the leading
// developer message are the system prompt; a turn's reasoning, message and
// calls are one assistant message; a custom tool call keeps its free-form
// input and is remembered as custom; function tools and custom tools are
// tools, the built-in web_search is not.
func TestImportResponsesCodexBody(t *testing.T) {
	body, err := os.ReadFile(filepath.Join("testdata", "splice", "openai_responses.json"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Import(agentstate.RenderOpenAIResponses, body)
	if err != nil {
		t.Fatal(err)
	}
	shell := `{"command":["bash","-lc","go test ./..."],"workdir":"/work/stock"}`
	patch := "*** Begin Patch\n*** Update File: reserve/reserve.go\n@@\n-\tn += released\n+\tn -= released\n*** End Patch"
	want := []agentstate.Message{
		msg("in-1", agentstate.RoleUser, text("<environment_context>\n  <cwd>/work/stock</cwd>\n  <shell>bash</shell>\n</environment_context>")),
		msg("in-2", agentstate.RoleUser, text("Make go test ./... pass.")),
		msg("in-3", agentstate.RoleAssistant, reasoning("**Running the tests**", []byte("gAAAAABoAAAAencrypted-one")), call("call_T1", "shell", shell)),
		msg("in-4", agentstate.RoleTool, result("call_T1", "shell", `{"output":"--- FAIL: TestReserve (0.00s)\n    reserve_test.go:31: got 3, want 2\nFAIL\n","metadata":{"exit_code":1,"duration_seconds":1.4}}`, false)),
		msg("in-5", agentstate.RoleAssistant, reasoning("", []byte("gAAAAABoAAAAencrypted-two")), text("Reserve double-counts released items; patching it."), call("call_P1", "apply_patch", patch)),
		msg("in-6", agentstate.RoleTool, result("call_P1", "apply_patch", "Success. Updated the following files:\nM reserve/reserve.go", false)),
		msg("in-7", agentstate.RoleAssistant, text("Fixed: Reserve subtracts released items. go test ./... passes.")),
		msg("in-8", agentstate.RoleUser, text("Also add a test for zero items.")),
	}
	if diff := cmp.Diff(want, got.Messages); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(origins(whole(1), whole(2), wholes(3, 4), wholes(5), wholes(6, 7, 8), wholes(9), wholes(10), wholes(11)), got.Origins); diff != "" {
		t.Errorf("origins (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(got.SystemPrompt, "You are Codex") || !strings.HasSuffix(got.SystemPrompt, "</permissions instructions>") || got.Preamble != 1 {
		t.Errorf("system prompt %q, preamble %d", got.SystemPrompt, got.Preamble)
	}
	if diff := cmp.Diff(map[string]bool{"call_P1": true}, got.CustomCalls); diff != "" {
		t.Errorf("custom calls (-want +got):\n%s", diff)
	}
	var tools []string
	for _, td := range got.Tools {
		tools = append(tools, td.Name)
	}
	if diff := cmp.Diff([]string{"shell", "apply_patch"}, tools); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

// wholes is the origin of a message read from the whole body messages (items) is.
func wholes(is ...int) []Ref {
	var out []Ref
	for _, i := range is {
		out = append(out, whole(i)...)
	}
	return out
}

// commonNameAndNullBodies are Chat Completions bodies whose names or values
// the fast decoder could read otherwise than encoding/json does.
var commonNameAndNullBodies = []string{
	`{"MODEL":"m","Messages":[{"ROLE":"user","Content":"hi"},{"Role":"assistant","Tool_Calls":[{"ID":"c","Function":{"NAME":"f","Arguments":"{}"}}]},{"role":"tool","TOOL_CALL_ID":"c","content":"r"}],"Max_Tokens":9}`,
	`{"messages":[{"role":"user","content":null,"tool_calls":null}],"max_tokens":null,"tools":[{"type":"function","function":{"name":"f","parameters":null}}]}`,
	`{"messages":[{"role":"user","content":"a","tool_call_id":null}],"tools":null,"model":null}`,
	`{"messages":[{"role":"user","content":"a"}],"toolcalls":[],"max-tokens":5,"maxtokens":6}`,
}

// FuzzOpenAICommonReadsAsImportOpenAI: whatever body the one-pass reading
// takes, it imports as the message-by-message reading does.
func FuzzOpenAICommonReadsAsImportOpenAI(f *testing.F) {
	for _, body := range commonNameAndNullBodies {
		f.Add([]byte(body))
	}
	f.Add([]byte(`{"messages":[{"role":"user","content":"a","role":"assistant"}]}`))
	f.Add([]byte(`{"messages":[{"role":"user","content":"\xff\xfe"}]}`))
	f.Add([]byte("{\"messages\":[{\"role\":\"user\",\"content\":\"\xff\"}]}"))
	f.Add([]byte(`{"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AA=="}}]}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		common, full := &importer{}, &importer{}
		if !importOpenAICommon(common, body) {
			return
		}
		importOpenAI(full, body)
		if diff := cmp.Diff(full, common, cmp.AllowUnexported(importer{})); diff != "" {
			t.Errorf("%q (-message by message +one pass):\n%s", body, diff)
		}
	})
}

// TestOpenAICommonReadsAsImportOpenAI: the one-pass reading of a Chat
// Completions body imports what the message-by-message reading does, for
// every body it takes (rendered examples, generated conversations, a
// client's), and declines those it does not, which the other reads.
func TestOpenAICommonReadsAsImportOpenAI(t *testing.T) {
	var bodies [][]byte
	for _, state := range goldenStates {
		body, _, err := Render(agentstate.RenderOpenAI, input(normalizedWork(state(t))))
		if err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, body)
	}
	for seed := int64(0); seed < 50; seed++ {
		body, _, err := Render(agentstate.RenderOpenAI, input(normalizedWork(statetest.Generate(rand.New(rand.NewSource(seed)), statetest.DefaultOptions()))))
		if err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, body)
	}
	client, err := os.ReadFile(filepath.Join("testdata", "splice", "openai.json"))
	if err != nil {
		t.Fatal(err)
	}
	bodies = append(bodies, client, []byte(`{"messages":[{"role":"assistant","tool_calls":[{"id":"","type":"function","function":{"name":"f","arguments":"{}"}}]}]}`))
	// Names in other cases match as encoding/json matches them, and nulls
	// read as it reads them.
	for _, body := range commonNameAndNullBodies {
		bodies = append(bodies, []byte(body))
	}
	for i, body := range bodies {
		common, full := &importer{}, &importer{}
		if !importOpenAICommon(common, body) {
			t.Errorf("body %d: the common reading declined it", i)
			continue
		}
		importOpenAI(full, body)
		if diff := cmp.Diff(full, common, cmp.AllowUnexported(importer{})); diff != "" {
			t.Errorf("body %d (-message by message +one pass):\n%s", i, diff)
		}
	}
	for _, body := range []string{
		`{"messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"AA=="}}]}]}`,
		`{"messages":[{"role":7}]}`,
		`{"messages":[{"role":"assistant","content":[{"type":"image_url","image_url":{"url":"https://x/y.png"}}]}]}`,
		`{"messages":[{"role":"user","content":[{"type":"text","text":null}]}]}`,
	} {
		if importOpenAICommon(&importer{}, []byte(body)) {
			t.Errorf("the common reading took %s", body)
		}
	}
}
