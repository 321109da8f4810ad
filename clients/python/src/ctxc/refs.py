"""StateRefs: a growing state sent by reference.

A runtime that holds its agent's state and calls every turn passes the whole
state each time; StateRefs sends only the messages appended since the state of
its previous call, naming that state by the state_ref its response carried:

    refs = client.state_refs()
    for turn in ...:
        state.context.messages.extend(new_messages)
        reply = refs.compile(api.CompileRequest(state=state, profile="budget-aware"))

A reference the server cannot resolve (expired, evicted, a restarted server,
another replica without the shared Redis) is answered by sending the call
again whole, so the caller never sees it. Any change of the log other than
appending (an earlier message changed, removed or reordered) or of the state's
other fields (system prompt, tools, model, execution, ...) sends the whole
state. A StateRefs follows one state (one agent), one call at a time; after
Route and Compact it follows the state they return.
"""
from __future__ import annotations

from typing import Any, List, Optional, Tuple

import grpc
from google.protobuf.message import Message as _ProtoMessage

from ctxc.client import Metadata, _request
from ctxc.errors import CtxcError
from ctxc.v1 import agent_state_pb2 as st
from ctxc.v1 import compiler_service_pb2 as api

# The server's ErrorInfo reason for a base_state_ref it cannot resolve.
REASON_STATE_REF_NOT_FOUND = "STATE_REF_NOT_FOUND"

# Request fields a call by reference cannot carry (those a request type has).
_WHOLE_ONLY = ("state_blob", "input_json", "reset_history")
# What a call by reference sets instead of state.
_REF_FIELDS = ("state", "base_state_ref", "appended_messages")


def _copy_fields(src: _ProtoMessage, dst: _ProtoMessage, skip: Tuple[str, ...]) -> None:
    """Copies the fields src sets, but those named in skip, into an empty dst."""
    for field, value in src.ListFields():
        if field.name in skip:
            continue
        if isinstance(value, _ProtoMessage):
            getattr(dst, field.name).CopyFrom(value)
        elif hasattr(value, "MergeFrom"):  # a repeated field or a map
            getattr(dst, field.name).MergeFrom(value)
        else:
            setattr(dst, field.name, value)


def _without_log(state: st.AgentState) -> st.AgentState:
    """A copy of state without its messages: everything a call by reference
    takes from the referenced state besides the log."""
    out = st.AgentState()
    _copy_fields(state, out, ("context",))
    if state.HasField("context"):
        out.context.SetInParent()
        _copy_fields(state.context, out.context, ("messages",))
    return out


def is_state_ref_miss(err: BaseException) -> bool:
    """Whether err is the server's answer to a reference it cannot resolve."""
    return (isinstance(err, CtxcError) and err.code == grpc.StatusCode.FAILED_PRECONDITION
            and err.reason == REASON_STATE_REF_NOT_FOUND)


class _Follower:
    """What StateRefs and AsyncStateRefs share: the followed state and the
    requests. No I/O."""

    # How the log is compared. Python protobuf gives a repeated message element
    # a stable identity: upb (the PyPI wheels since 4.21) returns the same
    # wrapper while one is alive, its object cache keyed by the upb_Message
    # pointer, which moves with the element; the cpp and pure-Python backends
    # cache their element objects too. But the same object is no proof of the
    # same content: messages change in place (messages[3].parts[0].text = ...,
    # CopyFrom, a Route reply's state edited and sent back), and a reference
    # sent for a log whose earlier message changed would compile the wrong
    # context. Nor does a runtime that builds a request each turn hand over the
    # same objects: CompileRequest(state=state) copies the state. So identity is
    # not used: the follower keeps its own copies of the log the reference names
    # (never handed out, so never changed, and never the caller's object, which
    # would let == short-circuit) and compares the new log's prefix with them
    # by == in one list comparison. That runs in C with no Python per element
    # (upb compares field by field, cpp with MessageDifferencer): about 10 ms
    # for 2,000 messages of 4 MB with Debian's cpp backend, less than
    # serializing them to send whole (the pure-Python backend takes about 3
    # times as long). Copying costs the appended messages after a call by
    # reference (the copies of the compared prefix stay valid) and the whole
    # log after a call sent whole or a Route or Compact.

    def __init__(self) -> None:
        # The calls sent by reference (the misses included), and those the
        # server could not resolve (sent again whole).
        self.by_reference = 0
        self.misses = 0
        self.reset()

    def reset(self) -> None:
        """Forgets the followed state: the next call is sent whole."""
        self.ref = ""
        # _log owns the copies; _messages holds them as one list to compare with.
        self._log = st.AgentContext()
        self._messages: List[st.Message] = []
        self._rest: Optional[st.AgentState] = None

    def _by_ref(self, request: Any) -> Optional[Any]:
        """The request to send by reference, or None to send it as it is."""
        if not self.ref or not request.HasField("state") or request.base_state_ref or len(request.appended_messages):
            return None
        fields = request.DESCRIPTOR.fields_by_name
        if any(name in fields and getattr(request, name) for name in _WHOLE_ONLY):
            return None
        state = request.state
        log = state.context.messages
        n = len(self._messages)
        if len(log) < n or _without_log(state) != self._rest or log[:n] != self._messages:
            return None
        out = type(request)()
        _copy_fields(request, out, _REF_FIELDS)
        out.base_state_ref = self.ref
        out.appended_messages.extend(log[n:])
        return out

    def _follow(self, reply: Any, request: Any, sent: Optional[Any], returns_state: bool) -> None:
        """Follows the state reply.state_ref names: the state the request
        carried (Compile, Budget) or the one the reply returns (Route, Compact)."""
        ref = reply.state_ref
        if returns_state:
            state = reply.state if reply.HasField("state") else None
        else:
            state = request.state if request.HasField("state") else None
        if not ref or state is None:
            self.reset()
        elif sent is not None and not returns_state:
            # The referenced log, already copied, and the messages sent with it.
            n = len(self._messages)
            self._log.messages.extend(sent.appended_messages)
            self._messages.extend(self._log.messages[n:])
            self.ref = ref
        else:
            log = st.AgentContext()
            log.messages.extend(state.context.messages)
            self.ref, self._log, self._messages, self._rest = ref, log, list(log.messages), _without_log(state)


