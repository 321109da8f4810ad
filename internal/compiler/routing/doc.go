// Package routing owns Route: how one input — a user turn, the output of an
// agent step, or an out-of-band event — is appended to the canonical log of an
// agent state, and the state lifecycle checks (schema version, provider lock,
// reset) that come before it. It is pure domain code: no proto, no I/O, and the
// state it is given is never modified (Route returns a new State whose log is a
// fresh slice; existing messages are shared, never changed in place).
//
// # Inputs
//
//   - UserTurn starts a new execution (status running, step index 0). Leading
//     system messages are the system prompt: they replace
//     State.Context.SystemPrompt (joined by a blank line) and never enter the
//     log. System messages after the first non-system message are kept in place
//     as Kind EVENT with role system. A user turn while an execution is still
//     running interrupts it: that execution simply stops being the
//     state's execution, the log keeps its trace, and normalize later
//     synthesizes "result missing" for its unanswered calls because it has
//     finished. Result.InterruptedExecutionID reports it.
//   - Step is one step of the running execution: assistant output (text,
//     reasoning, tool calls) and tool results, in order. A tool result must
//     answer a call made earlier in the step or in an earlier step of the same
//     execution that has no result yet; its tool name is copied from the call
//     when empty. FinishReason STOP completes the execution, ERROR fails it,
//     TOOL_CALLS and LENGTH keep it running with the step index incremented.
//     When FinishReason is unspecified it is inferred: ERROR when Error is set,
//     TOOL_CALLS when the step's last assistant message calls tools, else STOP.
//     Usage is stored on the step's last assistant message.
//   - Event is out-of-band context ("the user checked in at Harrogate
//     Theatre"): one Kind EVENT message, role user unless given, tagged with the
//     running execution if there is one. The execution does not change.
//
// # Failed steps
//
// A step that fails (FinishReason ERROR) appends an error message after the
// step's output: Kind EVENT, role user (providers accept it anywhere), text
// "The agent step failed: <error>", metadata ctxc.error="true". So that it
// stays visible until resolved, it is Pinned and marked ctxc.unresolved="true";
// the next step that completes an execution (STOP) resolves every such message:
// Pinned is cleared, ctxc.unresolved removed and ctxc.resolved_by set to the
// completing execution's id. That is the only change Route ever makes to a
// message already in the log.
//
// # Ids and tags
//
// Messages without an id get a deterministic one, never equal to an id already
// in the log or given explicitly in the same input (a taken id gets "-2", "-3"…
// appended):
//
//   - step output: "<execution id>-s<step index>-<n>", n the message's index in
//     Step.Messages; the error message of a failed step: "<execution id>-s<step index>-error";
//   - user turn: "<execution id>-u<n>", n the message's index in UserTurn.Messages;
//   - event: "evt-<log length>".
//
// A user turn without an execution id gets "exec-<n>", n one more than the
// number of distinct execution ids in the log, bumped past any id already used
// by the log or the state's execution. The agent id is not part of it: ids
// only need to be unique within one state, and a state belongs to one agent.
//
// Every appended message carries Message.ExecutionID (the execution it belongs
// to; empty for events outside executions) and metadata tags in the reserved
// "ctxc." namespace, which overwrite caller values of the same keys:
//
//   - ctxc.output: "user", "assistant", "tool_result", "event" or "error";
//   - ctxc.step_index: the step index, on step output and step errors.
//
// # Validation
//
// Route rejects, with a *agentstate.InvalidArgumentError of reason
// ReasonInvalidRouteInput naming each bad field by its full path
// ("step.messages[2].parts[0].tool_result.tool_call_id"): duplicate message or
// call ids (against the log or within the input), tool results for unknown or
// already answered calls, a step when no execution is running (field "step"),
// roles that do not belong in the input, messages without parts, parts in the
// wrong role, and message kinds other than regular and event (summaries come
// from Compact). Nothing is appended when any violation is found.
package routing
