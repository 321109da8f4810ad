// Package plan owns the plan stage's policies: "llm_plan" (the LLM
// artifact planner) and "place_attachments" (the deterministic plan of the
// request's attachments alone, without a model). Artifacts are the tool
// results in the view (of the current and earlier turns) and the request's
// attached documents. ShouldUseLLMPlanning decides whether a planner call is
// worth it; if so, one call to the planner model returns a validated plan
// (per artifact: include, summarize, extract or exclude, with a priority),
// which is executed within the token budget in priority order. The planner
// sees the latest user turn and the agent's goal (Options.Goal), and its plan
// uses the planner's field names (relevance_rationale, summarization_focus,
// extraction_query; strategies include_full, summarize, rag_extract,
// exclude). extract is BM25 retrieval over the artifact's chunks, against the
// plan's query, else the latest user turn and the goal. Without a planner, or
// when it fails, a deterministic plan is used: include what fits newest first,
// extract the rest. "place_attachments" is that plan for attachments only;
// the catalog runs it in the plan stage's place for a profile without a plan
// stage when a request carries attachments.
//
// Placement: attachments become one synthesized, pinned user message (Kind
// event, id "ctxc-attachments") right before the latest user turn, so the
// recency window stays contiguous, the question stays last and compaction
// keeps what was sized to the budget. An attachment left out is named in a
// warning, as is one "place_attachments" had to cut to an extract. Tool
// results are changed in place: the message and its tool_result part (with
// its call id) stay, only the content is replaced, and the change is recorded
// as masked (exclude) or truncated (summarize, extract). Entries
// policies.Protection marks are never changed, with one exception that
// honours invariant 6 of docs/ARCHITECTURE.md as the runner does: when the
// view exceeds the hard window and what is protected does not fit it on its
// own (so compacting older material cannot make room), tool results of the
// recent turns and the running execution may be shrunk too, but they stay
// visible (content replaced, never removed). Pinned messages and unresolved failures are never
// changed.
package plan
