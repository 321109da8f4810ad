// Package proxy owns ctxc's provider-compatible endpoints: OpenAI Chat
// Completions and Responses, Anthropic Messages (and its count_tokens),
// Gemini generateContent and streamGenerateContent, and Ollama /api/chat,
// each forwarding to the upstream the configuration names, so that an agent
// gets compaction by changing only its base URL.
//
// Each call's body is compiled through the gRPC server over its in-process
// connection (so it passes the same authentication, admission, interceptors,
// limits and metrics as any API call) with input_json and
// render_into_input: the compiled conversation is spliced back into the
// client's own body (package providers, Splice), and when the compile left
// every message as it was, the client's bytes are forwarded untouched. The
// upstream's answer, streaming included, is copied back as it arrives, with
// response headers that say what ctxc did. ctxc's own refusals (a context
// that cannot fit, its own bearer token missing, overload) are answered in
// the provider's error shape; a compile that fails otherwise forwards the
// client's body or refuses, as configured.
//
// The caller's provider credentials (Authorization, x-api-key,
// x-goog-api-key, Gemini's key parameter) go to the upstream and nowhere
// else: never logged, never in a metric or an error. Bodies are never
// logged. Upstreams come only from the configuration.
package proxy
