/**
 * MCP 2026-07-28 over HTTP beside the sessions of 2025 (listener.ts): a POST without `Mcp-Session-Id`
 * whose message is `server/discover` or carries the revision's `_meta` envelope (or whose
 * `MCP-Protocol-Version` header names a 2026 revision) is served here, one request one response (an
 * event stream of its progress, then its answer, when it has a `progressToken` and the host takes
 * streams), with no session: any replica answers any request. Each agent (or the unscoped view) has one gateway server
 * for its modern requests, opened from the first request's envelope (see mcp/host_era.ts, which also
 * adds `resultType` and the cache hints); request ids are the gateway's own inside, the host's
 * outside. The routing headers are checked as the revision's server validation asks: a request must
 * carry `MCP-Protocol-Version` (equal to its envelope's version) and `Mcp-Method` (the body's method),
 * and a `tools/call`, `prompts/get` or `resources/read` its `Mcp-Name` (the tool, prompt or resource,
 * decoded from the revision's base64 form); a `tools/call` of a tool whose published schema declares
 * `x-mcp-header` properties must carry their `Mcp-Param-*` headers, equal to its arguments. A header
 * that is missing, does not match or is not validly encoded is -32020 (HTTP 400). A request whose `_meta`
 * lacks the protocol version or the client capabilities is -32602 (HTTP 400); one naming a version the
 * gateway does not serve is -32022 with the served ones (HTTP 400); a method the revision removed
 * (`initialize`, `ping`, `logging/setLevel`, `resources/subscribe`, `resources/unsubscribe`) or one the
 * gateway does not know is -32601 (HTTP 404); a call whose server asks for a capability (sampling,
 * elicitation, roots) the request did not declare is -32021 naming it (HTTP 400).
 *
 * @module
 */
import type { Gateway } from "../gateway/mod.ts";
import {
  CLIENT_CAPABILITIES_KEY,
  decodeHeaderValue,
  ErrorCode,
  HostEra,
  type JSONRPCMessage,
  MODERN_VERSION,
  paramHeaderMismatch,
  PROTOCOL_VERSION_KEY,
  scanParamHeaders,
  SERVED_VERSIONS,
  SUBSCRIPTION_ID_KEY,
  type Transport,
  UNSUPPORTED_VERSION,
} from "../mcp/mod.ts";
import type { Continuations } from "./continuations.ts";
import { type SealedState, StateSeal } from "./request_state.ts";

/** The error code of a routing header that does not match the body (2026-07-28). */
export const HEADER_MISMATCH = ErrorCode.HeaderMismatch;

type Params = Record<string, unknown>;
type Body = { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: Params };
type Message = Record<string, unknown>;

/** True when a session-less POST body is a 2026-07-28 message (served by {@linkcode ModernEndpoint}). */
export function isModern(request: Request, body: unknown): boolean {
  const header = request.headers.get("mcp-protocol-version");
  if (header !== null && header >= "2026") return true;
  const b = body as Body;
  if (typeof b !== "object" || b === null || Array.isArray(b) || typeof b.method !== "string") return false;
  if (b.method === "server/discover") return true;
  const meta = b.params?._meta as Params | undefined;
  return typeof meta === "object" && meta !== null && meta[PROTOCOL_VERSION_KEY] !== undefined;
}

/** The methods whose requests must carry `Mcp-Name`, and the body field it mirrors (the revision's table). */
const NAME_REQUIRED: Record<string, string> = {
  "tools/call": "name",
  "prompts/get": "name",
  "resources/read": "uri",
};

/** What `Mcp-Name` must carry for a method: the tool's or prompt's name, the resource's URI. */
function routedName(method: string, params: Params | undefined): string | undefined {
  const field = Object.hasOwn(NAME_REQUIRED, method)
    ? NAME_REQUIRED[method]
    : method === "resources/subscribe"
    ? "uri"
    : undefined;
  const value = field === undefined ? undefined : params?.[field];
  return typeof value === "string" ? value : undefined;
}

/**
 * The routing headers' disagreement with the body, or undefined when they agree: on a request (a message
 * with an id; the revision sets no header rules for notifications), a missing `MCP-Protocol-Version`,
 * `Mcp-Method`, or `Mcp-Name` where the method requires one, in that order; and on any message a header
 * that names another version, method, tool, prompt or resource than the body, or an `Mcp-Name` that is
 * not validly encoded.
 */
