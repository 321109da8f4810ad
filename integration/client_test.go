//go:build integration

package integration

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/contextcompiler/ctxc/client"
	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

// newGoClient connects the Go client package to a running server.
func newGoClient(t *testing.T, s *server) *client.Client {
	t.Helper()
	c, err := client.New(s.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestGoClient drives the Go client package against the binary: every call,
// a tool-using state built with its helpers, and its reading of errors.
func TestGoClient(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	c := newGoClient(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	state := client.State("gpt-4o", "You are a careful coding agent.",
		client.User("u1", "Run the tests in ./store."),
		client.Assistant("a1", client.Text("Running them."), client.ToolCall("c1", "run_tests", `{"pkg":"./store"}`)),
		client.Tool("t1", client.ToolResult("c1", "run_tests", "ok\tstore\t0.2s", false)),
		client.Assistant("a2", client.Text("They pass.")))
	compiled, err := c.Compile(ctx, &ctxcv1.CompileRequest{State: state})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range compiled.GetMessages() {
		ids = append(ids, m.GetId())
	}
	if diff := cmp.Diff([]string{"ctxc-system", "u1", "a1", "t1", "a2"}, ids); diff != "" {
		t.Errorf("compiled ids (-want +got):\n%s", diff)
	}
	if got := compiled.GetMessages()[2].GetParts()[1].GetToolCall().GetId(); got != "c1" {
		t.Errorf("tool call id %q, want c1", got)
	}

	longer := client.Append(state, client.User("u2", "And ./api?"))
	if len(state.GetContext().GetMessages()) != 4 || len(longer.GetContext().GetMessages()) != 5 {
		t.Errorf("Append changed its input or lost a message: %d, %d", len(state.GetContext().GetMessages()), len(longer.GetContext().GetMessages()))
	}
	budget, err := c.Budget(ctx, &ctxcv1.BudgetRequest{State: longer})
	if err != nil {
		t.Fatal(err)
	}
	if len(budget.GetMessages()) != 5 || budget.GetBudget().GetUsedTokenCount() <= compiled.GetBudget().GetUsedTokenCount() {
		t.Errorf("budget of the longer state: %d messages, %d tokens (compiled: %d)", len(budget.GetMessages()), budget.GetBudget().GetUsedTokenCount(), compiled.GetBudget().GetUsedTokenCount())
	}
	// The README's calls by reference: a state grown with Append goes by
	// reference and compiles as the whole state does.
	refs := c.StateRefs()
	if _, err := refs.Compile(ctx, &ctxcv1.CompileRequest{State: state}); err != nil {
		t.Fatal(err)
	}
	byRef, err := refs.Compile(ctx, &ctxcv1.CompileRequest{State: longer})
	if err != nil {
		t.Fatal(err)
	}
	whole, err := c.Compile(ctx, &ctxcv1.CompileRequest{State: longer})
	if err != nil {
		t.Fatal(err)
	}
	if n, misses := refs.Counts(); n != 1 || misses != 0 || !proto.Equal(whole.GetBudget(), byRef.GetBudget()) || len(whole.GetMessages()) != len(byRef.GetMessages()) {
		t.Errorf("StateRefs: %d by reference (%d missed); budget %v by reference, %v whole", n, misses, byRef.GetBudget(), whole.GetBudget())
	}
	count, err := c.CountTokens(ctx, &ctxcv1.CountTokensRequest{Counter: &ctxcv1.CountTokensRequest_Model{Model: "gpt-4o"}, Texts: []string{"Hello, world!"}})
	if err != nil || count.GetTotalTokenCount() != 4 {
		t.Errorf("CountTokens: %v tokens, %v", count.GetTotalTokenCount(), err)
	}
	compacted, err := c.Compact(ctx, &ctxcv1.CompactRequest{State: readExample(t, "coding-agent.json").GetState(), Profile: "policy-driven", Options: &ctxcv1.CompileOptions{MaxContextTokenCount: proto.Uint32(2000)}})
	if err != nil || compacted.GetBudgetAfter().GetUsedTokenCount() >= compacted.GetBudgetBefore().GetUsedTokenCount() {
		t.Errorf("Compact: %v -> %v tokens, %v", compacted.GetBudgetBefore().GetUsedTokenCount(), compacted.GetBudgetAfter().GetUsedTokenCount(), err)
	}

	bad := client.State("gpt-4o", "", client.Tool("t1", client.ToolResult("", "", "ok", false)))
	_, err = c.Compile(ctx, &ctxcv1.CompileRequest{State: bad})
	if status.Code(err) != codes.InvalidArgument || client.Reason(err) != "INVALID_STATE" || client.ErrorInfo(err).GetDomain() != "ctxc" {
		t.Fatalf("bad state: %v (reason %q)", err, client.Reason(err))
	}
	if v := client.FieldViolations(err); len(v) != 1 || v[0].GetField() != "state.context.messages[0].parts[0].tool_result.tool_call_id" {
		t.Errorf("field violations %v", v)
	}
	_, err = c.Compile(ctx, &ctxcv1.CompileRequest{State: state, Profile: "no-such-profile"})
	if client.Reason(err) != "UNKNOWN_PROFILE" || client.ErrorInfo(err).GetMetadata()["known_profiles"] == "" {
		t.Errorf("unknown profile: %v", err)
	}
	if client.Reason(nil) != "" || client.FieldViolations(nil) != nil {
		t.Error("a nil error has a reason or violations")
	}
}

// TestGoClientSession runs a Route session kept as a blob, resumed from the
// persisted blob halfway, with the Go client's Session.
func TestGoClientSession(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	c := newGoClient(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	session := c.NewSession(&ctxcv1.ModelSpec{Name: "gpt-4o", Provider: "openai"}, "go-test", "")
	if _, err := session.Compile(ctx, nil); err == nil {
		t.Fatal("an empty session compiled")
	}
	r, err := session.User(ctx, client.System("", "You are a careful coding agent."), client.User("", "The tests in ./store fail. Fix them."))
	if err != nil || !r.GetSystemPromptReplaced() || !cmp.Equal(r.GetAppendedMessageIds(), []string{"exec-1-u1"}) {
		t.Fatalf("user turn: %v %v", r, err)
	}
	r, err = session.Step(ctx, &ctxcv1.AgentStep{
		FinishReason: ctxcv1.FinishReason_FINISH_REASON_TOOL_CALLS,
		Usage:        &ctxcv1.Usage{InputTokenCount: 150, OutputTokenCount: 30},
		Messages: []*ctxcv1.Message{
			client.Assistant("", client.ToolCall("c1", "run_tests", `{"pkg":"./store"}`)),
			client.Tool("", client.ToolResult("c1", "run_tests", "--- FAIL: TestReserve", true)),
		},
	})
	if err != nil || !cmp.Equal(r.GetAppendedMessageIds(), []string{"exec-1-s0-0", "exec-1-s0-1"}) || r.GetExecutionEnded() {
		t.Fatalf("tool step: %v %v", r, err)
	}

	resumed := c.ResumeSession(bytes.Clone(session.Blob()), "")
	r, err = resumed.Step(ctx, &ctxcv1.AgentStep{FinishReason: ctxcv1.FinishReason_FINISH_REASON_STOP, Messages: []*ctxcv1.Message{client.Assistant("", client.Text("Fixed."))}})
	if err != nil || !r.GetExecutionEnded() {
		t.Fatalf("final answer: %v %v", r, err)
	}
	if r, err = resumed.Event(ctx, &ctxcv1.Event{Text: "The user checked in."}); err != nil || !cmp.Equal(r.GetAppendedMessageIds(), []string{"evt-4"}) {
		t.Fatalf("event: %v %v", r, err)
	}
	compiled, err := resumed.Compile(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range compiled.GetMessages() {
		ids = append(ids, m.GetId())
	}
	if diff := cmp.Diff([]string{"ctxc-system", "exec-1-u1", "exec-1-s0-0", "exec-1-s0-1", "exec-1-s1-0", "evt-4"}, ids); diff != "" {
		t.Errorf("compiled ids (-want +got):\n%s", diff)
	}
	truncated := c.ResumeSession(resumed.Blob()[:len(resumed.Blob())-5], "")
	if _, err := truncated.Compile(ctx, nil); client.Reason(err) != "STATE_BLOB_TRUNCATED" {
		t.Errorf("truncated blob: %v", err)
	}
}
