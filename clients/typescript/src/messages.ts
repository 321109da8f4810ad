import type { MessageInitShape } from "@bufbuild/protobuf";

import { Role, type MessageSchema, type ModelSpecSchema, type PartSchema, type ToolDefinitionSchema } from "./gen/ctxc/v1/agent_state_pb.js";

export type MessageInit = MessageInitShape<typeof MessageSchema>;
export type PartInit = MessageInitShape<typeof PartSchema>;
export type ModelSpecInit = MessageInitShape<typeof ModelSpecSchema>;
export type ToolDefinitionInit = MessageInitShape<typeof ToolDefinitionSchema>;

/** text is a plain-text part. */
export function text(value: string): PartInit {
  return { content: { case: "text", value } };
}

/** toolCall is an assistant's call of a tool; args is a JSON document or a value to encode as one. */
export function toolCall(id: string, name: string, args: unknown): PartInit {
  const argumentsJson = typeof args === "string" ? args : JSON.stringify(args ?? {});
  return { content: { case: "toolCall", value: { id, name, argumentsJson } } };
}

/** toolResult is the outcome of the call toolCallId, for a ROLE_TOOL message. */
export function toolResult(toolCallId: string, name: string, content: string, isError = false): PartInit {
  return { content: { case: "toolResult", value: { toolCallId, name, content, isError } } };
}

/** message is a log message. */
export function message(id: string, role: Role, ...parts: PartInit[]): MessageInit {
  return { id, role, parts };
}

/** user, assistant and tool build the common messages. */
export const user = (id: string, value: string): MessageInit => message(id, Role.USER, text(value));
export const assistant = (id: string, ...parts: PartInit[]): MessageInit => message(id, Role.ASSISTANT, ...parts);
export const tool = (id: string, ...results: PartInit[]): MessageInit => message(id, Role.TOOL, ...results);

/** modelSpec accepts a model name ("gpt-4o") or a whole ModelSpec. */
export function modelSpec(model: string | ModelSpecInit): ModelSpecInit {
  return typeof model === "string" ? { name: model } : model;
}