export function headerMismatch(request: Request, body: Body): string | undefined {
  const isRequest = typeof body.id === "string" || typeof body.id === "number";
  const version = request.headers.get("mcp-protocol-version");
  const claimed = (body.params?._meta as Params | undefined)?.[PROTOCOL_VERSION_KEY];
  if (version === null && isRequest) {
    return "the required MCP-Protocol-Version header is missing" +
      (typeof claimed === "string" ? ` (the body's _meta names ${claimed.slice(0, 100)})` : "");
  }
  if (version !== null && typeof claimed === "string" && version !== claimed) {
    return `MCP-Protocol-Version header "${version.slice(0, 100)}" does not match the body's _meta ` +
      `protocol version "${claimed.slice(0, 100)}"`;
  }
  const method = request.headers.get("mcp-method");
  if (method === null && isRequest) {
    return `the required Mcp-Method header is missing (the body's method is "${
      String(body.method).slice(0, 100)
    }")`;
  }
  if (method !== null && method !== body.method) {
    return `Mcp-Method header "${method.slice(0, 100)}" does not match the body's method "${
      String(body.method).slice(0, 100)
    }"`;
  }
  const sent = request.headers.get("mcp-name");
  const wanted = routedName(String(body.method), body.params);
  if (
    sent === null && isRequest && wanted !== undefined && Object.hasOwn(NAME_REQUIRED, body.method as string)
  ) {
    return `the required Mcp-Name header is missing (the body's ${NAME_REQUIRED[body.method as string]} is "${
      wanted.slice(0, 200)
    }")`;
  }
  if (sent === null || wanted === undefined) return undefined;
  // A value outside plain visible ASCII comes in the revision's base64 form.
  const name = decodeHeaderValue(sent);
  if (name === undefined) return `Mcp-Name header "${sent.slice(0, 200)}" is not valid base64 of UTF-8`;
  if (name !== wanted) {
    return `Mcp-Name header "${name.slice(0, 200)}" does not match the body's "${wanted.slice(0, 200)}"`;
  }
  return undefined;
}

/**
 * A `tools/call`'s `Mcp-Param-*` headers' mismatch with its arguments, for a tool whose published input
 * schema declares `x-mcp-header` properties (see mcp/param_headers.ts), or undefined when they agree.
 */
export async function paramMismatch(
  gateway: Gateway,
  request: Request,
  body: Body,
): Promise<string | undefined> {
  const name = body.params?.name;
  if (body.method !== "tools/call" || typeof name !== "string") return undefined;
  const schema = await gateway.headerSchema(name);
  if (schema === undefined) return undefined;
  const declarations = scanParamHeaders(schema).declarations;
  return declarations && paramHeaderMismatch(declarations, body.params?.arguments, request.headers);
}

/** The methods 2026-07-28 removed: a modern request for one is -32601 (HTTP 404). */
const REMOVED_METHODS = new Set([
  "initialize",
  "ping",
  "logging/setLevel",
  "resources/subscribe",
  "resources/unsubscribe",
]);

/**
 * Methods whose -32601 may be a downstream server's relayed answer (not the gateway's "no such method"):
 * their errors keep HTTP 200.
 */
const RELAYED_METHODS = new Set(["tools/call", "prompts/get", "resources/read", "completion/complete"]);

/**
 * A modern request's refusal before it is served, or undefined: its `_meta` envelope lacks the protocol
 * version or the client capabilities (-32602), names a version the gateway does not serve (-32022, with
 * the served ones), or its method was removed by the revision (-32601). With the HTTP status of each.
 */
