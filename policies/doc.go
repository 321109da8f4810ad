// Package policies owns the contract between the pipeline and the policies that
// fill its stages: the domain types of an agent state, the working set a
// pipeline run passes from stage to stage, the Policy and Factory interfaces,
// the Registry of factories, the stage kinds in their fixed order, and the typed
// errors that the server maps to gRPC status codes.
//
// It imports no generated code: proto types stop at the server's conversion.
package policies
