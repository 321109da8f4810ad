// Package agentstate owns the domain of a request: the agent state and its log
// (messages, parts, executions, masks), the model it is compiled for, the
// per-call options, the view entries a compile works on, token budgets and how
// they were counted, and the typed errors that the server maps to gRPC status
// codes. Every other package takes its messages from here; none defines its own.
//
// It imports no generated code: proto types stop at the server's conversion.
package agentstate
