"""A coding-agent session driven through ctxc as a Python sidecar user would.

Each agent step goes through Route (the state lives in the client as an opaque
blob), and each model call gets its context from Compile. The script checks
what it gets back and exits non-zero on the first surprise; the integration
tests run it against the real server.

    PYTHONPATH=clients/python/src /usr/bin/python3 examples/clients/python/session.py 127.0.0.1:50051
"""
import sys

import grpc
from ctxc.v1 import agent_state_pb2 as st
from ctxc.v1 import compiler_service_pb2 as api
from ctxc.v1 import compiler_service_pb2_grpc as rpc


def text(s):
    return st.Part(text=s)


def call(call_id, name, args):
    return st.Part(tool_call=st.ToolCall(id=call_id, name=name, arguments_json=args))


def result(call_id, name, content, is_error=False):
    return st.Part(tool_result=st.ToolResult(tool_call_id=call_id, name=name, content=content, is_error=is_error))


def expect(what, got, want):
    if got != want:
        sys.exit(f"{what}: got {got!r}, want {want!r}")


class Agent:
    """Keeps the state as the blob ctxc returns; never looks inside it."""

    def __init__(self, ctxc):
        self.ctxc = ctxc
        self.blob = None

    def route(self, **input_):
        req = api.RouteRequest(**input_)
        if self.blob is None:
            req.state.CopyFrom(st.AgentState(agent_id="py-coder", model=st.ModelSpec(name="gpt-4o", provider="openai")))
            req.want_state_blob = True
        else:
            req.state_blob = self.blob
        reply = self.ctxc.Route(req, timeout=10)
        self.blob = reply.state_blob
        return reply

    def compile(self, **options):
        return self.ctxc.Compile(api.CompileRequest(state_blob=self.blob, options=api.CompileOptions(**options)), timeout=10)


def main(addr):
    with grpc.insecure_channel(addr) as channel:
        agent = Agent(rpc.ContextCompilerServiceStub(channel))

        r = agent.route(user_turn=api.UserTurn(messages=[
            st.Message(role=st.ROLE_SYSTEM, parts=[text("You are a careful coding agent.")]),
            st.Message(role=st.ROLE_USER, parts=[text("The tests in ./store fail. Fix them.")]),
        ]))
        expect("first turn ids", list(r.appended_message_ids), ["exec-1-u1"])
        expect("system prompt replaced", r.system_prompt_replaced, True)
        c = agent.compile()
        expect("compiled roles", [m.role for m in c.messages], [st.ROLE_SYSTEM, st.ROLE_USER])

        r = agent.route(step=api.AgentStep(
            finish_reason=api.FINISH_REASON_TOOL_CALLS,
            usage=st.Usage(input_token_count=150, output_token_count=30),
            messages=[
                st.Message(role=st.ROLE_ASSISTANT, parts=[call("c1", "read_file", '{"path":"store/store.go"}'),
                                                          call("c2", "run_tests", '{"pkg":"./store"}')]),
                st.Message(role=st.ROLE_TOOL, parts=[result("c1", "read_file", "package store\n")]),
                st.Message(role=st.ROLE_TOOL, parts=[result("c2", "run_tests", "--- FAIL: TestReserve", is_error=True)]),
            ]))
        expect("tool step ids", list(r.appended_message_ids), ["exec-1-s0-0", "exec-1-s0-1", "exec-1-s0-2"])
        expect("tool step ended the execution", r.execution_ended, False)
        c = agent.compile()
        expect("tool step provenance", c.budget.provenance, api.TOKEN_COUNT_PROVENANCE_ANCHORED)
        expect("failed result visible", any(p.tool_result.is_error for m in c.messages for p in m.parts), True)

        r = agent.route(step=api.AgentStep(
            finish_reason=api.FINISH_REASON_STOP,
            messages=[st.Message(role=st.ROLE_ASSISTANT, parts=[text("Fixed: Reserve checks the stock.")])]))
        expect("final answer ended the execution", r.execution_ended, True)

        r = agent.route(event=api.Event(text="The user checked in at Harrogate Theatre."))
        expect("event ids", list(r.appended_message_ids), ["evt-5"])

        r = agent.route(user_turn=api.UserTurn(messages=[st.Message(role=st.ROLE_USER, parts=[text("Add a test for n <= 0.")])]))
        expect("second turn ids", list(r.appended_message_ids), ["exec-2-u0"])

        c = agent.compile(view=api.VIEW_CONVERSATION)
        expect("conversation view", [m.id for m in c.messages],
               ["ctxc-system", "exec-1-u1", "exec-1-s1-0", "evt-5", "exec-2-u0"])

        try:
            agent.ctxc.Compile(api.CompileRequest(state_blob=agent.blob[:-5]), timeout=10)
            sys.exit("a truncated blob was accepted")
        except grpc.RpcError as err:
            expect("truncated blob code", err.code(), grpc.StatusCode.INVALID_ARGUMENT)
    print("python sidecar session: ok")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:50051")
