//go:build integration

package integration

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

func text(s string) *ctxcv1.Part { return &ctxcv1.Part{Content: &ctxcv1.Part_Text{Text: s}} }

func call(id, name, args string) *ctxcv1.Part {
	return &ctxcv1.Part{Content: &ctxcv1.Part_ToolCall{ToolCall: &ctxcv1.ToolCall{Id: id, Name: name, ArgumentsJson: args}}}
}

func result(callID, name, content string, isError bool) *ctxcv1.Part {
	return &ctxcv1.Part{Content: &ctxcv1.Part_ToolResult{ToolResult: &ctxcv1.ToolResult{ToolCallId: callID, Name: name, Content: content, IsError: isError}}}
}

// logEntry is what the session test checks of each log message after each call.
type logEntry struct {
	ID, Role, Kind, Execution, Output, Step string
}

func logOf(st *ctxcv1.AgentState) []logEntry {
	var out []logEntry
	for _, m := range st.GetContext().GetMessages() {
		out = append(out, logEntry{
			ID: m.GetId(), Role: m.GetRole().String(), Kind: m.GetKind().String(), Execution: m.GetExecutionId(),
			Output: m.GetMetadata()["ctxc.output"], Step: m.GetMetadata()["ctxc.step_index"],
		})
	}
	return out
}

