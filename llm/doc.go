// Package llm owns ctxc's client for OpenAI-compatible chat completion
// endpoints (OpenAI, Ollama, vLLM, LiteLLM): the helper models of seed 003's
// ModelConfig (planner, summarizer). It bounds every call by the request's
// deadline and the model's timeout, retries only retryable failures with
// exponential backoff and full jitter, guards each endpoint with a circuit
// breaker shared by every model on it, and traces each call with the
// OpenTelemetry GenAI conventions on the TracerProvider it is given.
//
// It also owns the small pieces both LLM policies share: PriceLookup, the
// cost of a call, and adding a call's usage to a Work.
package llm
