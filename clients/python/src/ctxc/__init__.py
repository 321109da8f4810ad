"""ctxc: the Python client of the ctxc context compiler.

    import ctxc
    with ctxc.Client("127.0.0.1:50051") as client:
        messages = client.compile_openai(openai_messages, tools, model="gpt-4o", profile="budget-aware")

Client and AsyncClient call the service; compile_openai converts OpenAI-format
message lists both ways; Session keeps a Route session as an opaque blob;
StateRefs (client.state_refs()) sends a state the caller grows by reference;
the generated messages are in ctxc.v1 (agent_state_pb2, compiler_service_pb2).
"""
from ctxc._version import __version__
from ctxc.client import AsyncClient, Client
from ctxc.errors import CtxcError, FieldViolation
from ctxc.refs import AsyncStateRefs, StateRefs
from ctxc.session import AsyncSession, Session

__all__ = ["AsyncClient", "AsyncSession", "AsyncStateRefs", "Client", "CtxcError", "FieldViolation", "Session", "StateRefs",
           "__version__"]