// TestCodingAgentSessionOverRoute drives a realistic coding-agent session
// through Route and Compile over gRPC, checking the log, the tags and the
// execution boundaries after every call.
func TestCodingAgentSessionOverRoute(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	client := s.client()
	ctx := context.Background()
	st := &ctxcv1.AgentState{AgentId: "coder-1", Model: &ctxcv1.ModelSpec{Name: "gpt-4o", Provider: "openai"}}
	var want []logEntry

	route := func(req *ctxcv1.RouteRequest) *ctxcv1.RouteResponse {
		t.Helper()
		req.State = st
		resp, err := client.Route(ctx, req)
		if err != nil {
			t.Fatalf("route: %v", err)
		}
		st = resp.GetState()
		if diff := cmp.Diff(want, logOf(st)); diff != "" {
			t.Fatalf("log after route (-want +got):\n%s", diff)
		}
		return resp
	}
	compile := func() *ctxcv1.CompileResponse {
		t.Helper()
		resp, err := client.Compile(ctx, &ctxcv1.CompileRequest{State: st})
		if err != nil {
			t.Fatalf("compile: %v", err)
		}
		return resp
	}

	// 1. The user's turn; its leading system message becomes the system prompt.
	want = []logEntry{{ID: "exec-1-u1", Role: "ROLE_USER", Kind: "MESSAGE_KIND_UNSPECIFIED", Execution: "exec-1", Output: "user"}}
	resp := route(&ctxcv1.RouteRequest{Input: &ctxcv1.RouteRequest_UserTurn{UserTurn: &ctxcv1.UserTurn{Messages: []*ctxcv1.Message{
		{Role: ctxcv1.Role_ROLE_SYSTEM, Parts: []*ctxcv1.Part{text("You are a careful coding agent.")}},
		{Role: ctxcv1.Role_ROLE_USER, Parts: []*ctxcv1.Part{text("The tests in ./store fail. Fix them without changing the public API.")}},
	}}}})
	if !resp.GetSystemPromptReplaced() || st.GetContext().GetSystemPrompt() != "You are a careful coding agent." {
		t.Errorf("system prompt %q, replaced %v", st.GetContext().GetSystemPrompt(), resp.GetSystemPromptReplaced())
	}
	if ex := st.GetExecution(); ex.GetId() != "exec-1" || ex.GetStatus() != ctxcv1.ExecutionStatus_EXECUTION_STATUS_RUNNING || resp.GetExecutionEnded() {
		t.Errorf("execution after the user turn: %v", ex)
	}
	if got := compile().GetMessages(); len(got) != 2 || got[0].GetRole() != ctxcv1.Role_ROLE_SYSTEM || got[1].GetId() != "exec-1-u1" {
		t.Errorf("compiled first turn: %v", got)
	}

	// 2. A step with two parallel calls; run_tests fails.
	want = append(want,
		logEntry{ID: "exec-1-s0-0", Role: "ROLE_ASSISTANT", Kind: "MESSAGE_KIND_UNSPECIFIED", Execution: "exec-1", Output: "assistant", Step: "0"},
		logEntry{ID: "exec-1-s0-1", Role: "ROLE_TOOL", Kind: "MESSAGE_KIND_UNSPECIFIED", Execution: "exec-1", Output: "tool_result", Step: "0"},
		logEntry{ID: "exec-1-s0-2", Role: "ROLE_TOOL", Kind: "MESSAGE_KIND_UNSPECIFIED", Execution: "exec-1", Output: "tool_result", Step: "0"},
	)
	resp = route(&ctxcv1.RouteRequest{Input: &ctxcv1.RouteRequest_Step{Step: &ctxcv1.AgentStep{
		FinishReason: ctxcv1.FinishReason_FINISH_REASON_TOOL_CALLS,
		Usage:        &ctxcv1.Usage{InputTokenCount: 180, OutputTokenCount: 40},
		Messages: []*ctxcv1.Message{
			{Role: ctxcv1.Role_ROLE_ASSISTANT, Parts: []*ctxcv1.Part{call("c1", "read_file", `{"path":"store/store.go"}`), call("c2", "run_tests", `{"pkg":"./store"}`)}},
			{Role: ctxcv1.Role_ROLE_TOOL, Parts: []*ctxcv1.Part{result("c1", "read_file", "package store\n\nfunc Reserve(sku string, n int) error { return nil }\n", false)}},
			{Role: ctxcv1.Role_ROLE_TOOL, Parts: []*ctxcv1.Part{result("c2", "run_tests", "--- FAIL: TestReserve (0.00s)\n    store_test.go:12: want ErrOutOfStock", true)}},
		},
	}}})
	if diff := cmp.Diff([]string{"exec-1-s0-0", "exec-1-s0-1", "exec-1-s0-2"}, resp.GetAppendedMessageIds()); diff != "" {
		t.Errorf("appended (-want +got):\n%s", diff)
	}
	if ex := st.GetExecution(); ex.GetStatus() != ctxcv1.ExecutionStatus_EXECUTION_STATUS_RUNNING || ex.GetStepIndex() != 1 || resp.GetExecutionEnded() {
		t.Errorf("execution after a tool step: %v", ex)
	}
	if u := st.GetContext().GetMessages()[1].GetUsage(); u.GetInputTokenCount() != 180 || u.GetOutputTokenCount() != 40 {
		t.Errorf("usage not stored on the step's assistant message: %v", u)
	}
	// The provider's usage anchors the count: 220 tokens up to the assistant
	// message, plus the two results counted by ctxc.
	c := compile()
	b := c.GetBudget()
	after := 0
	for _, m := range c.GetReport().GetMessages()[2:] {
		after += int(m.GetTokenCount())
	}
	if b.GetProvenance() != ctxcv1.TokenCountProvenance_TOKEN_COUNT_PROVENANCE_ANCHORED || int(b.GetUsedTokenCount()) != 220+after {
		t.Errorf("budget %v, want ANCHORED with %d used", b, 220+after)
	}

	// 3. The agent retries the failed tool; it passes.
	want = append(want,
		logEntry{ID: "exec-1-s1-0", Role: "ROLE_ASSISTANT", Kind: "MESSAGE_KIND_UNSPECIFIED", Execution: "exec-1", Output: "assistant", Step: "1"},
		logEntry{ID: "exec-1-s1-1", Role: "ROLE_TOOL", Kind: "MESSAGE_KIND_UNSPECIFIED", Execution: "exec-1", Output: "tool_result", Step: "1"},
	)
	route(&ctxcv1.RouteRequest{Input: &ctxcv1.RouteRequest_Step{Step: &ctxcv1.AgentStep{
		FinishReason: ctxcv1.FinishReason_FINISH_REASON_TOOL_CALLS,
		Messages: []*ctxcv1.Message{
			{Role: ctxcv1.Role_ROLE_ASSISTANT, Parts: []*ctxcv1.Part{call("c3", "run_tests", `{"pkg":"./store"}`)}},
			{Role: ctxcv1.Role_ROLE_TOOL, Parts: []*ctxcv1.Part{result("c3", "run_tests", "ok  example.com/app/store 0.01s", false)}},
		},
	}}})

	// 4. The final answer ends the execution.
	want = append(want, logEntry{ID: "exec-1-s2-0", Role: "ROLE_ASSISTANT", Kind: "MESSAGE_KIND_UNSPECIFIED", Execution: "exec-1", Output: "assistant", Step: "2"})
	resp = route(&ctxcv1.RouteRequest{Input: &ctxcv1.RouteRequest_Step{Step: &ctxcv1.AgentStep{
		FinishReason: ctxcv1.FinishReason_FINISH_REASON_STOP,
		Messages:     []*ctxcv1.Message{{Role: ctxcv1.Role_ROLE_ASSISTANT, Parts: []*ctxcv1.Part{text("Reserve now returns ErrOutOfStock when stock is short; tests pass.")}}},
	}}})
	if !resp.GetExecutionEnded() || st.GetExecution().GetStatus() != ctxcv1.ExecutionStatus_EXECUTION_STATUS_COMPLETED {
		t.Errorf("execution after STOP: ended=%v %v", resp.GetExecutionEnded(), st.GetExecution())
	}
	// A step for the finished execution is refused, naming the field.
	_, err := client.Route(ctx, &ctxcv1.RouteRequest{State: st, Input: &ctxcv1.RouteRequest_Step{Step: &ctxcv1.AgentStep{
		FinishReason: ctxcv1.FinishReason_FINISH_REASON_STOP,
		Messages:     []*ctxcv1.Message{{Role: ctxcv1.Role_ROLE_ASSISTANT, Parts: []*ctxcv1.Part{text("late")}}},
	}}})
	wantStatus(t, err, codes.InvalidArgument, "INVALID_ROUTE_INPUT", "step")

	// 5. An out-of-band event, stored without a model call.
	want = append(want, logEntry{ID: "evt-7", Role: "ROLE_USER", Kind: "MESSAGE_KIND_EVENT", Output: "event"})
	route(&ctxcv1.RouteRequest{Input: &ctxcv1.RouteRequest_Event{Event: &ctxcv1.Event{Text: "The user opened store/store_test.go in the editor."}}})
	if st.GetExecution().GetStatus() != ctxcv1.ExecutionStatus_EXECUTION_STATUS_COMPLETED {
		t.Errorf("an event changed the execution: %v", st.GetExecution())
	}

	// 6. A second turn starts a new execution; the log keeps everything in order.
	want = append(want, logEntry{ID: "exec-2-u0", Role: "ROLE_USER", Kind: "MESSAGE_KIND_UNSPECIFIED", Execution: "exec-2", Output: "user"})
	route(&ctxcv1.RouteRequest{Input: &ctxcv1.RouteRequest_UserTurn{UserTurn: &ctxcv1.UserTurn{Messages: []*ctxcv1.Message{
		{Role: ctxcv1.Role_ROLE_USER, Parts: []*ctxcv1.Part{text("Now add a test for n <= 0.")}},
	}}}})
	if ex := st.GetExecution(); ex.GetId() != "exec-2" || ex.GetStatus() != ctxcv1.ExecutionStatus_EXECUTION_STATUS_RUNNING {
		t.Errorf("execution of the second turn: %v", ex)
	}
	// The conversation view (for UIs) shows the turns, the final answer and the
	// event, and no tool trace.
	conv, err := client.Compile(ctx, &ctxcv1.CompileRequest{State: st, Options: &ctxcv1.CompileOptions{View: ctxcv1.View_VIEW_CONVERSATION}})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range conv.GetMessages() {
		ids = append(ids, m.GetId())
	}
	if diff := cmp.Diff([]string{"ctxc-system", "exec-1-u1", "exec-1-s2-0", "evt-7", "exec-2-u0"}, ids); diff != "" {
		t.Errorf("conversation view (-want +got):\n%s", diff)
	}
}

