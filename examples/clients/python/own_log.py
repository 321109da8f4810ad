"""A sidecar that keeps its own log and asks ctxc only for what changed.

With omit_stable_prefix, Compile leaves out the system prompt and the leading
messages it did not change; the client rebuilds the context from its own copy.
The script rebuilds it for a growing log in a small window (so compaction
starts changing the older messages), checks each rebuild against a full
Compile and exits non-zero on the first difference; the integration tests run
it against the real server.

    PYTHONPATH=clients/python/src /usr/bin/python3 examples/clients/python/own_log.py 127.0.0.1:50051
"""
import sys

import grpc
from ctxc.v1 import agent_state_pb2 as st
from ctxc.v1 import compiler_service_pb2 as api
from ctxc.v1 import compiler_service_pb2_grpc as rpc

SYSTEM = "You are a careful coding agent."


def context(state, reply):
    """The messages to send: this client's own prefix, then what ctxc returned."""
    own = []
    if state.context.system_prompt:
        own.append(st.Message(id="ctxc-system", role=st.ROLE_SYSTEM, parts=[st.Part(text=state.context.system_prompt)]))
    own.extend(state.context.messages)
    return own[:reply.omitted_message_count] + list(reply.messages)


def main(addr):
    with grpc.insecure_channel(addr) as channel:
        ctxc = rpc.ContextCompilerServiceStub(channel)
        state = st.AgentState(model=st.ModelSpec(name="gpt-4o"), context=st.AgentContext(system_prompt=SYSTEM))
        options = api.CompileOptions(max_context_token_count=3000, reserved_output_token_count=500)
        omitted_some, returned_none = False, False
        for turn in range(1, 9):
            state.context.messages.append(st.Message(id=f"u{turn}", role=st.ROLE_USER, parts=[st.Part(text=f"Step {turn}: read file {turn} and report.")]))
            state.context.messages.append(st.Message(id=f"a{turn}", role=st.ROLE_ASSISTANT, parts=[st.Part(tool_call=st.ToolCall(id=f"c{turn}", name="read_file", arguments_json='{"path": "f%d.go"}' % turn))]))
            state.context.messages.append(st.Message(id=f"t{turn}", role=st.ROLE_TOOL, parts=[st.Part(tool_result=st.ToolResult(tool_call_id=f"c{turn}", name="read_file", content=("package f%d\n" % turn) * 120))]))
            state.context.messages.append(st.Message(id=f"r{turn}", role=st.ROLE_ASSISTANT, parts=[st.Part(text=f"File {turn} declares package f{turn}.")]))
            req = api.CompileRequest(state=state, profile="budget-aware", options=options)
            full = ctxc.Compile(req, timeout=10)
            req.omit_stable_prefix = True
            part = ctxc.Compile(req, timeout=10)
            rebuilt = context(state, part)
            if rebuilt != list(full.messages):
                sys.exit(f"turn {turn}: the rebuilt context ({len(rebuilt)} messages) differs from the full one ({len(full.messages)})")
            omitted_some = omitted_some or 0 < part.omitted_message_count < len(full.messages)
            returned_none = returned_none or len(part.messages) == 0
            print(f"turn {turn}: {len(full.messages)} messages, {part.omitted_message_count} held by the client, {len(part.messages)} returned, {full.budget.used_token_count} tokens")
        if not (omitted_some and returned_none):
            sys.exit(f"the session never left part of the context out ({omitted_some}) or never returned nothing ({returned_none})")
        print("own log: ok")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:50051")
