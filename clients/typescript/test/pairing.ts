// Checks on a compiled conversation in the frameworks' own message types.
import assert from "node:assert/strict";

import type { AIMessage, BaseMessage, ToolMessage } from "@langchain/core/messages";

/** assertToolPairing fails unless every tool call is answered by exactly one later ToolMessage and every ToolMessage answers an earlier call. */
export function assertToolPairing(messages: BaseMessage[]): void {
  const open = new Set<string>();
  const answered = new Set<string>();
  messages.forEach((m, i) => {
    if (m.getType() === "ai") {
      for (const call of (m as AIMessage).tool_calls ?? []) {
        assert.ok(call.id && !open.has(call.id) && !answered.has(call.id), `messages[${i}]: tool call ${call.id} repeated`);
        open.add(call.id);
      }
    } else if (m.getType() === "tool") {
      const id = (m as ToolMessage).tool_call_id;
      assert.ok(open.delete(id), `messages[${i}]: ToolMessage for ${id} answers no earlier open call`);
      answered.add(id);
    }
  });
  assert.deepEqual([...open], [], "tool calls without a result");
}
