"""The ten-line sidecar call: compile a state with ctxc before each model call.

    PYTHONPATH=clients/python/src /usr/bin/python3 examples/clients/python/compile.py 127.0.0.1:50051
"""
import sys

import grpc
from ctxc.v1 import agent_state_pb2 as state, compiler_service_pb2 as api, compiler_service_pb2_grpc as rpc

with grpc.insecure_channel(sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:50051") as channel:
    ctxc = rpc.ContextCompilerServiceStub(channel)
    agent = state.AgentState(model=state.ModelSpec(name="gpt-4o"), context=state.AgentContext(
        system_prompt="You are helpful.",
        messages=[state.Message(id="u1", role=state.ROLE_USER, parts=[state.Part(text="Hello!")])]))
    reply = ctxc.Compile(api.CompileRequest(state=agent), timeout=10)
    print(f"{len(reply.messages)} messages, {reply.budget.used_token_count} tokens used of {reply.budget.context_window_token_count}")
