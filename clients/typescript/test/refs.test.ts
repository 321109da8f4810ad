// StateRefs against a real `ctxc serve`: a growing state sent by reference
// compiles to exactly what the whole state compiles to, a reference the
// server cannot resolve is sent again whole without the caller noticing, and
// a state that does not extend the previous one goes whole.
import assert from "node:assert/strict";
import { createServer } from "node:net";
import { after, before, describe, it } from "node:test";

import { clone, create, equals } from "@bufbuild/protobuf";
import type { Interceptor } from "@connectrpc/connect";

import {
  AgentStateSchema,
  CtxcClient,
  FinishReason,
  MessageSchema,
  Role,
  TokenBudgetSchema,
  assistant,
  tool,
  toolCall,
  toolResult,
  user,
  type AgentState,
  type CompileResponse,
  type Message,
  type MessageInit,
} from "../src/index.js";
import { startServer, type RunningServer } from "./server.js";

/** The state a runtime holds: a plain object whose log grows in place. */
interface StateInit {
  agentId: string;
  model: { name: string };
  context: { systemPrompt: string; messages: MessageInit[] };
}

/** What one request on the wire carried. */
interface Sent {
  method: string;
  whole: boolean;
  baseStateRef: string;
  appended: number;
}

/** recorder is an interceptor that notes how each request carried its state. */
function recorder(): { sent: Sent[]; interceptor: Interceptor } {
  const sent: Sent[] = [];
  const interceptor: Interceptor = (next) => (req) => {
    const m = req.message as unknown as { state?: AgentState; baseStateRef: string; appendedMessages: Message[] };
    sent.push({ method: req.method.name, whole: m.state !== undefined, baseStateRef: m.baseStateRef, appended: m.appendedMessages.length });
    return next(req);
  };
  return { sent, interceptor };
}

/** turn appends turn t of a coding agent's conversation: 4 messages, one a long tool result. */
function turn(state: StateInit, t: number): void {
  const body = Array.from({ length: 40 }, (_, i) => `func helper${t}_${i}(s *Stock, n int) error { return s.take(n + ${i}) } // line ${i}`).join("\n");
  state.context.messages.push(
    user(`u${t}`, `Step ${t}: the tests for part${t}.go fail. Find out why and fix it.`),
    assistant(`a${t}`, toolCall(`call_${t}`, "read_file", { path: `part${t}.go` })),
    tool(`t${t}`, toolResult(`call_${t}`, "read_file", body)),
    assistant(`r${t}`, { content: { case: "text", value: `Fixed step ${t}.` } }),
  );
}

function newState(): StateInit {
  return { agentId: "refs-test", model: { name: "gpt-4o" }, context: { systemPrompt: "You are a careful coding agent.", messages: [] } };
}

// A window small enough that the later turns are compacted (masked or
// summarized), so that the compiles by reference have work to match.
const compileOptions = { maxContextTokenCount: 6_000 };

/** unstamped is state without its messages' create_time. */
function unstamped(state: AgentState): AgentState {
  const out = clone(AgentStateSchema, state);
  for (const m of out.context?.messages ?? []) {
    m.createTime = undefined;
  }
  return out;
}

/** changedMessages counts the log messages the compile left out or changed. */
function changedMessages(state: StateInit, compiled: CompileResponse): number {
  const out = new Map(compiled.messages.map((m) => [m.id, m]));
  return state.context.messages.filter((m) => {
    const c = out.get(m.id!);
    return c === undefined || !equals(MessageSchema, c, create(MessageSchema, m));
  }).length;
}

/** assertSameCompile asserts two compiles returned the same messages and budget. */
function assertSameCompile(got: CompileResponse, want: CompileResponse, what: string): void {
  assert.equal(got.messages.length, want.messages.length, `${what}: message count`);
  got.messages.forEach((m, i) => assert.ok(equals(MessageSchema, m, want.messages[i]!), `${what}: message ${i} (${m.id}) differs`));
  assert.ok(equals(TokenBudgetSchema, got.budget!, want.budget!), `${what}: budget differs`);
  assert.match(got.stateRef, /^sr1-[0-9a-f]{32}$/);
}

