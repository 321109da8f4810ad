"""Session: a Route session kept as an opaque blob, against a real ctxc serve."""
import asyncio

import ctxc
from ctxc import messages as m
from ctxc.v1 import agent_state_pb2 as st
from ctxc.v1 import compiler_service_pb2 as api
from tests.conversation import assert_tool_pairing
from tests.server import ServerTestCase


class SessionTest(ServerTestCase):
    def test_a_session_with_tools_an_event_and_a_second_turn(self):
        with ctxc.Client(self.server.addr) as client:
            s = client.session("gpt-4o", agent_id="py-test")
            r = s.user(m.system("You are a careful coding agent."), "The tests in ./store fail. Fix them.")
            self.assertEqual(list(r.appended_message_ids), ["exec-1-u1"])
            self.assertTrue(r.system_prompt_replaced)
            r = s.step(m.assistant(m.tool_call("c1", "read_file", {"path": "store.go"}), m.tool_call("c2", "run_tests", {"pkg": "./store"})),
                       m.tool(m.tool_result("c1", "read_file", "package store")),
                       m.tool(m.tool_result("c2", "run_tests", "--- FAIL: TestReserve", is_error=True)),
                       finish_reason=api.FINISH_REASON_TOOL_CALLS, usage=st.Usage(input_token_count=150, output_token_count=30))
            self.assertEqual(list(r.appended_message_ids), ["exec-1-s0-0", "exec-1-s0-1", "exec-1-s0-2"])
            self.assertFalse(r.execution_ended)
            self.assertEqual(s.compile().budget.provenance, api.TOKEN_COUNT_PROVENANCE_ANCHORED)

            resumed = client.session("gpt-4o", blob=s.blob)
            r = resumed.step(m.assistant("Fixed: Reserve checks the stock."))
            self.assertTrue(r.execution_ended)
            self.assertEqual(list(resumed.event("The user checked in at Harrogate.").appended_message_ids), ["evt-5"])
            self.assertEqual(list(resumed.user("Add a test for n <= 0.").appended_message_ids), ["exec-2-u0"])

            conversation = resumed.compile(api.CompileOptions(view=api.VIEW_CONVERSATION))
            self.assertEqual([x.id for x in conversation.messages], ["ctxc-system", "exec-1-u1", "exec-1-s1-0", "evt-5", "exec-2-u0"])
            sent = resumed.compile_openai()
            self.assertEqual(sent[0], {"role": "system", "content": "You are a careful coding agent."})
            assert_tool_pairing(self, sent)
            self.assertEqual(sent[-1], {"role": "user", "content": "Add a test for n <= 0."})

            with self.assertRaises(ctxc.CtxcError) as caught:
                client.session("gpt-4o", blob=resumed.blob[:-5]).compile()
            self.assertEqual(caught.exception.reason, "STATE_BLOB_TRUNCATED")

    def test_an_empty_session_cannot_compile(self):
        with ctxc.Client(self.server.addr) as client, self.assertRaises(ValueError):
            client.session("gpt-4o").compile()

    def test_async_session(self):
        async def run():
            async with ctxc.AsyncClient(self.server.addr) as client:
                s = client.session("gpt-4o")
                await s.user("Hi")
                await s.step(m.assistant("Hello!"))
                return await s.compile_openai()

        self.assertEqual(asyncio.run(run()), [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}])
