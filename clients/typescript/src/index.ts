// @ctxc/client: a typed gRPC client for ctxc, the context compiler for LLM
// agents. The framework adapters are separate entry points:
// "@ctxc/client/langchain" and "@ctxc/client/ai-sdk".
export { CtxcClient, retryUnavailable, type CtxcClientOptions, type RetryOptions } from "./client.js";
export type { BudgetRequestInit, CompactRequestInit, CompileRequestInit, CountTokensRequestInit, RouteRequestInit } from "./client.js";
export { CtxcError, type FieldViolation } from "./errors.js";
export { REASON_STATE_REF_NOT_FOUND, StateRefs, type StateRefCounts } from "./refs.js";
export { assistant, message, modelSpec, text, tool, toolCall, toolResult, user } from "./messages.js";
export type { MessageInit, ModelSpecInit, PartInit, ToolDefinitionInit } from "./messages.js";
export type { AdapterOptions } from "./adapter.js";
export { VERSION } from "./version.js";
export * from "./gen/ctxc/v1/agent_state_pb.js";
export * from "./gen/ctxc/v1/compiler_service_pb.js";