describe("StateRefs", () => {
  let server: RunningServer;
  let plain: CtxcClient;
  before(async () => {
    server = await startServer();
    plain = new CtxcClient({ address: server.addr });
  });
  after(() => server.stop());

  it("compiles a growing 30-turn state by reference to exactly what the whole state compiles to", async () => {
    const { sent, interceptor } = recorder();
    const refs = new CtxcClient({ address: server.addr, interceptors: [interceptor] }).stateRefs();
    const state = newState();
    let changed = 0;
    for (let t = 1; t <= 30; t++) {
      turn(state, t);
      const got = await refs.compile({ state, options: compileOptions });
      const want = await plain.compile({ state, options: compileOptions });
      assertSameCompile(got, want, `turn ${t}`);
      changed = Math.max(changed, changedMessages(state, want));
    }
    assert.ok(changed > 0, "the window never made the compile change the log");
    assert.deepEqual(sent[0], { method: "Compile", whole: true, baseStateRef: "", appended: 0 });
    for (const [i, s] of sent.slice(1).entries()) {
      assert.equal(s.whole, false, `call ${i + 2} sent the whole state`);
      assert.match(s.baseStateRef, /^sr1-[0-9a-f]{32}$/);
      assert.equal(s.appended, 4, `call ${i + 2} appended`);
    }
    assert.equal(sent.length, 30);
    assert.deepEqual(refs.counts(), { byReference: 29, misses: 0 });
  });

  it("budgets by reference like the whole state", async () => {
    const { sent, interceptor } = recorder();
    const refs = new CtxcClient({ address: server.addr, interceptors: [interceptor] }).stateRefs();
    const state = newState();
    for (let t = 1; t <= 3; t++) {
      turn(state, t);
      const got = await refs.budget({ state });
      const want = await plain.budget({ state });
      assert.ok(equals(TokenBudgetSchema, got.budget!, want.budget!), `turn ${t}: budget differs`);
      assert.deepEqual(
        got.messages.map((m) => [m.messageId, m.tokenCount]),
        want.messages.map((m) => [m.messageId, m.tokenCount]),
      );
    }
    assert.deepEqual(
      sent.map((s) => [s.whole, s.appended]),
      [
        [true, 0],
        [false, 4],
        [false, 4],
      ],
    );
  });

  it("routes and compacts by reference, continuing from the state each returns", async () => {
    const { sent, interceptor } = recorder();
    const refs = new CtxcClient({ address: server.addr, interceptors: [interceptor] }).stateRefs();
    const inputs = [
      { case: "userTurn" as const, value: { messages: [user("", "Fix the failing tests in ./store.")] } },
      {
        case: "step" as const,
        value: {
          finishReason: FinishReason.TOOL_CALLS,
          messages: [assistant("", toolCall("c1", "run_tests", { pkg: "./store" })), tool("", toolResult("c1", "run_tests", "FAIL: TestPut"))],
        },
      },
      { case: "event" as const, value: { text: "CI is red on main." } },
      { case: "step" as const, value: { finishReason: FinishReason.STOP, messages: [assistant("", { content: { case: "text", value: "Fixed TestPut." } })] } },
    ];
    // Route stamps the messages it appends (create_time), so the two chains
    // are compared without the stamps.
    let mine: AgentState = create(AgentStateSchema, newState());
    let theirs: AgentState = mine;
    for (const input of inputs) {
      const got = await refs.route({ state: mine, input });
      const want = await plain.route({ state: theirs, input });
      assert.ok(equals(AgentStateSchema, unstamped(got.state!), unstamped(want.state!)), `route ${input.case}: states differ`);
      assert.deepEqual(got.appendedMessageIds, want.appendedMessageIds);
      mine = got.state!;
      theirs = want.state!;
    }
    // The runtime appends a message of its own to the returned state, then compacts and compiles.
    mine.context!.messages.push(create(MessageSchema, user("u-extra", "And the docs?")));
    const gotCompact = await refs.compact({ state: mine, options: { maxContextTokenCount: 2_000 } });
    const wantCompact = await plain.compact({ state: mine, options: { maxContextTokenCount: 2_000 } });
    assert.ok(equals(AgentStateSchema, unstamped(gotCompact.state!), unstamped(wantCompact.state!)), "compacted states differ");
    const got = await refs.compile({ state: gotCompact.state });
    const want = await plain.compile({ state: gotCompact.state });
    assertSameCompile(got, want, "compile after compact");
    assert.deepEqual(
      sent.map((s) => [s.method, s.whole, s.appended]),
      [
        ["Route", true, 0],
        ["Route", false, 0],
        ["Route", false, 0],
        ["Route", false, 0],
        ["Compact", false, 1],
        ["Compile", false, 0],
      ],
    );
  });

  it("sends the call again whole when the server never gave the reference", async () => {
    const { sent, interceptor } = recorder();
    let forge = false;
    // Replaces the reference the tracker sends with one this server never gave.
    const forger: Interceptor = (next) => (req) => {
      const m = req.message as unknown as { baseStateRef: string };
      if (forge && m.baseStateRef) {
        m.baseStateRef = `sr1-${"0".repeat(32)}`;
      }
      return next(req);
    };
    const refs = new CtxcClient({ address: server.addr, interceptors: [forger, interceptor] }).stateRefs();
    const state = newState();
    for (let t = 1; t <= 4; t++) {
      turn(state, t);
      forge = t === 3;
      const got = await refs.compile({ state, options: compileOptions });
      assertSameCompile(got, await plain.compile({ state, options: compileOptions }), `turn ${t}`);
    }
    assert.deepEqual(
      sent.map((s) => [s.whole, s.baseStateRef === "" ? "" : s.baseStateRef.slice(0, 4), s.appended]),
      [
        [true, "", 0],
        [false, "sr1-", 4],
        [false, "sr1-", 4], // the forged reference: a miss
        [true, "", 0], // sent again whole
        [false, "sr1-", 4],
      ],
    );
    assert.equal(sent[2]!.baseStateRef, `sr1-${"0".repeat(32)}`);
    assert.deepEqual(refs.counts(), { byReference: 3, misses: 1 });
  });

  it("sends the whole state when an earlier message is replaced or the system prompt changes", async () => {
    const { sent, interceptor } = recorder();
    const refs = new CtxcClient({ address: server.addr, interceptors: [interceptor] }).stateRefs();
    const state = newState();
    const messages = state.context.messages;
    const compileBoth = async (what: string) => {
      const got = await refs.compile({ state, options: compileOptions });
      assertSameCompile(got, await plain.compile({ state, options: compileOptions }), what);
      return got;
    };
    turn(state, 1);
    turn(state, 2);
    await compileBoth("first");
    turn(state, 3);
    await compileBoth("appended");

    // An earlier tool result rewritten, as a new object in its place.
    const old = messages[2]!;
    messages[2] = tool("t1", toolResult("call_1", "read_file", "(the file was deleted)"));
    turn(state, 4);
    const replaced = await compileBoth("replaced message");
    assert.ok(
      replaced.messages.some((m) => m.id === "t1" && JSON.stringify(m).includes("the file was deleted")),
      "the replaced message is not what was compiled",
    );
    assert.notEqual(messages[2], old);

    // The system prompt changed.
    turn(state, 5);
    state.context.systemPrompt = "You are a terse coding agent.";
    const prompted = await compileBoth("system prompt");
    assert.equal(prompted.messages[0]!.role, Role.SYSTEM);
    assert.match(JSON.stringify(prompted.messages[0]), /terse/);

    // The model changed (a new object or the same one changed in place: both are seen).
    turn(state, 6);
    state.model.name = "gpt-4o-mini";
    await compileBoth("model");

    turn(state, 7);
    await compileBoth("appended again");
    assert.deepEqual(
      sent.map((s) => [s.whole, s.appended]),
      [
        [true, 0],
        [false, 4],
        [true, 0], // message replaced
        [true, 0], // system prompt changed
        [true, 0], // model changed
        [false, 4],
      ],
    );
    assert.deepEqual(refs.counts(), { byReference: 2, misses: 0 });
  });
});

