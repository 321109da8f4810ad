// A coding agent's conversation in LangChain messages, the same for the tests
// and the benchmark: each turn a user request, an assistant message with two
// parallel tool calls (a file read and a failing test run), a fix, a passing
// test run and the assistant's answer: 9 messages a turn. Deterministic for a
// given turn count.
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";

export const systemPrompt = "You are a careful coding agent working in /src/inventory. Use the tools; run the tests before you answer.";

export function codingConversation(turns: number): BaseMessage[] {
  const messages: BaseMessage[] = [new SystemMessage({ content: systemPrompt, id: "sys" })];
  for (let t = 1; t <= turns; t++) {
    const file = `internal/stock/part${t}.go`;
    messages.push(new HumanMessage({ id: `u${t}`, content: `Step ${t}: the tests for ${file} fail. Find out why and fix it.` }));
    messages.push(
      new AIMessage({
        id: `a${t}`,
        content: `I'll read ${file} and run its tests at the same time.`,
        tool_calls: [
          { type: "tool_call", id: `call_read_${t}`, name: "read_file", args: { path: file } },
          { type: "tool_call", id: `call_test_${t}`, name: "run_tests", args: { packages: "./internal/stock/..." } },
        ],
      }),
    );
    messages.push(new ToolMessage({ id: `t${t}r`, tool_call_id: `call_read_${t}`, name: "read_file", content: source(t) }));
    messages.push(
      new ToolMessage({
        id: `t${t}t`,
        tool_call_id: `call_test_${t}`,
        name: "run_tests",
        status: "error",
        content: `--- FAIL: TestReserve${t} (0.02s)\n    part${t}_test.go:${20 + t}: reserve: want ErrOutOfStock, got <nil>\nFAIL\tinventory/internal/stock\t0.0${t % 10}s`,
      }),
    );
    messages.push(
      new AIMessage({
        id: `w${t}`,
        content: "",
        tool_calls: [{ type: "tool_call", id: `call_write_${t}`, name: "write_file", args: { path: file, content: `// fixed ${t}` } }],
      }),
    );
    messages.push(new ToolMessage({ id: `t${t}w`, tool_call_id: `call_write_${t}`, name: "write_file", content: `wrote ${file}` }));
    messages.push(
      new AIMessage({
        id: `v${t}`,
        content: "",
        tool_calls: [{ type: "tool_call", id: `call_retest_${t}`, name: "run_tests", args: { packages: "./internal/stock/..." } }],
      }),
    );
    messages.push(new ToolMessage({ id: `t${t}v`, tool_call_id: `call_retest_${t}`, name: "run_tests", content: `ok  \tinventory/internal/stock\t0.4${t % 10}s` }));
    messages.push(new AIMessage({ id: `r${t}`, content: `Fixed step ${t}: Reserve${t} now returns ErrOutOfStock when the stock is short.` }));
  }
  messages.push(new HumanMessage({ id: "u-last", content: "Summarize what you changed across all steps." }));
  return messages;
}

function source(t: number): string {
  const lines = [`package stock`, ``, `// Reserve${t} takes n units of sku out of the stock.`];
  for (let i = 0; i < 120; i++) {
    lines.push(`func helper${t}_${i}(s *Stock, sku string, n int) error { return s.take(ctx, sku, n+${i}) } // line ${i}`);
  }
  return lines.join("\n");
}