export function envelopeRefusal(body: Body): { status: number; error: Message } | undefined {
  const meta = body.params?._meta as Params | undefined;
  const where = "2026-07-28 requests carry params._meta";
  if (typeof meta !== "object" || meta === null || Array.isArray(meta)) {
    return { status: 400, error: { code: -32602, message: `Invalid params: ${where}, this one has none` } };
  }
  const version = meta[PROTOCOL_VERSION_KEY];
  if (typeof version !== "string") {
    return {
      status: 400,
      error: { code: -32602, message: `Invalid params: ${where} with ${PROTOCOL_VERSION_KEY} (a string)` },
    };
  }
  const capabilities = meta[CLIENT_CAPABILITIES_KEY];
  if (typeof capabilities !== "object" || capabilities === null || Array.isArray(capabilities)) {
    return {
      status: 400,
      error: {
        code: -32602,
        message: `Invalid params: ${where} with ${CLIENT_CAPABILITIES_KEY} (an object)`,
      },
    };
  }
  if (version !== MODERN_VERSION) {
    return {
      status: 400,
      error: {
        code: UNSUPPORTED_VERSION,
        message: `Unsupported protocol version: ${version.slice(0, 64)}`,
        data: { supported: SERVED_VERSIONS, requested: version },
      },
    };
  }
  if (REMOVED_METHODS.has(body.method as string)) {
    return {
      status: 404,
      error: { code: -32601, message: `Method not found: ${body.method} was removed in 2026-07-28` },
    };
  }
  return undefined;
}

/** A comment line on an open listen stream this often, so proxies and the host see it alive. */
export const LISTEN_KEEPALIVE_MS = 15_000;

/** One `subscriptions/listen` request's open event stream. */
interface ListenStream {
  /** The host's id of the listen request (the stamp it sees). */
  hostId: string | number;
  /** The token hash that opened it (a reload that no longer accepts it ends the stream). */
  tokenHash?: string;
  write(message: Record<string, unknown>): void;
  close(): void;
}

/** The listen a message for a host's listen streams belongs to (its stamp, or a closing result's id). */
function listenOf(message: Record<string, unknown>): unknown {
  const holder = (message.params ?? message.result) as { _meta?: Record<string, unknown> } | undefined;
  return holder?._meta?.[SUBSCRIPTION_ID_KEY] ?? message.id;
}

function jsonResponse(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
}

/** A JSON-RPC error answer (its id set by the caller). */
function refusal(code: number, message: string): Message {
  return { jsonrpc: "2.0", id: null, error: { code, message } };
}

/**
 * The modern requests of one agent (or of the unscoped view): one gateway server, no session. A call
 * waiting for the host's input is answered `input_required` with a sealed `requestState`
 * (request_state.ts); its retry is taken up here when the call is open here, else handed to the replica
 * that holds it ({@linkcode Continuations}).
 */
