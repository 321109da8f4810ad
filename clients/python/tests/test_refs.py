"""StateRefs: a growing state sent by reference, against a real ctxc serve.

Every answer is checked against the same call sent whole with the plain
client; what went on the wire is read by a client interceptor."""
import asyncio
import tempfile
import unittest
from pathlib import Path

import grpc

import ctxc
from ctxc import openai
from ctxc._channel import channel_options
from ctxc.v1 import agent_state_pb2 as st
from ctxc.v1 import compiler_service_pb2 as api
from tests.conversation import TOOLS, coding_conversation
from tests.server import Server, ServerTestCase

# A window the 30-turn conversation outgrows, so the compile masks and
# summarizes: a state resolved wrongly would compile to something else.
OPTIONS = api.CompileOptions(max_context_token_count=24_000)
PROFILE = "budget-aware"


def turns(count: int):
    """The coding conversation as a state per turn: the system prompt and
    tools, and the messages of the turns so far (each turn appends 9)."""
    system_prompt, log, tools = openai.to_ctxc(coding_conversation(count), TOOLS)
    base = st.AgentState(model=st.ModelSpec(name="gpt-4o"), context=st.AgentContext(system_prompt=system_prompt, tools=tools))
    return base, [log[:9 * t + 1] for t in range(1, count + 1)]


class Sent:
    """Records each request a channel sends: (method, bytes, base_state_ref, appended)."""

    def __init__(self):
        self.calls = []

    def record(self, details, request):
        method = details.method.decode() if isinstance(details.method, bytes) else details.method  # bytes in grpc.aio
        self.calls.append((method.rsplit("/", 1)[-1], request.ByteSize(), getattr(request, "base_state_ref", ""),
                           len(getattr(request, "appended_messages", ()))))

    def by_ref(self):
        return [bool(ref) for _, _, ref, _ in self.calls]


class _Recorder(grpc.UnaryUnaryClientInterceptor):
    def __init__(self, sent: Sent):
        self.sent = sent

    def intercept_unary_unary(self, continuation, details, request):
        self.sent.record(details, request)
        return continuation(details, request)


class _AsyncRecorder(grpc.aio.UnaryUnaryClientInterceptor):
    def __init__(self, sent: Sent):
        self.sent = sent

    async def intercept_unary_unary(self, continuation, details, request):
        self.sent.record(details, request)
        return await continuation(details, request)


def recording_client(target: str):
    sent = Sent()
    channel = grpc.intercept_channel(grpc.insecure_channel(target, channel_options()), _Recorder(sent))
    return ctxc.Client(channel=channel), sent


def untimed(state: st.AgentState) -> st.AgentState:
    """state without the create_time Route stamps on the messages it appends."""
    out = st.AgentState()
    out.CopyFrom(state)
    for message in out.context.messages:
        message.ClearField("create_time")
    return out


def compile_request(base: st.AgentState, log) -> api.CompileRequest:
    state = st.AgentState()
    state.CopyFrom(base)
    state.context.messages.extend(log)
    return api.CompileRequest(state=state, profile=PROFILE, options=OPTIONS)


