// The part both framework adapters share: compile a log whose messages carry
// ids and tell, for each compiled message, whether it is a log message the
// compile left as it was (so the adapter hands back the caller's own object).
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { CallOptions } from "@connectrpc/connect";

import type { CtxcClient } from "./client.js";
import type { Message } from "./gen/ctxc/v1/agent_state_pb.js";
import { Disposition, type CompileOptionsSchema, type CompileResponse } from "./gen/ctxc/v1/compiler_service_pb.js";
import { modelSpec, type MessageInit, type ModelSpecInit, type ToolDefinitionInit } from "./messages.js";

/** What every adapter takes. */
export interface AdapterOptions {
  /** The ctxc client to compile through. */
  client: CtxcClient;
  /** The model the context is for ("gpt-4o", or a ModelSpec with a window for a model the registry lacks). */
  model?: string | ModelSpecInit;
  /** The profile ("pragmatic", "budget-aware", "policy-driven", "llm-assisted" or one of your server's); empty selects the server's default. */
  profile?: string;
  /** Caps the context window below the model's, like trimMessages' maxTokens. */
  maxTokens?: number;
  /** Tokens kept free for the answer; default: the model's. */
  reservedOutputTokens?: number;
  /** Any other compile options (view, soft threshold, template variables). */
  compileOptions?: MessageInitShape<typeof CompileOptionsSchema>;
  /** Per-call options (deadline, abort signal, headers). */
  callOptions?: CallOptions;
}

/** The system prompt message's id in a compiled context. */
export const systemMessageId = "ctxc-system";

export interface CompiledLog {
  /** The messages to send, system prompt first. */
  messages: Message[];
  /** Whether a compiled message is a log message sent exactly as it was. */
  unchanged(message: Message): boolean;
  response: CompileResponse;
}

export async function compileLog(
  options: AdapterOptions,
  model: string | ModelSpecInit,
  systemPrompt: string,
  messages: MessageInit[],
  tools: ToolDefinitionInit[],
): Promise<CompiledLog> {
  const compileOptions: MessageInitShape<typeof CompileOptionsSchema> = { ...options.compileOptions };
  if (options.maxTokens !== undefined) {
    compileOptions.maxContextTokenCount = options.maxTokens;
  }
  if (options.reservedOutputTokens !== undefined) {
    compileOptions.reservedOutputTokenCount = options.reservedOutputTokens;
  }
  const response = await options.client.compile(
    {
      state: { model: modelSpec(model), context: { systemPrompt, messages, tools } },
      profile: options.profile ?? "",
      options: compileOptions,
    },
    options.callOptions,
  );
  const kept = new Set<string>();
  for (const report of response.report?.messages ?? []) {
    if (report.disposition === Disposition.KEPT) {
      kept.add(report.messageId);
    }
  }
  return { messages: response.messages, unchanged: (m) => kept.has(m.id), response };
}

/** uniqueIds gives every message an id: its own, or a generated one no other message has. */
export function uniqueIds(own: (string | undefined)[], prefix: string): string[] {
  const taken = new Set(own.filter((id): id is string => !!id));
  return own.map((id, i) => {
    if (id) {
      return id;
    }
    let generated = `${prefix}${i}`;
    for (let n = 1; taken.has(generated); n++) {
      generated = `${prefix}${i}-${n}`;
    }
    taken.add(generated);
    return generated;
  });
}

/** parseArguments decodes a tool call's JSON arguments; text that is not JSON stays a string. */
export function parseArguments(json: string): Record<string, unknown> {
  if (json === "") {
    return {};
  }
  try {
    return JSON.parse(json) as Record<string, unknown>;
  } catch {
    return { input: json };
  }
}
