// Package llm owns ctxc's client for OpenAI-compatible chat completion
// endpoints (OpenAI, Ollama, vLLM, LiteLLM): the helper models (planner,
// summarizer). It bounds every call by the request's deadline and the model's
// timeout, retries only retryable failures with exponential backoff and full
// jitter, guards each endpoint with a circuit breaker shared by every model
// on it, and traces each call with the OpenTelemetry GenAI conventions on the
// TracerProvider it is given.
//
// It knows nothing of the domain: what a call cost and how it is reported
// belong to package policies/accounting.
package llm
