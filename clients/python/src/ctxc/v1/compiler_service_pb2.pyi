from ctxc.v1 import agent_state_pb2 as _agent_state_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor
DISPOSITION_DROPPED: Disposition
DISPOSITION_KEPT: Disposition
DISPOSITION_MASKED: Disposition
DISPOSITION_REPAIRED: Disposition
DISPOSITION_SUMMARIZED: Disposition
DISPOSITION_TRUNCATED: Disposition
DISPOSITION_UNSPECIFIED: Disposition
FINISH_REASON_ERROR: FinishReason
FINISH_REASON_LENGTH: FinishReason
FINISH_REASON_STOP: FinishReason
FINISH_REASON_TOOL_CALLS: FinishReason
FINISH_REASON_UNSPECIFIED: FinishReason
INPUT_FORMAT_ANTHROPIC: InputFormat
INPUT_FORMAT_GEMINI: InputFormat
INPUT_FORMAT_OLLAMA: InputFormat
INPUT_FORMAT_OPENAI: InputFormat
INPUT_FORMAT_OPENAI_RESPONSES: InputFormat
INPUT_FORMAT_UNSPECIFIED: InputFormat
RENDER_FORMAT_ANTHROPIC: RenderFormat
RENDER_FORMAT_GEMINI: RenderFormat
RENDER_FORMAT_OLLAMA: RenderFormat
RENDER_FORMAT_OPENAI: RenderFormat
RENDER_FORMAT_OPENAI_RESPONSES: RenderFormat
RENDER_FORMAT_UNSPECIFIED: RenderFormat
TOKEN_COUNT_PROVENANCE_ANCHORED: TokenCountProvenance
TOKEN_COUNT_PROVENANCE_ESTIMATED: TokenCountProvenance
TOKEN_COUNT_PROVENANCE_EXACT: TokenCountProvenance
TOKEN_COUNT_PROVENANCE_UNSPECIFIED: TokenCountProvenance
VIEW_CONVERSATION: View
VIEW_REASONING: View
VIEW_UNSPECIFIED: View

class AgentStep(_message.Message):
    __slots__ = ["error", "finish_reason", "messages", "usage"]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    FINISH_REASON_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    error: str
    finish_reason: FinishReason
    messages: _containers.RepeatedCompositeFieldContainer[_agent_state_pb2.Message]
    usage: _agent_state_pb2.Usage
    def __init__(self, messages: _Optional[_Iterable[_Union[_agent_state_pb2.Message, _Mapping]]] = ..., finish_reason: _Optional[_Union[FinishReason, str]] = ..., usage: _Optional[_Union[_agent_state_pb2.Usage, _Mapping]] = ..., error: _Optional[str] = ...) -> None: ...

class ArtifactUsage(_message.Message):
    __slots__ = ["artifact_id", "artifact_type", "cache_hit", "original_size", "processed_size", "source", "strategy"]
    ARTIFACT_ID_FIELD_NUMBER: _ClassVar[int]
    ARTIFACT_TYPE_FIELD_NUMBER: _ClassVar[int]
    CACHE_HIT_FIELD_NUMBER: _ClassVar[int]
    ORIGINAL_SIZE_FIELD_NUMBER: _ClassVar[int]
    PROCESSED_SIZE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    STRATEGY_FIELD_NUMBER: _ClassVar[int]
    artifact_id: str
    artifact_type: str
    cache_hit: bool
    original_size: int
    processed_size: int
    source: str
    strategy: str
    def __init__(self, artifact_id: _Optional[str] = ..., source: _Optional[str] = ..., artifact_type: _Optional[str] = ..., strategy: _Optional[str] = ..., original_size: _Optional[int] = ..., processed_size: _Optional[int] = ..., cache_hit: bool = ...) -> None: ...

class Attachment(_message.Message):
    __slots__ = ["attachment_id", "attachment_type", "content", "source", "title"]
    ATTACHMENT_ID_FIELD_NUMBER: _ClassVar[int]
    ATTACHMENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    attachment_id: str
    attachment_type: str
    content: str
    source: str
    title: str
    def __init__(self, attachment_id: _Optional[str] = ..., content: _Optional[str] = ..., title: _Optional[str] = ..., source: _Optional[str] = ..., attachment_type: _Optional[str] = ...) -> None: ...

