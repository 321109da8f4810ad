"""Client (blocking) and AsyncClient (asyncio) for a ctxc server."""
from __future__ import annotations

from typing import Any, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import grpc

from ctxc import openai
from ctxc._channel import DEFAULT_TARGET, DEFAULT_TIMEOUT, channel_options
from ctxc.errors import CtxcError
from ctxc.messages import model_spec
from ctxc.v1 import agent_state_pb2 as st
from ctxc.v1 import compiler_service_pb2 as api
from ctxc.v1 import compiler_service_pb2_grpc as rpc

Metadata = Sequence[Tuple[str, str]]


def _request(cls, request, fields):
    if request is not None and fields:
        raise TypeError("pass a request or its fields, not both")
    return request if request is not None else cls(**fields)


def _compile_options(max_tokens: Optional[int], reserved_output_tokens: Optional[int], options: Optional[api.CompileOptions]) -> api.CompileOptions:
    out = api.CompileOptions()
    if options is not None:
        out.CopyFrom(options)
    if max_tokens is not None:
        out.max_context_token_count = max_tokens
    if reserved_output_tokens is not None:
        out.reserved_output_token_count = reserved_output_tokens
    return out


class Client:
    """A blocking ctxc client over one gRPC channel.

        with ctxc.Client("127.0.0.1:50051") as client:
            reply = client.compile(state=state, profile="budget-aware")

    Every call takes its request message or the message's fields as keywords,
    a timeout (default: the client's) and metadata, and raises CtxcError.
    Pass credentials (grpc.ssl_channel_credentials(), composed with call
    credentials for a token) for TLS, or a channel of your own.
    """

    def __init__(self, target: str = DEFAULT_TARGET, *, timeout: Optional[float] = DEFAULT_TIMEOUT,
                 credentials: Optional[grpc.ChannelCredentials] = None, options: Sequence[Tuple[str, Any]] = (),
                 channel: Optional[grpc.Channel] = None):
        if channel is None:
            opts = channel_options(options)
            channel = grpc.secure_channel(target, credentials, opts) if credentials else grpc.insecure_channel(target, opts)
        self.channel = channel
        self.stub = rpc.ContextCompilerServiceStub(channel)
        self.timeout = timeout

    def close(self) -> None:
        self.channel.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _call(self, method, request, timeout, metadata):
        try:
            return method(request, timeout=self.timeout if timeout is None else timeout, metadata=metadata)
        except grpc.RpcError as err:
            raise CtxcError.from_rpc_error(err) from err

    def compile(self, request: Optional[api.CompileRequest] = None, *, timeout: Optional[float] = None,
                metadata: Optional[Metadata] = None, **fields) -> api.CompileResponse:
        """Compile runs the profile's policy chain and returns what the model should see."""
        return self._call(self.stub.Compile, _request(api.CompileRequest, request, fields), timeout, metadata)

    def route(self, request: Optional[api.RouteRequest] = None, *, timeout: Optional[float] = None,
              metadata: Optional[Metadata] = None, **fields) -> api.RouteResponse:
        """Route appends a user turn, an agent step or an event and returns the new state."""
        return self._call(self.stub.Route, _request(api.RouteRequest, request, fields), timeout, metadata)

    def compact(self, request: Optional[api.CompactRequest] = None, *, timeout: Optional[float] = None,
                metadata: Optional[Metadata] = None, **fields) -> api.CompactResponse:
        """Compact persists compaction (summaries, masks) into the state."""
        return self._call(self.stub.Compact, _request(api.CompactRequest, request, fields), timeout, metadata)

    def budget(self, request: Optional[api.BudgetRequest] = None, *, timeout: Optional[float] = None,
               metadata: Optional[Metadata] = None, **fields) -> api.BudgetResponse:
        """Budget reports the token budget of a state under a profile."""
        return self._call(self.stub.Budget, _request(api.BudgetRequest, request, fields), timeout, metadata)

    def count_tokens(self, request: Optional[api.CountTokensRequest] = None, *, timeout: Optional[float] = None,
                     metadata: Optional[Metadata] = None, **fields) -> api.CountTokensResponse:
        """CountTokens counts texts and messages for a model or an encoding."""
        return self._call(self.stub.CountTokens, _request(api.CountTokensRequest, request, fields), timeout, metadata)

    def list_profiles(self, *, timeout: Optional[float] = None, metadata: Optional[Metadata] = None) -> api.ListProfilesResponse:
        """ListProfiles lists the server's profiles with their stages and settings."""
        return self._call(self.stub.ListProfiles, api.ListProfilesRequest(), timeout, metadata)

    def compile_openai(self, messages: Sequence[Mapping[str, Any]], tools: Optional[Iterable[Mapping[str, Any]]] = None, *,
                       model: Union[str, st.ModelSpec], profile: str = "", max_tokens: Optional[int] = None,
                       reserved_output_tokens: Optional[int] = None, options: Optional[api.CompileOptions] = None,
                       timeout: Optional[float] = None, metadata: Optional[Metadata] = None) -> List[openai.OpenAIMessage]:
        """Compiles an OpenAI Chat Completions message list and returns the messages to send, in the same format."""
        request = openai.compile_request(messages, tools, model_spec(model), profile, _compile_options(max_tokens, reserved_output_tokens, options))
        return openai.from_compiled(messages, self.compile(request, timeout=timeout, metadata=metadata))

    def session(self, model: Union[str, st.ModelSpec], *, agent_id: str = "", profile: str = "", blob: bytes = b"") -> "Session":
        """A Route session kept as an opaque state blob (pass blob to resume one)."""
        from ctxc.session import Session

        return Session(self, model, agent_id=agent_id, profile=profile, blob=blob)

    def state_refs(self) -> "StateRefs":
        """Compile, Budget, Compact and Route of a state the caller holds and grows,
        sent by reference with only the messages appended since the previous call."""
        from ctxc.refs import StateRefs

        return StateRefs(self)


