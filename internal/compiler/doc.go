// Package compiler is ctxc's application layer: it owns the use cases the API
// offers, in domain terms and without protobuf. Compile runs a profile on a
// state and returns what the model should see; Budget runs it up to its
// budget stage; Compact persists its compaction into a new state; Route
// appends a user turn, a step's output or an event to the log (package
// compiler/routing) and compacts the state when an execution ends and the
// profile asks for it; CountTokens counts with a model's or an encoding's
// counter; Profiles describes the profiles.
//
// Around the pipeline (package policies/pipeline) it owns what every call
// shares: loading a state (the lifecycle checks, with reset and the call's
// model, and the provider lock the model registry derives), the Compile input
// (a conversation in a provider's format, read by package providers, system
// prompt templates, and attachments: one named by id alone is looked up in
// the AttachmentStore, one sent with content is kept there for later calls),
// the stable-prefix rule of omit_stable_prefix, rendering the result when the
// profile has no render stage, and the request limits.
//
// The gRPC adapter (package server) decodes a request into these types, calls
// one use case and encodes the result; nothing here knows the wire. See
// docs/ARCHITECTURE.md for the layers and the flow of one request.
package compiler