class BudgetRequest(_message.Message):
    __slots__ = ["appended_messages", "base_state_ref", "options", "profile", "state"]
    APPENDED_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    BASE_STATE_REF_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    appended_messages: _containers.RepeatedCompositeFieldContainer[_agent_state_pb2.Message]
    base_state_ref: str
    options: CompileOptions
    profile: str
    state: _agent_state_pb2.AgentState
    def __init__(self, state: _Optional[_Union[_agent_state_pb2.AgentState, _Mapping]] = ..., profile: _Optional[str] = ..., options: _Optional[_Union[CompileOptions, _Mapping]] = ..., base_state_ref: _Optional[str] = ..., appended_messages: _Optional[_Iterable[_Union[_agent_state_pb2.Message, _Mapping]]] = ...) -> None: ...

class BudgetResponse(_message.Message):
    __slots__ = ["budget", "messages", "report", "state_ref"]
    BUDGET_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    REPORT_FIELD_NUMBER: _ClassVar[int]
    STATE_REF_FIELD_NUMBER: _ClassVar[int]
    budget: TokenBudget
    messages: _containers.RepeatedCompositeFieldContainer[MessageReport]
    report: CompileReport
    state_ref: str
    def __init__(self, budget: _Optional[_Union[TokenBudget, _Mapping]] = ..., messages: _Optional[_Iterable[_Union[MessageReport, _Mapping]]] = ..., report: _Optional[_Union[CompileReport, _Mapping]] = ..., state_ref: _Optional[str] = ...) -> None: ...

class CacheStats(_message.Message):
    __slots__ = ["error_count", "hit_count", "miss_count"]
    ERROR_COUNT_FIELD_NUMBER: _ClassVar[int]
    HIT_COUNT_FIELD_NUMBER: _ClassVar[int]
    MISS_COUNT_FIELD_NUMBER: _ClassVar[int]
    error_count: int
    hit_count: int
    miss_count: int
    def __init__(self, hit_count: _Optional[int] = ..., miss_count: _Optional[int] = ..., error_count: _Optional[int] = ...) -> None: ...

class CompactRequest(_message.Message):
    __slots__ = ["appended_messages", "base_state_ref", "options", "profile", "state"]
    APPENDED_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    BASE_STATE_REF_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    appended_messages: _containers.RepeatedCompositeFieldContainer[_agent_state_pb2.Message]
    base_state_ref: str
    options: CompileOptions
    profile: str
    state: _agent_state_pb2.AgentState
    def __init__(self, state: _Optional[_Union[_agent_state_pb2.AgentState, _Mapping]] = ..., profile: _Optional[str] = ..., options: _Optional[_Union[CompileOptions, _Mapping]] = ..., base_state_ref: _Optional[str] = ..., appended_messages: _Optional[_Iterable[_Union[_agent_state_pb2.Message, _Mapping]]] = ...) -> None: ...

class CompactResponse(_message.Message):
    __slots__ = ["budget_after", "budget_before", "report", "state", "state_ref"]
    BUDGET_AFTER_FIELD_NUMBER: _ClassVar[int]
    BUDGET_BEFORE_FIELD_NUMBER: _ClassVar[int]
    REPORT_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    STATE_REF_FIELD_NUMBER: _ClassVar[int]
    budget_after: TokenBudget
    budget_before: TokenBudget
    report: CompileReport
    state: _agent_state_pb2.AgentState
    state_ref: str
    def __init__(self, state: _Optional[_Union[_agent_state_pb2.AgentState, _Mapping]] = ..., budget_before: _Optional[_Union[TokenBudget, _Mapping]] = ..., budget_after: _Optional[_Union[TokenBudget, _Mapping]] = ..., report: _Optional[_Union[CompileReport, _Mapping]] = ..., state_ref: _Optional[str] = ...) -> None: ...

