/**
 * The protocol era of one downstream connection, decided by its opening. Opened without a probe (the
 * store says the server spoke 2025 last time), the gateway's client sends the 2025 `initialize`, so a
 * legacy server sees exactly what it saw before. A server that serves only 2026-07-28 refuses that
 * `initialize` with -32022 (unsupported protocol version) naming the revisions it supports, and keeps the
 * connection open for a modern opening: then the connection becomes modern in place. `server/discover`
 * is sent (with the per-request `_meta` envelope), and its answer is handed to the client as the answer
 * to its `initialize`; from then on every request and notification carries the envelope, and what the
 * revision removed (`notifications/initialized`, `ping`, `logging/setLevel`,
 * `notifications/roots/list_changed`) is answered or dropped here. The client above (the SDK's, the raw
 * fast path) stays one client for both eras.
 *
 * Probe first: a connection made with `probe` (the server's era is not known yet, or it spoke
 * 2026-07-28 when last connected: see the era cache in the store) sends `server/discover` in place of the
 * client's `initialize`, so a server serving both revisions is spoken to in 2026-07-28 and a modern-only
 * one costs no refused opening. An error answer (a legacy server: -32601 before `initialize`), a probe
 * that cannot be sent or one left unanswered in time (`probeFailed`) falls back to the `initialize` as
 * the client sent it, on the same connection (a server that exits on the probe is the downstream's to
 * start again: see downstream.ts): a legacy server costs one round trip, once.
 *
 * Multi round-trip requests (MRTR): a modern server that needs sampling, elicitation or roots answers
 * a request with `resultType: "input_required"` and its `inputRequests`. Each reaches the client as an
 * ordinary server-to-client request (which the gateway relays to its host as it relays a legacy
 * server's); once every one is answered, the request is sent again with the answers as
 * `inputResponses` and the server's opaque `requestState`, under the same id, so the client sees one
 * request and its final answer. A request the client answers with an error ends the call with it.
 *
 * Change notifications (`subscriptions/listen`, with `listen: true`): a modern server sends list_changed
 * and resource updates only on a listen request. Once the client is opened, the era listens for the
 * list changes the server's capabilities offer; a client's `resources/subscribe` becomes a listen naming
 * that URI (answered `{}` when the server acknowledges it, an error when it does not honor it), and its
 * `resources/unsubscribe` cancels that listen. What arrives on them reaches the client as the 2025
 * notifications it knows (the listen's stamp removed); acknowledgements and listen ids stay here.
 * With `renew` (over HTTP, where each listen is a stream that can drop), the transport calls
 * {@linkcode Era.relisten} for a listen whose stream ended: it is sent again under a new id (also after the
 * server ended it gracefully; not after a refusal), and once that one is acknowledged the client gets
 * the notifications of what it watches (list_changed, resources/updated), as changes made while no
 * listen was open are not told otherwise.
 *
 * @module
 */
import type { JSONRPCMessage } from "./sdk.ts";
import {
  CLIENT_CAPABILITIES_KEY,
  CLIENT_INFO_KEY,
  INPUT_KEY,
  type InputKey,
  MODERN_VERSION,
  PROTOCOL_VERSION_KEY,
  SERVER_INFO_KEY,
  UNSUPPORTED_VERSION,
} from "./era_names.ts";

export * from "./era_names.ts";

/** The id of the `server/discover` the era sends (ids of the gateway's own; the SDK's are numbers). */
const DISCOVER_ID = "mcphub-discover";
/** The `_meta` key stamping a notification with its listen (2026-07-28). */
const SUBSCRIPTION_KEY = "io.modelcontextprotocol/subscriptionId";

type Params = Record<string, unknown>;
type Message = JSONRPCMessage & { id?: string | number; method?: string; params?: Params };

/**
 * What sees every message a downstream connection writes and reads, at the wire (after the era made
 * it): the gateway's CLIENT spans of the requests no caller traced (telemetry's `WireTrace`).
 */
