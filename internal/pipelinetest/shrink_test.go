package pipelinetest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

// A running execution that does not fit the window (a coding agent's long
// system prompt and tools, then a tool loop that read a whole file) is
// compiled with its older steps condensed, not refused: every call stays,
// the file read becomes a placeholder naming it, and the newest output is as
// it was. Only what cannot be cut refuses a call, and the refusal says which
// part is too large.
func TestRunningExecutionOverTheWindowIsShrunkNotRefused(t *testing.T) {
	svc := testService(t)
	read, err := os.ReadFile("../../policies/compaction/summarizer.go") // ~10K tokens of real source
	if err != nil {
		t.Fatal(err)
	}
	text := func(role ctxcv1.Role, id, s string) *ctxcv1.Message {
		return &ctxcv1.Message{Id: id, Role: role, Parts: []*ctxcv1.Part{{Content: &ctxcv1.Part_Text{Text: s}}}}
	}
	msgs := []*ctxcv1.Message{text(ctxcv1.Role_ROLE_USER, "u1", "The summarizer drops failures; find out why and fix it.")}
	for k := 1; k <= 5; k++ {
		id, content := fmt.Sprintf("c%d", k), fmt.Sprintf("step %d output\n%s", k, strings.Repeat("ok line\n", 40))
		if k == 2 {
			content = string(read)
		}
		msgs = append(msgs,
			&ctxcv1.Message{Id: "a" + id, Role: ctxcv1.Role_ROLE_ASSISTANT, ExecutionId: "e1", Parts: []*ctxcv1.Part{{Content: &ctxcv1.Part_ToolCall{ToolCall: &ctxcv1.ToolCall{Id: id, Name: "Read", ArgumentsJson: `{"file_path":"internal/policies/compaction/summarizer.go"}`}}}}},
			&ctxcv1.Message{Id: "t" + id, Role: ctxcv1.Role_ROLE_TOOL, ExecutionId: "e1", Parts: []*ctxcv1.Part{{Content: &ctxcv1.Part_ToolResult{ToolResult: &ctxcv1.ToolResult{ToolCallId: id, Name: "Read", Content: content}}}}})
	}
	system := strings.Repeat("You are a coding agent. Follow the repository's conventions and run the tests. ", 300) // ~5K tokens
	state := &ctxcv1.AgentState{SchemaVersion: 1, Model: &ctxcv1.ModelSpec{Name: "gpt-4o"},
		Execution: &ctxcv1.Execution{Id: "e1", Status: ctxcv1.ExecutionStatus_EXECUTION_STATUS_RUNNING},
		Context:   &ctxcv1.AgentContext{SystemPrompt: system, Messages: msgs}}
	window := uint32(16_000)
	for _, profile := range []string{"pragmatic", "budget-aware", "policy-driven", "llm-assisted"} {
		t.Run(profile, func(t *testing.T) {
			out, err := svc.Compile(context.Background(), &ctxcv1.CompileRequest{State: state, Profile: profile, Options: &ctxcv1.CompileOptions{MaxContextTokenCount: &window}})
			if err != nil {
				t.Fatalf("refused a context that can be shrunk: %v", err)
			}
			b := out.GetBudget()
			if used, usable := b.GetUsedTokenCount(), b.GetContextWindowTokenCount()-b.GetReservedOutputTokenCount(); used > usable {
				t.Errorf("used %d of a usable %d", used, usable)
			}
			// The first task, every call and the newest output are as they
			// were; the file read is condensed, saying so.
			shown := map[string]*ctxcv1.Message{}
			for _, m := range out.GetMessages() {
				shown[m.GetId()] = m
			}
			if m := shown["u1"]; m == nil || m.GetParts()[0].GetText() != msgs[0].GetParts()[0].GetText() {
				t.Error("the first task was changed")
			}
			disposition := map[string]ctxcv1.Disposition{}
			for _, r := range out.GetReport().GetMessages() {
				disposition[r.GetMessageId()] = r.GetDisposition()
			}
			for k := 1; k <= 5; k++ {
				// Shown, or in a summary of the task's older steps.
				id := fmt.Sprintf("ac%d", k)
				if shown[id] == nil && disposition[id] != ctxcv1.Disposition_DISPOSITION_SUMMARIZED {
					t.Errorf("call c%d of the running task is neither shown nor summarized: %s", k, disposition[id])
				}
			}
			if m := shown["tc5"]; m == nil || m.GetParts()[0].GetToolResult().GetContent() != msgs[10].GetParts()[0].GetToolResult().GetContent() {
				t.Error("the newest output was changed although condensing the older, larger one was enough")
			}
			read := shown["tc2"].GetParts()[0].GetToolResult().GetContent()
			condensed := strings.HasPrefix(read, "[output masked: message tc2") ||
				profile == "policy-driven" && strings.HasPrefix(read, "[superseded by a later read in message tc") || // dedupe
				profile == "llm-assisted" && strings.HasPrefix(read, "[ctxc extract: ") // llm_plan condenses in its own words
			if !condensed {
				t.Errorf("the file read is not condensed to a placeholder naming it:\n%.300s", read)
			}
		})
	}
	// A system prompt that alone is over the window cannot be cut: refused,
	// naming it.
	huge := &ctxcv1.AgentState{SchemaVersion: 1, Model: &ctxcv1.ModelSpec{Name: "gpt-4o"}, Context: &ctxcv1.AgentContext{SystemPrompt: strings.Repeat(system, 4), Messages: msgs[:1]}}
	_, err = svc.Compile(context.Background(), &ctxcv1.CompileRequest{State: huge, Profile: "budget-aware", Options: &ctxcv1.CompileOptions{MaxContextTokenCount: &window}})
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "exceeds the usable window (tokens: system prompt 19,") {
		t.Errorf("a system prompt over the window: %v, want RESOURCE_EXHAUSTED naming its size", err)
	}
}