class CompactionPoint(_message.Message):
    __slots__ = ["after_message_id", "intake", "reason", "stable", "target_token_count", "token_count_after", "token_count_before"]
    AFTER_MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    INTAKE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    STABLE_FIELD_NUMBER: _ClassVar[int]
    TARGET_TOKEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    TOKEN_COUNT_AFTER_FIELD_NUMBER: _ClassVar[int]
    TOKEN_COUNT_BEFORE_FIELD_NUMBER: _ClassVar[int]
    after_message_id: str
    intake: bool
    reason: str
    stable: bool
    target_token_count: int
    token_count_after: int
    token_count_before: int
    def __init__(self, after_message_id: _Optional[str] = ..., reason: _Optional[str] = ..., intake: bool = ..., token_count_before: _Optional[int] = ..., token_count_after: _Optional[int] = ..., target_token_count: _Optional[int] = ..., stable: bool = ...) -> None: ...

class CompactionReport(_message.Message):
    __slots__ = ["forced", "points", "reached_token_count", "target_token_count", "trigger_fired", "trigger_token_count"]
    FORCED_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    REACHED_TOKEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    TARGET_TOKEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    TRIGGER_FIRED_FIELD_NUMBER: _ClassVar[int]
    TRIGGER_TOKEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    forced: bool
    points: _containers.RepeatedCompositeFieldContainer[CompactionPoint]
    reached_token_count: int
    target_token_count: int
    trigger_fired: bool
    trigger_token_count: int
    def __init__(self, trigger_token_count: _Optional[int] = ..., target_token_count: _Optional[int] = ..., reached_token_count: _Optional[int] = ..., trigger_fired: bool = ..., forced: bool = ..., points: _Optional[_Iterable[_Union[CompactionPoint, _Mapping]]] = ...) -> None: ...

class CompileOptions(_message.Message):
    __slots__ = ["max_context_token_count", "render", "render_into_input", "reserved_output_token_count", "soft_threshold_ratio", "template_variables", "view"]
    class TemplateVariablesEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    MAX_CONTEXT_TOKEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    RENDER_FIELD_NUMBER: _ClassVar[int]
    RENDER_INTO_INPUT_FIELD_NUMBER: _ClassVar[int]
    RESERVED_OUTPUT_TOKEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    SOFT_THRESHOLD_RATIO_FIELD_NUMBER: _ClassVar[int]
    TEMPLATE_VARIABLES_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    max_context_token_count: int
    render: RenderFormat
    render_into_input: bool
    reserved_output_token_count: int
    soft_threshold_ratio: float
    template_variables: _containers.ScalarMap[str, str]
    view: View
    def __init__(self, view: _Optional[_Union[View, str]] = ..., reserved_output_token_count: _Optional[int] = ..., soft_threshold_ratio: _Optional[float] = ..., max_context_token_count: _Optional[int] = ..., render: _Optional[_Union[RenderFormat, str]] = ..., template_variables: _Optional[_Mapping[str, str]] = ..., render_into_input: bool = ...) -> None: ...

