// Package planning owns the "llm_plan" policy of the plan stage (the LLM
// artifact planner). Artifacts are the tool results in the view (of the
// current and earlier turns) and the request's attached documents.
// ShouldUseLLMPlanning decides whether a planner call is worth it; if so, one
// call to the planner model returns a validated plan (per artifact: include,
// summarize, extract or exclude, with a priority), which is executed within
// the token budget in priority order. extract is BM25 retrieval over the
// artifact's chunks. Without a planner, or when it fails, a deterministic
// plan is used: include what fits newest first, extract the rest.
//
// Placement: attachments become one synthesized user message (Kind event,
// id "ctxc-attachments") right before the latest user turn, so the recency
// window stays contiguous and the question stays last. Tool results are
// changed in place: the message and its tool_result part (with its call id)
// stay, only the content is replaced, and the change is recorded as masked
// (exclude) or truncated (summarize, extract). Entries policies.Protection
// marks are never changed, with one exception that honours invariant 6 of
// docs/ARCHITECTURE.md as the runner does: when the view exceeds the hard window, tool results of
// the recent turns and the running execution may be shrunk too, but they stay
// visible (content replaced, never removed). Pinned messages and unresolved
// failures are never changed.
package planning
