// Package pipeline owns profiles and their execution: the built-in profiles,
// custom profiles decoded from the config file, the Catalog that validates and
// builds every profile once at start, and the runner that executes a profile's
// steps in stage order with one OpenTelemetry span per step, timing, error
// wrapping ("stage %s: %w") and the central invariant check after every step.
// Requests only look profiles up.
package pipeline