class CompileReport(_message.Message):
    __slots__ = ["artifacts", "cache", "compacted", "compaction", "first_changed_index", "messages", "model_usage", "omitted_message_report_count", "planning_used", "profile", "repairs", "stages", "total_cost_usd", "warnings"]
    ARTIFACTS_FIELD_NUMBER: _ClassVar[int]
    CACHE_FIELD_NUMBER: _ClassVar[int]
    COMPACTED_FIELD_NUMBER: _ClassVar[int]
    COMPACTION_FIELD_NUMBER: _ClassVar[int]
    FIRST_CHANGED_INDEX_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    MODEL_USAGE_FIELD_NUMBER: _ClassVar[int]
    OMITTED_MESSAGE_REPORT_COUNT_FIELD_NUMBER: _ClassVar[int]
    PLANNING_USED_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    REPAIRS_FIELD_NUMBER: _ClassVar[int]
    STAGES_FIELD_NUMBER: _ClassVar[int]
    TOTAL_COST_USD_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    artifacts: _containers.RepeatedCompositeFieldContainer[ArtifactUsage]
    cache: CacheStats
    compacted: bool
    compaction: CompactionReport
    first_changed_index: int
    messages: _containers.RepeatedCompositeFieldContainer[MessageReport]
    model_usage: _containers.RepeatedCompositeFieldContainer[ModelUsage]
    omitted_message_report_count: int
    planning_used: bool
    profile: str
    repairs: _containers.RepeatedCompositeFieldContainer[Repair]
    stages: _containers.RepeatedCompositeFieldContainer[StageReport]
    total_cost_usd: float
    warnings: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, profile: _Optional[str] = ..., stages: _Optional[_Iterable[_Union[StageReport, _Mapping]]] = ..., messages: _Optional[_Iterable[_Union[MessageReport, _Mapping]]] = ..., repairs: _Optional[_Iterable[_Union[Repair, _Mapping]]] = ..., warnings: _Optional[_Iterable[str]] = ..., first_changed_index: _Optional[int] = ..., compacted: bool = ..., planning_used: bool = ..., artifacts: _Optional[_Iterable[_Union[ArtifactUsage, _Mapping]]] = ..., model_usage: _Optional[_Iterable[_Union[ModelUsage, _Mapping]]] = ..., cache: _Optional[_Union[CacheStats, _Mapping]] = ..., total_cost_usd: _Optional[float] = ..., compaction: _Optional[_Union[CompactionReport, _Mapping]] = ..., omitted_message_report_count: _Optional[int] = ...) -> None: ...

class CompileRequest(_message.Message):
    __slots__ = ["appended_messages", "attachments", "base_state_ref", "goal", "input_format", "input_json", "model", "omit_stable_prefix", "omit_stable_prefix_reports", "options", "profile", "reset_history", "state", "state_blob"]
    APPENDED_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    ATTACHMENTS_FIELD_NUMBER: _ClassVar[int]
    BASE_STATE_REF_FIELD_NUMBER: _ClassVar[int]
    GOAL_FIELD_NUMBER: _ClassVar[int]
    INPUT_FORMAT_FIELD_NUMBER: _ClassVar[int]
    INPUT_JSON_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    OMIT_STABLE_PREFIX_FIELD_NUMBER: _ClassVar[int]
    OMIT_STABLE_PREFIX_REPORTS_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    RESET_HISTORY_FIELD_NUMBER: _ClassVar[int]
    STATE_BLOB_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    appended_messages: _containers.RepeatedCompositeFieldContainer[_agent_state_pb2.Message]
    attachments: _containers.RepeatedCompositeFieldContainer[Attachment]
    base_state_ref: str
    goal: ContextGoal
    input_format: InputFormat
    input_json: str
    model: _agent_state_pb2.ModelSpec
    omit_stable_prefix: bool
    omit_stable_prefix_reports: bool
    options: CompileOptions
    profile: str
    reset_history: bool
    state: _agent_state_pb2.AgentState
    state_blob: bytes
    def __init__(self, state: _Optional[_Union[_agent_state_pb2.AgentState, _Mapping]] = ..., profile: _Optional[str] = ..., options: _Optional[_Union[CompileOptions, _Mapping]] = ..., state_blob: _Optional[bytes] = ..., model: _Optional[_Union[_agent_state_pb2.ModelSpec, _Mapping]] = ..., reset_history: bool = ..., input_format: _Optional[_Union[InputFormat, str]] = ..., input_json: _Optional[str] = ..., attachments: _Optional[_Iterable[_Union[Attachment, _Mapping]]] = ..., omit_stable_prefix: bool = ..., goal: _Optional[_Union[ContextGoal, _Mapping]] = ..., base_state_ref: _Optional[str] = ..., appended_messages: _Optional[_Iterable[_Union[_agent_state_pb2.Message, _Mapping]]] = ..., omit_stable_prefix_reports: bool = ...) -> None: ...

