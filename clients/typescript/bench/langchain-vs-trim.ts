// Side by side on the same long coding-agent conversation: LangChain's
// trimMessages (strategy "last", system kept, exact o200k_base token counts
// with js-tiktoken) against compileMessages through a real ctxc serve, both
// asked for the same window. Prints time per call and what each keeps.
//
//     make build && npm run bench        (or `make bench` from the repository root)
import { performance } from "node:perf_hooks";

import { AIMessage, ToolMessage, trimMessages, type BaseMessage } from "@langchain/core/messages";
import { Tiktoken } from "js-tiktoken/lite";
import o200k_base from "js-tiktoken/ranks/o200k_base";

import { CtxcClient } from "../src/index.js";
import { compileMessages } from "../src/langchain.js";
import { codingConversation } from "../test/conversation.js";
import { startServer } from "../test/server.js";

const turns = Number(process.env.BENCH_TURNS ?? 40);
const window = Number(process.env.BENCH_WINDOW ?? 32_000);
const iterations = Number(process.env.BENCH_ITERATIONS ?? 30);

const encoding = new Tiktoken(o200k_base);
// trimMessages copies the messages it is given, then calls the counter on
// ever shorter slices of the copies (once per message dropped). Counts are
// cached by message object within a call and by content across calls, so
// each distinct content is encoded once: this is trimMessages at its fastest.
const countedByContent = new Map<string, number>();
const countedByMessage = new WeakMap<BaseMessage, number>();
function countTokens(messages: BaseMessage[]): number {
  let n = 0;
  for (const m of messages) {
    let c = countedByMessage.get(m);
    if (c === undefined) {
      const text = (typeof m.content === "string" ? m.content : JSON.stringify(m.content)) + JSON.stringify((m as AIMessage).tool_calls ?? []);
      c = countedByContent.get(text);
      if (c === undefined) {
        // OpenAI's chat framing: about 4 tokens a message around its content.
        c = 4 + encoding.encode(text).length;
        countedByContent.set(text, c);
      }
      countedByMessage.set(m, c);
    }
    n += c;
  }
  return n;
}

// countTokensUncached is the counter as usually written: every call encodes
// every message it is given.
function countTokensUncached(messages: BaseMessage[]): number {
  let n = 0;
  for (const m of messages) {
    n += 4 + encoding.encode((typeof m.content === "string" ? m.content : JSON.stringify(m.content)) + JSON.stringify((m as AIMessage).tool_calls ?? [])).length;
  }
  return n;
}

interface Kept {
  messages: number;
  tokens: number;
  userTurns: number;
  firstTaskKept: boolean;
  toolOutputsVerbatim: number;
  toolOutputsMasked: number;
  summaries: number;
  pairsIntact: boolean;
}

function kept(conversation: BaseMessage[], out: BaseMessage[]): Kept {
  const own = new Set(conversation);
  const calls = new Set(out.flatMap((m) => ((m as AIMessage).tool_calls ?? []).map((c) => c.id)));
  const results = out.filter((m) => m instanceof ToolMessage) as ToolMessage[];
  const byId = new Map(conversation.map((m) => [m.id, m]));
  return {
    messages: out.length,
    tokens: countTokens(out),
    userTurns: out.filter((m) => m.getType() === "human" && byId.has(m.id)).length,
    firstTaskKept: out.some((m) => m.id === "u1"),
    toolOutputsVerbatim: results.filter((m) => own.has(m) || m.content === byId.get(m.id)?.content).length,
    toolOutputsMasked: results.filter((m) => String(m.content).startsWith("[output masked")).length,
    summaries: out.filter((m) => m.id?.startsWith("ctxc-summary-")).length,
    pairsIntact: results.every((r) => calls.has(r.tool_call_id)) && [...calls].every((id) => results.some((r) => r.tool_call_id === id)),
  };
}

interface Call {
  name: string;
  run: () => Promise<BaseMessage[]>;
}

// sideBySide makes one call of each kind per iteration, in an order that
// rotates every iteration, so every call runs under the same load (the
// machine is shared) and no call always follows the same other one.
async function sideBySide(calls: Call[], conversation: BaseMessage[], iterations: number) {
  const outs: BaseMessage[][] = [];
  for (const c of calls) {
    for (let i = 0; i < 3; i++) {
      outs[calls.indexOf(c)] = await c.run(); // warm up: JIT, connection, server token cache
    }
  }
  const times: number[][] = calls.map(() => []);
  for (let i = 0; i < iterations; i++) {
    for (let k = 0; k < calls.length; k++) {
      const j = (i + k) % calls.length;
      const start = performance.now();
      outs[j] = await calls[j].run();
      times[j].push(performance.now() - start);
    }
  }
  const total = (ts: number[]) => ts.reduce((a, b) => a + b, 0);
  return calls.map((c, j) => {
    const sorted = [...times[j]].sort((a, b) => a - b);
    return {
      name: c.name,
      medianMs: sorted[Math.floor(sorted.length / 2)],
      p90Ms: sorted[Math.floor(sorted.length * 0.9)],
      ratio: total(times[j]) / total(times[0]),
      ...kept(conversation, outs[j]),
    };
  });
}

const server = await startServer();
try {
  const client = new CtxcClient({ address: server.addr });
  const conversation = codingConversation(turns);
  const trim = (tokenCounter: (ms: BaseMessage[]) => number) => () =>
    trimMessages(conversation, { maxTokens: window, tokenCounter, strategy: "last", includeSystem: true, startOn: "human" });
  const rows = await sideBySide(
    [
      { name: "trimMessages (last, includeSystem, startOn human)", run: trim(countTokens) },
      { name: "compileMessages, budget-aware", run: () => compileMessages(conversation, { client, model: "gpt-4o", profile: "budget-aware", maxTokens: window }) },
      { name: "compileMessages, policy-driven", run: () => compileMessages(conversation, { client, model: "gpt-4o", profile: "policy-driven", maxTokens: window }) },
    ],
    conversation,
    iterations,
  );
  console.log(`${conversation.length} messages (${turns} turns), ${countTokens(conversation)} tokens (o200k_base); window ${window}; ${iterations} iterations of one call each, order rotating, after 3 warm-up calls each`);
  console.log("| call | median ms | p90 ms | summed time / trimMessages' | messages kept | tokens | user turns kept | first task | tool outputs verbatim / masked | summaries | tool pairs intact |");
  console.log("|---|---|---|---|---|---|---|---|---|---|---|");
  for (const r of rows) {
    console.log(
      `| ${r.name} | ${r.medianMs.toFixed(2)} | ${r.p90Ms.toFixed(2)} | ${r.ratio.toFixed(2)}x | ${r.messages} | ${r.tokens} | ${r.userTurns} of ${turns + 1} | ${r.firstTaskKept ? "kept" : "lost"} | ${r.toolOutputsVerbatim} / ${r.toolOutputsMasked} | ${r.summaries} | ${r.pairsIntact ? "yes" : "no"} |`,
    );
  }
  if (process.env.BENCH_UNCACHED) {
    // Minutes a call on a long conversation: one call, no warm-up.
    const start = performance.now();
    const out = await trim(countTokensUncached)();
    console.log(`trimMessages with the counter uncached: one call ${((performance.now() - start) / 1000).toFixed(1)} s, ${out.length} messages kept`);
  }
} finally {
  await server.stop();
}