export interface WireTap {
  /** A message about to be written; the message to write (a request with its `traceparent`). */
  out<M>(message: M): M;
  /** A message as read, before the era takes it. */
  in(message: unknown): void;
  /** A message from {@linkcode WireTap.out} could not be written (`error`). */
  unsent(message: unknown, error: unknown): void;
  /** The connection ended. */
  close(): void;
}

/** The W3C trace context keys of a `params._meta` (SEP-414), carried from a request to what stands for it. */
const TRACE_KEYS = ["traceparent", "tracestate", "baggage"];

/** What to do with an outgoing message. */
export interface Outgoing {
  /** The message to write (undefined: nothing is written). */
  send?: JSONRPCMessage;
  /** An answer made here, handed to the client as if the server sent it. */
  reply?: JSONRPCMessage;
}

/** What to do with an incoming message. */
export interface Incoming {
  /** The message to hand to the client (undefined: nothing is handed). */
  deliver?: JSONRPCMessage;
  /** Requests to hand to the client, in order (an MRTR round's input requests). */
  requests?: JSONRPCMessage[];
  /** Notifications to hand to the client (what a renewed listen may have missed). */
  notifications?: JSONRPCMessage[];
  /** A message to write to the server. */
  send?: JSONRPCMessage;
}

/** Rounds of one request before it is ended with an error (a server asking forever). */
export const MAX_INPUT_ROUNDS = 16;

/** One MRTR round of a request: the input requests handed to the client, and its answers so far. */
interface Round {
  /** The request as sent (with its envelope). */
  origin: Message;
  requestState?: string;
  /** Input request key -> the id it was handed to the client under. */
  waiting: Map<string, string>;
  responses: Params;
  rounds: number;
}

/** A server's refusal of the 2025 opening that names no revision the gateway speaks. */
export interface Refusal {
  supported: string[];
  requested?: string;
}

/** Options of {@linkcode Era}. */
export interface EraOptions {
  /** Open with `server/discover` (the server spoke 2026-07-28 last time). */
  probe?: boolean;
  /** Listen to a modern server's changes (`subscriptions/listen`); a transport that can hold the stream. */
  listen?: boolean;
  /** Listens are renewed when their stream ends (HTTP: the transport calls {@linkcode Era.relisten}). */
  renew?: boolean;
}

/** A connection's era: "probing" while a `server/discover` sent first awaits its answer. */
export type EraName = "opening" | "probing" | "legacy" | "modern";

/** The era of one connection (see the module documentation). */
export class Era {
  #era: EraName = "opening";
  /** Send `server/discover` first (in place of the client's `initialize`). */
  readonly #probe: boolean;
  #listen: boolean;
  /** The modern server's capabilities (from server/discover). */
  #capabilities: Params = {};
  #listenSeq = 0;
  /** Listens open on the server: id -> the URI it subscribes (undefined for the list changes). */
  #listens = new Map<string, string | undefined>();
  /** URI -> its listen's id. */
  #byUri = new Map<string, string>();
  /** Listens awaiting their acknowledgement for a client's `resources/subscribe` (its id). */
  #subscribing = new Map<string, string | number>();
  readonly #renew: boolean;
  /** Renewed listens awaiting their acknowledgement. */
  #renewed = new Set<string>();
  /** Listens the server ended with their closing result (renewable): id -> the URI (undefined: lists). */
  #ended = new Map<string, string | undefined>();
  /** The client's `initialize`, while its answer is awaited. */
  #initialize?: { id: string | number; params: Params };
  #meta: Params = {};
  /** Set when the server refused the 2025 opening and names no revision spoken here. */
  refusal?: Refusal;
  /** Requests sent in the modern era, by id, until their final answer (MRTR retries them). */
  #sent = new Map<string | number, { message: Message; rounds: number }>();
  /** Open MRTR rounds by the id of the input request handed to the client. */
  #inputs = new Map<string, Round>();
  #inputSeq = 0;
  #roundSeq = 0;

  constructor(options: EraOptions = {}) {
    this.#probe = options.probe ?? false;
    this.#listen = options.listen ?? false;
    this.#renew = options.renew ?? false;
  }

  /** "legacy" or "modern" once decided; "opening" or "probing" before. */
  get era(): EraName {
    return this.#era;
  }

