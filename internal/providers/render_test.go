package providers

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contextcompiler/ctxc/internal/providers/wire"
	"github.com/contextcompiler/ctxc/internal/statetest"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

var goldenStates = map[string]func(t testing.TB) *agentstate.State{
	"chat":              func(t testing.TB) *agentstate.State { return loadExample(t, "chat.json") },
	"coding_agent":      func(t testing.TB) *agentstate.State { return loadExample(t, "coding-agent.json") },
	"signed":            func(testing.TB) *agentstate.State { return signedState() },
	"leading_assistant": func(testing.TB) *agentstate.State { return leadingAssistantState() },
}

func TestGolden(t *testing.T) {
	for name, state := range goldenStates {
		for _, f := range formats {
			t.Run(f.String()+"_"+name, func(t *testing.T) {
				body, notes, err := Render(f, input(normalizedWork(state(t))))
				if err != nil {
					t.Fatal(err)
				}
				got := prettyJSON(t, body)
				if len(notes) > 0 {
					// Goldens are JSON; the notes go in a sibling file a reviewer reads with it.
					statetest.Golden(t, filepath.Join("testdata", f.String()+"_"+name+".notes"), strings.Join(notes, "\n")+"\n", *update)
				}
				statetest.Golden(t, filepath.Join("testdata", f.String()+"_"+name+".golden"), got, *update)
			})
		}
	}
}