export class ModernEndpoint implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  #era = new HostEra();
  #seq = 0;
  /** Requests awaiting their answers, by the gateway's own id. */
  #pending = new Map<string, (message: JSONRPCMessage) => void>();
  #gateway: Gateway;
  #connected: Promise<void>;
  #closed = false;
  /** Where each streamed request's notifications go, by the gateway's own id of the request. */
  #notes = new Map<string, (message: JSONRPCMessage) => void>();
  /** Open listen streams, by the gateway's own id of their request. */
  #streams = new Map<string, ListenStream>();
  /** The agent ("" = the unscoped view) the states sealed here are bound to. */
  #agent: string;
  #continuations: Continuations;
  #seal?: Promise<StateSeal>;

  constructor(gateway: Gateway, agent: string | undefined, continuations: Continuations) {
    this.#era.inject = (message) => this.onmessage?.(message);
    this.#gateway = gateway;
    this.#agent = agent ?? "";
    this.#continuations = continuations;
    this.#connected = gateway.connect(this);
  }

  start(): Promise<void> {
    return Promise.resolve();
  }

  send(message: JSONRPCMessage, options?: { relatedRequestId?: string | number }): Promise<void> {
    const out = this.#era.outgoing(message, options?.relatedRequestId);
    for (const back of out.back ?? []) queueMicrotask(() => this.onmessage?.(back));
    for (const own of out.deliver ?? []) queueMicrotask(() => this.onmessage?.(own));
    for (const note of out.notify ?? []) this.#toListen(note);
    for (const answer of [...out.also ?? [], ...out.send ? [out.send] : []]) {
      const m = answer as { id?: unknown; method?: unknown };
      if (m.method !== undefined || m.id === undefined) {
        // A request's own notification (progress): on that request's event stream, if it has one.
        const related = options?.relatedRequestId;
        if (m.method !== undefined && related !== undefined) this.#notes.get(String(related))?.(answer);
        continue;
      }
      const resolve = this.#pending.get(String(m.id));
      if (resolve) this.#pending.delete(String(m.id)), resolve(answer);
    }
    return Promise.resolve();
  }

  /** A message for one of the host's listen streams: stamped with the host's id; a closing result ends it. */
  #toListen(message: JSONRPCMessage): void {
    const m = message as Record<string, unknown>;
    const internal = String(listenOf(m));
    const stream = this.#streams.get(internal);
    if (!stream) return;
    const hostId = stream.hostId;
    const restamp = (holder: unknown) => {
      const h = holder as { _meta?: Record<string, unknown> } | undefined;
      return h ? { ...h, _meta: { ...h._meta, [SUBSCRIPTION_ID_KEY]: hostId } } : h;
    };
    if (m.method !== undefined) {
      stream.write({ ...m, params: restamp(m.params) });
      return;
    }
    stream.write({ ...m, id: hostId, result: restamp(m.result) });
    this.#streams.delete(internal);
    stream.close();
  }

  /**
   * Ends the listen streams `which` picks by the token hash that opened them (a config reload revoked
   * it), each with its closing result; their resources are unsubscribed.
   */
  endListens(which: (tokenHash: string | undefined) => boolean): number {
    const ended = this.#era.endListens((id) => {
      const stream = this.#streams.get(String(id));
      return stream !== undefined && which(stream.tokenHash);
    });
    for (const note of ended.notify) this.#toListen(note);
    for (const own of ended.deliver) this.onmessage?.(own);
    return ended.notify.length;
  }

  /** The number of open listen streams. */
  get listening(): number {
    return this.#streams.size;
  }

  async close(): Promise<void> {
    // The gateway's close closes its transport (this), which closed the gateway: once is enough, or
    // the two would call each other forever (a listener that spun at SIGTERM until out of memory).
    if (this.#closed) return;
    this.#closed = true;
    // Each listen ends with its closing result: the host knows it was ended, not dropped.
    for (const note of this.#era.endListens().notify) this.#toListen(note);
    for (const resolve of this.#pending.values()) {
      resolve({ jsonrpc: "2.0", id: 0, error: { code: -32603, message: "The gateway is stopping" } });
    }
    this.#pending.clear();
    await this.#gateway.close();
    this.onclose?.();
  }

  /** The seal of this agent's states (the store's key; asked again after a failure). */
  #sealer(): Promise<StateSeal> {
    if (!this.#seal) {
      this.#seal = this.#continuations.secret().then((secret) =>
        StateSeal.create(secret, this.#agent, this.#continuations.replica)
      );
      this.#seal.catch(() => this.#seal = undefined);
    }
    return this.#seal;
  }

  /**
   * Answers one POST body (already parsed) as 2026-07-28: one JSON response, or for
   * `subscriptions/listen` an event stream that stays open. `tokenHash`: the token that sent it.
   */
  async handle(request: Request, body: unknown, tokenHash?: string): Promise<Response> {
    const b = body as Body;
    const hostId = b?.id;
    if (typeof b !== "object" || b === null || Array.isArray(b) || typeof b.method !== "string") {
      return jsonResponse(
        { jsonrpc: "2.0", id: null, error: { code: -32600, message: "Invalid Request" } },
        400,
      );
    }
    let mismatch = headerMismatch(request, b);
    if (!mismatch && b.method === "tools/call") {
      await this.#connected;
      mismatch = await paramMismatch(this.#gateway, request, b);
    }
    if (mismatch) {
      return jsonResponse(
        { jsonrpc: "2.0", id: hostId ?? null, error: { code: HEADER_MISMATCH, message: mismatch } },
        400,
      );
    }
    const isRequest = typeof hostId === "string" || typeof hostId === "number";
    const refused = isRequest ? envelopeRefusal(b) : undefined;
    if (refused) return jsonResponse({ jsonrpc: "2.0", id: hostId, error: refused.error }, refused.status);
    // Without a session a host's request id means nothing here (ids are the gateway's own inside): a
    // host cancels a request, or ends a listen, by closing its HTTP request (handled below).
    if (!isRequest && b.method === "notifications/cancelled") return new Response(null, { status: 202 });
    if (isRequest && b.method === "subscriptions/listen") {
      await this.#connected;
      return this.#listen(request, { ...b, id: `m-${++this.#seq}` }, hostId, tokenHash);
    }
    // A request with a progressToken, from a host that takes an event stream, is answered on one: its
    // progress notifications, then its answer.
    const token = (b.params?._meta as Params | undefined)?.progressToken;
    if (
      isRequest && token !== undefined && (request.headers.get("accept") ?? "").includes("text/event-stream")
    ) {
      return this.#streamed(request, b, hostId);
    }
    const answer = await this.serve(b, request.signal, false);
    if (!answer) return new Response(null, { status: 202 });
    // The gateway's own "no such method" is HTTP 404 (a relayed downstream answer keeps 200); a call that
    // needs a capability the request did not declare (-32021), or another version (-32022), is 400.
    const code = (answer.error as { code?: unknown } | undefined)?.code;
    const status = code === -32601 && !RELAYED_METHODS.has(b.method)
      ? 404
      : code === UNSUPPORTED_VERSION || code === ErrorCode.MissingRequiredClientCapability
      ? 400
      : 200;
    return jsonResponse({ ...answer, id: hostId ?? null }, status);
  }

  /**
   * One message of the host (checked), answered: the answer's id is for the caller to set; undefined for
   * a notification, or when `signal` aborted (the request is then cancelled). `forwarded`: another replica
   * handed this retry here through the store (it is not handed on again).
   */
  async serve(
    b: Body,
    signal: AbortSignal,
    forwarded: boolean,
    onNote?: (message: JSONRPCMessage) => void,
  ): Promise<Message | undefined> {
    await this.#connected;
    const hostId = b.id;
    const isRequest = typeof hostId === "string" || typeof hostId === "number";
    // Without a session a host's request id means nothing here: a forwarded cancellation is not one.
    if (!isRequest && b.method === "notifications/cancelled") return undefined;
    const id = `m-${++this.#seq}`;
    let inner: Body = isRequest ? { ...b, id } : b;
    const state = b.params?.requestState;
    if (isRequest && typeof state === "string") {
      // A retry: its sealed state is checked before anything runs.
      let opened: SealedState | { refused: string };
      try {
        opened = await (await this.#sealer()).open(state, b);
      } catch (error) {
        return refusal(-32603, `The gateway could not check the requestState (${(error as Error).message})`);
      }
      if ("refused" in opened) return refusal(-32602, opened.refused);
      if (!this.#era.waits(opened.id)) {
        if (!forwarded && opened.owner !== this.#continuations.replica) {
          return await this.#continuations.forward(opened, b, signal);
        }
        return refusal(
          -32602,
          "requestState was already used, or the call it continues has ended (a continuation is answered " +
            "once); nothing was run",
        );
      }
      this.#continuations.settled(opened.id);
      inner = { ...inner, params: { ...b.params, requestState: opened.id } };
    }
    const answered = isRequest
      ? new Promise<JSONRPCMessage>((resolve) => this.#pending.set(id, resolve))
      : undefined;
    const era = this.#era.incoming(inner);
    if (era.reply) {
      this.#pending.delete(id);
      return era.reply as Message;
    }
    if (answered && onNote) this.#notes.set(id, onNote);
    for (const message of era.deliver) this.onmessage?.(message as JSONRPCMessage);
    if (!answered) return undefined;
    // A host that goes away cancels its request.
    const aborted = Promise.withResolvers<undefined>();
    const onAbort = () => {
      aborted.resolve(undefined);
      if (!this.#pending.delete(id)) return;
      this.onmessage?.({
        jsonrpc: "2.0",
        method: "notifications/cancelled",
        params: { requestId: id, reason: "the HTTP request was aborted" },
      } as JSONRPCMessage);
    };
    if (signal.aborted) onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      const answer = await Promise.race([answered, aborted.promise]) as Message | undefined;
      return answer && await this.#sealed(answer, b);
    } finally {
      signal.removeEventListener("abort", onAbort);
      this.#notes.delete(id);
    }
  }

  /**
   * A request answered on an event stream: the notifications the gateway's server sends for it
   * (progress) as they come, then its answer, and the stream ends. A host that closes it cancels the
   * request (as a dropped JSON request does).
   */
  #streamed(request: Request, b: Body, hostId: string | number): Response {
    const encoder = new TextEncoder();
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    let open = true;
    const write = (message: unknown) => {
      if (!open) return;
      try {
        controller.enqueue(encoder.encode(`event: message\ndata: ${JSON.stringify(message)}\n\n`));
      } catch {
        // the host went away: its request's signal cancels the call
      }
    };
    const end = () => {
      if (!open) return;
      open = false;
      try {
        controller.close();
      } catch {
        // already closed
      }
    };
    const gone = new AbortController();
    const onAbort = () => gone.abort();
    request.signal.addEventListener("abort", onAbort, { once: true });
    const body = new ReadableStream<Uint8Array>({
      start: (c) => {
        controller = c;
      },
      cancel: () => {
        open = false;
        gone.abort();
      },
    });
    this.serve(b, gone.signal, false, write).then(
      (answer) => answer && write({ ...answer, id: hostId }),
      (error) =>
        write({ jsonrpc: "2.0", id: hostId, error: { code: -32603, message: (error as Error).message } }),
    ).finally(() => {
      request.signal.removeEventListener("abort", onAbort);
      end();
    });
    return new Response(body, {
      headers: {
        "content-type": "text/event-stream",
        "cache-control": "no-cache, no-transform",
        "x-accel-buffering": "no",
      },
    });
  }

  /** An `input_required` answer with its `requestState` sealed (bound to this agent and `request`). */
  async #sealed(answer: Message, request: Body): Promise<Message> {
    const result = answer.result as Record<string, unknown> | undefined;
    if (result?.resultType !== "input_required" || typeof result.requestState !== "string") return answer;
    const inner = result.requestState;
    const ttl = this.#era.continuationMs;
    try {
      const requestState = await (await this.#sealer()).seal(inner, request, ttl);
      this.#continuations.expect(inner, Date.now() + ttl);
      return { ...answer, result: { ...result, requestState } };
    } catch (error) {
      // A state that cannot be sealed cannot be continued: the call ends now rather than wait for nothing.
      this.#era.drop(inner);
      return refusal(
        -32603,
        `The gateway could not seal the continuation's requestState (${
          (error as Error).message
        }); the call ` +
          "was cancelled",
      );
    }
  }

  /**
   * A `subscriptions/listen` request: an event stream carrying its acknowledgement, then each change
   * notification it asked for, until the host closes it (the listen is then cancelled) or the gateway
   * ends it (its closing result is the stream's last event).
   */
  #listen(request: Request, inner: Body, hostId: string | number, tokenHash?: string): Response {
    const id = String(inner.id);
    const encoder = new TextEncoder();
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    const timer: { keepAlive?: ReturnType<typeof setInterval> } = {};
    let open = true;
    const frame = (text: string) => {
      if (!open) return;
      try {
        controller.enqueue(encoder.encode(text));
      } catch {
        // the host went away: the cancel below ends the listen
      }
    };
    const finish = () => {
      if (!open) return;
      open = false;
      clearInterval(timer.keepAlive);
      request.signal.removeEventListener("abort", onGone);
    };
    const stream: ListenStream = {
      hostId,
      tokenHash,
      write: (message) => frame(`event: message\ndata: ${JSON.stringify(message)}\n\n`),
      close: () => {
        finish();
        try {
          controller.close();
        } catch {
          // already closed
        }
      },
    };
    // The host closed the stream: the listen is cancelled (its subscriptions given back).
    const onGone = () => {
      if (!open) return;
      finish();
      this.#streams.delete(id);
      const ended = this.#era.listens.cancel(id);
      for (const own of ended?.deliver ?? []) this.onmessage?.(own);
    };
    const body = new ReadableStream<Uint8Array>({
      start: (c) => {
        controller = c;
      },
      cancel: onGone,
    });
    this.#streams.set(id, stream);
    const era = this.#era.incoming(inner);
    if (era.reply) {
      this.#streams.delete(id);
      open = false;
      return jsonResponse({ ...era.reply, id: hostId });
    }
    request.signal.addEventListener("abort", onGone, { once: true });
    timer.keepAlive = setInterval(() => frame(": keepalive\n\n"), LISTEN_KEEPALIVE_MS);
    Deno.unrefTimer(timer.keepAlive);
    for (const message of era.deliver) this.onmessage?.(message as JSONRPCMessage);
    for (const note of era.notify ?? []) this.#toListen(note);
    return new Response(body, {
      headers: {
        "content-type": "text/event-stream",
        "cache-control": "no-cache, no-transform",
        "x-accel-buffering": "no",
      },
    });
  }
}
