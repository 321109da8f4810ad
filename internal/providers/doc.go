// Package providers owns the request-body formats of the model providers:
// OpenAI Chat Completions, OpenAI Responses, Anthropic Messages, Gemini
// generateContent and Ollama /api/chat. It renders a compiled context as such
// a body (Render, used by the render stage's policy in package
// policies/render), checks a body as the provider would (one validator per
// provider, run on every rendered body), reads such a body back into the
// domain (Import, used by the Compile use case for CompileRequest.input_json),
// and puts a compiled context back into the body it was imported from
// (Splice: every field ctxc does not own, and every message the compile left
// as it was, keeps its bytes, and a message the compile changed is the
// client's own JSON with only what changed written again; the proxy
// forwards the result). The bodies' types are package wire's, the module's
// one set of them.
//
// The system prompt goes where each provider wants it: a leading
// "system" message for OpenAI and Ollama, "instructions" for OpenAI
// Responses, top-level "system" for Anthropic, "systemInstruction" for
// Gemini. Every body is checked by its provider's validator before it is
// returned; a body that would be rejected is an error. The validators know
// the shapes clients send (Anthropic's system blocks and block results,
// server tools' blocks, OpenAI's text-part tool results), not only those the
// renderers write.
//
// Choices every renderer shares:
//   - Calls without a result anywhere in the view (pending calls of the
//     running execution) are left out: every provider rejects them.
//   - Arguments that are not a JSON object are sent verbatim to OpenAI (a
//     string there) and as {"_raw": "<arguments>"} to the providers that need
//     an object; Import unwraps a single-key {"_raw": string} object. Empty
//     arguments are sent as {}.
//   - Failed results: Anthropic sets is_error, Gemini answers
//     {"error": content} instead of {"output": content}; OpenAI and Ollama
//     have no flag, so the content is prefixed with ToolErrorPrefix, which
//     Import strips.
//   - Anthropic and Gemini take turns that alternate, starting with the user:
//     consecutive same-role messages (a tool message and the next user
//     message, system events in the log) are merged into one turn, and a
//     conversation that starts with the assistant is opened by a user turn
//     with LeadingUserText. Blank text parts are left out (both reject them).
//   - Masks are applied by the project stage; parts are rendered as the view
//     holds them.
//   - What a provider cannot take is left out and counted in a note that
//     Render returns (the render policy makes each a warning).
//
// Import(Render(x)) preserves role, text, tool call ids, names and
// arguments, result contents, result names and is_error, except where a
// provider cannot represent something:
//
//	provider   what is not preserved
//	all        message ids (Import numbers them "in-<n>"), kinds, pins, metadata;
//	           a tool message with several results comes back as one per result;
//	           arguments come back as compact JSON (objects: key order kept,
//	           whitespace not) and empty arguments as "{}"; pending calls are gone
//	openai     reasoning parts (Chat Completions takes no reasoning input);
//	           images outside user messages; a URL image's media type
//	anthropic  consecutive same-role messages come back merged (tool results
//	           and the following user text split again into tool and user
//	           messages); system messages in the log come back as user text;
//	           unsigned reasoning is dropped and signed reasoning with empty
//	           text becomes redacted_thinking; reasoning moves to the front of
//	           its turn; blank text parts; a URL image's media type; a tool
//	           without a schema gets {"type":"object","properties":{}};
//	           a leading assistant message comes back after LeadingUserText
//	gemini     call ids (Import synthesizes "gemini-call-<content>-<n>" and
//	           pairs responses with calls by order and name, a response whose
//	           id names no call, as Gemini CLI sends, too); merging, system
//	           messages, blank text and LeadingUserText as for anthropic;
//	           reasoning with no text is dropped
//	ollama     text parts of a message come back joined by "\n", reasoning as
//	           one unsigned part before the text; image URLs are dropped and
//	           inline images' media types are sniffed again; calls keep their
//	           ids only through Ollama's optional id/tool_call_id fields
//	openai_    reasoning (an input reasoning item needs the id the API gave it,
//	responses  which the log does not keep; Splice sends the client's own);
//	           an assistant message's text comes back before its calls; images
//	           outside user messages; a URL image's media type
//
// Import reads the body shapes the renderers write plus the common variants
// (string or block contents, developer messages, refusal parts, Gemini
// "parameters" schemas, Anthropic text-block system prompts, Responses'
// reasoning items and custom tool calls, a consecutive run of a Responses
// turn's items as one assistant message, Chat Completions' custom tool calls
// and deprecated function_call with its function message), and every message
// and part type of the providers' SDKs besides: a part it does not read
// (documents, audio, files, search results, server tools' blocks, Gemini's
// executableCode, Responses' hosted tools' items) is imported as a text
// naming it (opaqueText), which Splice never sends (the part goes as the
// client sent it, or is left out whole); the calls and outputs of
// Responses' built-in tools (shell, computer, apply_patch, MCP approvals)
// are calls and results, so that compaction keeps them paired. Gemini tools
// other than functionDeclarations and Responses' built-in tools are skipped.
// An Anthropic system message in the conversation (Claude Code sends its
// environment so) is imported pinned: it instructs as the system prompt
// does. Imported.Origins says where each message came from in the body.
package providers
