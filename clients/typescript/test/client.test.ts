import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

import { fromJson, type JsonValue } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";

import {
  CompileRequestSchema,
  CtxcClient,
  CtxcError,
  FinishReason,
  Role,
  TokenCountProvenance,
  assistant,
  tool,
  toolCall,
  toolResult,
  user,
} from "../src/index.js";
import { serverForSuite, startServer } from "./server.js";

const examples = fileURLToPath(new URL("../../../../examples/", import.meta.url));

describe("CtxcClient against ctxc serve", () => {
  const ctxc = serverForSuite();

  it("compiles a state: system prompt first, budget counted", async () => {
    const reply = await ctxc.client.compile({
      state: { model: { name: "gpt-4o" }, context: { systemPrompt: "You are helpful.", messages: [user("u1", "Hello!")] } },
    });
    assert.deepEqual(
      reply.messages.map((m) => [m.id, m.role]),
      [
        ["ctxc-system", Role.SYSTEM],
        ["u1", Role.USER],
      ],
    );
    assert.equal(reply.budget?.contextWindowTokenCount, 128_000);
    assert.ok((reply.budget?.usedTokenCount ?? 0) > 0);
  });

  it("compacts the repository's coding-agent example and persists masks", async () => {
    const example = fromJson(CompileRequestSchema, JSON.parse(readFileSync(`${examples}coding-agent.json`, "utf8")) as JsonValue);
    const reply = await ctxc.client.compact({ state: example.state, profile: "policy-driven", options: { maxContextTokenCount: 2000 } });
    const masked = reply.state?.context?.messages.filter((m) => m.mask).map((m) => m.id);
    assert.deepEqual(masked, ["t1", "t3"]);
    assert.ok(reply.budgetAfter!.usedTokenCount < reply.budgetBefore!.usedTokenCount);
  });

  it("budgets a state: remaining is window minus used minus reserved", async () => {
    const reply = await ctxc.client.budget({ state: { model: { name: "gpt-4o" }, context: { messages: [user("u1", "How many tokens?")] } } });
    const b = reply.budget!;
    assert.equal(b.remainingTokenCount, b.contextWindowTokenCount - b.usedTokenCount - b.reservedOutputTokenCount);
    assert.equal(b.provenance, TokenCountProvenance.EXACT);
    assert.deepEqual(
      reply.messages.map((m) => m.messageId),
      ["u1"],
    );
  });

  it("counts tokens exactly for an OpenAI model", async () => {
    const reply = await ctxc.client.countTokens({ counter: { case: "model", value: "gpt-4o" }, texts: ["Hello, world!"] });
    assert.equal(reply.counter, "o200k_base");
    assert.equal(reply.totalTokenCount, 4);
  });

  it("lists the built-in profiles with pragmatic as the default", async () => {
    const reply = await ctxc.client.listProfiles();
    assert.deepEqual(
      reply.profiles.filter((p) => p.default).map((p) => p.name),
      ["pragmatic"],
    );
    assert.ok(reply.profiles.some((p) => p.name === "policy-driven"));
  });

  it("routes a session kept as an opaque blob", async () => {
    const first = await ctxc.client.route({
      state: { agentId: "ts-test", model: { name: "gpt-4o", provider: "openai" } },
      wantStateBlob: true,
      input: { case: "userTurn", value: { messages: [user("", "Fix the tests.")] } },
    });
    assert.deepEqual(first.appendedMessageIds, ["exec-1-u0"]);
    assert.ok(first.stateBlob.length > 0);
    const step = await ctxc.client.route({
      stateBlob: first.stateBlob,
      input: {
        case: "step",
        value: {
          finishReason: FinishReason.TOOL_CALLS,
          messages: [assistant("", toolCall("c1", "run_tests", { pkg: "./store" })), tool("", toolResult("c1", "run_tests", "ok"))],
        },
      },
    });
    assert.deepEqual(step.appendedMessageIds, ["exec-1-s0-0", "exec-1-s0-1"]);
    assert.equal(step.executionEnded, false);
    const compiled = await ctxc.client.compile({ stateBlob: step.stateBlob });
    assert.deepEqual(
      compiled.messages.map((m) => m.id),
      ["exec-1-u0", "exec-1-s0-0", "exec-1-s0-1"],
    );
  });

  it("throws CtxcError with the reason and the bad field", async () => {
    const err = await ctxc.client
      .compile({ state: { model: { name: "gpt-4o" }, context: { messages: [tool("t1", toolResult("", "", "ok"))] } } })
      .then(() => assert.fail("a tool result without a call id was accepted"), (e: unknown) => e);
    assert.ok(err instanceof CtxcError, `got ${String(err)}`);
    assert.equal(err.code, Code.InvalidArgument);
    assert.equal(err.reason, "INVALID_STATE");
    assert.equal(err.domain, "ctxc");
    assert.deepEqual(
      err.fieldViolations.map((v) => v.field),
      ["state.context.messages[0].parts[0].tool_result.tool_call_id"],
    );
  });

  it("names the known profiles of an unknown one in the error metadata", async () => {
    const err = await ctxc.client.compile({ state: { model: { name: "gpt-4o" } }, profile: "no-such-profile" }).catch((e: unknown) => e);
    assert.ok(err instanceof CtxcError);
    assert.equal(err.reason, "UNKNOWN_PROFILE");
    assert.match(err.errorMetadata.known_profiles ?? "", /pragmatic/);
  });
});

describe("retries", () => {
  it("retries UNAVAILABLE until the server comes up", async () => {
    const port = await freePort();
    const client = new CtxcClient({ address: `127.0.0.1:${port}`, retry: { maxAttempts: 30, initialBackoffMs: 100, maxBackoffMs: 300 } });
    const call = client.countTokens({ counter: { case: "encoding", value: "cl100k_base" }, texts: ["retry me"] });
    const server = await startServer("--listen", `127.0.0.1:${port}`);
    try {
      assert.equal((await call).texts.length, 1);
    } finally {
      await server.stop();
    }
  });

  it("gives up with UNAVAILABLE when retries are off", async () => {
    const client = new CtxcClient({ address: `127.0.0.1:${await freePort()}`, retry: false });
    const err = await client.listProfiles().catch((e: unknown) => e);
    assert.ok(err instanceof CtxcError);
    assert.equal(err.code, Code.Unavailable);
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}
