"""A Route session kept as the opaque state blob ctxc returns.

The client never looks inside the blob: each Route appends to it and returns
the next one, Compile reads it. Persist session.blob between requests (a
database column, a cache) and resume with client.session(model, blob=...).
"""
from __future__ import annotations

import json
from typing import Dict, List, Mapping, Optional, Sequence, Union

from ctxc.messages import model_spec, user
from ctxc.v1 import agent_state_pb2 as st
from ctxc.v1 import compiler_service_pb2 as api

MessageLike = Union[st.Message, str]


class _Requests:
    """What Session and AsyncSession share: the requests and the blob."""

    def __init__(self, model: Union[str, st.ModelSpec], agent_id: str, profile: str, blob: bytes):
        self.model = model_spec(model)
        self.agent_id = agent_id
        self.profile = profile
        self.blob = blob

    def route_request(self, **input_) -> api.RouteRequest:
        req = api.RouteRequest(profile=self.profile, **input_)
        if self.blob:
            req.state_blob = self.blob
        else:
            req.state.CopyFrom(st.AgentState(agent_id=self.agent_id, model=self.model))
            req.want_state_blob = True
        return req

    def user_request(self, messages: Sequence[MessageLike], execution_id: str) -> api.RouteRequest:
        turn = api.UserTurn(messages=[user(m) if isinstance(m, str) else m for m in messages], execution_id=execution_id)
        return self.route_request(user_turn=turn)

    def step_request(self, messages: Sequence[st.Message], finish_reason, usage: Optional[st.Usage], error: str) -> api.RouteRequest:
        return self.route_request(step=api.AgentStep(messages=messages, finish_reason=finish_reason, usage=usage, error=error))

    def event_request(self, text: str, role, metadata: Optional[Mapping[str, str]]) -> api.RouteRequest:
        return self.route_request(event=api.Event(text=text, role=role, metadata=metadata or {}))

    def remember(self, reply: api.RouteResponse) -> api.RouteResponse:
        self.blob = reply.state_blob
        return reply

    def compile_request(self, options: Optional[api.CompileOptions], render_openai: bool = False) -> api.CompileRequest:
        if not self.blob:
            raise ValueError("the session is empty: route a user turn first")
        req = api.CompileRequest(state_blob=self.blob, profile=self.profile, options=options)
        if render_openai:
            req.options.render = api.RENDER_FORMAT_OPENAI
        return req


def _rendered_messages(reply: api.CompileResponse) -> List[Dict]:
    return json.loads(reply.rendered)["messages"]


class Session(_Requests):
    """A session over a blocking Client; see client.session()."""

    def __init__(self, client, model, *, agent_id: str = "", profile: str = "", blob: bytes = b""):
        super().__init__(model, agent_id, profile, blob)
        self.client = client

    def user(self, *messages: MessageLike, execution_id: str = "") -> api.RouteResponse:
        """A user turn: starts a new execution. A str is a user message; leading
        system messages replace the system prompt."""
        return self.remember(self.client.route(self.user_request(messages, execution_id)))

    def step(self, *messages: st.Message, finish_reason=api.FINISH_REASON_STOP, usage: Optional[st.Usage] = None,
             error: str = "") -> api.RouteResponse:
        """One agent step: the assistant's output and its tool results. FINISH_REASON_STOP ends the execution."""
        return self.remember(self.client.route(self.step_request(messages, finish_reason, usage, error)))

    def event(self, text: str, *, role=st.ROLE_UNSPECIFIED, metadata: Optional[Mapping[str, str]] = None) -> api.RouteResponse:
        """Out-of-band context, stored without a model call."""
        return self.remember(self.client.route(self.event_request(text, role, metadata)))

    def compile(self, options: Optional[api.CompileOptions] = None) -> api.CompileResponse:
        """The context of the next model call."""
        return self.client.compile(self.compile_request(options))

    def compile_openai(self, options: Optional[api.CompileOptions] = None) -> List[Dict]:
        """The context of the next model call as OpenAI Chat Completions messages."""
        return _rendered_messages(self.client.compile(self.compile_request(options, render_openai=True)))



class AsyncSession(_Requests):
    """A session over an AsyncClient; see AsyncClient.session()."""

    def __init__(self, client, model, *, agent_id: str = "", profile: str = "", blob: bytes = b""):
        super().__init__(model, agent_id, profile, blob)
        self.client = client

    async def user(self, *messages: MessageLike, execution_id: str = "") -> api.RouteResponse:
        return self.remember(await self.client.route(self.user_request(messages, execution_id)))

    async def step(self, *messages: st.Message, finish_reason=api.FINISH_REASON_STOP, usage: Optional[st.Usage] = None,
                   error: str = "") -> api.RouteResponse:
        return self.remember(await self.client.route(self.step_request(messages, finish_reason, usage, error)))

    async def event(self, text: str, *, role=st.ROLE_UNSPECIFIED, metadata: Optional[Mapping[str, str]] = None) -> api.RouteResponse:
        return self.remember(await self.client.route(self.event_request(text, role, metadata)))

    async def compile(self, options: Optional[api.CompileOptions] = None) -> api.CompileResponse:
        return await self.client.compile(self.compile_request(options))

    async def compile_openai(self, options: Optional[api.CompileOptions] = None) -> List[Dict]:
        return _rendered_messages(await self.client.compile(self.compile_request(options, render_openai=True)))

