import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { AIMessage, HumanMessage, SystemMessage, ToolMessage, trimMessages, type BaseMessage } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";

import { CtxcError } from "../src/index.js";
import { compileMessages } from "../src/langchain.js";
import { codingConversation } from "./conversation.js";
import { assertToolPairing } from "./pairing.js";
import { serverForSuite } from "./server.js";

describe("LangChain.js compileMessages against ctxc serve", () => {
  const ctxc = serverForSuite();

  it("returns the caller's own objects when nothing needs compacting", async () => {
    const conversation = codingConversation(3);
    const out = await compileMessages(conversation, { client: ctxc.client, model: "gpt-4o" });
    assert.equal(out.length, conversation.length);
    out.forEach((m, i) => assert.equal(m, conversation[i], `message ${i} is not the object passed in`));
  });

  it("compacts a long tool-using conversation into a window, keeping pairs, ids and the system message", async () => {
    const conversation = codingConversation(12);
    const byId = new Map(conversation.map((m) => [m.id, m]));
    const out = await compileMessages(conversation, { client: ctxc.client, model: "gpt-4o", profile: "budget-aware", maxTokens: 16_000, reservedOutputTokens: 500 });

    assert.ok(out[0] instanceof SystemMessage);
    assert.equal(out[0], conversation[0], "the system message is the caller's own");
    assert.equal(out.at(-1), conversation.at(-1), "the newest user turn is sent as it was");
    assertToolPairing(out);

    // The oldest file reads are masked, oldest first; nothing is dropped.
    const masked = out.filter((m) => m instanceof ToolMessage && m !== byId.get(m.id)) as ToolMessage[];
    assert.ok(masked.length >= 5, `only ${masked.length} outputs masked`);
    assert.deepEqual(
      masked.map((m) => m.id),
      Array.from({ length: masked.length }, (_, i) => `t${i + 1}r`),
    );
    assert.equal(out.length, conversation.length);
    for (const m of masked) {
      const own = byId.get(m.id) as ToolMessage;
      assert.ok(own, `masked message ${m.id} has an id the conversation does not`);
      assert.equal(m.tool_call_id, own.tool_call_id);
      assert.equal(m.name, own.name);
      assert.equal(m.status, own.status ?? "success");
      assert.match(String(m.content), /^\[output masked: message /);
      assert.ok(String(m.content).length < String(own.content).length);
    }
    for (const m of out) {
      if (!byId.has(m.id)) {
        assert.match(m.id ?? "", /^ctxc-/, `message ${m.id} is neither the caller's nor ctxc's`);
      } else if (m.getType() !== "tool") {
        assert.equal(m, byId.get(m.id), `${m.id} changed though only tool outputs are masked`);
      }
    }
    // The newest step's outputs are what the agent works from: never masked.
    const newest = out.filter((m) => m.id === "t12r" || m.id === "t12t");
    assert.deepEqual(newest, [byId.get("t12r"), byId.get("t12t")]);
  });

  it("summarizes what does not fit with policy-driven: HumanMessages with ctxc- ids, pairs intact", async () => {
    const conversation = codingConversation(12);
    const out = await compileMessages(conversation, { client: ctxc.client, model: "gpt-4o", profile: "policy-driven", maxTokens: 4000, reservedOutputTokens: 500 });
    assert.equal(out[0], conversation[0]);
    assert.equal(out[1], conversation[1], "the first task is kept");
    // The summaries (they stack, one per compaction) follow the first task, as HumanMessages.
    const summaries = out.filter((m) => m.id?.startsWith("ctxc-summary-"));
    assert.ok(summaries.length >= 1);
    assert.deepEqual(out.slice(2, 2 + summaries.length), summaries);
    for (const summary of summaries) {
      assert.ok(summary instanceof HumanMessage);
      assert.match(String(summary.content), /Summary of \d+ earlier messages/);
    }
    assert.equal(out.at(-1), conversation.at(-1));
    assertToolPairing(out);
    assert.ok(out.length < conversation.length);
  });

  it("works as a Runnable, like trimMessages without messages", async () => {
    const conversation = codingConversation(2);
    const chain = compileMessages({ client: ctxc.client, model: "gpt-4o" }).pipe(RunnableLambda.from((ms: BaseMessage[]) => ms.map((m) => m.getType())));
    assert.deepEqual(await chain.invoke(conversation), conversation.map((m) => m.getType()));
  });

  it("keeps messages without ids as they are and repairs an unanswered call", async () => {
    const conversation = [
      new SystemMessage("Be brief."),
      new HumanMessage("List the files."),
      new AIMessage({ content: "", tool_calls: [{ type: "tool_call", id: "call_ls", name: "ls", args: {} }] }),
      new HumanMessage("Never mind, stop."),
      new AIMessage({ content: "", tool_calls: [{ type: "tool_call", id: "call_pwd", name: "pwd", args: {} }] }),
      new ToolMessage({ content: "/src", tool_call_id: "call_pwd" }),
    ];
    const out = await compileMessages(conversation, { client: ctxc.client, model: "gpt-4o" });
    assert.equal(out[0], conversation[0]);
    assert.equal(out[1], conversation[1]);
    assert.equal(out[2], conversation[2]);
    assertToolPairing(out);
    const repaired = out[3] as ToolMessage;
    assert.ok(repaired instanceof ToolMessage, "the unanswered call got no synthesized result");
    assert.equal(repaired.tool_call_id, "call_ls");
    assert.match(repaired.id ?? "", /^ctxc-/);
    assert.equal(out[4], conversation[3]);
    // A ToolMessage without a name is sent as it is: the name comes from its call.
    assert.equal(out[5], conversation[4]);
    assert.equal(out[6], conversation[5]);
  });

  it("fails with the server's reason for a model it does not know", async () => {
    const err = await compileMessages(codingConversation(1), { client: ctxc.client, model: "no-such-model" }).catch((e: unknown) => e);
    assert.ok(err instanceof CtxcError);
    assert.equal(err.reason, "UNKNOWN_MODEL");
  });

  it("is a drop-in for trimMessages: same input, same output type", async () => {
    const conversation = codingConversation(12);
    const tokenCounter = (ms: BaseMessage[]) => ms.reduce((n, m) => n + String(m.content).length / 4, 0);
    const trimmed = await trimMessages(conversation, { maxTokens: 15_500, tokenCounter, strategy: "last", includeSystem: true, startOn: "human" });
    const compiled = await compileMessages(conversation, { client: ctxc.client, model: "gpt-4o", profile: "budget-aware", maxTokens: 16_000, reservedOutputTokens: 500 });
    assert.equal(trimmed[0].id, "sys");
    assert.equal(compiled[0], conversation[0]);
    // trimMessages keeps the newest turns whole and loses the task's beginning;
    // ctxc keeps every turn and masks old tool outputs instead.
    assert.ok(!trimmed.some((m) => m.id === "u1"));
    assert.ok(compiled.some((m) => m.id === "u1"));
  });
});
