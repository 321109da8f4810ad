package client

import (
	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

// Text is a plain-text part.
func Text(s string) *ctxcv1.Part {
	return &ctxcv1.Part{Content: &ctxcv1.Part_Text{Text: s}}
}

// ToolCall is an assistant's call of a tool, with its arguments as a JSON document.
func ToolCall(id, name, argumentsJSON string) *ctxcv1.Part {
	return &ctxcv1.Part{Content: &ctxcv1.Part_ToolCall{ToolCall: &ctxcv1.ToolCall{Id: id, Name: name, ArgumentsJson: argumentsJSON}}}
}

// ToolResult is the outcome of the call callID, for a ROLE_TOOL message.
func ToolResult(callID, name, content string, isError bool) *ctxcv1.Part {
	return &ctxcv1.Part{Content: &ctxcv1.Part_ToolResult{ToolResult: &ctxcv1.ToolResult{ToolCallId: callID, Name: name, Content: content, IsError: isError}}}
}

// Message is a log message. An id is required in a state's log and left
// empty in Route inputs, where ctxc assigns it.
func Message(id string, role ctxcv1.Role, parts ...*ctxcv1.Part) *ctxcv1.Message {
	return &ctxcv1.Message{Id: id, Role: role, Parts: parts}
}

// System is a system message: in a UserTurn, a leading one replaces the system prompt.
func System(id, text string) *ctxcv1.Message { return Message(id, ctxcv1.Role_ROLE_SYSTEM, Text(text)) }

// User is a user message.
func User(id, text string) *ctxcv1.Message { return Message(id, ctxcv1.Role_ROLE_USER, Text(text)) }

// Assistant is an assistant message: text and tool calls.
func Assistant(id string, parts ...*ctxcv1.Part) *ctxcv1.Message {
	return Message(id, ctxcv1.Role_ROLE_ASSISTANT, parts...)
}

// Tool is a ROLE_TOOL message of tool results.
func Tool(id string, results ...*ctxcv1.Part) *ctxcv1.Message {
	return Message(id, ctxcv1.Role_ROLE_TOOL, results...)
}

// State is an agent state for model with a system prompt and a log.
func State(model, systemPrompt string, log ...*ctxcv1.Message) *ctxcv1.AgentState {
	return &ctxcv1.AgentState{
		Model:   &ctxcv1.ModelSpec{Name: model},
		Context: &ctxcv1.AgentContext{SystemPrompt: systemPrompt, Messages: log},
	}
}

// Append returns state with messages added to its log, as a new state
// sharing state's messages and other fields (a log is append-only): state is
// left as it was, and StateRefs sends the new one by reference. Change
// neither in place afterwards; clone first (proto.CloneOf) to edit one.
func Append(state *ctxcv1.AgentState, messages ...*ctxcv1.Message) *ctxcv1.AgentState {
	c := state.GetContext()
	log := make([]*ctxcv1.Message, 0, len(c.GetMessages())+len(messages))
	log = append(append(log, c.GetMessages()...), messages...)
	return &ctxcv1.AgentState{SchemaVersion: state.GetSchemaVersion(), AgentId: state.GetAgentId(), Model: state.GetModel(), Execution: state.GetExecution(),
		Context: &ctxcv1.AgentContext{Messages: log, SystemPrompt: c.GetSystemPrompt(), Tools: c.GetTools(), ResponseFormat: c.GetResponseFormat(), Metadata: c.GetMetadata()}}
}
