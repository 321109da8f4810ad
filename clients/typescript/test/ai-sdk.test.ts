import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import type { LanguageModelV3, LanguageModelV3Prompt } from "@ai-sdk/provider";
import { createOpenAI } from "@ai-sdk/openai";
import type { AIMessage, BaseMessage, ToolMessage } from "@langchain/core/messages";
import { generateText, wrapLanguageModel, type ModelMessage } from "ai";

import { CtxcError } from "../src/index.js";
import { ctxcMiddleware } from "../src/ai-sdk.js";
import { codingConversation, systemPrompt } from "./conversation.js";
import { startFakeOpenAI, type FakeOpenAI } from "./openai-server.js";
import { serverForSuite } from "./server.js";

describe("AI SDK ctxcMiddleware against ctxc serve", () => {
  const ctxc = serverForSuite();
  let llm: FakeOpenAI;
  before(async () => {
    llm = await startFakeOpenAI("All twelve steps are fixed.");
  });
  after(() => llm.close());

  it("compiles the prompt of generateText before the model sees it", async () => {
    const openai = createOpenAI({ baseURL: llm.baseURL, apiKey: "test-key" });
    const model = wrapLanguageModel({
      model: openai.chat("gpt-4o"),
      middleware: ctxcMiddleware({ client: ctxc.client, profile: "budget-aware", maxTokens: 16_000, reservedOutputTokens: 500 }),
    });
    const messages = toModelMessages(codingConversation(12));
    const result = await generateText({ model, messages, allowSystemInMessages: true });
    assert.equal(result.text, "All twelve steps are fixed.");

    const sent = llm.requests.at(-1)!;
    assert.equal(sent.messages[0].role, "system");
    assert.equal(sent.messages[0].content, systemPrompt);
    assert.equal(sent.messages.length, messages.length, "budget-aware masks here; it drops nothing");
    // Every tool call the model sees is answered, in order, and every answer has its call.
    const open = new Set<string>();
    for (const m of sent.messages) {
      for (const call of m.tool_calls ?? []) {
        open.add(call.id);
      }
      if (m.role === "tool") {
        assert.ok(open.delete(m.tool_call_id!), `tool result ${m.tool_call_id} answers no call`);
      }
    }
    assert.deepEqual([...open], []);
    // The oldest file reads are masked, oldest first.
    const masked = sent.messages.filter((m) => m.role === "tool" && String(m.content).startsWith("[output masked"));
    assert.ok(masked.length >= 5, `only ${masked.length} outputs masked`);
    assert.deepEqual(
      masked.map((m) => m.tool_call_id),
      Array.from({ length: masked.length }, (_, i) => `call_read_${i + 1}`),
    );
    assert.equal(sent.messages.at(-1)!.content, "Summarize what you changed across all steps.");
  });

  it("hands on the prompt's own message objects, rebuilding only what changed", async () => {
    const middleware = ctxcMiddleware({ client: ctxc.client, model: "gpt-4o", profile: "budget-aware", maxTokens: 16_000, reservedOutputTokens: 500 });
    const prompt = toPrompt(codingConversation(12));
    const params = await middleware.transformParams!({ type: "generate", params: { prompt }, model: fakeModel });
    const out = params.prompt;
    assert.equal(out[0], prompt[0], "the system message is the prompt's own");
    assert.equal(out.length, prompt.length);
    out.forEach((m, i) => {
      if (m === prompt[i]) {
        return;
      }
      assert.equal(m.role, "tool", `prompt[${i}] (${m.role}) was rebuilt`);
      const own = prompt[i] as Extract<LanguageModelV3Prompt[number], { role: "tool" }>;
      const got = m as typeof own;
      // The file read is masked; the test run answered in the same message is the prompt's own part.
      const [ownPart, gotPart] = [own.content[0], got.content[0]];
      assert.ok(ownPart.type === "tool-result" && gotPart.type === "tool-result");
      assert.equal(gotPart.toolCallId, ownPart.toolCallId);
      assert.equal(gotPart.toolName, ownPart.toolName);
      assert.equal(gotPart.output.type, "text");
      assert.match(String(gotPart.output.value), /^\[output masked/);
      assert.equal(got.content.length, 2);
      assert.equal(got.content[1], own.content[1]);
    });
  });

  it("summarizes with policy-driven: a user message after the first task", async () => {
    const middleware = ctxcMiddleware({ client: ctxc.client, model: "gpt-4o", profile: "policy-driven", maxTokens: 4000, reservedOutputTokens: 500 });
    const prompt = toPrompt(codingConversation(12));
    const out = (await middleware.transformParams!({ type: "generate", params: { prompt }, model: fakeModel })).prompt;
    assert.equal(out[0], prompt[0]);
    assert.equal(out[1], prompt[1], "the first task is kept");
    assert.equal(out.at(-1), prompt.at(-1), "the newest turn is passed on as it was");
    assert.ok(out.length < prompt.length);
    const summary = out[2];
    assert.ok(summary.role === "user" && summary.content[0].type === "text");
    assert.match(summary.content[0].text, /^Summary of \d+ earlier messages/);
  });

  it("takes the model and its provider from the wrapped model and fails with the server's reason for one it does not know", async () => {
    const middleware = ctxcMiddleware({ client: ctxc.client });
    const prompt = toPrompt(codingConversation(1));
    // A model the server's registry lacks is counted with its provider's defaults (seed 004)
    // when the wrapped model's provider is one the server knows; of any other provider it is unknown.
    const unregistered = await middleware.transformParams!({ type: "generate", params: { prompt }, model: { ...fakeModel, modelId: "no-such-model" } });
    assert.equal(unregistered.prompt.length, prompt.length);
    const err = await middleware.transformParams!({ type: "generate", params: { prompt }, model: { ...fakeModel, provider: "acme.chat", modelId: "no-such-model" } }).then(
      () => assert.fail("a model of no known provider was accepted"),
      (e: unknown) => e,
    );
    assert.ok(err instanceof CtxcError);
    assert.equal(err.reason, "UNKNOWN_MODEL");
    const ok = await middleware.transformParams!({ type: "generate", params: { prompt }, model: fakeModel });
    assert.equal(ok.prompt.length, prompt.length);
  });
});

const fakeModel = { specificationVersion: "v3", provider: "openai.chat", modelId: "gpt-4o" } as LanguageModelV3;

// The test conversation in the AI SDK's own message types.
function toModelMessages(messages: BaseMessage[]): ModelMessage[] {
  return messages.map((m): ModelMessage => {
    const text = String(m.content);
    switch (m.getType()) {
      case "system":
        return { role: "system", content: text };
      case "human":
        return { role: "user", content: text };
      case "ai": {
        const calls = ((m as AIMessage).tool_calls ?? []).map((c) => ({ type: "tool-call" as const, toolCallId: c.id!, toolName: c.name, input: c.args }));
        return { role: "assistant", content: [...(text ? [{ type: "text" as const, text }] : []), ...calls] };
      }
      default: {
        const t = m as ToolMessage;
        const output = t.status === "error" ? { type: "error-text" as const, value: text } : { type: "text" as const, value: text };
        return { role: "tool", content: [{ type: "tool-result", toolCallId: t.tool_call_id, toolName: t.name!, output }] };
      }
    }
  });
}

// The prompt generateText would build: user text in parts, consecutive tool messages joined.
function toPrompt(messages: BaseMessage[]): LanguageModelV3Prompt {
  const prompt: LanguageModelV3Prompt = [];
  for (const m of toModelMessages(messages)) {
    const last = prompt.at(-1);
    if (m.role === "tool" && last?.role === "tool") {
      last.content.push(...(m.content as typeof last.content));
    } else if (m.role === "user") {
      prompt.push({ role: "user", content: [{ type: "text", text: m.content as string }] });
    } else {
      prompt.push({ ...m } as LanguageModelV3Prompt[number]);
    }
  }
  return prompt;
}
