// Package summarycache owns the summary cache of the LLM-assisted policies
// (llm_plan, llm_summarize): LLM-written text (summaries, by default) keyed
// by what was summarized and the focus asked for, and the attached documents
// later calls name by id. Every entry is the caller's own: each key is
// scoped by the namespace of the call's authenticated caller (package
// tenant), in memory and in Redis, so that a caller can neither read nor
// replace another's. It is an in-memory LRU with a TTL by default, or Redis
// when configured so that replicas share it. Concurrent identical requests
// of one caller share one computation (one LLM call). A Redis failure is a
// counted miss, never a failed request: the value is computed and returned
// all the same.
package summarycache
