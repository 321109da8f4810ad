"""Conversion between OpenAI Chat Completions message lists and ctxc messages.

Any runtime that speaks the OpenAI format (LangGraph, pydantic-ai, the OpenAI
Agents SDK, a hand-written loop) can compile through ctxc with
Client.compile_openai: messages the compile left as they were come back as the
caller's own dicts; masked, truncated or repaired ones are rebuilt with the
same tool_call_id; summaries arrive as user messages.
"""
from __future__ import annotations

import json
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from ctxc.v1 import agent_state_pb2 as st
from ctxc.v1 import compiler_service_pb2 as api

OpenAIMessage = Dict[str, Any]

SYSTEM_MESSAGE_ID = "ctxc-system"
_ID_PREFIX = "oai-"


def to_ctxc(messages: Sequence[Mapping[str, Any]], tools: Optional[Iterable[Mapping[str, Any]]] = None
            ) -> Tuple[str, List[st.Message], List[st.ToolDefinition]]:
    """Splits an OpenAI message list into the system prompt (a leading system or
    developer message), the log (ids "oai-<index>") and the tool definitions.
    Raises ValueError naming the first message ctxc cannot take."""
    system_prompt = ""
    start = 0
    if messages and messages[0].get("role") in ("system", "developer"):
        system_prompt = _text(messages[0].get("content"), "messages[0]")
        start = 1
    call_names: Dict[str, str] = {}
    log = []
    for i in range(start, len(messages)):
        log.append(_message(messages[i], f"{_ID_PREFIX}{i}", f"messages[{i}]", call_names))
    definitions = []
    for j, t in enumerate(tools or ()):
        fn = t.get("function") if t.get("type", "function") == "function" else None
        if not fn or not fn.get("name"):
            raise ValueError(f"tools[{j}]: ctxc takes function tools with a name")
        params = fn.get("parameters")
        definitions.append(st.ToolDefinition(name=fn["name"], description=fn.get("description") or "",
                                             parameters_json="" if params is None else json.dumps(params)))
    return system_prompt, log, definitions


def from_ctxc(message: st.Message) -> List[OpenAIMessage]:
    """One compiled message in the OpenAI format (a tool message with several results becomes several)."""
    texts = "".join(p.text for p in message.parts if p.WhichOneof("content") == "text")
    if message.role == st.ROLE_SYSTEM:
        return [{"role": "system", "content": texts}]
    if message.role == st.ROLE_USER:
        return [{"role": "user", "content": texts}]
    if message.role == st.ROLE_ASSISTANT:
        out: OpenAIMessage = {"role": "assistant", "content": texts or None}
        calls = [{"id": p.tool_call.id, "type": "function", "function": {"name": p.tool_call.name, "arguments": p.tool_call.arguments_json or "{}"}}
                 for p in message.parts if p.WhichOneof("content") == "tool_call"]
        if calls:
            out["tool_calls"] = calls
        return [out]
    if message.role == st.ROLE_TOOL:
        return [{"role": "tool", "tool_call_id": p.tool_result.tool_call_id, "content": p.tool_result.content}
                for p in message.parts if p.WhichOneof("content") == "tool_result"]
    raise ValueError(f"ctxc returned message {message.id} with role {message.role}")


def from_compiled(messages: Sequence[Mapping[str, Any]], reply: api.CompileResponse) -> List[OpenAIMessage]:
    """The messages to send for a compile of to_ctxc(messages): the caller's own
    dict for each message the compile kept as it was, a rebuilt one otherwise."""
    kept = {r.message_id for r in reply.report.messages if r.disposition == api.DISPOSITION_KEPT}
    own_system = messages[0] if messages and messages[0].get("role") in ("system", "developer") else None
    out: List[OpenAIMessage] = []
    for m in reply.messages:
        if m.id == SYSTEM_MESSAGE_ID and own_system is not None and from_ctxc(m)[0]["content"] == _text(own_system.get("content"), "messages[0]"):
            out.append(messages[0])
        elif m.id in kept and m.id.startswith(_ID_PREFIX):
            out.append(messages[int(m.id[len(_ID_PREFIX):])])
        else:
            out.extend(from_ctxc(m))
    return out


def compile_request(messages: Sequence[Mapping[str, Any]], tools: Optional[Iterable[Mapping[str, Any]]], model: st.ModelSpec,
                    profile: str, options: Optional[api.CompileOptions]) -> api.CompileRequest:
    system_prompt, log, definitions = to_ctxc(messages, tools)
    state = st.AgentState(model=model, context=st.AgentContext(system_prompt=system_prompt, messages=log, tools=definitions))
    return api.CompileRequest(state=state, profile=profile, options=options)


def _message(m: Mapping[str, Any], msg_id: str, where: str, call_names: Dict[str, str]) -> st.Message:
    role = m.get("role")
    if role in ("system", "developer"):
        return st.Message(id=msg_id, role=st.ROLE_SYSTEM, parts=[st.Part(text=_text(m.get("content"), where))])
    if role == "user":
        return st.Message(id=msg_id, role=st.ROLE_USER, parts=_parts(m.get("content"), where) or [st.Part(text="")])
    if role == "assistant":
        parts = _parts(m.get("content"), where)
        for j, call in enumerate(m.get("tool_calls") or ()):
            fn = call.get("function") or {}
            if not call.get("id") or not fn.get("name"):
                raise ValueError(f"{where}.tool_calls[{j}]: a tool call needs an id and a function name")
            call_names[call["id"]] = fn["name"]
            parts.append(st.Part(tool_call=st.ToolCall(id=call["id"], name=fn["name"], arguments_json=fn.get("arguments") or "")))
        return st.Message(id=msg_id, role=st.ROLE_ASSISTANT, parts=parts or [st.Part(text="")])
    if role == "tool":
        call_id = m.get("tool_call_id")
        if not call_id:
            raise ValueError(f"{where}.tool_call_id: required")
        result = st.ToolResult(tool_call_id=call_id, name=m.get("name") or call_names.get(call_id, ""), content=_text(m.get("content"), where))
        return st.Message(id=msg_id, role=st.ROLE_TOOL, parts=[st.Part(tool_result=result)])
    raise ValueError(f"{where}.role: ctxc cannot compile a {role!r} message (use system, developer, user, assistant and tool)")


def _parts(content: Any, where: str) -> List[st.Part]:
    if content is None:
        return []
    if isinstance(content, str):
        return [st.Part(text=content)] if content else []
    parts = []
    for j, block in enumerate(content):
        kind = block.get("type")
        if kind == "text":
            parts.append(st.Part(text=block.get("text", "")))
        elif kind == "image_url":
            url = block.get("image_url")
            url = url.get("url") if isinstance(url, Mapping) else url
            if not url:
                raise ValueError(f"{where}.content[{j}].image_url: required")
            parts.append(st.Part(image=st.Image(url=url)))
        elif kind == "refusal":
            parts.append(st.Part(text=block.get("refusal", "")))
        else:
            raise ValueError(f"{where}.content[{j}]: ctxc cannot compile a {kind!r} content part")
    return parts


def _text(content: Any, where: str) -> str:
    return "".join(p.text for p in _parts(content, where))