  /** True when the connection opened with a `server/discover` probe (whatever its answer was). */
  get probed(): boolean {
    return this.#probe;
  }

  /**
   * The probe could not be sent or was not answered in time: the client's `initialize` to send now
   * (the legacy opening, on the same connection); undefined when no probe awaits its answer.
   */
  probeFailed(): JSONRPCMessage | undefined {
    if (this.#era !== "probing") return undefined;
    this.#era = "opening";
    const init = this.#initialize!;
    return { jsonrpc: "2.0", id: init.id, method: "initialize", params: init.params } as JSONRPCMessage;
  }

  /** The envelope of every modern message, from the client's `initialize`. */
  #envelope(params: Params): void {
    this.#meta = {
      [PROTOCOL_VERSION_KEY]: MODERN_VERSION,
      [CLIENT_CAPABILITIES_KEY]: params.capabilities ?? {},
      ...(params.clientInfo ? { [CLIENT_INFO_KEY]: params.clientInfo } : {}),
    };
  }

  #discover(): JSONRPCMessage {
    return { jsonrpc: "2.0", id: DISCOVER_ID, method: "server/discover", params: { _meta: this.#meta } };
  }

  /** `_meta` for a message of the gateway's own (the raw fast path): the envelope added when modern. */
  meta(meta: Params | undefined): Params | undefined {
    return this.#era === "modern" ? { ...this.#meta, ...meta } : withoutCapabilities(meta);
  }

  /** An outgoing message of the client. */
  outgoing(message: JSONRPCMessage): Outgoing {
    const m = message as Message;
    if (this.#era === "opening" && m.method === "initialize" && m.id !== undefined) {
      this.#initialize = { id: m.id, params: m.params ?? {} };
      if (!this.#probe) return { send: message };
      this.#era = "probing";
      this.#envelope(this.#initialize.params);
      return { send: this.#discover() };
    }
    if (this.#era !== "modern") {
      // A 2026-07-28 host's capabilities (the call path's, for a modern server) are no 2025 request's.
      if (m.method !== "tools/call" || !m.params?._meta) return { send: message };
      return {
        send: { ...m, params: { ...m.params, _meta: withoutCapabilities(m.params._meta as Params) } },
      };
    }
    if (m.method === undefined) return this.#answered(m as Message & { result?: Params; error?: unknown });
    switch (m.method) {
      case "notifications/cancelled": {
        // A cancelled request gets no answer: nothing is kept for it (its input rounds end too).
        const id = m.params?.requestId as string | number | undefined;
        if (id !== undefined && this.#sent.delete(id)) {
          for (const [inputId, round] of this.#inputs) {
            if (round.origin.id === id) this.#inputs.delete(inputId);
          }
        }
        break;
      }
      case "notifications/initialized":
        return this.#listen ? this.#listenForLists() : {};
      case "notifications/roots/list_changed":
        return {};
      case "resources/subscribe":
      case "resources/unsubscribe":
        if (this.#listen && m.id !== undefined) return this.#subscription(m);
        break;
      case "ping":
      case "logging/setLevel":
        // Removed by the revision: answered as a server that has nothing to do answers.
        return m.id === undefined ? {} : { reply: { jsonrpc: "2.0", id: m.id, result: {} } };
    }
    const params = m.params ?? {};
    const send = {
      ...m,
      params: { ...params, _meta: { ...this.#meta, ...(params._meta as Params | undefined) } },
    } as Message;
    if (m.id !== undefined) this.#sent.set(m.id, { message: send, rounds: 0 });
    return { send };
  }

  /**
   * A listen request of the era's own (ids `mcphub-listen-N`, which the SDK never issues); `cause`: the
   * `_meta` of the client's request it stands for, whose trace context it carries.
   */
  #listenRequest(notifications: Params, uri?: string, cause?: Params): Message {
    const id = `mcphub-listen-${++this.#listenSeq}`;
    this.#listens.set(id, uri);
    let meta = this.#meta;
    for (const key of TRACE_KEYS) if (cause?.[key] !== undefined) meta = { ...meta, [key]: cause[key] };
    return {
      jsonrpc: "2.0",
      id,
      method: "subscriptions/listen",
      params: { _meta: meta, notifications },
    } as Message;
  }

  /** The listen for the list changes the server offers (none when it offers none). */
  #listenForLists(): Outgoing {
    const caps = this.#capabilities as Record<string, Params | undefined>;
    const filter: Params = {};
    if (caps.tools?.listChanged) filter.toolsListChanged = true;
    if (caps.prompts?.listChanged) filter.promptsListChanged = true;
    if (caps.resources?.listChanged) filter.resourcesListChanged = true;
    return Object.keys(filter).length ? { send: this.#listenRequest(filter) } : {};
  }

  /** A client's `resources/subscribe` (a listen naming the URI) or `resources/unsubscribe` (its cancel). */
  #subscription(m: Message): Outgoing {
    const uri = typeof m.params?.uri === "string" ? m.params.uri : "";
    const open = this.#byUri.get(uri);
    if (m.method === "resources/subscribe") {
      // Subscribing twice is one subscription (as a 2025 server keeps it).
      if (open !== undefined && !this.#subscribing.has(open)) {
        return { reply: { jsonrpc: "2.0", id: m.id!, result: {} } as JSONRPCMessage };
      }
      const listen = this.#listenRequest(
        { resourceSubscriptions: [uri] },
        uri,
        m.params?._meta as Params | undefined,
      );
      this.#byUri.set(uri, String(listen.id));
      this.#subscribing.set(String(listen.id), m.id!);
      return { send: listen as JSONRPCMessage };
    }
    const reply = { jsonrpc: "2.0", id: m.id!, result: {} } as JSONRPCMessage;
    if (open === undefined) return { reply };
    return { reply, send: this.#cancelListen(open) };
  }

  /** The cancellation of one of the era's listens (forgotten here at once). */
  #cancelListen(id: string): JSONRPCMessage {
    const uri = this.#listens.get(id);
    this.#listens.delete(id);
    this.#subscribing.delete(id);
    this.#renewed.delete(id);
    if (uri !== undefined && this.#byUri.get(uri) === id) this.#byUri.delete(uri);
    return {
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: id, _meta: this.#meta },
    } as JSONRPCMessage;
  }

  /** A message of one of the era's listens, or undefined when it is not one. */
  #listened(
    m: Message & { result?: Params; error?: { code: number; message: string } },
  ): Incoming | undefined {
    if (m.method === undefined) {
      // A listen's answer: the server ended it (its closing result) or refused it.
      const id = typeof m.id === "string" ? m.id : undefined;
      if (id === undefined || !this.#listens.has(id)) {
        // The answer of a listen given up here (cancelled, or renewed under another id): nobody awaits it.
        return id?.startsWith("mcphub-listen-") ? {} : undefined;
      }
      const client = this.#subscribing.get(id);
      const uri = this.#listens.get(id);
      const renewed = this.#renewed.has(id);
      this.#cancelListen(id);
      // Ended by the server (not refused): renewable once its stream is gone, unless it was a renewal's
      // first answer (a server that ends each listen at once is not asked again and again).
      if (this.#renew && m.error === undefined && client === undefined && !renewed) this.#ended.set(id, uri);
      if (client === undefined) return {};
      return {
        deliver: {
          jsonrpc: "2.0",
          id: client,
          error: m.error ?? { code: -32603, message: "The server ended the resource subscription at once" },
        } as JSONRPCMessage,
      };
    }
    const meta = m.params?._meta as Params | undefined;
    const stamp = meta?.[SUBSCRIPTION_KEY];
    if (typeof stamp !== "string") return undefined;
    // A listen cancelled here may still have had something on the way: it goes nowhere.
    if (!this.#listens.has(stamp)) return stamp.startsWith("mcphub-listen-") ? {} : undefined;
    if (m.method === "notifications/subscriptions/acknowledged") {
      const client = this.#subscribing.get(stamp);
      if (client === undefined) return this.#renewed.delete(stamp) ? this.#missed(stamp, m.params) : {};
      this.#subscribing.delete(stamp);
      this.#renewed.delete(stamp);
      const uri = this.#listens.get(stamp)!;
      const honored = (m.params?.notifications as Params | undefined)?.resourceSubscriptions;
      if (Array.isArray(honored) && honored.includes(uri)) {
        return { deliver: { jsonrpc: "2.0", id: client, result: {} } as JSONRPCMessage };
      }
      // As a 2025 server without resource subscriptions answers resources/subscribe.
      return {
        send: this.#cancelListen(stamp),
        deliver: {
          jsonrpc: "2.0",
          id: client,
          error: {
            code: -32601,
            message: `The server does not offer a subscription to ${uri.slice(0, 200)}`,
          },
        } as JSONRPCMessage,
      };
    }
    // A change: the notification the client knows, without the listen's stamp.
    const { [SUBSCRIPTION_KEY]: _, ...rest } = meta!;
    const params: Params = { ...m.params };
    if (Object.keys(rest).length) params._meta = rest;
    else delete params._meta;
    return { deliver: { ...m, params } as JSONRPCMessage };
  }

  /**
   * What a renewed listen's acknowledgement means to the client: a notification for each part it
   * watches that the server honors again (changes made while no listen was open were not told), and
   * the listen's cancellation when it honors none of it.
   */
  #missed(id: string, params: Params | undefined): Incoming {
    const honored = (params?.notifications ?? {}) as Params;
    const uri = this.#listens.get(id);
    const note = (method: string, extra: Params = {}) =>
      ({ jsonrpc: "2.0", method, params: extra }) as JSONRPCMessage;
    const notifications: JSONRPCMessage[] = [];
    if (uri !== undefined) {
      const uris = honored.resourceSubscriptions;
      if (Array.isArray(uris) && uris.includes(uri)) {
        notifications.push(note("notifications/resources/updated", { uri }));
      }
    } else {
      if (honored.toolsListChanged === true) notifications.push(note("notifications/tools/list_changed"));
      if (honored.promptsListChanged === true) notifications.push(note("notifications/prompts/list_changed"));
      if (honored.resourcesListChanged === true) {
        notifications.push(note("notifications/resources/list_changed"));
      }
    }
    return notifications.length ? { notifications } : { send: this.#cancelListen(id) };
  }

  /**
   * The listen `id`'s stream ended (with `renew`): the same listen again under a new id, to send; undefined
   * when there is nothing to renew (it was cancelled here, refused, or is not one of the era's).
   */
  relisten(id: string): JSONRPCMessage | undefined {
    if (this.#era !== "modern") return undefined;
    let uri: string | undefined;
    if (this.#listens.has(id)) uri = this.#listens.get(id);
    else if (this.#ended.has(id)) uri = this.#ended.get(id);
    else return undefined;
    const client = this.#subscribing.get(id);
    this.#ended.delete(id);
    this.#listens.delete(id);
    this.#subscribing.delete(id);
    this.#renewed.delete(id);
    let listen: Message | undefined;
    if (uri === undefined) {
      listen = this.#listenForLists().send as Message | undefined;
    } else {
      if (this.#byUri.has(uri) && this.#byUri.get(uri) !== id) return undefined; // subscribed anew since
      listen = this.#listenRequest({ resourceSubscriptions: [uri] }, uri);
      this.#byUri.set(uri, String(listen.id));
    }
    if (!listen) return undefined;
    const renewed = String(listen.id);
    // A client's subscribe still awaiting its answer waits for the new listen's acknowledgement.
    if (client !== undefined) this.#subscribing.set(renewed, client);
    else this.#renewed.add(renewed);
    return listen as JSONRPCMessage;
  }

  /**
   * The listen `id` could not be opened (its POST failed or was refused without a JSON-RPC answer): it is
   * forgotten, and a client's `resources/subscribe` awaiting it gets `error`.
   */
  listenFailed(id: string, error: { code: number; message: string }): Incoming {
    const client = this.#subscribing.get(id);
    if (!this.#listens.has(id)) return {};
    this.#cancelListen(id);
    if (client === undefined) return {};
    return { deliver: { jsonrpc: "2.0", id: client, error } as JSONRPCMessage };
  }

  /** True when `id` is a listen the era has open (awaiting its acknowledgement or acknowledged). */
  listening(id: string): boolean {
    return this.#listens.has(id);
  }

  /** The client's answer to a request: one of an MRTR round's, or else a plain answer to the server. */
  #answered(m: Message & { result?: Params; error?: unknown }): Outgoing {
    const round = m.id === undefined ? undefined : this.#inputs.get(String(m.id));
    if (!round) return { send: m };
    this.#inputs.delete(String(m.id));
    const origin = round.origin;
    if (m.error !== undefined) {
      // The input cannot be had: the request ends with the client's error, as a legacy call would.
      for (const id of round.waiting.values()) this.#inputs.delete(id);
      this.#sent.delete(origin.id!);
      return { reply: { jsonrpc: "2.0", id: origin.id!, error: m.error } as JSONRPCMessage };
    }
    for (const [key, id] of round.waiting) {
      if (id !== String(m.id)) continue;
      round.waiting.delete(key);
      round.responses[key] = m.result ?? {};
    }
    if (round.waiting.size) return {};
    const params = { ...origin.params, inputResponses: round.responses } as Params;
    if (round.requestState !== undefined) params.requestState = round.requestState;
    else delete params.requestState;
    const retry = { ...origin, params } as Message;
    this.#sent.set(origin.id!, { message: retry, rounds: round.rounds });
    return { send: retry as JSONRPCMessage };
  }

  /** A modern server's answer to a request: final (handed on), or an MRTR round's input requests. */
  #response(m: Message & { result?: Params; error?: unknown }): Incoming {
    const sent = this.#sent.get(m.id!);
    if (!sent) return { deliver: m };
    const result = m.result;
    if (result?.resultType !== "input_required") {
      this.#sent.delete(m.id!);
      return { deliver: m };
    }
    const requests = result.inputRequests as
      | Record<string, { method?: unknown; params?: unknown }>
      | undefined;
    const keys = requests && typeof requests === "object" ? Object.keys(requests) : [];
    const fail = (message: string): Incoming => {
      this.#sent.delete(m.id!);
      return {
        deliver: { jsonrpc: "2.0", id: m.id!, error: { code: -32603, message } } as JSONRPCMessage,
      };
    };
    if (sent.rounds >= MAX_INPUT_ROUNDS) {
      return fail(
        `the server asked for input ${sent.rounds} times for one request (at most ${MAX_INPUT_ROUNDS})`,
      );
    }
    if (!keys.length) {
      if (typeof result.requestState !== "string") {
        return fail("input_required without inputRequests or requestState");
      }
      // Nothing to ask: the request goes again with the state alone.
      const retry = {
        ...sent.message,
        params: { ...sent.message.params, requestState: result.requestState },
      };
      this.#sent.set(m.id!, { message: retry as Message, rounds: sent.rounds + 1 });
      return { send: retry as JSONRPCMessage };
    }
    const round: Round = {
      origin: sent.message,
      requestState: typeof result.requestState === "string" ? result.requestState : undefined,
      waiting: new Map(),
      responses: {},
      rounds: sent.rounds + 1,
    };
    const out: JSONRPCMessage[] = [];
    const roundId = `mcphub-round-${++this.#roundSeq}`;
    for (const key of keys) {
      const request = requests![key]!;
      if (typeof request?.method !== "string") return fail(`input request "${key}" has no method`);
      const id = `mcphub-input-${++this.#inputSeq}`;
      round.waiting.set(key, id);
      this.#inputs.set(id, round);
      let params = (request.params ?? {}) as Params;
      // A 2026-07-28 URL-mode elicitation has no elicitationId, which 2025-11-25 requires: one of ours.
      if (
        request.method === "elicitation/create" && params.mode === "url" &&
        typeof params.elicitationId !== "string"
      ) {
        params = { ...params, elicitationId: id };
      }
      // The server's key and round travel with the request, for a 2026-07-28 host (host_era.ts).
      const mark: InputKey = {
        key,
        round: roundId,
        of: keys.length,
        ...(request.params === undefined ? { bare: true } : {}),
      };
      params = { ...params, _meta: { ...(params._meta as Params | undefined), [INPUT_KEY]: mark } };
      out.push({ jsonrpc: "2.0", id, method: request.method, params } as JSONRPCMessage);
    }
    return { requests: out };
  }

  /** An incoming message from the server. */
  incoming(message: JSONRPCMessage): Incoming {
    const m = message as Message & { result?: Params; error?: { code: number; data?: unknown } };
    if (this.#era === "probing" && m.id === DISCOVER_ID && m.method === undefined) {
      const versions = m.result?.supportedVersions;
      if (m.error || !Array.isArray(versions) || !versions.includes(MODERN_VERSION)) {
        // Not (or no longer) a modern server: the legacy opening, as the client sent it. A result that
        // offers no 2026-07-28 is no discover answer the gateway can use (a server answering any method
        // alike; the v2 client's auto mode takes it for legacy too).
        return { send: this.probeFailed() };
      }
      this.#era = "modern";
    }
    if (this.#era === "modern" && m.id === DISCOVER_ID && m.method === undefined) {
      if (!this.#initialize) return {};
      const init = this.#initialize!;
      this.#initialize = undefined;
      if (m.error) return { deliver: { jsonrpc: "2.0", id: init.id, error: m.error } as JSONRPCMessage };
      this.#capabilities = (m.result?.capabilities ?? {}) as Params;
      return {
        deliver: { jsonrpc: "2.0", id: init.id, result: initializeResult(m.result ?? {}, init.params) },
      };
    }
    if (this.#era === "modern" && this.#listenSeq) {
      const listened = this.#listened(
        m as Message & { result?: Params; error?: { code: number; message: string } },
      );
      if (listened) return listened;
    }
    // A late answer to a probe given up on (the legacy opening went after it): nobody awaits it.
    if (this.#era !== "modern" && m.id === DISCOVER_ID && m.method === undefined) return {};
    if (this.#era === "modern" && m.method === undefined && m.id !== undefined) return this.#response(m);
    if (this.#era !== "opening" || !this.#initialize || m.id !== this.#initialize.id || m.method) {
      return { deliver: message };
    }
    // The answer to the client's initialize: it decides the era.
    const data = m.error?.data as { supported?: unknown; requested?: unknown } | undefined;
    const supported = Array.isArray(data?.supported)
      ? data.supported.filter((v) => typeof v === "string")
      : [];
    if (m.error?.code !== UNSUPPORTED_VERSION || !supported.includes(MODERN_VERSION)) {
      this.#era = "legacy";
      this.#initialize = undefined;
      if (m.error?.code === UNSUPPORTED_VERSION) {
        this.refusal = {
          supported,
          requested: typeof data?.requested === "string" ? data.requested : undefined,
        };
      }
      return { deliver: message };
    }
    this.#era = "modern";
    this.#envelope(this.#initialize.params);
    return { send: this.#discover() };
  }
}

/** `_meta` without the 2026-07-28 client capabilities key (undefined when nothing else was in it). */
function withoutCapabilities(meta: Params | undefined): Params | undefined {
  if (!meta || !(CLIENT_CAPABILITIES_KEY in meta)) return meta;
  const { [CLIENT_CAPABILITIES_KEY]: _, ...rest } = meta;
  return Object.keys(rest).length ? rest : undefined;
}

/**
 * A `server/discover` result as the answer to a 2025 `initialize`: the version the client asked for
 * (the connection's era is the gateway's business, not the client's), the server's capabilities, info
 * and instructions.
 */
function initializeResult(discover: Params, initialize: Params): Params & { protocolVersion: string } {
  const meta = discover._meta as Params | undefined;
  const serverInfo = discover.serverInfo ?? meta?.[SERVER_INFO_KEY] ?? { name: "unknown", version: "0" };
  return {
    protocolVersion: String(initialize.protocolVersion),
    capabilities: discover.capabilities ?? {},
    serverInfo,
    ...(typeof discover.instructions === "string" ? { instructions: discover.instructions } : {}),
  };
}
