// Package policies is the policy contract of ctxc, public so that a Go
// program can add its own policies: the working set a pipeline run passes
// from stage to stage (Work, over the domain types of package agentstate),
// the report it keeps, the Policy and Factory interfaces, the Registry of
// factories and the stage kinds in their fixed order. The built-in policies
// live beneath it, one package per policy family (normalize, project,
// isolate, estimate, budget, plan, decide, compaction, llmsummary, render);
// the runtime that schedules them is internal.
//
// A policy's Apply takes the whole Work; the helpers beneath it take what
// they use (a TokenCounter, the entries, a small interface over Work such as
// the log lookup or the ledger, or the numbers), so that what a helper may
// read or write shows in its signature.
package policies
