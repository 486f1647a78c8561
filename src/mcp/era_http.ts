/**
 * Both eras on a remote (HTTP) downstream connection: {@linkcode EraTransport} puts an {@linkcode Era}
 * between the gateway's client and the SDK's Streamable HTTP client transport (as the stdio client end
 * does in itself), and {@linkcode eraFetch} is that transport's `fetch`, doing what the revision asks of
 * HTTP that the 2025 transport does not know: a modern POST (its body carries the `_meta` envelope) gets
 * the `MCP-Protocol-Version` of its envelope and the `Mcp-Method` / `Mcp-Name` routing headers (the
 * latter as the v2 SDK encodes it: a value that is not plain visible ASCII as `=?base64?…?=`); and the
 * JSON-RPC error a 2026-07-28 server answers with HTTP 400 (its refusal of the 2025 `initialize`
 * (-32022), a header mismatch (-32020), …) reaches the client as the answer it is, not as a failed POST.
 * A `tools/call` also carries the `Mcp-Param-*` headers its tool's `x-mcp-header` declarations ask for
 * ({@linkcode ToolParams}, from the server's `tools/list` answers, whose tools with invalid declarations
 * are left out); a call the server refuses with -32020 is sent once more after the list is read again
 * (the revision's SHOULD, as the v2 client does: the server ran nothing). A probe (`server/discover`
 * sent first) answered `202 Accepted` is an error answer at once, and one left unanswered for `probeMs`
 * gives way to the legacy opening, on the same connection (as on stdio).
 * A modern server keeps no session: the transport sends no `Mcp-Session-Id` because none is given, and
 * opens no GET stream (the client's `notifications/initialized`, which would open it, becomes the era's
 * listen).
 *
 * Change notifications (`subscriptions/listen`): each listen is a POST whose answer is an event stream
 * that stays open ({@linkcode ListenStreams} watches it from the `fetch`). The era's listens (its list
 * changes, and a `resources/subscribe` made a listen) are sent without holding up the client; a listen
 * is cancelled by closing its stream (the revision's cancellation over HTTP: no `notifications/cancelled`
 * is posted); a stream that ends (dropped, or ended by the server) is listened to again after a bounded
 * backoff ({@linkcode LISTEN_RETRY_MS} doubling up to {@linkcode LISTEN_RETRY_MAX_MS}; back to the start
 * after a stream that stayed open {@linkcode LISTEN_STEADY_MS}), and so is a renewal whose POST fails
 * without an HTTP refusal (the server restarting); a listen refused (a JSON-RPC error, or an HTTP 4xx)
 * is not asked again. Nothing is left behind when the transport closes: the timers are cleared and the
 * streams end with the SDK transport's requests.
 *
 * @module
 */
import type { JSONRPCMessage, Transport } from "./sdk.ts";
import { Era, MODERN_VERSION, PROTOCOL_VERSION_KEY, UNSUPPORTED_VERSION, type WireTap } from "./era.ts";
import { headerValue, type ParamDeclaration, paramHeaders, scanParamHeaders } from "./param_headers.ts";
import { httpStatusOf } from "./errors.ts";

export { headerValue };

type Params = Record<string, unknown>;

/** Which body field `Mcp-Name` mirrors, per method (the revision's table, as the v2 SDK has it). */
const NAME_SOURCE: Record<string, string> = {
  "tools/call": "name",
  "prompts/get": "name",
  "resources/read": "uri",
  "tasks/get": "taskId",
  "tasks/update": "taskId",
  "tasks/cancel": "taskId",
};

/** The error code of headers that disagree with the body (2026-07-28). */
const HEADER_MISMATCH = -32020;

/** The first wait before a listen whose stream ended is sent again. */
export const LISTEN_RETRY_MS = 500;
/** The longest wait between two attempts to listen again. */
export const LISTEN_RETRY_MAX_MS = 30_000;
/** A stream that stayed open this long was steady: the next wait starts again from the first. */
export const LISTEN_STEADY_MS = 30_000;