class CompileResponse(_message.Message):
    __slots__ = ["budget", "history_discarded", "messages", "omitted_message_count", "rendered", "report", "state_ref"]
    BUDGET_FIELD_NUMBER: _ClassVar[int]
    HISTORY_DISCARDED_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    OMITTED_MESSAGE_COUNT_FIELD_NUMBER: _ClassVar[int]
    RENDERED_FIELD_NUMBER: _ClassVar[int]
    REPORT_FIELD_NUMBER: _ClassVar[int]
    STATE_REF_FIELD_NUMBER: _ClassVar[int]
    budget: TokenBudget
    history_discarded: bool
    messages: _containers.RepeatedCompositeFieldContainer[_agent_state_pb2.Message]
    omitted_message_count: int
    rendered: str
    report: CompileReport
    state_ref: str
    def __init__(self, messages: _Optional[_Iterable[_Union[_agent_state_pb2.Message, _Mapping]]] = ..., budget: _Optional[_Union[TokenBudget, _Mapping]] = ..., report: _Optional[_Union[CompileReport, _Mapping]] = ..., history_discarded: bool = ..., rendered: _Optional[str] = ..., omitted_message_count: _Optional[int] = ..., state_ref: _Optional[str] = ...) -> None: ...

class ContextGoal(_message.Message):
    __slots__ = ["description", "success_criteria"]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    SUCCESS_CRITERIA_FIELD_NUMBER: _ClassVar[int]
    description: str
    success_criteria: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, description: _Optional[str] = ..., success_criteria: _Optional[_Iterable[str]] = ...) -> None: ...

class CountTokensRequest(_message.Message):
    __slots__ = ["encoding", "messages", "model", "texts"]
    ENCODING_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    TEXTS_FIELD_NUMBER: _ClassVar[int]
    encoding: str
    messages: _containers.RepeatedCompositeFieldContainer[_agent_state_pb2.Message]
    model: str
    texts: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, model: _Optional[str] = ..., encoding: _Optional[str] = ..., texts: _Optional[_Iterable[str]] = ..., messages: _Optional[_Iterable[_Union[_agent_state_pb2.Message, _Mapping]]] = ...) -> None: ...

class CountTokensResponse(_message.Message):
    __slots__ = ["counter", "messages", "provenance", "texts", "total_token_count"]
    COUNTER_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    PROVENANCE_FIELD_NUMBER: _ClassVar[int]
    TEXTS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_TOKEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    counter: str
    messages: _containers.RepeatedCompositeFieldContainer[TokenCount]
    provenance: TokenCountProvenance
    texts: _containers.RepeatedCompositeFieldContainer[TokenCount]
    total_token_count: int
    def __init__(self, texts: _Optional[_Iterable[_Union[TokenCount, _Mapping]]] = ..., messages: _Optional[_Iterable[_Union[TokenCount, _Mapping]]] = ..., total_token_count: _Optional[int] = ..., counter: _Optional[str] = ..., provenance: _Optional[_Union[TokenCountProvenance, str]] = ...) -> None: ...

class Event(_message.Message):
    __slots__ = ["metadata", "role", "text"]
    class MetadataEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    METADATA_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    metadata: _containers.ScalarMap[str, str]
    role: _agent_state_pb2.Role
    text: str
    def __init__(self, text: _Optional[str] = ..., role: _Optional[_Union[_agent_state_pb2.Role, str]] = ..., metadata: _Optional[_Mapping[str, str]] = ...) -> None: ...

class ListProfilesRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class ListProfilesResponse(_message.Message):
    __slots__ = ["profiles"]
    PROFILES_FIELD_NUMBER: _ClassVar[int]
    profiles: _containers.RepeatedCompositeFieldContainer[Profile]
    def __init__(self, profiles: _Optional[_Iterable[_Union[Profile, _Mapping]]] = ...) -> None: ...

