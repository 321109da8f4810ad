package client

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

// reasonStateRefNotFound is the server's answer to a reference it cannot
// resolve: the call is made again with the whole state.
const reasonStateRefNotFound = "STATE_REF_NOT_FOUND"

// StateRefs sends a growing state by reference: a runtime that holds its
// agent's state and calls every turn passes the whole state each time, and
// StateRefs sends only the messages appended since the state of its
// previous call, naming that state by the state_ref its response carried.
// A reference the server cannot resolve (expired, evicted, another
// replica without the shared Redis) is answered by sending the call again
// whole, so the caller never sees it.
//
// A state's log is append-only: StateRefs compares the messages of the
// previous state by identity (the same *Message), not by content, so a
// message already sent must be replaced (a new *Message in its place), not
// changed in place; any other change of the log or of the state's other
// fields sends the whole state, and so does a call with state_blob,
// input_json or reset_history (as the other clients do). A StateRefs
// follows one state (one agent) and is not safe for concurrent use. For
// Route and Compact, continue from the state they return.
type StateRefs struct {
	client ctxcv1.ContextCompilerServiceClient
	// ref names the state whose log is messages and whose other fields
	// are rest.
	ref      string
	messages []*ctxcv1.Message
	rest     *ctxcv1.AgentState
	// byRef counts the calls sent by reference, misses those the server
	// could not resolve.
	byRef, misses int
}

// StateRefs starts following a state: the first call sends it whole.
func (c *Client) StateRefs() *StateRefs { return NewStateRefs(c.ContextCompilerServiceClient) }

// NewStateRefs is StateRefs over any client of the service (one that
// spreads calls over replicas, or one with interceptors of its own).
func NewStateRefs(c ctxcv1.ContextCompilerServiceClient) *StateRefs {
	return &StateRefs{client: c}
}

// Counts returns how many calls went by reference and how many of those the
// server could not resolve (and were sent again whole).
func (r *StateRefs) Counts() (byReference, misses int) { return r.byRef, r.misses }

// Compile is ContextCompilerServiceClient.Compile with req.State sent by
// reference when it extends the state of the previous call.
func (r *StateRefs) Compile(ctx context.Context, req *ctxcv1.CompileRequest, opts ...grpc.CallOption) (*ctxcv1.CompileResponse, error) {
	own := req.GetBaseStateRef() != "" || len(req.GetAppendedMessages()) > 0
	resp, err := call(ctx, r, &req.State, &req.BaseStateRef, &req.AppendedMessages, func() (*ctxcv1.CompileResponse, error) {
		return r.client.Compile(ctx, req, opts...)
	}, req.GetStateBlob() == nil && req.GetInputJson() == "" && !req.GetResetHistory())
	if err == nil && !own {
		r.follow(resp.GetStateRef(), req.GetState())
	}
	return resp, err
}

// Budget is ContextCompilerServiceClient.Budget with req.State sent by
// reference when it extends the state of the previous call.
func (r *StateRefs) Budget(ctx context.Context, req *ctxcv1.BudgetRequest, opts ...grpc.CallOption) (*ctxcv1.BudgetResponse, error) {
	own := req.GetBaseStateRef() != "" || len(req.GetAppendedMessages()) > 0
	resp, err := call(ctx, r, &req.State, &req.BaseStateRef, &req.AppendedMessages, func() (*ctxcv1.BudgetResponse, error) {
		return r.client.Budget(ctx, req, opts...)
	}, true)
	if err == nil && !own {
		r.follow(resp.GetStateRef(), req.GetState())
	}
	return resp, err
}

// Compact is ContextCompilerServiceClient.Compact with req.State sent by
// reference when it extends the state of the previous call; the next call
// continues from the state it returns.
func (r *StateRefs) Compact(ctx context.Context, req *ctxcv1.CompactRequest, opts ...grpc.CallOption) (*ctxcv1.CompactResponse, error) {
	resp, err := call(ctx, r, &req.State, &req.BaseStateRef, &req.AppendedMessages, func() (*ctxcv1.CompactResponse, error) {
		return r.client.Compact(ctx, req, opts...)
	}, true)
	if err == nil {
		r.follow(resp.GetStateRef(), resp.GetState())
	}
	return resp, err
}

// Route is ContextCompilerServiceClient.Route with req.State sent by
// reference when it extends the state of the previous call; the next call
// continues from the state it returns.
func (r *StateRefs) Route(ctx context.Context, req *ctxcv1.RouteRequest, opts ...grpc.CallOption) (*ctxcv1.RouteResponse, error) {
	resp, err := call(ctx, r, &req.State, &req.BaseStateRef, &req.AppendedMessages, func() (*ctxcv1.RouteResponse, error) {
		return r.client.Route(ctx, req, opts...)
	}, req.GetStateBlob() == nil && !req.GetResetHistory())
	if err == nil {
		r.follow(resp.GetStateRef(), resp.GetState())
	}
	return resp, err
}

// call makes one call, by reference when the request's state extends the
// followed one: the request's state, base_state_ref and appended_messages
// are set for the call and put back after it, so the caller's request is as
// it was. A miss is sent again whole.
func call[T any](ctx context.Context, r *StateRefs, state **ctxcv1.AgentState, base *string, appended *[]*ctxcv1.Message, do func() (T, error), canRef bool) (T, error) {
	whole := *state
	if *base != "" || len(*appended) > 0 {
		// The caller names a reference of its own: what the call's state
		// is, only the server knows, so nothing is followed after it.
		resp, err := do()
		r.forget()
		return resp, err
	}
	extra, ok := r.extends(whole)
	if !canRef || !ok {
		return do()
	}
	*state, *base, *appended = nil, r.ref, extra
	resp, err := do()
	*state, *base, *appended = whole, "", nil
	r.byRef++
	if err != nil && status.Code(err) == codes.FailedPrecondition && Reason(err) == reasonStateRefNotFound {
		r.misses++
		r.ref = ""
		return do()
	}
	return resp, err
}

// extends returns the messages st appends to the followed state, and
// whether st is that state with messages appended and nothing else changed.
func (r *StateRefs) extends(st *ctxcv1.AgentState) ([]*ctxcv1.Message, bool) {
	if r.ref == "" || st == nil {
		return nil, false
	}
	log := st.GetContext().GetMessages()
	if len(log) < len(r.messages) {
		return nil, false
	}
	for i, m := range r.messages {
		if log[i] != m {
			return nil, false
		}
	}
	if !proto.Equal(withoutLog(st), r.rest) {
		return nil, false
	}
	return log[len(r.messages):], true
}

// forget stops following a state: the next call goes whole.
func (r *StateRefs) forget() { r.ref, r.messages, r.rest = "", nil, nil }

// follow makes st, named ref, the state the next call may extend.
func (r *StateRefs) follow(ref string, st *ctxcv1.AgentState) {
	if ref == "" || st == nil {
		r.forget()
		return
	}
	r.ref = ref
	r.messages = append(r.messages[:0], st.GetContext().GetMessages()...)
	r.rest = withoutLog(st)
}

// withoutLog is st without its messages, sharing its other fields.
func withoutLog(st *ctxcv1.AgentState) *ctxcv1.AgentState {
	c := st.GetContext()
	return &ctxcv1.AgentState{SchemaVersion: st.GetSchemaVersion(), AgentId: st.GetAgentId(), Model: st.GetModel(), Execution: st.GetExecution(),
		Context: &ctxcv1.AgentContext{SystemPrompt: c.GetSystemPrompt(), Tools: c.GetTools(), ResponseFormat: c.GetResponseFormat(), Metadata: c.GetMetadata()}}
}
