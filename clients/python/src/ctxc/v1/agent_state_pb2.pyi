from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor
EXECUTION_STATUS_COMPLETED: ExecutionStatus
EXECUTION_STATUS_FAILED: ExecutionStatus
EXECUTION_STATUS_RUNNING: ExecutionStatus
EXECUTION_STATUS_UNSPECIFIED: ExecutionStatus
MESSAGE_KIND_EVENT: MessageKind
MESSAGE_KIND_PLACEHOLDER: MessageKind
MESSAGE_KIND_REPAIR: MessageKind
MESSAGE_KIND_SUMMARY: MessageKind
MESSAGE_KIND_UNSPECIFIED: MessageKind
ROLE_ASSISTANT: Role
ROLE_SYSTEM: Role
ROLE_TOOL: Role
ROLE_UNSPECIFIED: Role
ROLE_USER: Role

class AgentContext(_message.Message):
    __slots__ = ["messages", "metadata", "response_format", "system_prompt", "tools"]
    class MetadataEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_FORMAT_FIELD_NUMBER: _ClassVar[int]
    SYSTEM_PROMPT_FIELD_NUMBER: _ClassVar[int]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[Message]
    metadata: _containers.ScalarMap[str, str]
    response_format: str
    system_prompt: str
    tools: _containers.RepeatedCompositeFieldContainer[ToolDefinition]
    def __init__(self, messages: _Optional[_Iterable[_Union[Message, _Mapping]]] = ..., system_prompt: _Optional[str] = ..., tools: _Optional[_Iterable[_Union[ToolDefinition, _Mapping]]] = ..., response_format: _Optional[str] = ..., metadata: _Optional[_Mapping[str, str]] = ...) -> None: ...

class AgentState(_message.Message):
    __slots__ = ["agent_id", "context", "execution", "model", "schema_version"]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    EXECUTION_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    SCHEMA_VERSION_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    context: AgentContext
    execution: Execution
    model: ModelSpec
    schema_version: int
    def __init__(self, schema_version: _Optional[int] = ..., agent_id: _Optional[str] = ..., context: _Optional[_Union[AgentContext, _Mapping]] = ..., model: _Optional[_Union[ModelSpec, _Mapping]] = ..., execution: _Optional[_Union[Execution, _Mapping]] = ...) -> None: ...

class Execution(_message.Message):
    __slots__ = ["id", "status", "step_index"]
    ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    STEP_INDEX_FIELD_NUMBER: _ClassVar[int]
    id: str
    status: ExecutionStatus
    step_index: int
    def __init__(self, id: _Optional[str] = ..., step_index: _Optional[int] = ..., status: _Optional[_Union[ExecutionStatus, str]] = ...) -> None: ...

class Image(_message.Message):
    __slots__ = ["data", "media_type", "url"]
    DATA_FIELD_NUMBER: _ClassVar[int]
    MEDIA_TYPE_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    data: bytes
    media_type: str
    url: str
    def __init__(self, url: _Optional[str] = ..., data: _Optional[bytes] = ..., media_type: _Optional[str] = ...) -> None: ...

class Mask(_message.Message):
    __slots__ = ["original_token_count", "placeholder", "reason"]
    ORIGINAL_TOKEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    PLACEHOLDER_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    original_token_count: int
    placeholder: str
    reason: str
    def __init__(self, reason: _Optional[str] = ..., placeholder: _Optional[str] = ..., original_token_count: _Optional[int] = ...) -> None: ...