class MessageReport(_message.Message):
    __slots__ = ["disposition", "message_id", "policy", "provenance", "reason", "token_count"]
    DISPOSITION_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    POLICY_FIELD_NUMBER: _ClassVar[int]
    PROVENANCE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    TOKEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    disposition: Disposition
    message_id: str
    policy: str
    provenance: TokenCountProvenance
    reason: str
    token_count: int
    def __init__(self, message_id: _Optional[str] = ..., disposition: _Optional[_Union[Disposition, str]] = ..., token_count: _Optional[int] = ..., provenance: _Optional[_Union[TokenCountProvenance, str]] = ..., reason: _Optional[str] = ..., policy: _Optional[str] = ...) -> None: ...

class ModelUsage(_message.Message):
    __slots__ = ["call_count", "cost_usd", "input_token_count", "model", "output_token_count", "task"]
    CALL_COUNT_FIELD_NUMBER: _ClassVar[int]
    COST_USD_FIELD_NUMBER: _ClassVar[int]
    INPUT_TOKEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_TOKEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    TASK_FIELD_NUMBER: _ClassVar[int]
    call_count: int
    cost_usd: float
    input_token_count: int
    model: str
    output_token_count: int
    task: str
    def __init__(self, task: _Optional[str] = ..., model: _Optional[str] = ..., call_count: _Optional[int] = ..., input_token_count: _Optional[int] = ..., output_token_count: _Optional[int] = ..., cost_usd: _Optional[float] = ...) -> None: ...

class Profile(_message.Message):
    __slots__ = ["attachment_policy", "bounded_log", "compact_on_execution_end", "compact_on_execution_error", "default", "description", "fit_target_ratio", "name", "recent_turns", "source", "stages"]
    ATTACHMENT_POLICY_FIELD_NUMBER: _ClassVar[int]
    BOUNDED_LOG_FIELD_NUMBER: _ClassVar[int]
    COMPACT_ON_EXECUTION_END_FIELD_NUMBER: _ClassVar[int]
    COMPACT_ON_EXECUTION_ERROR_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    FIT_TARGET_RATIO_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    RECENT_TURNS_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    STAGES_FIELD_NUMBER: _ClassVar[int]
    attachment_policy: str
    bounded_log: bool
    compact_on_execution_end: bool
    compact_on_execution_error: bool
    default: bool
    description: str
    fit_target_ratio: float
    name: str
    recent_turns: int
    source: str
    stages: _containers.RepeatedCompositeFieldContainer[ProfileStage]
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., stages: _Optional[_Iterable[_Union[ProfileStage, _Mapping]]] = ..., default: bool = ..., source: _Optional[str] = ..., recent_turns: _Optional[int] = ..., bounded_log: bool = ..., compact_on_execution_end: bool = ..., compact_on_execution_error: bool = ..., fit_target_ratio: _Optional[float] = ..., attachment_policy: _Optional[str] = ...) -> None: ...

class ProfileStage(_message.Message):
    __slots__ = ["policy", "settings_json", "stage"]
    POLICY_FIELD_NUMBER: _ClassVar[int]
    SETTINGS_JSON_FIELD_NUMBER: _ClassVar[int]
    STAGE_FIELD_NUMBER: _ClassVar[int]
    policy: str
    settings_json: str
    stage: str
    def __init__(self, stage: _Optional[str] = ..., policy: _Optional[str] = ..., settings_json: _Optional[str] = ...) -> None: ...

class Repair(_message.Message):
    __slots__ = ["detail", "kind", "message_id"]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    detail: str
    kind: str
    message_id: str
    def __init__(self, kind: _Optional[str] = ..., message_id: _Optional[str] = ..., detail: _Optional[str] = ...) -> None: ...

