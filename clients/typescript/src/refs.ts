import { clone, create, equals, type MessageInitShape } from "@bufbuild/protobuf";
import { Code, type CallOptions } from "@connectrpc/connect";

import { AgentStateSchema, type AgentState } from "./gen/ctxc/v1/agent_state_pb.js";
import type { BudgetResponse, CompactResponse, CompileResponse, RouteResponse } from "./gen/ctxc/v1/compiler_service_pb.js";
import type { BudgetRequestInit, CompactRequestInit, CompileRequestInit, CtxcClient, RouteRequestInit } from "./client.js";
import { CtxcError } from "./errors.js";

/** The ErrorInfo reason of a base_state_ref the server cannot resolve. */
export const REASON_STATE_REF_NOT_FOUND = "STATE_REF_NOT_FOUND";

type AgentStateInit = MessageInitShape<typeof AgentStateSchema>;
type MessageInit = NonNullable<NonNullable<AgentStateInit["context"]>["messages"]>[number];

/** What a StateRefs has sent by reference so far. */
export interface StateRefCounts {
  /** Calls sent by reference (base_state_ref with only the appended messages). */
  byReference: number;
  /** Of those, the ones the server could not resolve, sent again with the whole state. */
  misses: number;
}

/** The request fields a call by reference sets or reads (common to all four requests). */
interface RefRequest {
  state?: AgentStateInit;
  baseStateRef?: string;
  appendedMessages?: MessageInit[];
}

/**
 * StateRefs sends a growing state by reference. A runtime that holds its
 * agent's state and calls every turn passes the whole state each time, as to
 * CtxcClient; StateRefs sends only the messages appended since the state of
 * its previous call, naming that state by the stateRef its response carried.
 * A reference the server cannot resolve (expired, evicted, restarted, another
 * replica without the shared Redis) is answered by sending the call again
 * with the whole state, so the caller never sees it.
 *
 * The log is compared by identity: the new state's messages must start with
 * the very message objects of the previous call's state (the request's for
 * compile and budget, the returned state's for route and compact, so continue
 * from the state those return). A message already sent must therefore not be
 * changed in place: put a new object in its place, which sends the whole
 * state. Any change of the state's other fields (system prompt, tools,
 * model, execution, metadata…) also sends the whole state.
 *
 * One StateRefs follows one state (one agent); use one per agent.
 */
export class StateRefs {
  private readonly client: CtxcClient;
  /** The reference of the followed state; "" when none. */
  private ref = "";
  /** The followed state's log, the message objects themselves. */
  private messages: readonly unknown[] = [];
  /** The followed state without its log (a snapshot). */
  private rest: AgentState | undefined;
  private byReference = 0;
  private misses = 0;

  constructor(client: CtxcClient) {
    this.client = client;
  }

  /** How many calls went by reference, and how many of those missed and were sent again whole. */
  counts(): StateRefCounts {
    return { byReference: this.byReference, misses: this.misses };
  }

  /** The reference the next call may extend; "" when the next call sends the whole state. */
  get stateRef(): string {
    return this.ref;
  }

  /** Forget the followed state: the next call sends its state whole. */
  forget(): void {
    this.ref = "";
    this.messages = [];
    this.rest = undefined;
  }

  /** CtxcClient.compile, with the state sent by reference when it extends the previous call's. */
  async compile(request: CompileRequestInit, call?: CallOptions): Promise<CompileResponse> {
    const canRef = !request.stateBlob?.length && !request.inputJson && !request.resetHistory;
    const resp = await this.call(request, canRef, (r) => this.client.compile(r, call));
    this.follow(request, resp.stateRef, request.state);
    return resp;
  }

  /** CtxcClient.budget, with the state sent by reference when it extends the previous call's. */
  async budget(request: BudgetRequestInit, call?: CallOptions): Promise<BudgetResponse> {
    const resp = await this.call(request, true, (r) => this.client.budget(r, call));
    this.follow(request, resp.stateRef, request.state);
    return resp;
  }

  /**
   * CtxcClient.compact, with the state sent by reference when it extends the
   * previous call's; the next call continues from the state it returns.
   */
  async compact(request: CompactRequestInit, call?: CallOptions): Promise<CompactResponse> {
    const resp = await this.call(request, true, (r) => this.client.compact(r, call));
    this.follow(request, resp.stateRef, resp.state);
    return resp;
  }

  /**
   * CtxcClient.route, with the state sent by reference when it extends the
   * previous call's; the next call continues from the state it returns (not
   * when the state travels as a blob: then every call is whole).
   */
  async route(request: RouteRequestInit, call?: CallOptions): Promise<RouteResponse> {
    const canRef = !request.stateBlob?.length && !request.resetHistory;
    const resp = await this.call(request, canRef, (r) => this.client.route(r, call));
    this.follow(request, resp.stateRef, resp.state);
    return resp;
  }

  /**
   * call makes one call: by reference, on a copy of the request, when its
   * state extends the followed one; whole otherwise, and again whole when the
   * server does not know the reference.
   */
  private async call<Req extends RefRequest, Resp>(request: Req, canRef: boolean, send: (r: Req) => Promise<Resp>): Promise<Resp> {
    const ownRef = !!request.baseStateRef || (request.appendedMessages?.length ?? 0) > 0;
    const appended = canRef && !ownRef ? this.extends(request.state) : undefined;
    if (appended === undefined) {
      return send(request);
    }
    const ref = this.ref;
    this.byReference++;
    try {
      return await send({ ...request, state: undefined, baseStateRef: ref, appendedMessages: appended });
    } catch (err) {
      if (!(err instanceof CtxcError && err.code === Code.FailedPrecondition && err.reason === REASON_STATE_REF_NOT_FOUND)) {
        throw err;
      }
      this.misses++;
      if (this.ref === ref) {
        this.forget();
      }
      return send(request);
    }
  }

  /**
   * extends returns the messages state appends to the followed state, or
   * undefined when state is not the followed state with messages appended and
   * nothing else changed.
   */
  private extends(state: AgentStateInit | undefined): MessageInit[] | undefined {
    if (this.ref === "" || state === undefined || this.rest === undefined) {
      return undefined;
    }
    const log = state.context?.messages ?? [];
    if (log.length < this.messages.length) {
      return undefined;
    }
    for (let i = 0; i < this.messages.length; i++) {
      if (log[i] !== this.messages[i]) {
        return undefined;
      }
    }
    if (!equals(AgentStateSchema, withoutLog(state), this.rest)) {
      return undefined;
    }
    return log.slice(this.messages.length);
  }

  /**
   * follow makes state, named ref, the state the next call may extend; a call
   * that named its own reference, or an answer without a reference or a
   * state, leaves none to extend.
   */
  private follow(request: RefRequest, ref: string, state: AgentStateInit | undefined): void {
    if (ref === "" || state === undefined || request.baseStateRef) {
      this.forget();
      return;
    }
    this.ref = ref;
    this.messages = [...(state.context?.messages ?? [])];
    this.rest = clone(AgentStateSchema, withoutLog(state));
  }
}

/** withoutLog is state as an AgentState without its messages, sharing its other fields. */
function withoutLog(state: AgentStateInit): AgentState {
  return create(AgentStateSchema, { ...state, context: { ...state.context, messages: [] } } as AgentStateInit);
}