class StateRefs(_Follower):
    """Compile, Budget, Compact and Route of a blocking Client with the state
    sent by reference when it extends the state of the previous call; see
    Client.state_refs(). The requests and replies are the Client's.

    by_reference counts the calls sent by reference, misses those the server
    could not resolve (sent again whole); reset() makes the next call whole.
    """

    def __init__(self, client) -> None:
        super().__init__()
        self.client = client

    def _call(self, method, request, timeout, metadata, returns_state: bool):
        sent = self._by_ref(request)
        if sent is not None:
            self.by_reference += 1
            try:
                reply = method(sent, timeout=timeout, metadata=metadata)
            except CtxcError as err:
                if not is_state_ref_miss(err):
                    raise
                self.misses += 1
                self.reset()
            else:
                self._follow(reply, request, sent, returns_state)
                return reply
        reply = method(request, timeout=timeout, metadata=metadata)
        self._follow(reply, request, None, returns_state)
        return reply

    def compile(self, request: Optional[api.CompileRequest] = None, *, timeout: Optional[float] = None,
                metadata: Optional[Metadata] = None, **fields) -> api.CompileResponse:
        """Client.compile, by reference when it can (not with state_blob, input_json or reset_history)."""
        return self._call(self.client.compile, _request(api.CompileRequest, request, fields), timeout, metadata, False)

    def budget(self, request: Optional[api.BudgetRequest] = None, *, timeout: Optional[float] = None,
               metadata: Optional[Metadata] = None, **fields) -> api.BudgetResponse:
        """Client.budget, by reference when it can."""
        return self._call(self.client.budget, _request(api.BudgetRequest, request, fields), timeout, metadata, False)

    def compact(self, request: Optional[api.CompactRequest] = None, *, timeout: Optional[float] = None,
                metadata: Optional[Metadata] = None, **fields) -> api.CompactResponse:
        """Client.compact, by reference when it can; the next call continues from the state it returns."""
        return self._call(self.client.compact, _request(api.CompactRequest, request, fields), timeout, metadata, True)

    def route(self, request: Optional[api.RouteRequest] = None, *, timeout: Optional[float] = None,
              metadata: Optional[Metadata] = None, **fields) -> api.RouteResponse:
        """Client.route, by reference when it can (not with state_blob or reset_history); the next
        call continues from the state it returns (none with want_state_blob)."""
        return self._call(self.client.route, _request(api.RouteRequest, request, fields), timeout, metadata, True)


class AsyncStateRefs(_Follower):
    """The asyncio twin of StateRefs, over an AsyncClient; see
    AsyncClient.state_refs(). One call at a time: await each before the next."""

    def __init__(self, client) -> None:
        super().__init__()
        self.client = client

    async def _call(self, method, request, timeout, metadata, returns_state: bool):
        sent = self._by_ref(request)
        if sent is not None:
            self.by_reference += 1
            try:
                reply = await method(sent, timeout=timeout, metadata=metadata)
            except CtxcError as err:
                if not is_state_ref_miss(err):
                    raise
                self.misses += 1
                self.reset()
            else:
                self._follow(reply, request, sent, returns_state)
                return reply
        reply = await method(request, timeout=timeout, metadata=metadata)
        self._follow(reply, request, None, returns_state)
        return reply

    async def compile(self, request: Optional[api.CompileRequest] = None, *, timeout: Optional[float] = None,
                      metadata: Optional[Metadata] = None, **fields) -> api.CompileResponse:
        return await self._call(self.client.compile, _request(api.CompileRequest, request, fields), timeout, metadata, False)

    async def budget(self, request: Optional[api.BudgetRequest] = None, *, timeout: Optional[float] = None,
                     metadata: Optional[Metadata] = None, **fields) -> api.BudgetResponse:
        return await self._call(self.client.budget, _request(api.BudgetRequest, request, fields), timeout, metadata, False)

    async def compact(self, request: Optional[api.CompactRequest] = None, *, timeout: Optional[float] = None,
                      metadata: Optional[Metadata] = None, **fields) -> api.CompactResponse:
        return await self._call(self.client.compact, _request(api.CompactRequest, request, fields), timeout, metadata, True)

    async def route(self, request: Optional[api.RouteRequest] = None, *, timeout: Optional[float] = None,
                    metadata: Optional[Metadata] = None, **fields) -> api.RouteResponse:
        return await self._call(self.client.route, _request(api.RouteRequest, request, fields), timeout, metadata, True)
