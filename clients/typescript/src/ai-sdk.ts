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

import { compileLog, parseArguments, systemMessageId, type AdapterOptions } from "./adapter.js";
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
  const at = (i: number) => `prompt[${system ? i + 1 : i}]`;
  // A tool message with several results becomes one ctxc message per result,
  // so each is judged on its own; they are joined again on the way back.
  const entries: { init: MessageInit; origin: number; part: number }[] = [];
  log.forEach((m, i) => {
    if (m.role === "tool") {
      m.content.forEach((p, j) => entries.push({ init: toolResultMessage(p, `m${i}.${j}`, `${at(i)}.content[${j}]`), origin: i, part: j }));
    } else {
      entries.push({ init: toCtxc(m, `m${i}`, at(i)), origin: i, part: -1 });
    }
  });
  const byId = new Map(entries.map((e) => [e.init.id, e]));
  const tools: ToolDefinitionInit[] = (params.tools ?? []).flatMap((t) =>
    t.type === "function" ? [{ name: t.name, description: t.description ?? "", parametersJson: JSON.stringify(t.inputSchema) }] : [],
  );
  const spec = options.model ?? { name: model.modelId, provider: model.provider.split(".")[0] };
  const systemPrompt = system?.content ?? "";
  const compiled = await compileLog(options, spec, systemPrompt, entries.map((e) => e.init), tools);

  const out: LanguageModelV3Message[] = [];
  // The tool message being joined again: its origin and how many of its parts came back as they were.
  let joining: { origin: number; unchanged: number } | undefined;
  for (const m of compiled.messages) {
    const entry = byId.get(m.id);
    if (entry && entry.part >= 0) {
      const own = log[entry.origin] as ToolMessage;
      const unchanged = compiled.unchanged(m);
      const part = unchanged ? own.content[entry.part] : (fromCtxc(m, own) as ToolMessage).content[0];
      if (joining?.origin === entry.origin) {
        (out.at(-1) as ToolMessage).content.push(part);
      } else {
        out.push({ role: "tool", content: [part], ...(own.providerOptions ? { providerOptions: own.providerOptions } : {}) });
        joining = { origin: entry.origin, unchanged: 0 };
      }
      joining.unchanged += unchanged ? 1 : 0;
      if (joining.unchanged === own.content.length) {
        out[out.length - 1] = own;
      }
      continue;
    }
    joining = undefined;
    if (m.id === systemMessageId && system && textOf(m.parts) === systemPrompt) {
      out.push(system);
    } else if (entry && compiled.unchanged(m)) {
      out.push(log[entry.origin]);
    } else {
      out.push(fromCtxc(m, entry && log[entry.origin]));
    }
  }
  return out;
}

type ToolMessage = Extract<LanguageModelV3Message, { role: "tool" }>;

function toolResultMessage(p: ToolMessage["content"][number], id: string, where: string): MessageInit {
  if (p.type !== "tool-result") {
    throw new Error(`${where}: ctxc cannot compile a "${p.type}" part`);
  }
  const [content, isError] = outputText(p.output);
  return message(id, Role.TOOL, toolResult(p.toolCallId, p.toolName, content, isError));
}

function toCtxc(m: Exclude<LanguageModelV3Message, ToolMessage>, id: string, where: string): MessageInit {
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
