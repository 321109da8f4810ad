import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";
import { Code, ConnectError } from "@connectrpc/connect";

/** One bad field of an INVALID_ARGUMENT answer (google.rpc.BadRequest.FieldViolation). */
export interface FieldViolation {
  /** The field path, such as "state.context.messages[0].parts[0].tool_result.tool_call_id". */
  field: string;
  /** What is wrong with it. */
  description: string;
}

const errorInfoType = "google.rpc.ErrorInfo";
const badRequestType = "google.rpc.BadRequest";

/**
 * CtxcError is a failed ctxc call: the gRPC code, plus the google.rpc.ErrorInfo
 * reason (such as "INVALID_STATE" or "CONTEXT_IRREDUCIBLE") and metadata, and the
 * field violations of a bad request. It is a ConnectError, so code that handles
 * those keeps working.
 */
export class CtxcError extends ConnectError {
  /** ErrorInfo.reason; empty when the server sent none (internal errors, transport failures). */
  readonly reason: string;
  /** ErrorInfo.domain ("ctxc"). */
  readonly domain: string;
  /** ErrorInfo.metadata, such as needed_tokens and available_tokens for CONTEXT_IRREDUCIBLE. */
  readonly errorMetadata: Readonly<Record<string, string>>;
  /** The bad fields of an INVALID_ARGUMENT answer. */
  readonly fieldViolations: readonly FieldViolation[];

  constructor(err: ConnectError) {
    super(err.rawMessage, err.code, err.metadata, undefined, err);
    this.name = "CtxcError";
    let reason = "";
    let domain = "";
    let metadata: Record<string, string> = {};
    const violations: FieldViolation[] = [];
    for (const detail of err.details) {
      if (!("type" in detail) || !(detail.value instanceof Uint8Array)) {
        continue;
      }
      if (detail.type === errorInfoType) {
        ({ reason, domain, metadata } = decodeErrorInfo(detail.value));
      } else if (detail.type === badRequestType) {
        violations.push(...decodeBadRequest(detail.value));
      }
    }
    this.reason = reason;
    this.domain = domain;
    this.errorMetadata = metadata;
    this.fieldViolations = violations;
  }

  // ConnectError's own instanceof accepts any ConnectError-shaped value; a
  // CtxcError is only what this class built.
  static override [Symbol.hasInstance](v: unknown): boolean {
    return typeof v === "object" && v !== null && CtxcError.prototype.isPrototypeOf(v);
  }
}

/** toCtxcError turns what a call threw into a CtxcError (anything else passes through). */
export function toCtxcError(err: unknown): unknown {
  if (err instanceof CtxcError) {
    return err;
  }
  const connectErr = ConnectError.from(err, Code.Unknown);
  return new CtxcError(connectErr);
}

// The two google.rpc detail messages are read field by field: they are stable,
// tiny, and not worth generating from googleapis (which the build cannot reach).

function decodeErrorInfo(bytes: Uint8Array): { reason: string; domain: string; metadata: Record<string, string> } {
  const reader = new BinaryReader(bytes);
  const info = { reason: "", domain: "", metadata: {} as Record<string, string> };
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    if (field === 1 && wireType === WireType.LengthDelimited) {
      info.reason = reader.string();
    } else if (field === 2 && wireType === WireType.LengthDelimited) {
      info.domain = reader.string();
    } else if (field === 3 && wireType === WireType.LengthDelimited) {
      const [key, value] = decodeStringPair(reader.bytes());
      info.metadata[key] = value;
    } else {
      reader.skip(wireType, field);
    }
  }
  return info;
}

function decodeBadRequest(bytes: Uint8Array): FieldViolation[] {
  const reader = new BinaryReader(bytes);
  const violations: FieldViolation[] = [];
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    if (field === 1 && wireType === WireType.LengthDelimited) {
      const [name, description] = decodeStringPair(reader.bytes());
      violations.push({ field: name, description });
    } else {
      reader.skip(wireType, field);
    }
  }
  return violations;
}

// decodeStringPair reads a message whose fields 1 and 2 are strings: a map
// entry (key, value) or a FieldViolation (field, description).
function decodeStringPair(bytes: Uint8Array): [string, string] {
  const reader = new BinaryReader(bytes);
  let first = "";
  let second = "";
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    if (field === 1 && wireType === WireType.LengthDelimited) {
      first = reader.string();
    } else if (field === 2 && wireType === WireType.LengthDelimited) {
      second = reader.string();
    } else {
      reader.skip(wireType, field);
    }
  }
  return [first, second];
}
