// Package eval owns the measurement of long sessions (`ctxc eval`): it
// replays recorded sessions through the service, profile by profile and
// window by window, and measures what each compiled context keeps, how much
// of the window it uses, and how much of it a provider's prompt cache could
// serve. It drives the service only through ctxc.v1.ContextCompilerService
// (in process, or a running server through FromClient), so it measures what
// a runtime gets.
//
// # Session files
//
// A session is JSONL. Line 1 is the header:
//
//	{"session": {"id": "...", "description": "...", "model": <ctxc.v1.ModelSpec>,
//	  "system_prompt": "...", "tools": [<ctxc.v1.ToolDefinition>...],
//	  "facts": [{"id": "f1", "kind": "constraint", "text": "...", "turn": 3}...]}}
//
// model (protojson, name required) and id are required. A fact's kind is one
// of constraint, decision, error_code, pinned, first_task or other; its text
// is what must appear in a compiled context (a sentence, clause or identifier
// exactly as it appears in the log); turn is the user turn (from 1) that
// planted it. Every further line is one of
//
//	{"route": <ctxc.v1.RouteRequest without state, state_blob or profile>}
//	{"state": <ctxc.v1.AgentState>, "turn": 12}
//
// A route line is one input as a runtime sends it: a user_turn, a step (with
// finish_reason and usage) or an event. A state line is a recorded snapshot,
// compiled as it is; its optional turn defaults to the number of runs of
// consecutive regular user messages in its log, and a state without a model
// takes the header's. Blank lines are skipped; a line is at most MaxLineBytes.
// Load is strict: unknown fields, a missing header, a line that is not
// exactly one of route and state, and a fact whose text occurs nowhere in the
// session are errors naming the line and the field.
//
// # Transcripts of real agents
//
// LoadAny also reads what agents write, detected from the first lines of a
// file (or named by Format): a Claude Code session transcript (lines with
// "type" and "sessionId"), a Codex CLI rollout (lines with "type" and
// "payload"), a Gemini CLI chat file (a first line with "sessionId" and
// "projectHash"), and a list of request bodies, one per line, as a proxy sees
// them: Anthropic Messages (a body with a top-level "system" or
// "anthropic_version", or a tool_use, tool_result or thinking block) or else
// OpenAI Chat Completions (a body with "messages"). Each becomes a session
// of route lines named after the file (the transcript's own session id is in
// the description), with no listed facts:
//
//   - a user message is a user_turn (its text blocks joined by newlines);
//   - an assistant message is a step: with tool calls (its text, reasoning
//     and calls in order), FINISH_REASON_TOOL_CALLS, carrying the tool results
//     that follow it as ROLE_TOOL messages; without calls, a final answer,
//     FINISH_REASON_STOP; an assistant message with nothing in it is dropped;
//   - a tool result keeps its call id, takes its call's tool name, and is an
//     error when the transcript flags it (Claude Code's and Anthropic's
//     is_error) or, in the formats without a flag (Codex, Gemini CLI, Chat
//     Completions), when its output reports a non-zero exit status ("Process
//     exited with code 1", "Exit code: 1", "Exit Code: 1", "[exit status
//     1]"), or Codex's exec_command_end event for the call has a non-zero
//     exit_code, or Gemini CLI's call status is error or cancelled;
//   - context that is not a request is an event: a summary Claude Code wrote
//     when it compacted (isCompactSummary), text sent beside tool results,
//     and a Codex or Gemini CLI user message that is one tagged block
//     (<environment_context>…</environment_context>, <session_context>…).
//
// Claude Code: only "user" and "assistant" lines of the main thread are read,
// in file order; side chains (subagents, isSidechain) and meta lines
// (isMeta) are left out, and consecutive assistant lines of one message id
// (Claude Code writes one line per content block) are one message. The model
// is the first assistant message's; the transcript holds no system prompt or
// tools. Codex: the response_item lines are read in order (message,
// reasoning, function_call, custom_tool_call, local_shell_call and their
// outputs); developer and system messages make the system prompt, the first
// turn_context names the model, and a "compacted" line is an event. Gemini
// CLI: its user and gemini messages in the order first written, each as
// last written (a message is written again with its tool calls); a "$set"
// of the whole message list, which a resumed session writes with every
// function response doubled, adds only the messages not read yet; a call's
// result is the function response the CLI sent; the first gemini message
// names the model. Request
// bodies: the conversation is that of the last body with the most messages
// (a client resends the whole conversation with every call, so that body
// holds every turn; replaying it turn by turn measures it as any session,
// where replaying every body as a snapshot would compile each prefix once
// more and measure the same turns again), read as the proxy reads it
// (providers.Import, which names what it refuses); its system prompt
// (Anthropic's "system" and system messages, Chat's system and developer
// messages) and tools are the session's. Usage the transcripts report is not carried over:
// it counts a system prompt and tools that a Claude Code transcript does not
// hold, so ctxc counts every message itself.
//
// Every line is decoded; one that cannot be read (not JSON, a user or
// assistant line without its message, content that is neither a string nor
// blocks, a call without an id, a tool result that follows no call) is an
// error naming its line and field. A conversation must reach a user message
// before its first step.
//
// # Replay
//
// For each profile and window (CompileOptions.max_context_token_count), a
// session is replayed statelessly from a state holding the header's model,
// system prompt and tools: each route line goes through Route (with the
// measured profile, so a profile with compact_on_execution_end persists its
// compaction, unless Options.RouteProfile says otherwise) and the returned
// state is kept; Compile runs with the whole current state after each user
// turn (and after each step with Options.EveryStep); a state line replaces
// the state and is compiled. Token counts of compiled messages come from the
// CountTokens RPC with the state's model, each distinct content counted once.
//
// # Figures
//
// Every figure is per compile; a row aggregates one profile and window over
// every session. A compile that fails (the service refuses it, such as a
// context it cannot reduce to the window, RESOURCE_EXHAUSTED) is counted by
// gRPC code, with its message in the row's first few failures and in every
// compile's record; it is not valid, and is left out of every other figure
// but time (facts kept, window used and the cache figures are over the
// compiles that succeeded; a later compile is compared with the last one that
// succeeded).
//
// Validity, checked on the compiled messages without trusting the server:
// (1) when the state has a system prompt, message 0 is a system message with
// exactly that text; (2) every tool result answers a call of the nearest
// preceding message that is not a tool message, which is an assistant message
// with tool calls; (3) every call has its result in the tool messages right
// after it, except the calls of the last assistant message when it belongs to
// the state's running execution; (4) the first regular user message of the
// log (the first task), (5) every pinned log message and (6) the last regular
// user message of the log (the newest turn) appear verbatim (same role, kind
// and parts), and no regular user message follows the newest turn; (7)
// compiled messages that carry a log message's id are in log order, each at
// most once (persisted summaries aside: Compact appends them to the log, yet
// they stand where what they cover was). Valid is the share of all compiles
// that succeeded with no violation: a refused compile counts against it.
//
// Facts kept: at a compile of user turn t, a fact is due when its turn is at
// most t and its text has already been sent to the service (a fact of a
// turn's tool output is not due at the compile that starts that turn). It is
// kept when its text, white space collapsed and case kept, occurs in the
// text of the compiled context: every text, reasoning, tool call (name and
// arguments) and tool result of every message, summaries and the system
// prompt included. A compile's share is kept/due; the row gives the mean over
// compiles with a due fact, and the mean over sessions of the share at each
// session's last compile. A session without listed facts (every transcript)
// is measured on what is found in its inputs instead, each planted at the
// turn it first appears, its id its text:
//
//   - error_code: the identifying lines of every failed tool result (flagged
//     as an error, or whose output reports a non-zero exit status) and of a
//     failed step's error, white space trimmed, each at most 300 bytes: a
//     location (file:line, optionally :column) followed by a message; a line
//     starting "panic: ", "fatal error: " or "XxxError: "/"XxxException: "; a
//     failing test's "--- FAIL: TestX" or "FAILED path::test" (without what
//     follows); and "WARNING: DATA RACE". Envelope lines (FAIL, exit status 1,
//     make's Error 2) and trace frames without a message are not;
//   - constraint: the sentences of user turns that state a requirement: a
//     sentence (ended by . ! ? ; : before a space, or a line break) that
//     holds must, mustn't, never, don't, do not, only, always, should,
//     shouldn't, have to, has to, need to or needs to, or starts with "No ",
//     white space collapsed and its end punctuation dropped; text in a tagged
//     block (<system-reminder>…</system-reminder>) is a client's, not the
//     user's, and is skipped;
//   - other: identifiers (error codes such as E1234, ERR_FOO, ECONNREFUSED,
//     HTTP 503, SQLSTATE 23505, exit status 137, exception and ErrXxx names,
//     file paths, versions, ticket ids such as OPS-1423) in what people wrote:
//     the text of user and assistant messages (not tool calls, reasoning or
//     tool results), events and step errors. A tool's output counts only when
//     it failed, by its identifying lines and the error codes among its
//     identifiers (not its paths or versions): the paths a grep or a stack
//     trace prints and the names in a file read are not facts.
//
// These rules are eval's own, kept apart from how ctxc's summarizer reads
// text, so that they measure it rather than mirror it.
//
// Window used: the response's budget.used_token_count over the usable window,
// budget.context_window_token_count minus reserved_output_token_count. The
// row gives the mean over all compiles and over the pressured ones: those
// whose report says compacted, or whose uncompacted context (the Budget RPC
// for the same state without the summaries and masks Route recorded in it,
// same profile and options) is over the soft threshold.
//
// Prompt cache: a compiled input is the sequence of items [system prompt (the
// compiled message 0 when it is a system message), tool definitions and
// response format (one item, counted as budget.breakdown.tools_token_count),
// every other compiled message]. Items are equal when their content is: role,
// kind and every part for messages, not their ids. For each compile after a
// session's first: len is the tokens of all items; prefix the tokens of the
// longest run of leading items equal to the previous compile's; new the
// tokens of compiled messages that show a log message (by id) the previous
// compile's state did not have (a message without a log id, such as a
// summary, is changed, not new). len - new is what an append-only compiler
// could have kept as a prefix. The row gives sum(prefix)/sum(len) (cache
// prefix), sum(len-new)/sum(len) (append-only bound), their ratio
// sum(prefix)/sum(len-new), the tokens billed at full price sum(len-prefix),
// and what an append-only compiler of the same outputs would be billed,
// sum(new).
//
// Time: the mean and 95th percentile (nearest rank) of Compile's wall time
// as the caller sees it, failed compiles included.
package eval
