"""Builders for the ctxc.v1 messages an agent sends most."""
from __future__ import annotations

import json
from typing import Any, Union

from ctxc.v1 import agent_state_pb2 as st


def text(value: str) -> st.Part:
    """A plain-text part."""
    return st.Part(text=value)


def tool_call(call_id: str, name: str, arguments: Any = None) -> st.Part:
    """An assistant's call of a tool; arguments is a JSON document or a value to encode as one."""
    args = arguments if isinstance(arguments, str) else json.dumps({} if arguments is None else arguments)
    return st.Part(tool_call=st.ToolCall(id=call_id, name=name, arguments_json=args))


def tool_result(call_id: str, name: str, content: str, is_error: bool = False) -> st.Part:
    """The outcome of the call call_id, for a ROLE_TOOL message."""
    return st.Part(tool_result=st.ToolResult(tool_call_id=call_id, name=name, content=content, is_error=is_error))


def message(role: "st.Role.ValueType", *parts: Union[st.Part, str], id: str = "") -> st.Message:  # noqa: A002 - the proto's field name
    """A log message; a str part is text."""
    return st.Message(id=id, role=role, parts=[text(p) if isinstance(p, str) else p for p in parts])


def system(value: str, id: str = "") -> st.Message:  # noqa: A002
    return message(st.ROLE_SYSTEM, value, id=id)


def user(value: str, id: str = "") -> st.Message:  # noqa: A002
    return message(st.ROLE_USER, value, id=id)


def assistant(*parts: Union[st.Part, str], id: str = "") -> st.Message:  # noqa: A002
    return message(st.ROLE_ASSISTANT, *parts, id=id)


def tool(*results: st.Part, id: str = "") -> st.Message:  # noqa: A002
    return message(st.ROLE_TOOL, *results, id=id)


def model_spec(model: Union[str, st.ModelSpec]) -> st.ModelSpec:
    """A model name ("gpt-4o") or a whole ModelSpec."""
    return st.ModelSpec(name=model) if isinstance(model, str) else model