func TestRenderRejects(t *testing.T) {
	badSchema := signedState()
	badSchema.Context.Tools[0].ParametersJSON = `["not", "an", "object"]`
	orphan := signedState()
	orphan.Context.Messages = append(orphan.Context.Messages, msg("t9", agentstate.RoleTool, result("call_9", "crop", "late", false)))
	tests := []struct {
		name   string
		state  *agentstate.State
		format agentstate.RenderFormat
		want   string
	}{
		{"tool schema not an object", badSchema, agentstate.RenderOpenAI, "state.context.tools[0].parameters_json"},
		{"orphan result is invalid for openai", orphan, agentstate.RenderOpenAI, "without a preceding assistant tool call"},
		{"orphan result is invalid for anthropic", orphan, agentstate.RenderAnthropic, "tool_result must come first"},
		{"orphan result is invalid for gemini", orphan, agentstate.RenderGemini, "functionResponse"},
		{"orphan result is invalid for ollama", orphan, agentstate.RenderOllama, "answers no open call"},
		{"unknown format", signedState(), agentstate.RenderFormat(9), "unsupported format"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Deliberately not normalized: the validators must catch what normalize would repair.
			_, _, err := Render(tt.format, input(statetest.Work(tt.state)))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
	var inv *agentstate.InvalidArgumentError
	if _, _, err := Render(agentstate.RenderOpenAI, input(statetest.Work(badSchema))); !errors.As(err, &inv) || inv.Reason != agentstate.ReasonInvalidState {
		t.Errorf("bad schema: err = %#v, want InvalidArgumentError INVALID_STATE", err)
	}
}

// What the provider would refuse whatever ctxc did is bad input naming
// options.render, never a failed render (INTERNAL).
func TestNotRenderableIsBadInput(t *testing.T) {
	empty := &agentstate.State{Model: agentstate.ModelSpec{Name: "m"}}
	systemOnly := &agentstate.State{Model: agentstate.ModelSpec{Name: "m"}, Context: agentstate.Context{SystemPrompt: "be brief"}}
	badTool := signedState()
	badTool.Context.Tools[0].Name = "read file!"
	dotted := signedState()
	dotted.Context.Tools[0].Name = "files.read"
	dottedCall := signedState()
	for i := range dottedCall.Context.Messages {
		for k := range dottedCall.Context.Messages[i].Parts {
			if p := &dottedCall.Context.Messages[i].Parts[k]; p.Kind == agentstate.PartToolCall {
				p.ToolCall.Name = "files.read"
			}
		}
	}
	tests := []struct {
		name   string
		state  *agentstate.State
		format agentstate.RenderFormat
		want   string // "" renders
	}{
		{"empty for openai", empty, agentstate.RenderOpenAI, "openai needs a message to send"},
		{"empty for ollama", empty, agentstate.RenderOllama, "ollama needs a message to send"},
		{"system prompt only for openai", systemOnly, agentstate.RenderOpenAI, ""},
		{"system prompt only for ollama", systemOnly, agentstate.RenderOllama, ""},
		{"system prompt only for anthropic", systemOnly, agentstate.RenderAnthropic, "anthropic needs a message to send"},
		{"system prompt only for gemini", systemOnly, agentstate.RenderGemini, "gemini needs a message to send"},
		{"space and ! in a tool name for openai", badTool, agentstate.RenderOpenAI, `tool "read file!" (tools[0]) is not a valid openai function name`},
		{"space and ! in a tool name for anthropic", badTool, agentstate.RenderAnthropic, "not a valid anthropic function name"},
		{"space and ! in a tool name for gemini", badTool, agentstate.RenderGemini, "not a valid gemini function name"},
		{"any tool name for ollama", badTool, agentstate.RenderOllama, ""},
		{"a dot is fine for gemini", dotted, agentstate.RenderGemini, ""},
		{"a dot is not for openai", dotted, agentstate.RenderOpenAI, `tool "files.read" (tools[0]) is not a valid openai function name`},
		{"nor in a call for anthropic", dottedCall, agentstate.RenderAnthropic, `calls tool "files.read", not a valid anthropic function name`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Render(tt.format, input(statetest.Work(tt.state)))
			if tt.want == "" {
				if err != nil {
					t.Fatalf("err = %v, want a body", err)
				}
				return
			}
			var inv *agentstate.InvalidArgumentError
			if !errors.As(err, &inv) || inv.Reason != ReasonNotRenderable || inv.Violations[0].Field != "options.render" ||
				!strings.Contains(inv.Violations[0].Description, tt.want) {
				t.Fatalf("err = %#v, want NOT_RENDERABLE on options.render mentioning %q", err, tt.want)
			}
		})
	}
}

func TestValidatorsReject(t *testing.T) {
	tests := []struct {
		name     string
		validate func([]byte) error
		body     string
		want     string
	}{
		{"openai missing tool message", ValidateOpenAI, `{"messages":[{"role":"user","content":"x"},{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}]}`, `tool call "c1" has no tool message`},
		{"openai tool after user", ValidateOpenAI, `{"messages":[{"role":"user","content":"x"},{"role":"tool","tool_call_id":"c1","content":"r"}]}`, "without a preceding assistant"},
		{"anthropic starts with assistant", ValidateAnthropic, `{"max_tokens":1,"messages":[{"role":"assistant","content":[{"type":"text","text":"x"}]}]}`, "starting with user"},
		{"anthropic same role twice", ValidateAnthropic, `{"max_tokens":1,"messages":[{"role":"user","content":[{"type":"text","text":"x"}]},{"role":"user","content":[{"type":"text","text":"y"}]}]}`, `role "user", want "assistant"`},
		{"anthropic thinking after text", ValidateAnthropic, `{"max_tokens":1,"messages":[{"role":"user","content":[{"type":"text","text":"x"}]},{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"thinking","thinking":"t","signature":"AQI="}]}]}`, "must open an assistant message"},
		{"anthropic text before tool_result", ValidateAnthropic, `{"max_tokens":1,"messages":[{"role":"user","content":[{"type":"text","text":"x"}]},{"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"f","input":{}}]},{"role":"user","content":[{"type":"text","text":"y"},{"type":"tool_result","tool_use_id":"c1"}]}]}`, "must come first"},
		{"anthropic only a system message", ValidateAnthropic, `{"max_tokens":1,"messages":[{"role":"system","content":[{"type":"text","text":"x"}]}]}`, "no user or assistant message"},
		{"anthropic system message between a call and its result", ValidateAnthropic, `{"max_tokens":1,"messages":[{"role":"user","content":"x"},{"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"f","input":{}}]},{"role":"system","content":"env"},{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1"}]}]}`, "between a tool_use and its tool_result"},
		{"anthropic system message with an image", ValidateAnthropic, `{"max_tokens":1,"messages":[{"role":"user","content":"x"},{"role":"system","content":[{"type":"image","source":{"type":"url","url":"u"}}]}]}`, "a system message holds text blocks"},
		{"anthropic no max_tokens", ValidateAnthropic, `{"messages":[{"role":"user","content":[{"type":"text","text":"x"}]}]}`, "max_tokens"},
		{"gemini unequal counts", ValidateGemini, `{"contents":[{"role":"user","parts":[{"text":"x"}]},{"role":"model","parts":[{"functionCall":{"name":"f","args":{}}},{"functionCall":{"name":"g","args":{}}}]},{"role":"user","parts":[{"functionResponse":{"name":"f","response":{}}}]}]}`, "1 functionResponse(s) [f] for the previous turn's 2 functionCall(s) [f g]"},
		{"gemini args not an object", ValidateGemini, `{"contents":[{"role":"user","parts":[{"text":"x"}]},{"role":"model","parts":[{"functionCall":{"name":"f","args":"x"}}]},{"role":"user","parts":[{"functionResponse":{"name":"f","response":{}}}]}]}`, "object args"},
		{"ollama arguments string", ValidateOllama, `{"messages":[{"role":"assistant","content":"","tool_calls":[{"function":{"name":"f","arguments":"{}"}}]},{"role":"tool","content":"r","tool_name":"f"}]}`, "object arguments"},
		{"responses call without output", ValidateResponses, `{"input":[{"role":"user","content":"x"},{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"}]}`, `function_call "c1" has no output`},
		{"responses output before its call", ValidateResponses, `{"input":[{"type":"function_call_output","call_id":"c1","output":"r"},{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"}]}`, "answers no call before it"},
		{"responses custom output for a function call", ValidateResponses, `{"input":[{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},{"type":"custom_tool_call_output","call_id":"c1","output":"r"}]}`, "answers no call before it"},
		{"responses reasoning without id", ValidateResponses, `{"input":[{"role":"user","content":"x"},{"type":"reasoning","summary":[]},{"role":"assistant","content":"y"}]}`, "needs the id the API gave it"},
		{"responses reasoning last", ValidateResponses, `{"input":[{"role":"user","content":"x"},{"type":"reasoning","id":"rs_1","summary":[]}]}`, "must be followed by a message or call"},
		{"anthropic system not text", ValidateAnthropic, `{"max_tokens":1,"system":[{"type":"image"}],"messages":[{"role":"user","content":"x"}]}`, "system[0]: want a text block"},
		{"anthropic blank string content", ValidateAnthropic, `{"max_tokens":1,"messages":[{"role":"user","content":" "}]}`, "messages[0]: blank text"},
		{"anthropic server tool in a user message", ValidateAnthropic, `{"max_tokens":1,"messages":[{"role":"user","content":[{"type":"web_search_tool_result","tool_use_id":"s1","content":[]}]}]}`, "belongs in an assistant message"},
		{"ollama tool for another call", ValidateOllama, `{"messages":[{"role":"assistant","content":"","tool_calls":[{"function":{"name":"f","arguments":{}}}]},{"role":"tool","content":"r","tool_name":"g"}]}`, "answers no open call"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.validate([]byte(tt.body))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

func ExampleRender() {
	in := Input{
		State: &agentstate.State{Context: agentstate.Context{SystemPrompt: "Be brief."}},
		Model: agentstate.ModelInfo{Name: "claude-sonnet-4-5", MaxOutputTokens: 1024},
		View:  agentstate.EntriesFromLog([]agentstate.Message{msg("u1", agentstate.RoleUser, text("Hi"))}),
	}
	body, _, err := Render(agentstate.RenderAnthropic, in)
	fmt.Println(string(body), err)
	// Output: {"model":"claude-sonnet-4-5","system":"Be brief.","max_tokens":1024,"messages":[{"role":"user","content":[{"type":"text","text":"Hi","cache_control":{"type":"ephemeral"}}]}]} <nil>
}

// TestAnthropicCacheBreakpoints: the body marks the end of the stable prefix
// (the entry before the first Unsettled one) and the end of the request, on
// the last block of each turn, and never more than the API allows.
func TestAnthropicCacheBreakpoints(t *testing.T) {
	view := agentstate.EntriesFromLog([]agentstate.Message{
		msg("u1", agentstate.RoleUser, text("Fix the build.")),
		msg("a1", agentstate.RoleAssistant, text("Done.")),
		msg("u2", agentstate.RoleUser, text("Now the tests.")),
		msg("a2", agentstate.RoleAssistant, text("Running them.")),
		msg("u3", agentstate.RoleUser, text("And the docs.")),
	})
	marked := func(t *testing.T, body []byte) []string {
		t.Helper()
		var req wire.AnthropicRequest
		if err := json.Unmarshal(body, &req); err != nil {
			t.Fatal(err)
		}
		var out []string
		for i, m := range req.Messages {
			var blocks []wire.AnthropicBlock
			if err := json.Unmarshal(m.Content, &blocks); err != nil {
				t.Fatal(err)
			}
			for j, b := range blocks {
				if b.CacheControl != nil {
					out = append(out, fmt.Sprintf("messages[%d].content[%d] %s", i, j, *b.Text))
				}
			}
		}
		return out
	}
	tests := []struct {
		name      string
		unsettled int // index of the first Unsettled entry; -1 for none
		want      []string
	}{
		{"all stable: the end only", -1, []string{"messages[4].content[0] And the docs."}},
		{"unsettled from a2", 3, []string{"messages[2].content[0] Now the tests.", "messages[4].content[0] And the docs."}},
		{"nothing stable", 0, []string{"messages[4].content[0] And the docs."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := append([]agentstate.Entry(nil), view...)
			if tt.unsettled >= 0 {
				v[tt.unsettled].Unsettled = true
			}
			body, _, err := Render(agentstate.RenderAnthropic, Input{Model: agentstate.ModelInfo{Name: "claude-sonnet-4-5", MaxOutputTokens: 1024}, View: v})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, marked(t, body)); diff != "" {
				t.Errorf("breakpoints (-want +got):\n%s", diff)
			}
		})
	}
	tooMany := `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":[` +
		strings.Repeat(`{"type":"text","text":"x","cache_control":{"type":"ephemeral"}},`, 4) +
		`{"type":"text","text":"x","cache_control":{"type":"ephemeral"}}]}]}`
	if err := ValidateAnthropic([]byte(tooMany)); err == nil || !strings.Contains(err.Error(), "at most 4") {
		t.Errorf("five breakpoints: %v", err)
	}
}