class RouteRequest(_message.Message):
    __slots__ = ["appended_messages", "base_state_ref", "event", "model", "options", "profile", "reset_history", "state", "state_blob", "step", "user_turn", "want_state_blob"]
    APPENDED_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    BASE_STATE_REF_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    RESET_HISTORY_FIELD_NUMBER: _ClassVar[int]
    STATE_BLOB_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    USER_TURN_FIELD_NUMBER: _ClassVar[int]
    WANT_STATE_BLOB_FIELD_NUMBER: _ClassVar[int]
    appended_messages: _containers.RepeatedCompositeFieldContainer[_agent_state_pb2.Message]
    base_state_ref: str
    event: Event
    model: _agent_state_pb2.ModelSpec
    options: CompileOptions
    profile: str
    reset_history: bool
    state: _agent_state_pb2.AgentState
    state_blob: bytes
    step: AgentStep
    user_turn: UserTurn
    want_state_blob: bool
    def __init__(self, state: _Optional[_Union[_agent_state_pb2.AgentState, _Mapping]] = ..., profile: _Optional[str] = ..., user_turn: _Optional[_Union[UserTurn, _Mapping]] = ..., step: _Optional[_Union[AgentStep, _Mapping]] = ..., event: _Optional[_Union[Event, _Mapping]] = ..., state_blob: _Optional[bytes] = ..., model: _Optional[_Union[_agent_state_pb2.ModelSpec, _Mapping]] = ..., reset_history: bool = ..., want_state_blob: bool = ..., options: _Optional[_Union[CompileOptions, _Mapping]] = ..., base_state_ref: _Optional[str] = ..., appended_messages: _Optional[_Iterable[_Union[_agent_state_pb2.Message, _Mapping]]] = ...) -> None: ...

class RouteResponse(_message.Message):
    __slots__ = ["appended_message_ids", "compaction_report", "execution_ended", "history_discarded", "interrupted_execution_id", "state", "state_blob", "state_ref", "system_prompt_replaced"]
    APPENDED_MESSAGE_IDS_FIELD_NUMBER: _ClassVar[int]
    COMPACTION_REPORT_FIELD_NUMBER: _ClassVar[int]
    EXECUTION_ENDED_FIELD_NUMBER: _ClassVar[int]
    HISTORY_DISCARDED_FIELD_NUMBER: _ClassVar[int]
    INTERRUPTED_EXECUTION_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_BLOB_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    STATE_REF_FIELD_NUMBER: _ClassVar[int]
    SYSTEM_PROMPT_REPLACED_FIELD_NUMBER: _ClassVar[int]
    appended_message_ids: _containers.RepeatedScalarFieldContainer[str]
    compaction_report: CompileReport
    execution_ended: bool
    history_discarded: bool
    interrupted_execution_id: str
    state: _agent_state_pb2.AgentState
    state_blob: bytes
    state_ref: str
    system_prompt_replaced: bool
    def __init__(self, state: _Optional[_Union[_agent_state_pb2.AgentState, _Mapping]] = ..., appended_message_ids: _Optional[_Iterable[str]] = ..., execution_ended: bool = ..., compaction_report: _Optional[_Union[CompileReport, _Mapping]] = ..., state_blob: _Optional[bytes] = ..., history_discarded: bool = ..., interrupted_execution_id: _Optional[str] = ..., system_prompt_replaced: bool = ..., state_ref: _Optional[str] = ...) -> None: ...

class StageReport(_message.Message):
    __slots__ = ["compaction_point", "degraded", "degraded_reason", "detail", "duration_micros", "messages_affected", "messages_in", "messages_out", "policy", "skipped", "stage", "tokens_in", "tokens_out"]
    COMPACTION_POINT_FIELD_NUMBER: _ClassVar[int]
    DEGRADED_FIELD_NUMBER: _ClassVar[int]
    DEGRADED_REASON_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    DURATION_MICROS_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_AFFECTED_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_IN_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_OUT_FIELD_NUMBER: _ClassVar[int]
    POLICY_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_FIELD_NUMBER: _ClassVar[int]
    STAGE_FIELD_NUMBER: _ClassVar[int]
    TOKENS_IN_FIELD_NUMBER: _ClassVar[int]
    TOKENS_OUT_FIELD_NUMBER: _ClassVar[int]
    compaction_point: int
    degraded: bool
    degraded_reason: str
    detail: str
    duration_micros: int
    messages_affected: int
    messages_in: int
    messages_out: int
    policy: str
    skipped: bool
    stage: str
    tokens_in: int
    tokens_out: int
    def __init__(self, stage: _Optional[str] = ..., policy: _Optional[str] = ..., duration_micros: _Optional[int] = ..., messages_in: _Optional[int] = ..., messages_out: _Optional[int] = ..., tokens_in: _Optional[int] = ..., tokens_out: _Optional[int] = ..., messages_affected: _Optional[int] = ..., degraded: bool = ..., degraded_reason: _Optional[str] = ..., skipped: bool = ..., detail: _Optional[str] = ..., compaction_point: _Optional[int] = ...) -> None: ...

