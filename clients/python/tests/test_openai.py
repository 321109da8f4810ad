"""compile_openai: an OpenAI-format conversation through a real ctxc serve."""
import asyncio
import copy
import unittest

import ctxc
from ctxc import openai
from tests.conversation import SYSTEM_PROMPT, TOOLS, assert_tool_pairing, coding_conversation
from tests.server import ServerTestCase


class CompileOpenAITest(ServerTestCase):
    def setUp(self):
        self.client = ctxc.Client(self.server.addr)
        self.addCleanup(self.client.close)

    def test_nothing_to_compact_returns_the_callers_own_dicts(self):
        conversation = coding_conversation(3)
        out = self.client.compile_openai(conversation, TOOLS, model="gpt-4o")
        self.assertEqual(len(out), len(conversation))
        for i, (got, own) in enumerate(zip(out, conversation)):
            self.assertIs(got, own, f"messages[{i}] is not the caller's dict")

    def test_long_conversation_masks_old_outputs_keeping_pairs_ids_and_system(self):
        conversation = coding_conversation(12)
        before = copy.deepcopy(conversation)
        out = self.client.compile_openai(conversation, TOOLS, model="gpt-4o", profile="budget-aware", max_tokens=16_000, reserved_output_tokens=500)
        self.assertEqual(conversation, before, "the caller's messages were changed")
        self.assertIs(out[0], conversation[0])
        self.assertEqual(out[0]["content"], SYSTEM_PROMPT)
        self.assertIs(out[-1], conversation[-1])
        assert_tool_pairing(self, out)
        self.assertEqual(len(out), len(conversation))
        own_ids = {id(x) for x in conversation}
        rebuilt = [x for x in out if id(x) not in own_ids]
        # The oldest file reads are masked, oldest first; the newest steps' never.
        self.assertGreaterEqual(len(rebuilt), 5)
        self.assertEqual([x["tool_call_id"] for x in rebuilt], [f"call_read_{t}" for t in range(1, len(rebuilt) + 1)])
        self.assertNotIn("call_read_12", [x["tool_call_id"] for x in rebuilt])
        for x in rebuilt:
            self.assertEqual(x["role"], "tool")
            self.assertTrue(x["content"].startswith("[output masked: message "), x["content"][:80])

    def test_policy_driven_summarizes_into_a_user_message(self):
        conversation = coding_conversation(12)
        out = self.client.compile_openai(conversation, TOOLS, model="gpt-4o", profile="policy-driven", max_tokens=4000, reserved_output_tokens=500)
        self.assertIs(out[0], conversation[0])
        self.assertIs(out[1], conversation[1], "the first task is kept")
        self.assertEqual(out[2]["role"], "user")
        self.assertTrue(out[2]["content"].startswith("Summary of "))
        self.assertIs(out[-1], conversation[-1], "the newest turn is sent as it was")
        self.assertLess(len(out), len(conversation))
        assert_tool_pairing(self, out)

    def test_unanswered_call_gets_a_synthesized_result(self):
        conversation = [
            {"role": "developer", "content": [{"type": "text", "text": "Be brief."}]},
            {"role": "user", "content": "List the files."},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "call_ls", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]},
            {"role": "user", "content": "Never mind."},
        ]
        out = self.client.compile_openai(conversation, model="gpt-4o")
        self.assertIs(out[0], conversation[0])
        assert_tool_pairing(self, out)
        self.assertEqual((out[3]["role"], out[3]["tool_call_id"]), ("tool", "call_ls"))
        self.assertIs(out[4], conversation[3])

    def test_async(self):
        async def run():
            async with ctxc.AsyncClient(self.server.addr) as client:
                return await client.compile_openai(coding_conversation(2), TOOLS, model="gpt-4o")

        out = asyncio.run(run())
        assert_tool_pairing(self, out)
        self.assertEqual(len(out), 20)


class ConversionTest(unittest.TestCase):
    def test_bad_messages_name_the_field(self):
        cases = [
            ([{"role": "function", "name": "f", "content": "x"}], "messages[0].role"),
            ([{"role": "user", "content": "x"}, {"role": "tool", "content": "x"}], "messages[1].tool_call_id"),
            ([{"role": "user", "content": [{"type": "input_audio"}]}], "messages[0].content[0]"),
            ([{"role": "assistant", "tool_calls": [{"id": "c1", "function": {}}]}], "messages[0].tool_calls[0]"),
        ]
        for messages, field in cases:
            with self.subTest(field=field), self.assertRaisesRegex(ValueError, field.replace("[", r"\[").replace("]", r"\]")):
                openai.to_ctxc(messages)

    def test_tool_results_take_the_calls_name(self):
        _, log, _ = openai.to_ctxc(coding_conversation(1))
        self.assertEqual(log[2].parts[0].tool_result.name, "read_file")
        self.assertEqual(log[2].id, "oai-3")


if __name__ == "__main__":
    unittest.main()