class Message(_message.Message):
    __slots__ = ["covers_message_ids", "create_time", "execution_id", "id", "importance", "kind", "mask", "metadata", "parts", "pinned", "role", "usage"]
    class MetadataEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    COVERS_MESSAGE_IDS_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    EXECUTION_ID_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    IMPORTANCE_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    MASK_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    PARTS_FIELD_NUMBER: _ClassVar[int]
    PINNED_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    covers_message_ids: _containers.RepeatedScalarFieldContainer[str]
    create_time: _timestamp_pb2.Timestamp
    execution_id: str
    id: str
    importance: int
    kind: MessageKind
    mask: Mask
    metadata: _containers.ScalarMap[str, str]
    parts: _containers.RepeatedCompositeFieldContainer[Part]
    pinned: bool
    role: Role
    usage: Usage
    def __init__(self, id: _Optional[str] = ..., role: _Optional[_Union[Role, str]] = ..., parts: _Optional[_Iterable[_Union[Part, _Mapping]]] = ..., kind: _Optional[_Union[MessageKind, str]] = ..., pinned: bool = ..., importance: _Optional[int] = ..., execution_id: _Optional[str] = ..., usage: _Optional[_Union[Usage, _Mapping]] = ..., metadata: _Optional[_Mapping[str, str]] = ..., create_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., covers_message_ids: _Optional[_Iterable[str]] = ..., mask: _Optional[_Union[Mask, _Mapping]] = ...) -> None: ...

class ModelSpec(_message.Message):
    __slots__ = ["context_window_token_count", "max_output_token_count", "name", "provider"]
    CONTEXT_WINDOW_TOKEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    MAX_OUTPUT_TOKEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    context_window_token_count: int
    max_output_token_count: int
    name: str
    provider: str
    def __init__(self, name: _Optional[str] = ..., provider: _Optional[str] = ..., context_window_token_count: _Optional[int] = ..., max_output_token_count: _Optional[int] = ...) -> None: ...

class Part(_message.Message):
    __slots__ = ["image", "reasoning", "text", "tool_call", "tool_result"]
    IMAGE_FIELD_NUMBER: _ClassVar[int]
    REASONING_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_FIELD_NUMBER: _ClassVar[int]
    TOOL_RESULT_FIELD_NUMBER: _ClassVar[int]
    image: Image
    reasoning: Reasoning
    text: str
    tool_call: ToolCall
    tool_result: ToolResult
    def __init__(self, text: _Optional[str] = ..., tool_call: _Optional[_Union[ToolCall, _Mapping]] = ..., tool_result: _Optional[_Union[ToolResult, _Mapping]] = ..., image: _Optional[_Union[Image, _Mapping]] = ..., reasoning: _Optional[_Union[Reasoning, _Mapping]] = ...) -> None: ...

class Reasoning(_message.Message):
    __slots__ = ["signature", "text"]
    SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    signature: bytes
    text: str
    def __init__(self, text: _Optional[str] = ..., signature: _Optional[bytes] = ...) -> None: ...

class ToolCall(_message.Message):
    __slots__ = ["arguments_json", "id", "name"]
    ARGUMENTS_JSON_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    arguments_json: str
    id: str
    name: str
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., arguments_json: _Optional[str] = ...) -> None: ...

class ToolDefinition(_message.Message):
    __slots__ = ["description", "name", "parameters_json"]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_JSON_FIELD_NUMBER: _ClassVar[int]
    description: str
    name: str
    parameters_json: str
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., parameters_json: _Optional[str] = ...) -> None: ...

class ToolResult(_message.Message):
    __slots__ = ["content", "is_error", "name", "tool_call_id"]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    IS_ERROR_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    content: str
    is_error: bool
    name: str
    tool_call_id: str
    def __init__(self, tool_call_id: _Optional[str] = ..., name: _Optional[str] = ..., content: _Optional[str] = ..., is_error: bool = ...) -> None: ...

class Usage(_message.Message):
    __slots__ = ["cached_input_token_count", "input_token_count", "output_token_count"]
    CACHED_INPUT_TOKEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    INPUT_TOKEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_TOKEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    cached_input_token_count: int
    input_token_count: int
    output_token_count: int
    def __init__(self, input_token_count: _Optional[int] = ..., cached_input_token_count: _Optional[int] = ..., output_token_count: _Optional[int] = ...) -> None: ...

class ExecutionStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class Role(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class MessageKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
