package eval

import (
	"context"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

// fakeService is a compiler whose output the tests choose, so that every
// figure can be worked out by hand. A message counts one token per word of
// its text (messageText), the tools count toolTokens, the window reserves a
// quarter for output, and Budget calls a state with more than four log
// messages over its soft threshold.
type fakeService struct {
	compile func(st *ctxcv1.AgentState) []*ctxcv1.Message
	// atWindow, when set, compiles instead of compile, by window.
	atWindow func(st *ctxcv1.AgentState, window uint32) []*ctxcv1.Message
	// failAt, when set, says which compiles fail by user turn and window.
	failAt     func(turn int, window uint32) bool
	compacted  bool
	toolTokens uint32
	failTurn   map[int]bool // user turns whose compile fails
	// failMessage is the message of a failed compile ("context irreducible"
	// when empty).
	failMessage string
	countCalls  int
	// routedWith and compiledWith are the profiles of each Route and Compile.
	routedWith, compiledWith []string
}

func words(m *ctxcv1.Message) int { return len(strings.Fields(messageText(m))) }

func userTurns(st *ctxcv1.AgentState) int {
	n := 0
	for _, m := range st.GetContext().GetMessages() {
		if isRegularUser(m) {
			n++
		}
	}
	return n
}

func (f *fakeService) Compile(_ context.Context, req *ctxcv1.CompileRequest) (*ctxcv1.CompileResponse, error) {
	f.compiledWith = append(f.compiledWith, req.GetProfile())
	window := req.GetOptions().GetMaxContextTokenCount()
	if f.failTurn[userTurns(req.GetState())] || f.failAt != nil && f.failAt(userTurns(req.GetState()), window) {
		msg := f.failMessage
		if msg == "" {
			msg = "context irreducible"
		}
		return nil, status.Error(codes.ResourceExhausted, msg)
	}
	var msgs []*ctxcv1.Message
	if f.atWindow != nil {
		msgs = f.atWindow(req.GetState(), window)
	} else {
		msgs = f.compile(req.GetState())
	}
	used := f.toolTokens
	for _, m := range msgs {
		used += uint32(words(m))
	}
	return &ctxcv1.CompileResponse{
		Messages: msgs,
		Budget: &ctxcv1.TokenBudget{
			ContextWindowTokenCount:  window,
			ReservedOutputTokenCount: window / 4,
			UsedTokenCount:           used,
			Breakdown:                &ctxcv1.TokenBreakdown{ToolsTokenCount: f.toolTokens},
		},
		Report: &ctxcv1.CompileReport{Compacted: f.compacted},
	}, nil
}

func (f *fakeService) Budget(_ context.Context, req *ctxcv1.BudgetRequest) (*ctxcv1.BudgetResponse, error) {
	window := req.GetOptions().GetMaxContextTokenCount()
	return &ctxcv1.BudgetResponse{Budget: &ctxcv1.TokenBudget{
		ContextWindowTokenCount:  window,
		ReservedOutputTokenCount: window / 4,
		Breakdown:                &ctxcv1.TokenBreakdown{ToolsTokenCount: f.toolTokens},
		OverSoftThreshold:        len(req.GetState().GetContext().GetMessages()) > 4,
	}}, nil
}

// Route appends with ids m1, m2... in log order; a user turn starts
// execution e<n>, a final answer completes it.
func (f *fakeService) Route(_ context.Context, req *ctxcv1.RouteRequest) (*ctxcv1.RouteResponse, error) {
	f.routedWith = append(f.routedWith, req.GetProfile())
	st := proto.Clone(req.GetState()).(*ctxcv1.AgentState)
	if st.Context == nil {
		st.Context = &ctxcv1.AgentContext{}
	}
	add := func(msgs ...*ctxcv1.Message) {
		for _, m := range msgs {
			m = proto.Clone(m).(*ctxcv1.Message)
			m.Id = fmt.Sprintf("m%d", len(st.Context.Messages)+1)
			m.ExecutionId = st.GetExecution().GetId()
			st.Context.Messages = append(st.Context.Messages, m)
		}
	}
	switch in := req.GetInput().(type) {
	case *ctxcv1.RouteRequest_UserTurn:
		st.Execution = &ctxcv1.Execution{Id: fmt.Sprintf("e%d", userTurns(st)+1), Status: ctxcv1.ExecutionStatus_EXECUTION_STATUS_RUNNING}
		add(in.UserTurn.GetMessages()...)
	case *ctxcv1.RouteRequest_Step:
		add(in.Step.GetMessages()...)
		if in.Step.GetFinishReason() == ctxcv1.FinishReason_FINISH_REASON_STOP {
			st.Execution.Status = ctxcv1.ExecutionStatus_EXECUTION_STATUS_COMPLETED
		}
	case *ctxcv1.RouteRequest_Event:
		add(&ctxcv1.Message{Role: ctxcv1.Role_ROLE_USER, Kind: ctxcv1.MessageKind_MESSAGE_KIND_EVENT, Parts: []*ctxcv1.Part{textPart(in.Event.GetText())}})
	}
	return &ctxcv1.RouteResponse{State: st}, nil
}

func (f *fakeService) CountTokens(_ context.Context, req *ctxcv1.CountTokensRequest) (*ctxcv1.CountTokensResponse, error) {
	f.countCalls++
	resp := &ctxcv1.CountTokensResponse{}
	for _, m := range req.GetMessages() {
		resp.Messages = append(resp.Messages, &ctxcv1.TokenCount{TokenCount: uint32(words(m))})
	}
	return resp, nil
}

func (f *fakeService) ListProfiles(context.Context, *ctxcv1.ListProfilesRequest) (*ctxcv1.ListProfilesResponse, error) {
	return &ctxcv1.ListProfilesResponse{Profiles: []*ctxcv1.Profile{{Name: "fake"}}}, nil
}

// tickingClock advances a millisecond every reading, so each compile takes 1 ms.
func tickingClock() func() time.Time {
	t := time.Unix(0, 0)
	return func() time.Time {
		t = t.Add(time.Millisecond)
		return t
	}
}

func msg(id string, role ctxcv1.Role, parts ...*ctxcv1.Part) *ctxcv1.Message {
	return &ctxcv1.Message{Id: id, Role: role, Parts: parts}
}

func callPart(id, name string) *ctxcv1.Part {
	return &ctxcv1.Part{Content: &ctxcv1.Part_ToolCall{ToolCall: &ctxcv1.ToolCall{Id: id, Name: name, ArgumentsJson: "{}"}}}
}

func resultPart(id, content string) *ctxcv1.Part {
	return &ctxcv1.Part{Content: &ctxcv1.Part_ToolResult{ToolResult: &ctxcv1.ToolResult{ToolCallId: id, Content: content}}}
}

func systemMessage(text string) *ctxcv1.Message {
	return &ctxcv1.Message{Id: "ctxc-system", Role: ctxcv1.Role_ROLE_SYSTEM, Parts: []*ctxcv1.Part{textPart(text)}}
}

// identity compiles the log as it is, after the system prompt.
func identity(st *ctxcv1.AgentState) []*ctxcv1.Message {
	return append([]*ctxcv1.Message{systemMessage(st.GetContext().GetSystemPrompt())}, st.GetContext().GetMessages()...)
}

// dropping compiles the log without the message of the given id.
func dropping(id string) func(st *ctxcv1.AgentState) []*ctxcv1.Message {
	return func(st *ctxcv1.AgentState) []*ctxcv1.Message {
		var out []*ctxcv1.Message
		for _, m := range identity(st) {
			if m.GetId() != id {
				out = append(out, m)
			}
		}
		return out
	}
}

// summarizing replaces every log message but the last by one summary whose
// text names how many it covers, so it changes on every turn.
func summarizing(st *ctxcv1.AgentState) []*ctxcv1.Message {
	log := st.GetContext().GetMessages()
	if len(log) < 2 {
		return identity(st)
	}
	sum := &ctxcv1.Message{Id: "ctxc-summary", Role: ctxcv1.Role_ROLE_USER, Kind: ctxcv1.MessageKind_MESSAGE_KIND_SUMMARY,
		Parts: []*ctxcv1.Part{textPart(fmt.Sprintf("summary of %d messages", len(log)-1))}}
	return []*ctxcv1.Message{systemMessage(st.GetContext().GetSystemPrompt()), sum, log[len(log)-1]}
}
