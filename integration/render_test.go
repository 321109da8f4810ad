//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"testing"

	"google.golang.org/grpc/codes"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

// TestRenderedForEveryProvider compiles the coding-agent example into each
// provider's request body and checks where each puts the system prompt, the
// tool calls and their results.
func TestRenderedForEveryProvider(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	for _, tt := range []struct {
		format ctxcv1.RenderFormat
		check  func(t *testing.T, body map[string]any, resp *ctxcv1.CompileResponse)
	}{
		{ctxcv1.RenderFormat_RENDER_FORMAT_OPENAI, func(t *testing.T, body map[string]any, _ *ctxcv1.CompileResponse) {
			msgs := body["messages"].([]any)
			if role := msgs[0].(map[string]any)["role"]; role != "system" {
				t.Errorf("first OpenAI message has role %v, want system", role)
			}
			if !hasRole(msgs, "tool") {
				t.Error("no role=tool results")
			}
		}},
		{ctxcv1.RenderFormat_RENDER_FORMAT_ANTHROPIC, func(t *testing.T, body map[string]any, _ *ctxcv1.CompileResponse) {
			if _, ok := body["system"].(string); !ok {
				t.Error("Anthropic body has no top-level system")
			}
			msgs := body["messages"].([]any)
			for i := 1; i < len(msgs); i++ {
				if msgs[i].(map[string]any)["role"] == msgs[i-1].(map[string]any)["role"] {
					t.Fatalf("messages %d and %d share a role; Anthropic needs alternation", i-1, i)
				}
			}
			if hasRole(msgs, "system") || hasRole(msgs, "tool") {
				t.Error("Anthropic messages must be user or assistant only")
			}
		}},
		{ctxcv1.RenderFormat_RENDER_FORMAT_GEMINI, func(t *testing.T, body map[string]any, _ *ctxcv1.CompileResponse) {
			if _, ok := body["systemInstruction"]; !ok {
				t.Error("Gemini body has no systemInstruction")
			}
			if !hasRole(body["contents"].([]any), "model") {
				t.Error("no role=model turn")
			}
		}},
		{ctxcv1.RenderFormat_RENDER_FORMAT_OLLAMA, func(t *testing.T, body map[string]any, resp *ctxcv1.CompileResponse) {
			numCtx := body["options"].(map[string]any)["num_ctx"].(float64)
			if uint32(numCtx) != resp.GetBudget().GetContextWindowTokenCount() {
				t.Errorf("num_ctx %v, want the budgeted window %d", numCtx, resp.GetBudget().GetContextWindowTokenCount())
			}
		}},
	} {
		t.Run(tt.format.String(), func(t *testing.T) {
			req := readExample(t, "coding-agent.json")
			req.Options = &ctxcv1.CompileOptions{Render: tt.format}
			resp, err := s.client().Compile(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			var body map[string]any
			if err := json.Unmarshal([]byte(resp.GetRendered()), &body); err != nil {
				t.Fatalf("rendered is not a JSON object: %v", err)
			}
			tt.check(t, body, resp)
		})
	}
}

func hasRole(msgs []any, role string) bool {
	for _, m := range msgs {
		if m.(map[string]any)["role"] == role {
			return true
		}
	}
	return false
}

// TestProviderInputAndTemplates: a runtime sends the OpenAI body it already
// has, with a templated system prompt; a missing variable names itself.
func TestProviderInputAndTemplates(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	body := `{"model":"gpt-4o","messages":[
		{"role":"system","content":"You help {{user}} with {{topic}}."},
		{"role":"user","content":"What is in main.go?"},
		{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"main.go\"}"}}]},
		{"role":"tool","tool_call_id":"call_1","content":"package main"},
		{"role":"assistant","content":"It declares package main."}]}`
	req := &ctxcv1.CompileRequest{
		State:       &ctxcv1.AgentState{Model: &ctxcv1.ModelSpec{Name: "gpt-4o"}},
		InputFormat: ctxcv1.InputFormat_INPUT_FORMAT_OPENAI,
		InputJson:   body,
		Options:     &ctxcv1.CompileOptions{TemplateVariables: map[string]string{"user": "Ada", "topic": "Go"}, Render: ctxcv1.RenderFormat_RENDER_FORMAT_ANTHROPIC},
	}
	resp, err := s.client().Compile(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	msgs := resp.GetMessages()
	if len(msgs) != 5 || msgs[0].GetParts()[0].GetText() != "You help Ada with Go." {
		t.Fatalf("compiled %d messages, system %q", len(msgs), msgs[0].GetParts()[0].GetText())
	}
	if msgs[2].GetParts()[0].GetToolCall().GetId() != "call_1" || msgs[3].GetParts()[0].GetToolResult().GetToolCallId() != "call_1" {
		t.Errorf("tool call and result not imported as a unit: %v %v", msgs[2], msgs[3])
	}
	var anthropic map[string]any
	if err := json.Unmarshal([]byte(resp.GetRendered()), &anthropic); err != nil || anthropic["system"] != "You help Ada with Go." {
		t.Errorf("rendered for Anthropic: system %v (%v)", anthropic["system"], err)
	}

	req.Options.TemplateVariables = map[string]string{"user": "Ada"}
	_, err = s.client().Compile(context.Background(), req)
	wantStatus(t, err, codes.InvalidArgument, "TEMPLATE_VARIABLE_MISSING", `options.template_variables["topic"]`)

	req.Options.TemplateVariables = nil
	req.InputJson = `{"messages":[{"role":"tool","content":"x"}]}`
	_, err = s.client().Compile(context.Background(), req)
	if err == nil {
		t.Fatal("a tool message without tool_call_id was accepted")
	}
}

// A context the provider would refuse is bad input naming options.render, not
// an internal error: nothing to send, or a tool name outside its rules.
func TestNotRenderableIsInvalidArgument(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	empty := &ctxcv1.CompileRequest{State: &ctxcv1.AgentState{Model: &ctxcv1.ModelSpec{Name: "gpt-4o"}, Context: &ctxcv1.AgentContext{SystemPrompt: "Be brief."}},
		Options: &ctxcv1.CompileOptions{Render: ctxcv1.RenderFormat_RENDER_FORMAT_ANTHROPIC}}
	_, err := s.client().Compile(context.Background(), empty)
	wantStatus(t, err, codes.InvalidArgument, "NOT_RENDERABLE", "options.render")

	badTool := readExample(t, "coding-agent.json")
	badTool.GetState().GetContext().GetTools()[0].Name = "read file!"
	badTool.Options = &ctxcv1.CompileOptions{Render: ctxcv1.RenderFormat_RENDER_FORMAT_OPENAI}
	_, err = s.client().Compile(context.Background(), badTool)
	wantStatus(t, err, codes.InvalidArgument, "NOT_RENDERABLE", "options.render")
}
