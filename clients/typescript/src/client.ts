import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type CallOptions, type Client, type Interceptor, type Transport } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";

import {
  ContextCompilerService,
  type BudgetRequestSchema,
  type BudgetResponse,
  type CompactRequestSchema,
  type CompactResponse,
  type CompileRequestSchema,
  type CompileResponse,
  type CountTokensRequestSchema,
  type CountTokensResponse,
  type ListProfilesResponse,
  type RouteRequestSchema,
  type RouteResponse,
} from "./gen/ctxc/v1/compiler_service_pb.js";
import { toCtxcError } from "./errors.js";
import { StateRefs } from "./refs.js";
import { VERSION } from "./version.js";

/** Retries of calls that fail with UNAVAILABLE (every ctxc RPC is stateless, so a retry is safe). */
export interface RetryOptions {
  /** Attempts in all, the first included. Default 4. */
  maxAttempts?: number;
  /** Backoff before the first retry, doubled after each. Default 100 ms. */
  initialBackoffMs?: number;
  /** Longest backoff. Default 2,000 ms. */
  maxBackoffMs?: number;
}

export interface CtxcClientOptions {
  /**
   * The server: "host:port" (plaintext gRPC, like `ctxc serve --listen`), or a
   * URL, "http://host:port" or "https://host:port" (TLS). Default "127.0.0.1:50051".
   */
  address?: string;
  /** Deadline of each call unless the call sets its own. Default 30,000 ms. */
  timeoutMs?: number;
  /** Largest request or response; the server's default max_message_bytes. Default 32 MiB. */
  maxMessageBytes?: number;
  /** Retries of UNAVAILABLE; false turns them off. */
  retry?: RetryOptions | false;
  /** HTTP/2 keepalive ping interval, so a dead connection is noticed between calls. Default 30,000 ms. */
  keepaliveIntervalMs?: number;
  /** Interceptors run on every call (after the retry), for example to add credentials. */
  interceptors?: Interceptor[];
  /**
   * A transport of your own (custom TLS, a proxy, a test transport); when set,
   * address, maxMessageBytes, keepaliveIntervalMs and interceptors are ignored.
   */
  transport?: Transport;
}

export type CompileRequestInit = MessageInitShape<typeof CompileRequestSchema>;
export type RouteRequestInit = MessageInitShape<typeof RouteRequestSchema>;
export type CompactRequestInit = MessageInitShape<typeof CompactRequestSchema>;
export type BudgetRequestInit = MessageInitShape<typeof BudgetRequestSchema>;
export type CountTokensRequestInit = MessageInitShape<typeof CountTokensRequestSchema>;

const defaultAddress = "127.0.0.1:50051";
const defaultMaxMessageBytes = 32 << 20;

/**
 * CtxcClient calls a ctxc server over gRPC. Every method takes the request as
 * a plain object (the generated *Schema init shape) and throws CtxcError on
 * failure. One client holds one HTTP/2 connection; share it.
 */
export class CtxcClient {
  /** The generated Connect client, for anything the typed methods do not cover. */
  readonly raw: Client<typeof ContextCompilerService>;
  private readonly timeoutMs: number;

  constructor(options: CtxcClientOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.raw = createClient(ContextCompilerService, options.transport ?? newTransport(options));
  }

  /** Compile runs the profile's policy chain and returns what the model should see. */
  compile(request: CompileRequestInit, call?: CallOptions): Promise<CompileResponse> {
    return this.call(() => this.raw.compile(request, this.callOptions(call)));
  }

  /** Route appends a user turn, an agent step or an event to the log and returns the new state. */
  route(request: RouteRequestInit, call?: CallOptions): Promise<RouteResponse> {
    return this.call(() => this.raw.route(request, this.callOptions(call)));
  }

  /** Compact persists compaction (summaries, masks) into the state. */
  compact(request: CompactRequestInit, call?: CallOptions): Promise<CompactResponse> {
    return this.call(() => this.raw.compact(request, this.callOptions(call)));
  }

  /** Budget reports the token budget of a state under a profile. */
  budget(request: BudgetRequestInit, call?: CallOptions): Promise<BudgetResponse> {
    return this.call(() => this.raw.budget(request, this.callOptions(call)));
  }

  /**
   * stateRefs returns a tracker that follows one growing state (one agent)
   * through this client: its compile, budget, compact and route take the whole
   * state like these methods and send it by reference when it extends the
   * state of the previous call (see StateRefs).
   */
  stateRefs(): StateRefs {
    return new StateRefs(this);
  }

  /** CountTokens counts texts and messages for a model or an encoding. */
  countTokens(request: CountTokensRequestInit, call?: CallOptions): Promise<CountTokensResponse> {
    return this.call(() => this.raw.countTokens(request, this.callOptions(call)));
  }

  /** ListProfiles lists the server's profiles with their stages and settings. */
  listProfiles(call?: CallOptions): Promise<ListProfilesResponse> {
    return this.call(() => this.raw.listProfiles({}, this.callOptions(call)));
  }

  private callOptions(call: CallOptions | undefined): CallOptions {
    return { timeoutMs: this.timeoutMs, ...call };
  }

  private async call<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      throw toCtxcError(err);
    }
  }
}

function newTransport(options: CtxcClientOptions): Transport {
  const address = options.address ?? defaultAddress;
  const baseUrl = /^https?:\/\//.test(address) ? address : `http://${address}`;
  const maxBytes = options.maxMessageBytes ?? defaultMaxMessageBytes;
  const interceptors = [userAgent];
  if (options.retry !== false) {
    interceptors.push(retryUnavailable(options.retry ?? {}));
  }
  interceptors.push(...(options.interceptors ?? []));
  return createGrpcTransport({
    baseUrl,
    readMaxBytes: maxBytes,
    writeMaxBytes: maxBytes,
    pingIntervalMs: options.keepaliveIntervalMs ?? 30_000,
    interceptors,
  });
}

const userAgent: Interceptor = (next) => (req) => {
  req.header.set("x-ctxc-client", `ctxc-typescript/${VERSION}`);
  return next(req);
};

/** retryUnavailable retries a call that failed with UNAVAILABLE, with exponential backoff and jitter, within its deadline. */
export function retryUnavailable(options: RetryOptions): Interceptor {
  const maxAttempts = Math.max(1, options.maxAttempts ?? 4);
  const initial = options.initialBackoffMs ?? 100;
  const max = options.maxBackoffMs ?? 2_000;
  return (next) => async (req) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await next(req);
      } catch (err) {
        const unavailable = err instanceof ConnectError && err.code === Code.Unavailable;
        if (!unavailable || attempt >= maxAttempts || req.signal.aborted) {
          throw err;
        }
        const backoff = Math.min(max, initial * 2 ** (attempt - 1));
        await sleep(backoff * (0.5 + Math.random() / 2), req.signal);
      }
    }
  };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
  });
}