class StateRefsTest(ServerTestCase):
    def setUp(self):
        self.client, self.sent = recording_client(self.server.addr)
        self.addCleanup(self.client.close)
        self.plain = ctxc.Client(self.server.addr)
        self.addCleanup(self.plain.close)

    def assert_same_compile(self, got: api.CompileResponse, request: api.CompileRequest):
        want = self.plain.compile(request)
        self.assertEqual(list(got.messages), list(want.messages))
        self.assertEqual(got.budget.used_token_count, want.budget.used_token_count)

    def test_a_growing_state_goes_by_reference_and_compiles_the_same(self):
        base, logs = turns(30)
        refs = self.client.state_refs()
        dispositions = set()
        for log in logs:
            request = compile_request(base, log)
            reply = refs.compile(request)
            self.assert_same_compile(reply, request)
            dispositions.update(r.disposition for r in reply.report.messages)
        self.assertIn(api.DISPOSITION_MASKED, dispositions, "the window never made the compile change the log")
        self.assertEqual(self.sent.by_ref(), [False] + [True] * 29)
        self.assertEqual([n for _, _, _, n in self.sent.calls[1:]], [9] * 29)
        self.assertEqual((refs.by_reference, refs.misses), (29, 0))
        # The last call sent its 9 new messages, not the 271 of the state.
        whole = compile_request(base, logs[-1]).ByteSize()
        self.assertLess(self.sent.calls[-1][1] * 10, whole)

    def test_a_changed_earlier_message_or_system_prompt_is_sent_whole(self):
        base, logs = turns(6)
        refs = self.client.state_refs()
        # One request kept and grown in place: the same message objects every call.
        request = compile_request(base, logs[0])
        refs.compile(request)
        request.state.context.messages.extend(logs[1][len(logs[0]):])
        self.assert_same_compile(refs.compile(request), request)

        request.state.context.messages[2].parts[0].tool_result.content = "package stock // rewritten"
        request.state.context.messages.extend(logs[2][len(logs[1]):])
        self.assert_same_compile(refs.compile(request), request)

        request.state.context.messages.extend(logs[3][len(logs[2]):])
        self.assert_same_compile(refs.compile(request), request)

        request.state.context.system_prompt = "You are a terse coding agent."
        request.state.context.messages.extend(logs[4][len(logs[3]):])
        self.assert_same_compile(refs.compile(request), request)

        del request.state.context.messages[-1]  # not an extension of the state the reference names
        self.assert_same_compile(refs.compile(request), request)
        self.assertEqual(self.sent.by_ref(), [False, True, False, True, False, False])

    def test_route_compact_and_budget_follow_the_state_they_return(self):
        refs = self.client.state_refs()
        reply = refs.route(state=st.AgentState(model=st.ModelSpec(name="gpt-4o")),
                           user_turn=api.UserTurn(messages=[ctxc.messages.user("The tests in ./store fail. Fix them.")]))
        for i in range(3):
            step = api.AgentStep(messages=[ctxc.messages.assistant(ctxc.messages.tool_call(f"c{i}", "read_file", {"path": "store.go"})),
                                           ctxc.messages.tool(ctxc.messages.tool_result(f"c{i}", "read_file", "package store\n" * 400))],
                                 finish_reason=api.FINISH_REASON_TOOL_CALLS)
            want = self.plain.route(state=reply.state, step=step)
            reply = refs.route(state=reply.state, step=step)
            self.assertEqual(untimed(reply.state), untimed(want.state))
        state = reply.state
        state.context.messages.append(ctxc.messages.user("Note: the store is read-only on Fridays.", id="note-1"))
        self.assertEqual(refs.budget(state=state, profile=PROFILE).budget, self.plain.budget(state=state, profile=PROFILE).budget)
        small = api.CompileOptions(max_context_token_count=3_000)
        compacted = refs.compact(state=state, profile="policy-driven", options=small)
        self.assertEqual(untimed(compacted.state), untimed(self.plain.compact(state=state, profile="policy-driven", options=small).state))
        request = api.CompileRequest(state=compacted.state, profile=PROFILE)
        self.assert_same_compile(refs.compile(request), request)
        # The first Route, then all by reference: the Routes and the Compact
        # continue from the state the previous call returned, the Compile from the Compact's.
        self.assertEqual([(method, bool(ref)) for method, _, ref, _ in self.sent.calls],
                         [("Route", False)] + [("Route", True)] * 3 + [("Budget", True), ("Compact", True), ("Compile", True)])
        self.assertEqual([n for _, _, _, n in self.sent.calls], [0, 0, 0, 0, 1, 0, 0])

    def test_requests_a_reference_cannot_carry_go_whole(self):
        base, logs = turns(2)
        refs = self.client.state_refs()
        refs.compile(compile_request(base, logs[0]))
        request = compile_request(base, logs[1])
        request.reset_history = True
        self.assert_same_compile(refs.compile(request), request)
        self.assertEqual(self.sent.by_ref(), [False, False])


class MissTest(unittest.TestCase):
    """A reference the server cannot resolve, because it restarted in between."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)
        # One address across the restart, which the client's channel reconnects to.
        self.target = "unix://" + str(Path(self.dir.name) / "ctxc.sock")
        self.server = self.serve()
        self.addCleanup(lambda: self.server.stop())

    def serve(self) -> Server:
        # The client keeps its connection open across the restart: a short
        # grace period stops the server without waiting for it to close.
        return Server("--listen", self.target, "--grace-period", "100ms")

    def restart(self):
        self.server.stop()
        self.server = self.serve()

    def test_a_miss_is_sent_again_whole(self):
        base, logs = turns(4)
        client, sent = recording_client(self.target)
        self.addCleanup(client.close)
        refs = client.state_refs()
        refs.compile(compile_request(base, logs[0]))
        refs.compile(compile_request(base, logs[1]))
        self.restart()
        reply = refs.compile(compile_request(base, logs[2]))
        reply4 = refs.compile(compile_request(base, logs[3]))
        with ctxc.Client(self.target) as plain:
            self.assertEqual(list(reply.messages), list(plain.compile(compile_request(base, logs[2])).messages))
            self.assertEqual(list(reply4.messages), list(plain.compile(compile_request(base, logs[3])).messages))
        # By reference, the miss, the same call whole, then by reference again.
        self.assertEqual(sent.by_ref(), [False, True, True, False, True])
        self.assertEqual((refs.by_reference, refs.misses), (3, 1))

    def test_a_miss_of_the_async_twin(self):
        base, logs = turns(3)

        async def run():
            sent = Sent()
            channel = grpc.aio.insecure_channel(self.target, channel_options(), interceptors=[_AsyncRecorder(sent)])
            async with ctxc.AsyncClient(channel=channel) as client:
                refs = client.state_refs()
                first = await refs.compile(compile_request(base, logs[0]))
                second = await refs.compile(compile_request(base, logs[1]))
                self.restart()
                third = await refs.compile(compile_request(base, logs[2]))
                # An error that is not a miss reaches the caller, and is not sent again.
                with self.assertRaises(ctxc.CtxcError) as caught:
                    await refs.compile(api.CompileRequest(state=compile_request(base, logs[2]).state, profile="no-such-profile"))
                self.assertEqual(caught.exception.reason, "UNKNOWN_PROFILE")
            return sent, refs, [first, second, third]

        sent, refs, replies = asyncio.run(run())
        with ctxc.Client(self.target) as plain:
            for reply, log in zip(replies, logs):
                self.assertEqual(list(reply.messages), list(plain.compile(compile_request(base, log)).messages))
        self.assertEqual(sent.by_ref(), [False, True, True, False, True])
        self.assertEqual((refs.by_reference, refs.misses), (3, 1))


if __name__ == "__main__":
    unittest.main()
