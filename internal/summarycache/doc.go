// Package summarycache owns the summary cache of the LLM-assisted policies
// (llm_plan, llm_summarize): LLM-written text
// (summaries, by default) keyed by what was summarized and the focus asked
// for. It is an in-memory LRU with a TTL by default, or Redis when configured
// so that replicas share it. Concurrent identical requests share one
// computation (one LLM call). A Redis failure is a counted miss, never a
// failed request: the value is computed and returned all the same.
package summarycache
