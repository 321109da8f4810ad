// Package llmsummary owns the "llm_summarize" compact policy: the
// "summarize" policy of package compaction (same span selection, covered
// ids, dispositions and invariants) with a summary written by a helper model
// through an OpenAI-compatible endpoint. The model gets a structured template
// (goal, user constraints quoted verbatim, decisions, files and resources,
// open errors, next steps), the previous summary to merge, and the history as
// quoted data it must not obey; its input is bounded by its own window
// (chunked and folded when larger) and tool outputs are cut for it. A summary
// that is empty or over budget is rejected. Summaries are cached by what they
// cover. Any failure falls back to the deterministic summary with a degraded
// step, unless the config is strict.
package llmsummary