class AsyncClient:
    """The asyncio twin of Client, over a grpc.aio channel:

        async with ctxc.AsyncClient("127.0.0.1:50051") as client:
            reply = await client.compile(state=state)
    """

    def __init__(self, target: str = DEFAULT_TARGET, *, timeout: Optional[float] = DEFAULT_TIMEOUT,
                 credentials: Optional[grpc.ChannelCredentials] = None, options: Sequence[Tuple[str, Any]] = (),
                 channel: Optional[grpc.aio.Channel] = None):
        if channel is None:
            opts = channel_options(options)
            channel = grpc.aio.secure_channel(target, credentials, opts) if credentials else grpc.aio.insecure_channel(target, opts)
        self.channel = channel
        self.stub = rpc.ContextCompilerServiceStub(channel)
        self.timeout = timeout

    async def close(self) -> None:
        await self.channel.close()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    async def _call(self, method, request, timeout, metadata):
        try:
            return await method(request, timeout=self.timeout if timeout is None else timeout, metadata=metadata)
        except grpc.aio.AioRpcError as err:
            raise CtxcError.from_rpc_error(err, err.trailing_metadata()) from err

    async def compile(self, request: Optional[api.CompileRequest] = None, *, timeout: Optional[float] = None,
                      metadata: Optional[Metadata] = None, **fields) -> api.CompileResponse:
        return await self._call(self.stub.Compile, _request(api.CompileRequest, request, fields), timeout, metadata)

    async def route(self, request: Optional[api.RouteRequest] = None, *, timeout: Optional[float] = None,
                    metadata: Optional[Metadata] = None, **fields) -> api.RouteResponse:
        return await self._call(self.stub.Route, _request(api.RouteRequest, request, fields), timeout, metadata)

    async def compact(self, request: Optional[api.CompactRequest] = None, *, timeout: Optional[float] = None,
                      metadata: Optional[Metadata] = None, **fields) -> api.CompactResponse:
        return await self._call(self.stub.Compact, _request(api.CompactRequest, request, fields), timeout, metadata)

    async def budget(self, request: Optional[api.BudgetRequest] = None, *, timeout: Optional[float] = None,
                     metadata: Optional[Metadata] = None, **fields) -> api.BudgetResponse:
        return await self._call(self.stub.Budget, _request(api.BudgetRequest, request, fields), timeout, metadata)

    async def count_tokens(self, request: Optional[api.CountTokensRequest] = None, *, timeout: Optional[float] = None,
                           metadata: Optional[Metadata] = None, **fields) -> api.CountTokensResponse:
        return await self._call(self.stub.CountTokens, _request(api.CountTokensRequest, request, fields), timeout, metadata)

    async def list_profiles(self, *, timeout: Optional[float] = None, metadata: Optional[Metadata] = None) -> api.ListProfilesResponse:
        return await self._call(self.stub.ListProfiles, api.ListProfilesRequest(), timeout, metadata)

    async def compile_openai(self, messages: Sequence[Mapping[str, Any]], tools: Optional[Iterable[Mapping[str, Any]]] = None, *,
                             model: Union[str, st.ModelSpec], profile: str = "", max_tokens: Optional[int] = None,
                             reserved_output_tokens: Optional[int] = None, options: Optional[api.CompileOptions] = None,
                             timeout: Optional[float] = None, metadata: Optional[Metadata] = None) -> List[openai.OpenAIMessage]:
        request = openai.compile_request(messages, tools, model_spec(model), profile, _compile_options(max_tokens, reserved_output_tokens, options))
        return openai.from_compiled(messages, await self.compile(request, timeout=timeout, metadata=metadata))

    def session(self, model: Union[str, st.ModelSpec], *, agent_id: str = "", profile: str = "", blob: bytes = b"") -> "AsyncSession":
        from ctxc.session import AsyncSession

        return AsyncSession(self, model, agent_id=agent_id, profile=profile, blob=blob)

    def state_refs(self) -> "AsyncStateRefs":
        from ctxc.refs import AsyncStateRefs

        return AsyncStateRefs(self)
