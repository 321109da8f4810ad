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
const defaultIterations = Number(process.env.BENCH_ITERATIONS ?? 30);

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

async function measure(name: string, run: () => Promise<BaseMessage[]>, conversation: BaseMessage[], iterations = defaultIterations, warmUps = 3) {
  for (let i = 0; i < warmUps; i++) {
    await run(); // warm up: JIT, connection, server token cache
  }
  const times: number[] = [];
  let out: BaseMessage[] = [];
  for (let i = 0; i < iterations; i++) {
    const start = performance.now();
    out = await run();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return { name, medianMs: times[Math.floor(times.length / 2)], p90Ms: times[Math.floor(times.length * 0.9)], ...kept(conversation, out) };
}

const server = await startServer();
try {
  const client = new CtxcClient({ address: server.addr });
  const conversation = codingConversation(turns);
  const rows: Awaited<ReturnType<typeof measure>>[] = [
    await measure(
      "trimMessages (last, includeSystem, startOn human)",
      () => trimMessages(conversation, { maxTokens: window, tokenCounter: countTokens, strategy: "last", includeSystem: true, startOn: "human" }),
      conversation,
    ),
    await measure("compileMessages, budget-aware", () => compileMessages(conversation, { client, model: "gpt-4o", profile: "budget-aware", maxTokens: window }), conversation),
    await measure("compileMessages, policy-driven", () => compileMessages(conversation, { client, model: "gpt-4o", profile: "policy-driven", maxTokens: window }), conversation),
  ];
  if (process.env.BENCH_UNCACHED) {
    // Tens of seconds a call on a long conversation: one call, no warm-up.
    rows.splice(
      1,
      0,
      await measure(
        "trimMessages, the same counter without a cache",
        () => trimMessages(conversation, { maxTokens: window, tokenCounter: countTokensUncached, strategy: "last", includeSystem: true, startOn: "human" }),
        conversation,
        1,
        0,
      ),
    );
  }
  console.log(`${conversation.length} messages (${turns} turns), ${countTokens(conversation)} tokens (o200k_base); window ${window}; ${defaultIterations} calls each after 3 warm-up calls (the uncached counter: one call)`);
  console.log("| call | median ms | p90 ms | messages kept | tokens | user turns kept | first task | tool outputs verbatim / masked | summaries | tool pairs intact |");
  console.log("|---|---|---|---|---|---|---|---|---|---|");
  for (const r of rows) {
    console.log(
      `| ${r.name} | ${r.medianMs.toFixed(2)} | ${r.p90Ms.toFixed(2)} | ${r.messages} | ${r.tokens} | ${r.userTurns} of ${turns + 1} | ${r.firstTaskKept ? "kept" : "lost"} | ${r.toolOutputsVerbatim} / ${r.toolOutputsMasked} | ${r.summaries} | ${r.pairsIntact ? "yes" : "no"} |`,
    );
  }
} finally {
  await server.stop();
}