class TokenBreakdown(_message.Message):
    __slots__ = ["conversation_token_count", "pinned_token_count", "summaries_token_count", "system_prompt_token_count", "tool_trace_token_count", "tools_token_count"]
    CONVERSATION_TOKEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    PINNED_TOKEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    SUMMARIES_TOKEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    SYSTEM_PROMPT_TOKEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    TOOLS_TOKEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    TOOL_TRACE_TOKEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    conversation_token_count: int
    pinned_token_count: int
    summaries_token_count: int
    system_prompt_token_count: int
    tool_trace_token_count: int
    tools_token_count: int
    def __init__(self, system_prompt_token_count: _Optional[int] = ..., tools_token_count: _Optional[int] = ..., pinned_token_count: _Optional[int] = ..., summaries_token_count: _Optional[int] = ..., conversation_token_count: _Optional[int] = ..., tool_trace_token_count: _Optional[int] = ...) -> None: ...

class TokenBudget(_message.Message):
    __slots__ = ["breakdown", "context_window_token_count", "counter", "over_soft_threshold", "provenance", "remaining_token_count", "reserved_output_token_count", "reserved_system_token_count", "should_compact", "soft_threshold_token_count", "used_token_count"]
    BREAKDOWN_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_WINDOW_TOKEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    COUNTER_FIELD_NUMBER: _ClassVar[int]
    OVER_SOFT_THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    PROVENANCE_FIELD_NUMBER: _ClassVar[int]
    REMAINING_TOKEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    RESERVED_OUTPUT_TOKEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    RESERVED_SYSTEM_TOKEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    SHOULD_COMPACT_FIELD_NUMBER: _ClassVar[int]
    SOFT_THRESHOLD_TOKEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    USED_TOKEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    breakdown: TokenBreakdown
    context_window_token_count: int
    counter: str
    over_soft_threshold: bool
    provenance: TokenCountProvenance
    remaining_token_count: int
    reserved_output_token_count: int
    reserved_system_token_count: int
    should_compact: bool
    soft_threshold_token_count: int
    used_token_count: int
    def __init__(self, context_window_token_count: _Optional[int] = ..., used_token_count: _Optional[int] = ..., reserved_output_token_count: _Optional[int] = ..., reserved_system_token_count: _Optional[int] = ..., soft_threshold_token_count: _Optional[int] = ..., remaining_token_count: _Optional[int] = ..., over_soft_threshold: bool = ..., should_compact: bool = ..., provenance: _Optional[_Union[TokenCountProvenance, str]] = ..., breakdown: _Optional[_Union[TokenBreakdown, _Mapping]] = ..., counter: _Optional[str] = ...) -> None: ...

class TokenCount(_message.Message):
    __slots__ = ["provenance", "token_count"]
    PROVENANCE_FIELD_NUMBER: _ClassVar[int]
    TOKEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    provenance: TokenCountProvenance
    token_count: int
    def __init__(self, token_count: _Optional[int] = ..., provenance: _Optional[_Union[TokenCountProvenance, str]] = ...) -> None: ...

class UserTurn(_message.Message):
    __slots__ = ["execution_id", "messages"]
    EXECUTION_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    execution_id: str
    messages: _containers.RepeatedCompositeFieldContainer[_agent_state_pb2.Message]
    def __init__(self, messages: _Optional[_Iterable[_Union[_agent_state_pb2.Message, _Mapping]]] = ..., execution_id: _Optional[str] = ...) -> None: ...

class View(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class RenderFormat(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class InputFormat(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class TokenCountProvenance(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class Disposition(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class FinishReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
