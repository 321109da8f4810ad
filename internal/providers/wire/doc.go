// Package wire declares the request bodies of the model providers as their
// APIs name them: OpenAI Chat Completions, OpenAI Responses, Anthropic
// Messages, Gemini generateContent and Ollama /api/chat. They are the
// module's one set of these shapes: package providers renders, checks and
// imports bodies with them (and splices a client's body from its own bytes,
// reading it with them), eval reads request bodies and the transcripts that
// hold such messages with them, and the scripted model decodes and checks
// the requests it answers with them.
//
// Each type holds the fields some part of ctxc reads or writes, not every
// field of the API: a decoded body is a view, never what is sent again (the
// proxy forwards the client's own bytes). Fields written on render carry
// omitempty where the API takes them absent; fields that hold a value of
// several shapes (a content that is a string or blocks, a schema) are
// json.RawMessage, read by whoever needs them.
package wire
