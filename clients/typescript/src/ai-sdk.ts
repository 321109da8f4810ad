// The Vercel AI SDK adapter: a language-model middleware for wrapLanguageModel
// whose transformParams compiles the prompt through ctxc before every call.
import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3Message,
  LanguageModelV3Middleware,
  LanguageModelV3Prompt,
  LanguageModelV3ToolResultOutput,
  LanguageModelV3ToolResultPart,
} from "@ai-sdk/provider";

import { compileLog, parseArguments, systemMessageId, uniqueIds, type AdapterOptions } from "./adapter.js";
import { Role, type Message, type Part } from "./gen/ctxc/v1/agent_state_pb.js";
import { message, text, toolCall, toolResult, type MessageInit, type PartInit, type ToolDefinitionInit } from "./messages.js";

export type CtxcMiddlewareOptions = AdapterOptions;

type AssistantPart = Extract<LanguageModelV3Message, { role: "assistant" }>["content"][number];

/**
 * ctxcMiddleware compiles each call's prompt through ctxc:
 *
 *     const model = wrapLanguageModel({ model: openai("gpt-4o"), middleware: ctxcMiddleware({ client }) });
 *
 * The model is the wrapped model's id unless options.model names one; the
 * call's function tools count against the window. Messages the compile left as
 * they were are passed on as the very objects of the prompt; masked, truncated
 * or repaired ones are rebuilt with the same tool call ids; summaries arrive as
 * user messages.
 */
export function ctxcMiddleware(options: CtxcMiddlewareOptions): LanguageModelV3Middleware {
  return {
    specificationVersion: "v3",
    transformParams: async ({ params, model }) => ({ ...params, prompt: await compilePrompt(params, model, options) }),
  };
}

async function compilePrompt(params: LanguageModelV3CallOptions, model: LanguageModelV3, options: CtxcMiddlewareOptions): Promise<LanguageModelV3Prompt> {
  const prompt = params.prompt;
  const system = prompt.length > 0 && prompt[0].role === "system" ? prompt[0] : undefined;
  const log = system ? prompt.slice(1) : prompt;
  const ids = uniqueIds(log.map(() => undefined), "m");
  const byId = new Map(log.map((m, i) => [ids[i], m]));
  const tools: ToolDefinitionInit[] = (params.tools ?? []).flatMap((t) =>
    t.type === "function" ? [{ name: t.name, description: t.description ?? "", parametersJson: JSON.stringify(t.inputSchema) }] : [],
  );
  const spec = options.model ?? { name: model.modelId, provider: model.provider.split(".")[0] };
  const systemPrompt = system?.content ?? "";
  const compiled = await compileLog(options, spec, systemPrompt, log.map((m, i) => toCtxc(m, ids[i], system ? i + 1 : i)), tools);
  return compiled.messages.flatMap((m): LanguageModelV3Message[] => {
    if (m.id === systemMessageId && system && textOf(m.parts) === systemPrompt) {
      return [system];
    }
    const own = byId.get(m.id);
    if (own && compiled.unchanged(m)) {
      return [own];
    }
    return [fromCtxc(m, own)];
  });
}

function toCtxc(m: LanguageModelV3Message, id: string, index: number): MessageInit {
  const where = `prompt[${index}]`;
  switch (m.role) {
    case "system":
      return message(id, Role.SYSTEM, text(m.content));
    case "user":
    case "assistant": {
      const parts = m.content.map((p, j): PartInit => {
        const at = `${where}.content[${j}]`;
        switch (p.type) {
          case "text":
            return text(p.text);
          case "reasoning":
            return { content: { case: "reasoning", value: { text: p.text } } };
          case "tool-call":
            return toolCall(p.toolCallId, p.toolName, p.input);
          case "file":
            if (!p.mediaType.startsWith("image/")) {
              throw new Error(`${at}: ctxc cannot compile a ${p.mediaType} file`);
            }
            if (p.data instanceof URL) {
              return { content: { case: "image", value: { source: { case: "url", value: p.data.toString() }, mediaType: p.mediaType } } };
            }
            return {
              content: {
                case: "image",
                value: { source: { case: "data", value: typeof p.data === "string" ? Buffer.from(p.data, "base64") : p.data }, mediaType: p.mediaType },
              },
            };
          default:
            throw new Error(`${at}: ctxc cannot compile a "${p.type}" part in a ${m.role} message`);
        }
      });
      return message(id, m.role === "user" ? Role.USER : Role.ASSISTANT, ...(parts.length > 0 ? parts : [text("")]));
    }
    case "tool":
      return message(
        id,
        Role.TOOL,
        ...m.content.map((p, j) => {
          if (p.type !== "tool-result") {
            throw new Error(`${where}.content[${j}]: ctxc cannot compile a "${p.type}" part`);
          }
          const [content, isError] = outputText(p.output);
          return toolResult(p.toolCallId, p.toolName, content, isError);
        }),
      );
  }
}

function outputText(output: LanguageModelV3ToolResultOutput): [string, boolean] {
  switch (output.type) {
    case "text":
      return [output.value, false];
    case "error-text":
      return [output.value, true];
    case "json":
      return [JSON.stringify(output.value), false];
    case "error-json":
      return [JSON.stringify(output.value), true];
    case "execution-denied":
      return [output.reason ?? "execution denied", true];
    case "content":
      return [output.value.map((v) => (v.type === "text" ? v.text : "")).join(""), false];
  }
}

function textOf(parts: Part[]): string {
  return parts.map((p) => (p.content.case === "text" ? p.content.value : "")).join("");
}

// fromCtxc rebuilds a prompt message the compile changed or synthesized,
// keeping the provider options of the message it stands for.
function fromCtxc(m: Message, own: LanguageModelV3Message | undefined): LanguageModelV3Message {
  const providerOptions = own?.providerOptions ? { providerOptions: own.providerOptions } : {};
  switch (m.role) {
    case Role.SYSTEM:
      return { role: "system", content: textOf(m.parts), ...providerOptions };
    case Role.USER:
      return { role: "user", content: m.parts.flatMap((p) => (p.content.case === "text" ? [{ type: "text" as const, text: p.content.value }] : [])), ...providerOptions };
    case Role.ASSISTANT:
      return {
        role: "assistant",
        content: m.parts.flatMap((p): AssistantPart[] => {
          switch (p.content.case) {
            case "text":
              return [{ type: "text" as const, text: p.content.value }];
            case "reasoning":
              return [{ type: "reasoning" as const, text: p.content.value.text }];
            case "toolCall":
              return [{ type: "tool-call" as const, toolCallId: p.content.value.id, toolName: p.content.value.name, input: parseArguments(p.content.value.argumentsJson) }];
            default:
              return [];
          }
        }),
        ...providerOptions,
      };
    case Role.TOOL:
      return {
        role: "tool",
        content: m.parts.flatMap((p): LanguageModelV3ToolResultPart[] => {
          if (p.content.case !== "toolResult") {
            return [];
          }
          const r = p.content.value;
          return [{ type: "tool-result", toolCallId: r.toolCallId, toolName: r.name, output: { type: r.isError ? "error-text" : "text", value: r.content } }];
        }),
        ...providerOptions,
      };
    default:
      throw new Error(`ctxc returned message ${m.id} with role ${m.role}`);
  }
}
