"""Client and AsyncClient against a real ctxc serve."""
import asyncio
import json
import unittest
from pathlib import Path

import grpc
from google.protobuf import json_format

import ctxc
from ctxc import messages as m
from ctxc.v1 import agent_state_pb2 as st
from ctxc.v1 import compiler_service_pb2 as api
from tests.server import REPO_ROOT, ServerTestCase


class ClientTest(ServerTestCase):
    def setUp(self):
        self.client = ctxc.Client(self.server.addr)
        self.addCleanup(self.client.close)

    def test_compile(self):
        reply = self.client.compile(state=st.AgentState(model=st.ModelSpec(name="gpt-4o"), context=st.AgentContext(
            system_prompt="You are helpful.", messages=[m.user("Hello!", id="u1")])))
        self.assertEqual([(x.id, x.role) for x in reply.messages], [("ctxc-system", st.ROLE_SYSTEM), ("u1", st.ROLE_USER)])
        self.assertEqual(reply.budget.context_window_token_count, 128_000)
        self.assertGreater(reply.budget.used_token_count, 0)

    def test_compact_the_coding_agent_example(self):
        example = json_format.Parse((REPO_ROOT / "examples" / "coding-agent.json").read_text(), api.CompileRequest())
        reply = self.client.compact(state=example.state, profile="policy-driven", options=api.CompileOptions(max_context_token_count=2000))
        self.assertEqual([x.id for x in reply.state.context.messages if x.HasField("mask")], ["t1", "t3"])
        self.assertLess(reply.budget_after.used_token_count, reply.budget_before.used_token_count)

    def test_budget(self):
        reply = self.client.budget(api.BudgetRequest(state=st.AgentState(model=st.ModelSpec(name="gpt-4o"), context=st.AgentContext(
            messages=[m.user("How many tokens?", id="u1")]))))
        b = reply.budget
        self.assertEqual(b.remaining_token_count, b.context_window_token_count - b.used_token_count - b.reserved_output_token_count)
        self.assertEqual(b.provenance, api.TOKEN_COUNT_PROVENANCE_EXACT)

    def test_count_tokens(self):
        reply = self.client.count_tokens(model="gpt-4o", texts=["Hello, world!"])
        self.assertEqual((reply.counter, reply.total_token_count), ("o200k_base", 4))

    def test_list_profiles(self):
        profiles = self.client.list_profiles().profiles
        self.assertEqual([p.name for p in profiles if p.default], ["pragmatic"])

    def test_error_names_reason_and_field(self):
        bad = st.AgentState(model=st.ModelSpec(name="gpt-4o"), context=st.AgentContext(
            messages=[m.tool(m.tool_result("", "", "ok"), id="t1")]))
        with self.assertRaises(ctxc.CtxcError) as caught:
            self.client.compile(state=bad)
        err = caught.exception
        self.assertEqual((err.code, err.reason, err.domain), (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_STATE", "ctxc"))
        self.assertEqual([v.field for v in err.field_violations], ["state.context.messages[0].parts[0].tool_result.tool_call_id"])
        self.assertIsInstance(err.__cause__, grpc.RpcError)

    def test_error_metadata(self):
        with self.assertRaises(ctxc.CtxcError) as caught:
            self.client.compile(state=st.AgentState(model=st.ModelSpec(name="gpt-4o")), profile="no-such-profile")
        self.assertEqual(caught.exception.reason, "UNKNOWN_PROFILE")
        self.assertIn("pragmatic", caught.exception.metadata["known_profiles"])

    def test_request_or_fields_not_both(self):
        with self.assertRaises(TypeError):
            self.client.compile(api.CompileRequest(), profile="pragmatic")

    def test_default_channel_settings(self):
        options = dict(ctxc._channel.channel_options())
        config = json.loads(options["grpc.service_config"])
        self.assertEqual(config["methodConfig"][0]["retryPolicy"]["retryableStatusCodes"], ["UNAVAILABLE"])
        self.assertEqual(options["grpc.max_receive_message_length"], 32 << 20)
        self.assertEqual(dict(ctxc._channel.channel_options([("grpc.max_receive_message_length", 1)]))["grpc.max_receive_message_length"], 1)


class AsyncClientTest(ServerTestCase):
    def test_calls_and_errors(self):
        async def run():
            async with ctxc.AsyncClient(self.server.addr) as client:
                count = await client.count_tokens(encoding="cl100k_base", texts=["Hello, world!"])
                self.assertEqual(count.total_token_count, 4)
                profiles = await client.list_profiles()
                self.assertIn("budget-aware", [p.name for p in profiles.profiles])
                with self.assertRaises(ctxc.CtxcError) as caught:
                    await client.compile(state=st.AgentState(model=st.ModelSpec(name="no-such-model"), context=st.AgentContext(
                        messages=[m.user("hi", id="u1")])))
                self.assertEqual((caught.exception.code, caught.exception.reason), (grpc.StatusCode.INVALID_ARGUMENT, "UNKNOWN_MODEL"))

        asyncio.run(run())


class RetryTest(unittest.TestCase):
    def test_unavailable_is_a_ctxc_error(self):
        # Nothing listens on port 1: every attempt (the retries too) fails with UNAVAILABLE.
        with ctxc.Client("127.0.0.1:1", timeout=10) as client:
            with self.assertRaises(ctxc.CtxcError) as caught:
                client.list_profiles()
        self.assertEqual(caught.exception.code, grpc.StatusCode.UNAVAILABLE)
        self.assertEqual(caught.exception.reason, "")


if __name__ == "__main__":
    unittest.main()