describe("StateRefs across a server restart", () => {
  it("sends the call again whole when the restarted server no longer knows the reference", async () => {
    const port = await freePort();
    const addr = `127.0.0.1:${port}`;
    const { sent, interceptor } = recorder();
    const client = new CtxcClient({ address: addr, interceptors: [interceptor] });
    const refs = client.stateRefs();
    const state = newState();
    let server = await startServer("--listen", addr);
    try {
      for (let t = 1; t <= 2; t++) {
        turn(state, t);
        await refs.compile({ state, options: compileOptions });
      }
      await server.stop();
      server = await startServer("--listen", addr);
      for (let t = 3; t <= 4; t++) {
        turn(state, t);
        const got = await refs.compile({ state, options: compileOptions });
        assertSameCompile(got, await client.compile({ state, options: compileOptions }), `turn ${t}`);
      }
    } finally {
      await server.stop();
    }
    assert.deepEqual(
      sent.map((s) => [s.whole, s.appended]),
      [
        [true, 0],
        [false, 4],
        [false, 4], // a reference the new process never gave: a miss
        [true, 0], // sent again whole
        [true, 0], // (the plain client's compile)
        [false, 4],
        [true, 0], // (the plain client's compile)
      ],
    );
    assert.deepEqual(refs.counts(), { byReference: 3, misses: 1 });
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
