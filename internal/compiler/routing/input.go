package routing

import (
	"strconv"
	"time"

	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// ReasonInvalidRouteInput is the reason of the InvalidArgumentError Route
// returns for input it cannot append.
const ReasonInvalidRouteInput = "INVALID_ROUTE_INPUT"

// Metadata keys Route sets on the messages it appends.
const (
	MetaOutput     = "ctxc.output"
	MetaStepIndex  = "ctxc.step_index"
	MetaError      = "ctxc.error"
	MetaUnresolved = "ctxc.unresolved"
	MetaResolvedBy = "ctxc.resolved_by"
)

// Values of MetaOutput.
const (
	OutputUser       = "user"
	OutputAssistant  = "assistant"
	OutputToolResult = "tool_result"
	OutputEvent      = "event"
	OutputError      = "error"
)

// Input is what Route appends: a UserTurn, a Step or an Event (values or
// non-nil pointers).
type Input interface {
	routeInput()
}

// UserTurn is a user message that starts a new execution.
type UserTurn struct {
	// Messages holds the user message; leading system messages set the system prompt.
	Messages []agentstate.Message
	// ExecutionID names the new execution; generated when empty.
	ExecutionID string
}

// Step is the output of one step of the running execution.
type Step struct {
	// Messages holds the assistant output and the tool results, in order.
	Messages     []agentstate.Message
	FinishReason FinishReason
	// Usage is the provider's report of the step's inference.
	Usage *agentstate.Usage
	// Error is the failure text when FinishReason is FinishError.
	Error string
}

// Event is out-of-band context added without a model call.
type Event struct {
	Text string
	// Role is RoleUser when unspecified; RoleSystem is allowed too.
	Role     agentstate.Role
	Metadata map[string]string
}

func (UserTurn) routeInput() {}
func (Step) routeInput()     {}
func (Event) routeInput()    {}

// FinishReason says why the model stopped in a step. Values match the proto.
type FinishReason uint8

// Finish reasons.
const (
	FinishUnspecified FinishReason = iota
	FinishStop
	FinishToolCalls
	FinishLength
	FinishError
)

var finishNames = [...]string{"FINISH_REASON_UNSPECIFIED", "FINISH_REASON_STOP", "FINISH_REASON_TOOL_CALLS", "FINISH_REASON_LENGTH", "FINISH_REASON_ERROR"}

// String returns the proto name, as error messages quote it.
func (f FinishReason) String() string {
	if int(f) < len(finishNames) {
		return finishNames[f]
	}
	return "FinishReason(" + strconv.Itoa(int(f)) + ")"
}

// Options are Route's knobs.
type Options struct {
	// Now, when set, stamps CreateTime on appended messages that have none.
	// Nil leaves CreateTime alone, which keeps tests deterministic.
	Now func() time.Time
}

// Result is the outcome of Route.
type Result struct {
	// State is the new state; the input state is unchanged.
	State *agentstate.State
	// AppendedIDs are the ids of the appended messages, in log order.
	AppendedIDs []string
	// ExecutionEnded is set when a step completed or failed the execution.
	ExecutionEnded bool
	// SystemPromptReplaced is set when a user turn's leading system messages
	// replaced State.Context.SystemPrompt.
	SystemPromptReplaced bool
	// InterruptedExecutionID names the execution a user turn interrupted
	// (it was still running); empty otherwise.
	InterruptedExecutionID string
}
