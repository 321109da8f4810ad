// Package adaptertest holds what the tests of the gRPC adapter and of the
// transport around it share: a valid request state and a status's parts.
package adaptertest

import (
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

// ValidState is a small valid state (a task, a tool call and its result)
// that tests break one field at a time.
func ValidState() *ctxcv1.AgentState {
	return &ctxcv1.AgentState{
		Model: &ctxcv1.ModelSpec{Name: "gpt-4o"},
		Context: &ctxcv1.AgentContext{Messages: []*ctxcv1.Message{
			{Id: "u1", Role: ctxcv1.Role_ROLE_USER, Parts: []*ctxcv1.Part{{Content: &ctxcv1.Part_Text{Text: "hi"}}}},
			{Id: "a1", Role: ctxcv1.Role_ROLE_ASSISTANT, Parts: []*ctxcv1.Part{{Content: &ctxcv1.Part_ToolCall{ToolCall: &ctxcv1.ToolCall{Id: "c1", Name: "ls"}}}}},
			{Id: "t1", Role: ctxcv1.Role_ROLE_TOOL, Parts: []*ctxcv1.Part{{Content: &ctxcv1.Part_ToolResult{ToolResult: &ctxcv1.ToolResult{ToolCallId: "c1", Content: "a.go"}}}}},
		}},
	}
}

// StatusDetails splits a status into the parts clients look at.
func StatusDetails(t testing.TB, err error) (codes.Code, *errdetails.ErrorInfo, []proto.Message) {
	t.Helper()
	st, ok := status.FromError(err)
	if !ok {
		t.Fatalf("not a status: %v", err)
	}
	var info *errdetails.ErrorInfo
	var rest []proto.Message
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.ErrorInfo:
			info = d
		case proto.Message:
			rest = append(rest, d)
		default:
			t.Fatalf("undecodable detail %v", d)
		}
	}
	if info == nil {
		t.Fatalf("status %v has no ErrorInfo", st)
	}
	return st.Code(), info, rest
}
