"""A coding agent's conversation in the OpenAI Chat Completions format: each
turn a request, two parallel tool calls (a file read and a failing test run), a
fix, a passing test run and the answer. Deterministic for a turn count."""

SYSTEM_PROMPT = "You are a careful coding agent working in /src/inventory. Use the tools; run the tests before you answer."

TOOLS = [
    {"type": "function", "function": {"name": name, "description": f"{name} in the repository",
                                      "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}
    for name in ("read_file", "run_tests", "write_file")
]


def _call(call_id, name, args):
    import json

    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def coding_conversation(turns: int):
    messages = [{"role": "system", "content": SYSTEM_PROMPT}]
    for t in range(1, turns + 1):
        path = f"internal/stock/part{t}.go"
        source = "\n".join([f"package stock", f"// Reserve{t} takes n units of sku out of the stock."] +
                           [f"func helper{t}_{i}(s *Stock, sku string, n int) error {{ return s.take(ctx, sku, n+{i}) }} // line {i}" for i in range(120)])
        messages += [
            {"role": "user", "content": f"Step {t}: the tests for {path} fail. Find out why and fix it."},
            {"role": "assistant", "content": f"I'll read {path} and run its tests.",
             "tool_calls": [_call(f"call_read_{t}", "read_file", {"path": path}), _call(f"call_test_{t}", "run_tests", {"packages": "./internal/stock/..."})]},
            {"role": "tool", "tool_call_id": f"call_read_{t}", "content": source},
            {"role": "tool", "tool_call_id": f"call_test_{t}", "content": f"--- FAIL: TestReserve{t}\n    want ErrOutOfStock, got <nil>"},
            {"role": "assistant", "content": None, "tool_calls": [_call(f"call_write_{t}", "write_file", {"path": path})]},
            {"role": "tool", "tool_call_id": f"call_write_{t}", "content": f"wrote {path}"},
            {"role": "assistant", "content": None, "tool_calls": [_call(f"call_retest_{t}", "run_tests", {"packages": "./internal/stock/..."})]},
            {"role": "tool", "tool_call_id": f"call_retest_{t}", "content": "ok  \tinventory/internal/stock\t0.41s"},
            {"role": "assistant", "content": f"Fixed step {t}: Reserve{t} now returns ErrOutOfStock when the stock is short."},
        ]
    messages.append({"role": "user", "content": "Summarize what you changed across all steps."})
    return messages


def assert_tool_pairing(test, messages):
    """Every tool call is answered by exactly one later tool message, and every tool message answers an earlier call."""
    open_calls = set()
    for i, m in enumerate(messages):
        for call in m.get("tool_calls") or ():
            test.assertNotIn(call["id"], open_calls, f"messages[{i}]: call {call['id']} repeated")
            open_calls.add(call["id"])
        if m["role"] == "tool":
            test.assertIn(m["tool_call_id"], open_calls, f"messages[{i}]: result {m['tool_call_id']} answers no open call")
            open_calls.remove(m["tool_call_id"])
    test.assertEqual(open_calls, set(), "tool calls without a result")
