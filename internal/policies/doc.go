// Package policies owns the contract between the pipeline and the policies that
// fill its stages: the working set a pipeline run passes from stage to stage
// (Work, over the domain types of package agentstate), the report it keeps, the
// Policy and Factory interfaces, the Registry of factories and the stage kinds
// in their fixed order.
package policies
