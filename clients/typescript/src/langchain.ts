// The LangChain.js adapter: compileMessages has the shape of trimMessages from
// @langchain/core/messages (BaseMessage[] in, BaseMessage[] out, or a Runnable
// when called with options only), so an agent swaps one call and gets ctxc's
// compaction instead of a cut at the front of the list.
import {
  AIMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
  type BaseMessage,
  type MessageContent,
  type ToolCall,
} from "@langchain/core/messages";
import { RunnableLambda, type Runnable } from "@langchain/core/runnables";

import { compileLog, parseArguments, systemMessageId, uniqueIds, type AdapterOptions } from "./adapter.js";
import { MessageKind, Role, type Message, type Part } from "./gen/ctxc/v1/agent_state_pb.js";
import { message, text, toolCall, toolResult, type MessageInit, type PartInit, type ToolDefinitionInit } from "./messages.js";

export interface CompileMessagesFields extends AdapterOptions {
  /** The model the context is for, such as "gpt-4o" (selects tokenizer and window). */
  model: AdapterOptions["model"] & {};
  /** Tool definitions offered to the model: they count against the window. */
  tools?: { name: string; description?: string; schema?: unknown }[];
}

/**
 * compileMessages compiles a LangChain conversation through ctxc and returns the
 * messages to send. A leading SystemMessage is the system prompt. Messages the
 * compile left as they were come back as the very objects passed in; masked,
 * truncated or repaired ones as new messages of the same class with the same
 * id, tool_call_id and tool_calls; summaries as HumanMessages whose id starts
 * with "ctxc-". Tool calls are never separated from their results.
 *
 * Like trimMessages, called with options only it returns a Runnable.
 */
export function compileMessages(options: CompileMessagesFields): Runnable<BaseMessage[], BaseMessage[]>;
export function compileMessages(messages: BaseMessage[], options: CompileMessagesFields): Promise<BaseMessage[]>;
export function compileMessages(
  messagesOrOptions: BaseMessage[] | CompileMessagesFields,
  options?: CompileMessagesFields,
): Runnable<BaseMessage[], BaseMessage[]> | Promise<BaseMessage[]> {
  if (Array.isArray(messagesOrOptions)) {
    if (!options) {
      throw new Error("compileMessages: options are required with messages");
    }
    return compile(messagesOrOptions, options);
  }
  const fields = messagesOrOptions;
  return RunnableLambda.from((messages: BaseMessage[]) => compile(messages, fields)).withConfig({ runName: "ctxc_compile_messages" });
}

async function compile(messages: BaseMessage[], options: CompileMessagesFields): Promise<BaseMessage[]> {
  const system = messages.length > 0 && messages[0].getType() === "system" ? messages[0] : undefined;
  const log = system ? messages.slice(1) : messages;
  const ids = uniqueIds(log.map((m) => m.id), "lc-");
  const byId = new Map(log.map((m, i) => [ids[i], m]));
  const tools: ToolDefinitionInit[] = (options.tools ?? []).map((t) => ({
    name: t.name,
    description: t.description ?? "",
    parametersJson: t.schema === undefined ? "" : JSON.stringify(t.schema),
  }));
  const systemPrompt = system ? textOf(system.content, "messages[0]") : "";
  // A ToolMessage without a name takes its call's, as ctxc would otherwise fill it in as a repair.
  const callNames = new Map(log.flatMap((m) => (m.getType() === "ai" ? ((m as AIMessage).tool_calls ?? []).map((c) => [c.id, c.name] as const) : [])));
  const converted = log.map((m, i) => toCtxc(m, ids[i], system ? i + 1 : i, callNames));
  const compiled = await compileLog(options, options.model, systemPrompt, converted, tools);
  return compiled.messages.flatMap((m): BaseMessage[] => {
    if (m.id === systemMessageId && system && textOfParts(m.parts) === systemPrompt) {
      return [system];
    }
    const own = byId.get(m.id);
    if (own && compiled.unchanged(m)) {
      return [own];
    }
    return fromCtxc(m, own);
  });
}

