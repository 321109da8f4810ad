// Package pipelinetest holds the pipeline's end-to-end, property and
// long-session tests: the built-in profiles, built in process as `ctxc
// serve` builds them (package server, or a pipeline.Catalog of
// components.Factories), run over generated, recorded and fuzzed states and
// sessions, and held to the invariants of docs/ARCHITECTURE.md and the
// figures of docs/measuring.md. It has no code of its own; the CLI's own
// tests (flags, output, the guides' eval blocks) stay in cmd/ctxc.
//
// The long tests skip under `go test -short`; `make test` runs them all.
package pipelinetest
