"""CtxcError: a failed call with the server's google.rpc.ErrorInfo and BadRequest."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

_STATUS_DETAILS_KEY = "grpc-status-details-bin"


@dataclass(frozen=True)
class FieldViolation:
    """One bad field of an INVALID_ARGUMENT answer."""

    field: str
    description: str


class CtxcError(Exception):
    """A failed ctxc call: the gRPC status code, and the ErrorInfo reason (such as
    INVALID_STATE or CONTEXT_IRREDUCIBLE), its metadata and the bad fields the
    server named. The grpc.RpcError it came from is __cause__."""

    def __init__(self, code: grpc.StatusCode, message: str, reason: str = "", domain: str = "",
                 metadata: Optional[Dict[str, str]] = None, field_violations: Optional[List[FieldViolation]] = None):
        super().__init__(f"{code.name}: {message}")
        self.code = code
        self.message = message
        self.reason = reason
        self.domain = domain
        self.metadata = metadata or {}
        self.field_violations = field_violations or []

    @classmethod
    def from_rpc_error(cls, err: grpc.RpcError, trailing_metadata=None) -> "CtxcError":
        """Reads the status details a ctxc server sends in the trailers."""
        code = err.code() if callable(getattr(err, "code", None)) else grpc.StatusCode.UNKNOWN
        message = err.details() if callable(getattr(err, "details", None)) else str(err)
        if trailing_metadata is None and callable(getattr(err, "trailing_metadata", None)):
            trailing_metadata = err.trailing_metadata()
        reason, domain, metadata, violations = "", "", {}, []
        for key, value in trailing_metadata or ():
            if key == _STATUS_DETAILS_KEY:
                reason, domain, metadata, violations = _decode_details(value)
        return cls(code, message or "", reason, domain, metadata, violations)


# google.rpc.Status, ErrorInfo and BadRequest, declared in a private descriptor
# pool with the same field numbers (wire compatible), so this package needs no
# googleapis-common-protos and never clashes with it when it is installed.
def _message_classes():
    f = descriptor_pb2.FileDescriptorProto(name="ctxc/_rpc_status.proto", package="ctxc.rpc", syntax="proto3")
    string, bytes_, int32 = (descriptor_pb2.FieldDescriptorProto.TYPE_STRING, descriptor_pb2.FieldDescriptorProto.TYPE_BYTES,
                             descriptor_pb2.FieldDescriptorProto.TYPE_INT32)
    optional, repeated = descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL, descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED
    message = descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE

    def add(name, *fields):
        m = f.message_type.add(name=name)
        for number, (field_name, kind, label, type_name) in enumerate(fields, start=1):
            m.field.add(name=field_name, number=number, type=kind, label=label, type_name=type_name)

    add("Any", ("type_url", string, optional, None), ("value", bytes_, optional, None))
    add("Status", ("code", int32, optional, None), ("message", string, optional, None), ("details", message, repeated, ".ctxc.rpc.Any"))
    add("Pair", ("first", string, optional, None), ("second", string, optional, None))
    # ErrorInfo.metadata is a map<string, string>: on the wire, repeated (key, value) pairs.
    add("ErrorInfo", ("reason", string, optional, None), ("domain", string, optional, None), ("metadata", message, repeated, ".ctxc.rpc.Pair"))
    add("BadRequest", ("field_violations", message, repeated, ".ctxc.rpc.Pair"))
    for m in f.message_type:
        for field in m.field:
            if not field.type_name:
                field.ClearField("type_name")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(f)
    get = getattr(message_factory, "GetMessageClass", None) or message_factory.MessageFactory(pool).GetPrototype
    return {name: get(pool.FindMessageTypeByName(f"ctxc.rpc.{name}")) for name in ("Status", "ErrorInfo", "BadRequest")}


_CLASSES = _message_classes()


def _decode_details(raw: bytes) -> Tuple[str, str, Dict[str, str], List[FieldViolation]]:
    status = _CLASSES["Status"].FromString(raw)
    reason, domain, metadata, violations = "", "", {}, []
    for detail in status.details:
        kind = detail.type_url.rsplit("/", 1)[-1]
        if kind == "google.rpc.ErrorInfo":
            info = _CLASSES["ErrorInfo"].FromString(detail.value)
            reason, domain = info.reason, info.domain
            metadata = {p.first: p.second for p in info.metadata}
        elif kind == "google.rpc.BadRequest":
            violations += [FieldViolation(p.first, p.second) for p in _CLASSES["BadRequest"].FromString(detail.value).field_violations]
    return reason, domain, metadata, violations