function toCtxc(m: BaseMessage, id: string, index: number, callNames: Map<string | undefined, string>): MessageInit {
  const where = `messages[${index}]`;
  switch (m.getType()) {
    case "human":
      return message(id, Role.USER, ...contentParts(m.content, where));
    case "system":
      return message(id, Role.SYSTEM, text(textOf(m.content, where)));
    case "ai": {
      const ai = m as AIMessage;
      const parts = contentParts(ai.content, where, true);
      for (const call of ai.tool_calls ?? []) {
        if (!call.id) {
          throw new Error(`${where}.tool_calls: a tool call without an id cannot be paired with its result`);
        }
        parts.push(toolCall(call.id, call.name, call.args));
      }
      return message(id, Role.ASSISTANT, ...(parts.length > 0 ? parts : [text("")]));
    }
    case "tool": {
      const t = m as ToolMessage;
      const name = t.name ?? callNames.get(t.tool_call_id) ?? "";
      return message(id, Role.TOOL, toolResult(t.tool_call_id, name, textOf(t.content, where), t.status === "error"));
    }
    default:
      throw new Error(`${where}: ctxc cannot compile a "${m.getType()}" message (use human, ai, system and tool messages)`);
  }
}

// contentParts turns message content into text and image parts. Tool-use
// blocks of an AI message are skipped: its tool_calls carry the same calls.
function contentParts(content: MessageContent, where: string, ai = false): PartInit[] {
  if (typeof content === "string") {
    return content === "" ? [] : [text(content)];
  }
  const parts: PartInit[] = [];
  content.forEach((block, j) => {
    const b = block as Record<string, unknown>;
    switch (b.type) {
      case "text":
        parts.push(text(String(b.text ?? "")));
        break;
      case "image_url": {
        const url = typeof b.image_url === "string" ? b.image_url : (b.image_url as { url?: string } | undefined)?.url;
        if (!url) {
          throw new Error(`${where}.content[${j}]: image_url block without a url`);
        }
        parts.push({ content: { case: "image", value: { source: { case: "url", value: url } } } });
        break;
      }
      case "reasoning":
      case "thinking": {
        const reasoning = String(b.reasoning ?? b.thinking ?? b.text ?? "");
        parts.push({ content: { case: "reasoning", value: { text: reasoning } } });
        break;
      }
      case "tool_use":
      case "tool_call":
      case "input_json_delta":
        if (ai) {
          break;
        }
      // falls through: tool blocks outside an AI message are not supported
      default:
        throw new Error(`${where}.content[${j}]: ctxc cannot compile a "${String(b.type)}" content block`);
    }
  });
  return parts;
}

function textOf(content: MessageContent, where: string): string {
  return contentParts(content, where)
    .map((p) => (p.content?.case === "text" ? p.content.value : ""))
    .join("");
}

function textOfParts(parts: Part[]): string {
  return parts.map((p) => (p.content.case === "text" ? p.content.value : "")).join("");
}

// fromCtxc turns a compiled message that is not the caller's own object back
// into LangChain messages, keeping the fields of the original it stands for.
function fromCtxc(m: Message, own: BaseMessage | undefined): BaseMessage[] {
  const common = {
    id: own ? own.id : m.id,
    name: own?.name,
    additional_kwargs: own?.additional_kwargs ?? {},
    response_metadata: {
      ...own?.response_metadata,
      ...(own ? {} : { ctxc: { kind: MessageKind[m.kind], coversMessageIds: m.coversMessageIds } }),
    },
  };
  const content = textOfParts(m.parts);
  switch (m.role) {
    case Role.SYSTEM:
      return [new SystemMessage({ ...common, content })];
    case Role.USER:
      return [new HumanMessage({ ...common, content })];
    case Role.ASSISTANT: {
      const tool_calls: ToolCall[] = m.parts.flatMap((p) =>
        p.content.case === "toolCall"
          ? [{ type: "tool_call" as const, id: p.content.value.id, name: p.content.value.name, args: parseArguments(p.content.value.argumentsJson) }]
          : [],
      );
      return [new AIMessage({ ...common, content, tool_calls })];
    }
    case Role.TOOL:
      return m.parts.flatMap((p) => {
        if (p.content.case !== "toolResult") {
          return [];
        }
        const r = p.content.value;
        const ownTool = own?.getType() === "tool" ? (own as ToolMessage) : undefined;
        return [
          new ToolMessage({
            ...common,
            name: r.name || common.name,
            content: r.content,
            tool_call_id: r.toolCallId,
            status: r.isError ? "error" : "success",
            artifact: ownTool?.artifact,
          }),
        ];
      });
    default:
      throw new Error(`ctxc returned message ${m.id} with role ${m.role}`);
  }
}
