// Package decide owns the decide stage: the triggers that say when a context
// should be compacted (CompactionTrigger). Each trigger is its own
// policy type — threshold, headroom, message_count and composite (any/all over
// nested triggers) — independent of the compact stage's transforms, so a
// profile pairs any trigger with any chain of transforms (split
// compactor).
//
// A trigger that fires sets Work.Decision: compact, why, and the target.
// Compaction happens at user-message boundaries and at
// the end of executions: while an execution runs and the view does not end
// with a regular user message, a firing trigger defers instead (the runner still
// forces compaction when the hard window is exceeded).
package decide