/** The era's own listen ids (`mcphub-listen-N`). */
function isListenId(id: unknown): id is string {
  return typeof id === "string" && id.startsWith("mcphub-listen-");
}

/**
 * The open `subscriptions/listen` streams of one connection, watched from its `fetch`
 * ({@linkcode eraFetch}) for {@linkcode EraTransport}: each listen's response body is handed on through a
 * stream that says when it ended, and that the transport can close (the listen's cancellation).
 */
export class ListenStreams {
  /** Called when a listen's stream ended by itself (`livedMs`: how long it was open). */
  onended?: (id: string, livedMs: number) => void;
  #open = new Map<string, () => void>();
  /** Listens closed before their stream arrived: closed as soon as it does. */
  #stopped = new Set<string>();

  /** The number of listen streams open. */
  get size(): number {
    return this.#open.size;
  }

  /** `body`, the response stream of listen `id`, watched: its end is told to `onended`. */
  watch(id: string, body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
    const reader = body.getReader();
    const opened = Date.now();
    let done = false;
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    const end = (told: boolean) => {
      if (done) return;
      done = true;
      if (this.#open.get(id) === stop) this.#open.delete(id);
      try {
        controller.close();
      } catch {
        // closed already (the reader went away)
      }
      if (told) this.onended?.(id, Date.now() - opened);
    };
    const stop = () => {
      end(false);
      reader.cancel().catch(() => {});
    };
    const watched = new ReadableStream<Uint8Array>({
      start: (c) => {
        controller = c;
      },
      pull: async (c) => {
        try {
          const { value, done: over } = await reader.read();
          if (over) end(true);
          else if (!done) c.enqueue(value);
        } catch {
          // Dropped (the connection, or the transport's own abort when it closes): ended all the same.
          end(true);
        }
      },
      cancel: () => {
        // The SDK transport stopped reading: the stream is gone for the listen too.
        end(true);
        reader.cancel().catch(() => {});
      },
    });
    this.#open.set(id, stop);
    if (this.#stopped.delete(id)) stop();
    return watched;
  }

  /** Closes listen `id`'s stream (now, or as soon as it arrives): its cancellation over HTTP. */
  stop(id: string): void {
    const stop = this.#open.get(id);
    if (stop) stop();
    else this.#stopped.add(id);
  }

  /** The listen `id` will have no stream (its POST failed): nothing to close later. */
  forget(id: string): void {
    this.#stopped.delete(id);
  }

  /** Closes every stream (the connection closes). */
  stopAll(): void {
    for (const stop of [...this.#open.values()]) stop();
    this.#stopped.clear();
  }
}

/**
 * The `x-mcp-header` declarations of a modern HTTP server's tools, by tool name, from its `tools/list`
 * answers (see param_headers.ts); shared by the connection's {@linkcode eraFetch} (which sends the
 * `Mcp-Param-*` headers) and {@linkcode EraTransport} (which reads the lists).
 */
export class ToolParams {
  #byName = new Map<string, readonly ParamDeclaration[]>();

  /** The `Mcp-Param-*` headers of a call of tool `name` with `args` (none for a tool not listed). */
  headers(name: string, args: unknown): Record<string, string> {
    const declarations = this.#byName.get(name);
    return declarations ? paramHeaders(declarations, args) : {};
  }

  /**
   * Reads one page of a `tools/list` result (`first`: the page asked without a cursor, which starts the
   * list afresh) and returns it without the tools whose declarations are invalid (a client on HTTP
   * must leave them out), with each one's name and reason.
   */
  page(result: Params, first: boolean): { result: Params; excluded: string[] } {
    if (first) this.#byName.clear();
    const tools = result.tools;
    if (!Array.isArray(tools)) return { result, excluded: [] };
    const kept: unknown[] = [];
    const excluded: string[] = [];
    for (const tool of tools) {
      const t = tool as { name?: unknown; inputSchema?: unknown } | null;
      if (typeof t?.name !== "string") {
        kept.push(tool);
        continue;
      }
      const scan = scanParamHeaders(t.inputSchema);
      if (!scan.valid) {
        excluded.push(`tool "${t.name}" left out: invalid x-mcp-header declaration (${scan.reason})`);
        this.#byName.delete(t.name);
        continue;
      }
      if (scan.declarations.length) this.#byName.set(t.name, scan.declarations);
      else this.#byName.delete(t.name);
      kept.push(tool);
    }
    return { result: excluded.length ? { ...result, tools: kept } : result, excluded };
  }
}

/** The JSON-RPC message a POST body is, when it is one (not a batch). */
function bodyMessage(body: unknown): Params | undefined {
  if (typeof body !== "string" || !body.startsWith("{")) return undefined;
  try {
    const value = JSON.parse(body);
    return value && typeof value === "object" && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The protocol version a message's `_meta` envelope names, if any. */
function envelopeVersion(message: Params): string | undefined {
  const meta = (message.params as Params | undefined)?._meta as Params | undefined;
  const version = meta?.[PROTOCOL_VERSION_KEY];
  return typeof version === "string" ? version : undefined;
}

/**
 * The `fetch` of a remote downstream connection that may speak 2026-07-28 (see the module
 * documentation); `base` is the `fetch` it wraps.
 */
export function eraFetch(base: typeof fetch, params?: ToolParams, listens?: ListenStreams): typeof fetch {
  return async (input, init) => {
    const message = init?.method === "POST" ? bodyMessage(init.body) : undefined;
    const version = message && envelopeVersion(message);
    let headers = init?.headers;
    if (message && version !== undefined && typeof message.method === "string") {
      const set = new Headers(init!.headers);
      set.set("mcp-protocol-version", version);
      if (message.id !== undefined) {
        set.set("mcp-method", message.method);
        const field = Object.hasOwn(NAME_SOURCE, message.method) ? NAME_SOURCE[message.method] : undefined;
        const name = field && (message.params as Params | undefined)?.[field];
        if (typeof name === "string") set.set("mcp-name", headerValue(name));
        if (message.method === "tools/call" && params && typeof name === "string") {
          const args = (message.params as Params | undefined)?.arguments;
          for (const [header, value] of Object.entries(params.headers(name, args))) set.set(header, value);
        }
      }
      headers = set;
    }
    const response = await base(input, headers === init?.headers ? init : { ...init, headers });
    if (
      listens && message?.method === "subscriptions/listen" && isListenId(message.id) && response.ok &&
      response.body && (response.headers.get("content-type") ?? "").includes("text/event-stream")
    ) {
      return new Response(listens.watch(message.id, response.body), {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
    }
    // A request is never answered with 202: a server that takes the probe for a notification is no
    // modern server, and answering for it at once spares waiting for an answer that cannot come.
    if (response.status === 202 && message?.method === "server/discover" && message.id !== undefined) {
      const error = {
        code: -32601,
        message: "server/discover was answered with 202 Accepted, not an answer",
      };
      return new Response(JSON.stringify({ jsonrpc: "2.0", id: message.id, error }), {
        status: 200,
        headers: { "content-type": "application/json" },
      });
    }
    // A modern request's error answer, or a modern server's refusal of the 2025 opening, comes with
    // HTTP 400: it is the answer to the request (401/403 stay the auth flow's).
    const answerable = message?.id !== undefined &&
      (version === MODERN_VERSION || message.method === "initialize");
    if (
      !answerable || response.ok || response.status < 400 || response.status >= 500 ||
      response.status === 401 || response.status === 403 ||
      !(response.headers.get("content-type") ?? "").includes("application/json")
    ) {
      return response;
    }
    const text = await response.clone().text();
    const answer = bodyMessage(text);
    const error = answer?.error as { code?: unknown } | undefined;
    if (!answer || answer.id !== message!.id || typeof error?.code !== "number") return response;
    if (message!.method === "initialize" && error.code !== UNSUPPORTED_VERSION) return response;
    return new Response(text, { status: 200, headers: { "content-type": "application/json" } });
  };
}

/**
 * Puts `tap` on a transport without an era (the legacy HTTP+SSE client transport): what it sends passes
 * through `tap.out`, what it receives through `tap.in` (before a handler set earlier, e.g. the screen of
 * tool lists, and the client's), and its close ends the tap. Patched on the instance, as the client sets
 * its handlers on it.
 */
export function tapTransport(transport: Transport, tap: WireTap): void {
  const send = transport.send.bind(transport);
  transport.send = async (message, options) => {
    const sent = tap.out(message);
    try {
      await send(sent, options);
    } catch (error) {
      tap.unsent(sent, error);
      throw error;
    }
  };
  wrapHandler(transport, "onmessage", (next) => (message, extra) => {
    tap.in(message);
    next(message, extra);
  });
  wrapHandler(transport, "onclose", (next) => () => {
    tap.close();
    next();
  });
}

/** Wraps each handler set on `transport[key]` from now on, keeping a setter defined before (composed). */
function wrapHandler<K extends "onmessage" | "onclose">(
  transport: Transport,
  key: K,
  wrap: (next: NonNullable<Transport[K]>) => NonNullable<Transport[K]>,
): void {
  const before = Object.getOwnPropertyDescriptor(transport, key);
  let value = before && !before.set ? before.value as Transport[K] : undefined;
  Object.defineProperty(transport, key, {
    configurable: true,
    enumerable: true,
    get: () => before?.get ? before.get.call(transport) : value,
    set: (next: Transport[K]) => {
      const wrapped = next && wrap(next as NonNullable<Transport[K]>);
      if (before?.set) before.set.call(transport, wrapped);
      else value = wrapped;
    },
  });
}

/**
 * A client transport with the connection's {@linkcode Era} between the client and `inner` (see the
 * module documentation). A probe (`server/discover` sent first) that fails to send falls back to the
 * legacy opening at once.
 */
export class EraTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  readonly era: Era;
  /** Sees what is written and read (the gateway's CLIENT spans); set before the client connects. */
  tap?: WireTap;
  readonly #inner: Transport;
  readonly #params?: ToolParams;
  readonly #warn: (line: string) => void;
  /** The client's `tools/list` requests awaiting their answer: id -> asked without a cursor. */
  #lists = new Map<string | number, boolean>();
  /** Modern `tools/call` requests awaiting their answer: id -> as last sent, and whether sent again. */
  #calls = new Map<string | number, { message: Params; again: boolean }>();
  /** The list read again for a refused call: its own request id -> the call's id. */
  #relists = new Map<string, string | number>();
  #relistSeq = 0;

  readonly #probeMs: number;
  #probeTimer?: ReturnType<typeof setTimeout>;
  readonly #listens?: ListenStreams;
  /** Renewed listens: id -> how many times its listen was sent again in a row (the backoff's step). */
  #attempts = new Map<string, number>();
  /** The waits before listens are sent again. */
  #timers = new Set<ReturnType<typeof setTimeout>>();
  #closed = false;

  /**
   * `params`: the connection's {@linkcode ToolParams} (the same as its {@linkcode eraFetch}'s); `warn`:
   * where a tool left out of a list is said; `probeMs`: how long a probe may go unanswered before the
   * legacy opening goes after it (a late answer is dropped by the era); `listens`: the connection's
   * {@linkcode ListenStreams} (the same as its {@linkcode eraFetch}'s), for an era made with `listen` and
   * `renew`.
   */
  constructor(
    inner: Transport,
    era: Era = new Era(),
    params?: ToolParams,
    warn?: (line: string) => void,
    probeMs = 15_000,
    listens?: ListenStreams,
  ) {
    this.#inner = inner;
    this.era = era;
    this.#params = params;
    this.#warn = warn ?? (() => {});
    this.#probeMs = probeMs;
    this.#listens = listens;
    if (listens) listens.onended = (id, livedMs) => this.#streamEnded(id, livedMs);
  }

  get sessionId(): string | undefined {
    return this.#inner.sessionId;
  }

  setProtocolVersion(version: string): void {
    this.#inner.setProtocolVersion?.(version);
  }

  start(): Promise<void> {
    this.#inner.onmessage = (message) => this.#incoming(message);
    this.#inner.onclose = () => {
      this.tap?.close();
      this.onclose?.();
    };
    this.#inner.onerror = (error) => this.onerror?.(error);
    return this.#inner.start();
  }

  #incoming(message: JSONRPCMessage): void {
    this.tap?.in(message);
    if (this.#params && this.era.era === "modern" && this.#toolParams(message as Params)) return;
    const out = this.era.incoming(message);
    if (this.era.era !== "probing") clearTimeout(this.#probeTimer);
    if (out.send) this.#send(out.send).catch((error) => this.onerror?.(error as Error));
    for (const request of out.requests ?? []) this.onmessage?.(request);
    if (out.deliver) this.onmessage?.(out.deliver);
    for (const notification of out.notifications ?? []) this.onmessage?.(notification);
  }

  /** Listen `id`'s stream ended by itself: the era's listen is sent again after the backoff's wait. */
  #streamEnded(id: string, livedMs: number): void {
    if (this.#closed) return;
    const step = livedMs >= LISTEN_STEADY_MS ? 0 : this.#attempts.get(id) ?? 0;
    this.#attempts.delete(id);
    const wait = Math.min(LISTEN_RETRY_MS * 2 ** step, LISTEN_RETRY_MAX_MS);
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      if (this.#closed) return;
      const again = this.era.relisten(id);
      if (!again) return;
      const renewed = String((again as Params).id);
      this.#attempts.set(renewed, step + 1);
      this.#warn(`its listen for changes (${id}) ended; listening again (${renewed})`);
      this.#sendListen(again, renewed);
    }, wait);
    this.#timers.add(timer);
  }

  /**
   * Sends the era's listen `id` without waiting for its stream (nobody awaits it but the era). A POST
   * that fails is a refusal (HTTP 4xx, or a first listen: the listen is given up; a client's subscribe
   * waiting for it gets an error), or else, for a renewal, a server that is away: tried again later.
   */
  #sendListen(message: JSONRPCMessage, id: string): void {
    this.#inner.send(message).catch((error: unknown) => {
      this.#listens?.forget(id);
      if (this.#closed) return;
      const status = httpStatusOf(error);
      const refused = status !== undefined && status >= 400 && status < 500;
      if (!refused && this.#attempts.has(id)) {
        this.#streamEnded(id, 0);
        return;
      }
      this.#attempts.delete(id);
      const reason = (error as Error)?.message ?? String(error);
      this.#warn(`its listen for changes (${id}) failed, not listened to: ${reason.slice(0, 300)}`);
      const out = this.era.listenFailed(id, {
        code: -32603,
        message: `The server's subscriptions/listen failed: ${reason.slice(0, 300)}`,
      });
      if (out.deliver) this.onmessage?.(out.deliver);
    });
  }

  /**
   * What the tool parameters take of a modern server's message (true: nothing more to do with it): a
   * `tools/list` page is read (and its invalid tools left out), a call refused with -32020 is held
   * while the list is read again, then sent once more.
   */
  #toolParams(m: Params): boolean {
    if (m.method !== undefined || (typeof m.id !== "string" && typeof m.id !== "number")) return false;
    const id = m.id;
    const relisted = typeof id === "string" ? this.#relists.get(id) : undefined;
    if (relisted !== undefined) {
      this.#relists.delete(id as string);
      const result = m.result as Params | undefined;
      if (result) this.#readPage(result, !(id as string).includes("+"));
      const cursor = result?.nextCursor;
      if (typeof cursor === "string" && this.#calls.has(relisted)) this.#relist(relisted, cursor);
      else this.#sendAgain(relisted);
      return true;
    }
    const first = this.#lists.get(id);
    if (first !== undefined) {
      this.#lists.delete(id);
      if (m.result && typeof m.result === "object") m.result = this.#readPage(m.result as Params, first);
      return false;
    }
    const call = this.#calls.get(id);
    if (!call) return false;
    const error = m.error as { code?: unknown } | undefined;
    if (error?.code === HEADER_MISMATCH && !call.again) {
      call.again = true;
      this.#relist(id);
      return true;
    }
    // An input_required round keeps the call open (the era sends it again under the same id).
    if ((m.result as Params | undefined)?.resultType !== "input_required") this.#calls.delete(id);
    return false;
  }

  #readPage(result: Params, first: boolean): Params {
    const page = this.#params!.page(result, first);
    for (const line of page.excluded) this.#warn(line);
    return page.result;
  }

  /** Asks the server's tool list (a page after `cursor`) for the refused call `callId`. */
  #relist(callId: string | number, cursor?: string): void {
    const id = `mcphub-tools-${++this.#relistSeq}${cursor === undefined ? "" : "+"}`;
    this.#relists.set(id, callId);
    const params: Params = { ...(cursor === undefined ? {} : { cursor }), _meta: this.era.meta({}) };
    this.#send({ jsonrpc: "2.0", id, method: "tools/list", params } as JSONRPCMessage)
      .catch(() => this.#sendAgain(callId));
  }

  /** The refused call, sent once more as it was last sent (unless the client cancelled it meanwhile). */
  #sendAgain(callId: string | number): void {
    const call = this.#calls.get(callId);
    if (!call) return;
    this.#send(call.message as JSONRPCMessage).catch((error) => this.onerror?.(error as Error));
  }

  /** Sends to the server; a probe that cannot be sent gives way to the legacy opening. */
  async #send(message: JSONRPCMessage): Promise<void> {
    const m = message as Params;
    if (this.#listens && isListenId(m.id) && m.method === "subscriptions/listen") {
      this.#sendListen(message, m.id);
      return;
    }
    const cancelled = (m.params as Params | undefined)?.requestId;
    if (this.#listens && m.method === "notifications/cancelled" && isListenId(cancelled)) {
      // Over HTTP a listen is cancelled by closing its stream (nothing is posted).
      this.#attempts.delete(cancelled);
      this.#listens.stop(cancelled);
      return;
    }
    if (this.#params && this.era.era === "modern" && m.method === "tools/call" && m.id !== undefined) {
      const id = m.id as string | number;
      this.#calls.set(id, { message: m, again: this.#calls.get(id)?.again ?? false });
    }
    const sent = this.tap ? this.tap.out(message) : message;
    try {
      await this.#inner.send(sent);
    } catch (error) {
      this.tap?.unsent(sent, error);
      const opening = this.era.probeFailed();
      if (!opening) throw error;
      await this.#inner.send(this.tap ? this.tap.out(opening) : opening);
    }
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const m = message as Params;
    if (this.#params && this.era.era === "modern" && m.method === "tools/list" && m.id !== undefined) {
      this.#lists.set(m.id as string | number, (m.params as Params | undefined)?.cursor === undefined);
    }
    if (m.method === "notifications/cancelled") {
      this.#calls.delete((m.params as Params | undefined)?.requestId as string | number);
    }
    const out = this.era.outgoing(message);
    if (out.reply) {
      const reply = out.reply;
      queueMicrotask(() => this.onmessage?.(reply));
    }
    if (this.era.era === "probing" && this.#probeTimer === undefined) {
      this.#probeTimer = setTimeout(() => {
        const opening = this.era.probeFailed();
        if (opening) {
          this.#inner.send(this.tap ? this.tap.out(opening) : opening)
            .catch((error) => this.onerror?.(error as Error));
        }
      }, this.#probeMs);
    }
    if (out.send) await this.#send(out.send);
  }

  close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#probeTimer);
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    this.#attempts.clear();
    this.#listens?.stopAll();
    return this.#inner.close();
  }
}