// TestRouteWithStateBlobs runs a short session through the opaque blob form,
// and checks the blob errors and the version and provider lock.
func TestRouteWithStateBlobs(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	client := s.client()
	ctx := context.Background()
	// A thin client starts from a bare model and keeps only blobs from then on.
	first, err := client.Route(ctx, &ctxcv1.RouteRequest{
		State:         &ctxcv1.AgentState{Model: &ctxcv1.ModelSpec{Name: "claude-sonnet-4-5", Provider: "anthropic"}},
		WantStateBlob: true,
		Input:         &ctxcv1.RouteRequest_UserTurn{UserTurn: &ctxcv1.UserTurn{Messages: []*ctxcv1.Message{{Role: ctxcv1.Role_ROLE_USER, Parts: []*ctxcv1.Part{text("hello")}}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if first.GetState() != nil || len(first.GetStateBlob()) == 0 {
		t.Fatalf("want_state_blob: state %v, blob %d bytes", first.GetState(), len(first.GetStateBlob()))
	}
	blobState, err := client.Route(ctx, &ctxcv1.RouteRequest{StateBlob: first.GetStateBlob(), Input: &ctxcv1.RouteRequest_Step{Step: &ctxcv1.AgentStep{
		FinishReason: ctxcv1.FinishReason_FINISH_REASON_STOP,
		Messages:     []*ctxcv1.Message{{Role: ctxcv1.Role_ROLE_ASSISTANT, Parts: []*ctxcv1.Part{text("Hi! How can I help?")}}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	blob := blobState.GetStateBlob()
	if len(blob) == 0 || blobState.GetState() != nil {
		t.Fatalf("a blob request must get a blob back and no state: %d bytes, state %v", len(blob), blobState.GetState())
	}
	compiled, err := client.Compile(ctx, &ctxcv1.CompileRequest{StateBlob: blob})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(compiled.GetMessages()); n != 2 {
		t.Errorf("compiled %d messages from the blob, want 2", n)
	}

	corrupt := append([]byte(nil), blob...)
	corrupt[len(corrupt)/2] ^= 0xff
	for _, tt := range []struct {
		name   string
		req    *ctxcv1.CompileRequest
		code   codes.Code
		reason string
		fields []string
	}{
		{"corrupted blob", &ctxcv1.CompileRequest{StateBlob: corrupt}, codes.InvalidArgument, "STATE_BLOB_CORRUPT", []string{"state_blob"}},
		{"truncated blob", &ctxcv1.CompileRequest{StateBlob: blob[:len(blob)-7]}, codes.InvalidArgument, "STATE_BLOB_TRUNCATED", []string{"state_blob"}},
		{"foreign blob", &ctxcv1.CompileRequest{StateBlob: []byte(`{"version":1,"messages":[]}`)}, codes.InvalidArgument, "STATE_BLOB_FOREIGN", []string{"state_blob"}},
		{"another provider", &ctxcv1.CompileRequest{StateBlob: blob, Model: &ctxcv1.ModelSpec{Name: "gpt-4o", Provider: "openai"}},
			codes.FailedPrecondition, "PROVIDER_MISMATCH", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := client.Compile(ctx, tt.req)
			wantStatus(t, err, tt.code, tt.reason, tt.fields...)
		})
	}
	// Asking to reset discards the locked history instead of failing.
	reset, err := client.Compile(ctx, &ctxcv1.CompileRequest{StateBlob: blob, Model: &ctxcv1.ModelSpec{Name: "gpt-4o", Provider: "openai"}, ResetHistory: true})
	if err != nil {
		t.Fatal(err)
	}
	if !reset.GetHistoryDiscarded() || len(reset.GetMessages()) != 0 {
		t.Errorf("reset: discarded=%v messages=%d", reset.GetHistoryDiscarded(), len(reset.GetMessages()))
	}
	old := &ctxcv1.AgentState{SchemaVersion: 7, Model: &ctxcv1.ModelSpec{Name: "gpt-4o"}}
	_, err = client.Route(ctx, &ctxcv1.RouteRequest{State: old, Input: &ctxcv1.RouteRequest_Event{Event: &ctxcv1.Event{Text: "x"}}})
	wantStatus(t, err, codes.FailedPrecondition, "STATE_VERSION_UNSUPPORTED")
	fresh, err := client.Route(ctx, &ctxcv1.RouteRequest{State: old, ResetHistory: true, Input: &ctxcv1.RouteRequest_Event{Event: &ctxcv1.Event{Text: "x"}}})
	if err != nil {
		t.Fatal(err)
	}
	if !fresh.GetHistoryDiscarded() || fresh.GetState().GetSchemaVersion() != 1 || len(fresh.GetState().GetContext().GetMessages()) != 1 {
		t.Errorf("reset of an old version: %v", fresh)
	}
}

// TestRouteCompactsWhenAnExecutionEnds: with a profile that asks for it, the
// final answer of an execution triggers compaction of the returned state; the
// log keeps every message and gains a summary that says what it covers.
func TestRouteCompactsWhenAnExecutionEnds(t *testing.T) {
	t.Parallel()
	config := writeConfig(t, `
profiles:
  - name: session
    compact_on_execution_end: true
    stages:
      - policy: normalize
      - policy: project
      - policy: estimate
      - policy: token_budget
      - policy: message_count
        settings: {max_messages: 8}
      - policy: summarize
      - policy: truncate
      - policy: repair
`)
	s := startServer(t, "--config", config)
	client := s.client()
	ctx := context.Background()
	st := readExample(t, "coding-agent.json").GetState() // exec-2 is running
	before := st.GetContext().GetMessages()

	// A tool step does not end the execution: no compaction.
	mid, err := client.Route(ctx, &ctxcv1.RouteRequest{State: st, Profile: "session", Input: &ctxcv1.RouteRequest_Step{Step: &ctxcv1.AgentStep{
		FinishReason: ctxcv1.FinishReason_FINISH_REASON_TOOL_CALLS,
		Messages: []*ctxcv1.Message{
			{Role: ctxcv1.Role_ROLE_ASSISTANT, Parts: []*ctxcv1.Part{call("c9", "run_tests", `{"packages":"./internal/stock/..."}`)}},
			{Role: ctxcv1.Role_ROLE_TOOL, Parts: []*ctxcv1.Part{result("c9", "run_tests", "ok  inventory/internal/stock 0.3s", false)}},
		},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if mid.GetCompactionReport() != nil {
		t.Errorf("compacted inside a running tool loop: %v", mid.GetCompactionReport())
	}

	end, err := client.Route(ctx, &ctxcv1.RouteRequest{State: mid.GetState(), Profile: "session", Input: &ctxcv1.RouteRequest_Step{Step: &ctxcv1.AgentStep{
		FinishReason: ctxcv1.FinishReason_FINISH_REASON_STOP,
		Messages:     []*ctxcv1.Message{{Role: ctxcv1.Role_ROLE_ASSISTANT, Parts: []*ctxcv1.Part{text("Added TestReserveOutOfStock; the package passes.")}}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if !end.GetExecutionEnded() || !end.GetCompactionReport().GetCompacted() {
		t.Fatalf("ended=%v report=%v", end.GetExecutionEnded(), end.GetCompactionReport())
	}
	log := end.GetState().GetContext().GetMessages()
	for i, m := range before {
		if log[i].GetId() != m.GetId() {
			t.Fatalf("log[%d] = %s, want %s: compaction must not delete or reorder", i, log[i].GetId(), m.GetId())
		}
	}
	last := log[len(log)-1]
	if last.GetKind() != ctxcv1.MessageKind_MESSAGE_KIND_SUMMARY || len(last.GetCoversMessageIds()) == 0 {
		t.Errorf("last log message %s kind %v covers %v, want a summary", last.GetId(), last.GetKind(), last.GetCoversMessageIds())
	}
}

// TestIrreducibleContextIsRefusedInOneCall: a window too small for the system
// prompt, the first task and the newest turn is RESOURCE_EXHAUSTED with the
// numbers, not a loop and not a context that breaks the invariants.
func TestIrreducibleContextIsRefusedInOneCall(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	req := readExample(t, "coding-agent.json")
	window := uint32(400)
	req.Options = &ctxcv1.CompileOptions{MaxContextTokenCount: &window}
	for _, profile := range []string{"pragmatic", "budget-aware", "policy-driven", "llm-assisted"} {
		req.Profile = profile
		_, err := s.client().Compile(context.Background(), req)
		info := wantStatus(t, err, codes.ResourceExhausted, "CONTEXT_IRREDUCIBLE")
		if info.GetMetadata()["needed_tokens"] == "" || info.GetMetadata()["available_tokens"] != "300" {
			t.Errorf("%s: metadata %v, want needed_tokens and available_tokens=300 (400 minus 100 reserved for output)", profile, info.GetMetadata())
		}
	}
}

// TestRouteCompactsOnlyWhenTheTriggerFires: the built-in budget-aware profile
// compacts at an execution's end, but only when its trigger fires
// for the window the runtime compiles with (RouteRequest.options); an
// execution that ends with an error does not compact unless the profile says
// so; and the Compact RPC may force compaction, saying it did.
func TestRouteCompactsOnlyWhenTheTriggerFires(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	client := s.client()
	ctx := context.Background()
	st := readExample(t, "coding-agent.json").GetState() // exec-2 is running
	final := &ctxcv1.RouteRequest_Step{Step: &ctxcv1.AgentStep{
		FinishReason: ctxcv1.FinishReason_FINISH_REASON_STOP,
		Messages:     []*ctxcv1.Message{{Role: ctxcv1.Role_ROLE_ASSISTANT, Parts: []*ctxcv1.Part{text("Fixed; the package passes.")}}},
	}}
	failed := &ctxcv1.RouteRequest_Step{Step: &ctxcv1.AgentStep{FinishReason: ctxcv1.FinishReason_FINISH_REASON_ERROR, Error: "the model call timed out"}}

	// The whole example fits gpt-4o's window: the trigger does not fire, the
	// log only gains the answer.
	roomy, err := client.Route(ctx, &ctxcv1.RouteRequest{State: st, Profile: "budget-aware", Input: final})
	if err != nil {
		t.Fatal(err)
	}
	if got := roomy.GetCompactionReport().GetCompaction(); !roomy.GetExecutionEnded() || got.GetTriggerFired() || len(got.GetPoints()) != 0 {
		t.Errorf("roomy window: ended %v, compaction %v", roomy.GetExecutionEnded(), got)
	}
	if n, want := len(roomy.GetState().GetContext().GetMessages()), len(st.GetContext().GetMessages())+1; n != want {
		t.Errorf("roomy window: log of %d messages, want %d (nothing persisted)", n, want)
	}

	// In an 8,000-token window the trigger fires at a compaction point of the
	// log: what it compacted there is persisted.
	tight := &ctxcv1.CompileOptions{MaxContextTokenCount: proto.Uint32(8000)}
	cramped, err := client.Route(ctx, &ctxcv1.RouteRequest{State: st, Profile: "budget-aware", Input: final, Options: tight})
	if err != nil {
		t.Fatal(err)
	}
	report := cramped.GetCompactionReport()
	if !report.GetCompacted() || len(report.GetCompaction().GetPoints()) == 0 || report.GetCompaction().GetForced() {
		t.Fatalf("8,000-token window: %v", report.GetCompaction())
	}
	persisted := false
	for _, m := range cramped.GetState().GetContext().GetMessages() {
		persisted = persisted || m.GetMask() != nil || m.GetKind() == ctxcv1.MessageKind_MESSAGE_KIND_SUMMARY
	}
	if !persisted {
		t.Error("8,000-token window: no mask or summary persisted")
	}

	// An execution that fails does not compact under budget-aware.
	errored, err := client.Route(ctx, &ctxcv1.RouteRequest{State: st, Profile: "budget-aware", Input: failed, Options: tight})
	if err != nil {
		t.Fatal(err)
	}
	if !errored.GetExecutionEnded() || errored.GetCompactionReport() != nil {
		t.Errorf("failed execution: ended %v, report %v", errored.GetExecutionEnded(), errored.GetCompactionReport())
	}

	// Compact with nothing to do: forced, and it says so.
	forced, err := client.Compact(ctx, &ctxcv1.CompactRequest{State: roomy.GetState(), Profile: "budget-aware"})
	if err != nil {
		t.Fatal(err)
	}
	if c := forced.GetReport().GetCompaction(); !c.GetForced() || c.GetTriggerFired() {
		t.Errorf("Compact in a roomy window: %v, want forced and no trigger", c)
	}
}

// TestRouteCompactsAfterAnErrorOnlyWhenConfigured: a profile with
// compact_on_execution_error persists compaction when an execution ends with
// an error and its trigger fired at a compaction point; the same stages without it (budget-aware)
// do not compact after the error.
func TestRouteCompactsAfterAnErrorOnlyWhenConfigured(t *testing.T) {
	t.Parallel()
	config := writeConfig(t, `
profiles:
  - name: after-errors
    compact_on_execution_end: true
    compact_on_execution_error: true
    stages:
      - policy: normalize
      - policy: project
      - policy: estimate
      - policy: token_budget
      - policy: threshold
      - policy: mask_observations
      - policy: summarize
      - policy: truncate
      - policy: repair
`)
	s := startServer(t, "--config", config)
	ctx := context.Background()
	st := readExample(t, "coding-agent.json").GetState() // exec-2 is running
	failed := &ctxcv1.RouteRequest_Step{Step: &ctxcv1.AgentStep{FinishReason: ctxcv1.FinishReason_FINISH_REASON_ERROR, Error: "the model call timed out"}}
	tight := &ctxcv1.CompileOptions{MaxContextTokenCount: proto.Uint32(8000)}
	for _, tt := range []struct {
		profile  string
		compacts bool
	}{{"after-errors", true}, {"budget-aware", false}} {
		resp, err := s.client().Route(ctx, &ctxcv1.RouteRequest{State: st, Profile: tt.profile, Input: failed, Options: tight})
		if err != nil {
			t.Fatal(err)
		}
		report := resp.GetCompactionReport()
		if !resp.GetExecutionEnded() || (report != nil) != tt.compacts || (tt.compacts && (!report.GetCompacted() || len(report.GetCompaction().GetPoints()) == 0 || report.GetCompaction().GetForced())) {
			t.Errorf("%s: ended %v, compaction %v; want compacted %v", tt.profile, resp.GetExecutionEnded(), report, tt.compacts)
		}
	}
}
