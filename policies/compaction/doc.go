// Package compaction owns the compact stage's transforms, each its own policy
// type, run cheap first in profile order: clamp (cut oversized parts), dedupe
// (mask superseded reads and repeated results), mask_observations (observation
// masking towards the target), drop_low_importance (importance
// scores), summarize (one summary message for a span of older turns) and
// truncate (the contiguous-recency fallback).
//
// Every transform keeps the entries policies.Protection marks verbatim, moves
// tool units (a call with all its results) whole, records what it did to each
// log message with Work.Dispose, and is deterministic. The runner decides
// whether a transform runs, re-measures after it, and reverts it when it did
// not shrink the context.
package compaction
