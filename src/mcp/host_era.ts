/**
 * The host side of both protocol eras on one connection (the gateway's stdio). Each message is
 * classified: a 2025 `initialize` and everything of a legacy host pass exactly as before. A 2026-07-28
 * host sends no `initialize`: its requests carry the `_meta` envelope (protocol version, client
 * capabilities, client info), and `server/discover` asks what the gateway is. The gateway's server
 * (the SDK's, built for sessions) is then opened with an `initialize` made here from the envelope (its
 * answer is not the host's), so its handlers serve the modern host unchanged; `server/discover` is
 * answered from that opening's result. On the way out, results of a modern request get
 * `resultType: "complete"`, and list and `resources/read` results the cache hints the revision requires
 * where they have none (`ttlMs: 0`, `cacheScope: "private"`: the merged list changes as servers connect
 * and depends on the agent, as what a read may see does); list changes and resource updates reach a
 * modern host only on its `subscriptions/listen` requests, stamped (host_listen.ts), and log
 * notifications not at all (the revision moved them). A downstream server's request in the middle of a
 * modern host's call (sampling, elicitation, roots, relayed by the gateway) is translated, never
 * replayed: the host's request is answered `input_required` with it and an opaque `requestState` while
 * the call stays open; the host's retry (same method, tool and arguments, with `inputResponses`)
 * answers the server's request and receives the call's final answer. Several requests are several
 * rounds; a continuation nobody comes back for within {@linkcode CONTINUATION_MS} fails the server's
 * request and cancels the call. A request outside a call is refused at once.
 *
 * @module
 */
import type { JSONRPCMessage } from "./sdk.ts";
import {
  CLIENT_CAPABILITIES_KEY,
  CLIENT_INFO_KEY,
  inputKeyOf,
  MODERN_VERSION,
  PROTOCOL_VERSION_KEY,
  SERVER_INFO_KEY,
  UNSUPPORTED_VERSION,
  withoutInputKey,
} from "./era_names.ts";
import { ErrorCode } from "./errors.ts";
import { HostListens } from "./host_listen.ts";
import { elicitationMode, elicitationRefusal } from "./elicitation.ts";

/** The 2025 revision the gateway's own `initialize` (made for a modern host) asks for. */
const LEGACY_VERSION = "2025-11-25";
/** Every revision the gateway serves, newest first (server/discover's `supportedVersions`). */
export const SERVED_VERSIONS = [MODERN_VERSION, LEGACY_VERSION, "2025-06-18", "2025-03-26", "2024-11-05"];
/** The id of the `initialize` made for a modern host (a string: hosts' own ids cannot be told apart). */
const OPENING_ID = "mcphub-host-opening";
/** Results that carry the revision's cache hints (SEP-2549: the four lists and resources/read). */
const CACHED = new Set([
  "tools/list",
  "prompts/list",
  "resources/list",
  "resources/templates/list",
  "resources/read",
]);
/** Notifications a modern host still gets (the rest were removed or moved to subscriptions/listen). */
const MODERN_NOTIFICATIONS = new Set(["notifications/progress", "notifications/cancelled"]);

/** Requests during which a server may need the host's input (answered `input_required` then). */
const INPUT_METHODS = new Set(["tools/call", "prompts/get", "resources/read"]);
/** The client capabilities the gateway's server is opened with for a modern host (all it relays). */
const RELAYABLE = { sampling: {}, elicitation: { form: {}, url: {} }, roots: {} };
/** The capability a server-to-client request needs. */
const CAPABILITY_OF: Record<string, string> = {
  "sampling/createMessage": "sampling",
  "elicitation/create": "elicitation",
  "roots/list": "roots",
};
/** How long a continuation waits for the host's retry before its call is cancelled. */
export const CONTINUATION_MS = 10 * 60_000;

/** A modern host's call that may ask for input, and the input it waits for. */
interface OpenCall {
  method: string;
  name: unknown;
  arguments: unknown;
  /** The client capabilities this request's envelope declared. */
  capabilities: Params;
  /**
   * The input responses the host's request carried without a continuation of ours (a 2026-07-28 host
   * answering up front, by a 2026-07-28 server's keys): each answers that server's input request of
   * the same key once, in place of asking the host.
   */
  given?: Params;
  /** A 2026-07-28 server's round whose input requests are still arriving: key -> the request. */
  collecting?: { round: string; of: number; requests: Map<string, Message>; given: number };
  /** The input the call waits for: its state, and the server request each key answers. */
  waiting?: { state: string; requests: Map<string, string | number> };
  timer?: ReturnType<typeof setTimeout>;
}

/**
 * The requests of a round still being collected for `call`, answered with an error (the round cannot
 * be asked of the host: another of its requests was refused); the collection ends.
 */
function unasked(call: OpenCall, reason: string): JSONRPCMessage[] {
  const requests = [...call.collecting?.requests.values() ?? []];
  call.collecting = undefined;
  return requests.map((r) =>
    ({
      jsonrpc: "2.0",
      id: r.id!,
      error: { code: -32601, message: `${r.method}: ${reason}` },
    }) as JSONRPCMessage
  );
}

/** A JSON value with its object keys sorted (arguments compared whatever their key order). */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(
    value,
    (_, v) =>
      v && typeof v === "object" && !Array.isArray(v)
        ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, (v as Params)[k]]))
        : v,
  ) ?? "";
}

type Params = Record<string, unknown>;
type Message = { jsonrpc?: unknown; id?: string | number; method?: string; params?: Params; result?: Params };

/** What to do with a message from the host. */
export interface HostIncoming {
  /** Messages for the gateway's server, in order (the host's own last). */
  deliver: unknown[];
  /** An answer made here, written to the host. */
  reply?: JSONRPCMessage;
  /** Messages for the host's `subscriptions/listen` streams, each stamped with its listen's id. */
  notify?: JSONRPCMessage[];
}

/** What to do with a message of the gateway's server. */
export interface HostOutgoing {
  /** The message to write to the host (undefined: nothing is written). */
  send?: JSONRPCMessage;
  /** Answers made here, written to the host (server/discover's, once the opening answered). */
  also?: JSONRPCMessage[];
  /** Answers made here, handed back to the gateway's server. */
  back?: JSONRPCMessage[];
  /** Requests made here for the gateway's server (a listen's), handed to it in order. */
  deliver?: JSONRPCMessage[];
  /** Messages for the host's `subscriptions/listen` streams, each stamped with its listen's id. */
  notify?: JSONRPCMessage[];
}

/** The eras of one host connection (see the module documentation). */
export class HostEra {
  /** "legacy" after a 2025 `initialize`; "modern" after a request with the envelope. */
  era: "opening" | "legacy" | "modern" = "opening";
  /** The opening made for a modern host: sent (its answer awaited), answered. */
  #opening?: "sent" | "done";
  #initialized = false;
  /** The opening's result (what server/discover answers from). */
  #openingResult?: Params;
  /** server/discover requests waiting for the opening's result. */
  #discovers: (string | number)[] = [];
  /** Methods of the modern host's requests awaiting their answers, by id. */
  #methods = new Map<string | number, string>();
  /** The modern host's calls that may ask for input, by the id the gateway's server knows them by. */
  #calls = new Map<string | number, OpenCall>();
  /** A call's final answer goes to this retry's id (the host's latest request for it). */
  #answerTo = new Map<string | number, string | number>();
  /**
   * Calls the host already has an answer for (refused for a capability its request did not declare, and
   * cancelled): a late answer of the gateway's server for one is dropped, never a second answer.
   */
  #answered = new Set<string | number>();
  /** requestState -> the call it continues. */
  #states = new Map<string, string | number>();
  #inputSeq = 0;
  /** How long a continuation waits for the host's retry. */
  continuationMs = CONTINUATION_MS;
  /** Hands a message to the gateway's server outside a host message (an expired continuation's). */
  inject?: (message: JSONRPCMessage) => void;
  /** The host's `subscriptions/listen` requests (see host_listen.ts). */
  readonly listens = new HostListens();

  /** A message from the host (parsed, not yet checked). */
  incoming(value: unknown): HostIncoming {
    const m = value as Message;
    if (typeof m !== "object" || m === null || typeof m.method !== "string") return { deliver: [value] };
    if (m.method === "initialize") {
      if (this.era === "opening") this.era = "legacy";
      return { deliver: [value] };
    }
    if (m.method === "notifications/cancelled" && this.era === "modern") {
      const ended = this.listens.cancel(m.params?.requestId);
      if (ended) return { deliver: ended.deliver };
      // The gateway's server knows a retried call by its first id.
      const internal = this.#forget(m.params?.requestId);
      if (internal !== m.params?.requestId) {
        return { deliver: [{ ...m, params: { ...m.params, requestId: internal } }] };
      }
    }
    const meta = m.params?._meta as Params | undefined;
    const version = meta?.[PROTOCOL_VERSION_KEY];
    const isRequest = m.id !== undefined;
    if (m.method === "server/discover" && isRequest) {
      if (this.era === "legacy" && version === undefined) return { deliver: [value] };
      if (this.#openingResult) return { deliver: [], reply: this.#discover(m.id!, this.#openingResult) };
      this.#discovers.push(m.id!);
      return { deliver: this.#open(meta, false) };
    }
    if (version === undefined || this.era === "legacy") return { deliver: [value] };
    if (version !== MODERN_VERSION) {
      if (!isRequest) return { deliver: [] };
      return {
        deliver: [],
        reply: {
          jsonrpc: "2.0",
          id: m.id!,
          error: {
            code: UNSUPPORTED_VERSION,
            message: `Unsupported protocol version: ${String(version).slice(0, 64)}`,
            data: { supported: SERVED_VERSIONS, requested: version },
          },
        },
      } as HostIncoming;
    }
    this.era = "modern";
    if (isRequest && m.method === "subscriptions/listen") {
      // Never the gateway's server's (it has no such method): kept here, fed by its notifications.
      const step = this.listens.listen(m);
      if (step.reply) return { deliver: [], reply: step.reply };
      return { deliver: [...this.#open(meta, true), ...step.deliver], notify: step.notify };
    }
    if (isRequest) {
      // An id the host uses again is a new request: nothing of the old one's is dropped for it.
      this.#answered.delete(m.id!);
      const resumed = this.#resume(m);
      if (resumed) return resumed;
      this.#methods.set(m.id!, m.method);
      if (INPUT_METHODS.has(m.method)) {
        const given = m.params?.inputResponses;
        this.#calls.set(m.id!, {
          method: m.method,
          name: m.params?.name,
          arguments: m.params?.arguments,
          capabilities: (meta?.[CLIENT_CAPABILITIES_KEY] ?? {}) as Params,
          ...(given && typeof given === "object" && !Array.isArray(given) ? { given: { ...given } } : {}),
        });
      }
    }
    return { deliver: [...this.#open(meta, true), value] };
  }

  /** The gateway's server opened for a modern host (once), and `initialized` when `initialized`. */
  #open(meta: Params | undefined, initialized: boolean): unknown[] {
    const out: unknown[] = [];
    if (!this.#opening) {
      this.#opening = "sent";
      out.push({
        jsonrpc: "2.0",
        id: OPENING_ID,
        method: "initialize",
        params: {
          protocolVersion: LEGACY_VERSION,
          // Every relayable capability: whether a request's host offers one is its own envelope's to say
          // (checked per call in #inputRequired), not the first request's.
          capabilities: { ...(meta?.[CLIENT_CAPABILITIES_KEY] as Params | undefined), ...RELAYABLE },
          clientInfo: meta?.[CLIENT_INFO_KEY] ?? { name: "2026-07-28 host", version: "unknown" },
        },
      });
    }
    if (initialized && !this.#initialized) {
      this.#initialized = true;
      out.push({ jsonrpc: "2.0", method: "notifications/initialized" });
    }
    return out;
  }

  /** server/discover's answer, from the gateway's opening result. */
  #discover(id: string | number, init: Params): JSONRPCMessage {
    const { logging: _, ...capabilities } = (init.capabilities ?? {}) as Params;
    return {
      jsonrpc: "2.0",
      id,
      result: {
        resultType: "complete",
        supportedVersions: SERVED_VERSIONS,
        capabilities,
        ...(typeof init.instructions === "string" ? { instructions: init.instructions } : {}),
        ttlMs: 0,
        cacheScope: "private",
        _meta: { [SERVER_INFO_KEY]: init.serverInfo },
      },
    } as JSONRPCMessage;
  }

  /**
   * Ends the host's listens (all, or those `which` picks): their closing results (`notify`) and the
   * unsubscriptions for the gateway's server (`deliver`).
   */
  endListens(
    which?: (id: string | number) => boolean,
  ): { deliver: JSONRPCMessage[]; notify: JSONRPCMessage[] } {
    return this.listens.end(which);
  }

  /**
   * The fast path's answer to request `id`, a result relayed as bytes: the id it goes to (a modern
   * host's MRTR retry), and whether the result must get `resultType` (a modern host's request). A
   * result written by the fast path is settled here as {@linkcode HostEra.outgoing} settles one.
   */
  rawAnswer(id: string | number): { id: string | number; modern: boolean; drop?: true } {
    if (this.#answered.delete(id)) return { id, modern: false, drop: true };
    if (this.era !== "modern" || !this.#methods.has(id)) return { id, modern: false };
    return { id: this.#settle(id), modern: true };
  }

  /** A modern request is answered: what is kept for it goes; the id its answer goes to. */
  #settle(id: string | number): string | number {
    this.#methods.delete(id);
    const call = this.#calls.get(id);
    if (call) {
      clearTimeout(call.timer);
      if (call.waiting) this.#states.delete(call.waiting.state);
      this.#calls.delete(id);
    }
    // The answer goes to the request the host is waiting on (the last retry of an MRTR call).
    const hostId = this.#answerTo.get(id) ?? id;
    this.#answerTo.delete(id);
    return hostId;
  }

  /** True while the continuation `state` waits here for the host's retry. */
  waits(state: string): boolean {
    return this.#states.has(state);
  }

  /** The continuation `state` abandoned now (its server request fails, its call is cancelled). */
  drop(state: string): void {
    const internal = this.#states.get(state);
    if (internal !== undefined) this.#abandon(internal);
  }

  /**
   * A message of the gateway's server to the host; `related` is the host request it belongs to (the
   * SDK's `relatedRequestId`), which a server-to-client request needs to become `input_required`.
   */
  outgoing(message: JSONRPCMessage, related?: string | number): HostOutgoing {
    const m = message as Message & { error?: unknown };
    if (m.method === undefined && m.id === OPENING_ID) {
      this.#opening = "done";
      this.#openingResult = m.result ?? {};
      const discovers = this.#discovers.splice(0);
      const result = this.#openingResult;
      const { logging: _, ...capabilities } = (result.capabilities ?? {}) as Params;
      return {
        also: discovers.map((id) => this.#discover(id, result)),
        notify: this.listens.opened(capabilities, result.serverInfo),
      };
    }
    if (this.era !== "modern") return { send: withoutInputKey(message) };
    if (m.method !== undefined) {
      if (m.id !== undefined) return this.#inputRequired(m, related);
      // The rest reach a modern host only on its listens (list_changed, resource updates), stamped.
      return MODERN_NOTIFICATIONS.has(m.method) ? { send: message } : { notify: this.listens.route(m) };
    }
    const own = this.listens.answered(m);
    if (own) return { deliver: own.deliver, notify: own.notify };
    if (m.id !== undefined && this.#answered.delete(m.id)) return {};
    const method = m.id === undefined ? undefined : this.#methods.get(m.id);
    if (method === undefined) return { send: message };
    const hostId = this.#settle(m.id!);
    if (!m.result) return { send: { ...m, id: hostId } as JSONRPCMessage };
    const result: Params = { resultType: "complete", ...m.result };
    if (CACHED.has(method)) {
      result.ttlMs ??= 0;
      result.cacheScope ??= "private";
    }
    return { send: { ...m, id: hostId, result } as JSONRPCMessage };
  }

  /**
   * A server-to-client request (a downstream server's sampling, elicitation or roots, relayed) for a
   * modern host: the host's request it belongs to is answered `input_required` with it, while the call
   * stays open here; the host's retry (same request, `inputResponses`, the `requestState` given) answers
   * it and takes the call's final answer (see #resume). Without a request to belong to (or with one
   * already waiting for a retry) it cannot reach the host and is refused at once.
   */
  #inputRequired(m: Message, related: string | number | undefined): HostOutgoing {
    const call = related === undefined ? undefined : this.#calls.get(related);
    if (!call || call.waiting) {
      return {
        back: [{
          jsonrpc: "2.0",
          id: m.id!,
          error: {
            code: -32601,
            message:
              `${m.method} cannot reach this host: it speaks MCP ${MODERN_VERSION}, where servers send no ` +
              (call
                ? "requests, and this call already waits for the host's input"
                : "requests outside a call"),
          },
        } as JSONRPCMessage],
      };
    }
    const capability = CAPABILITY_OF[m.method!];
    if (capability && !call.capabilities[capability]) {
      // The revision's answer: the host's request needs a capability its envelope did not declare
      // (-32021, naming it). The server's request is refused (as a direct connection to a host without
      // the capability answers) and its call cancelled: the host has its answer.
      const dropped = unasked(call, `the host of this request does not offer ${capability}`);
      const hostId = this.#settle(related!);
      this.#answered.add(related!);
      return {
        send: {
          jsonrpc: "2.0",
          id: hostId,
          error: {
            code: ErrorCode.MissingRequiredClientCapability,
            message: `${m.method} needs the client capability "${capability}", which this request's _meta ` +
              `(${CLIENT_CAPABILITIES_KEY}) does not declare`,
            data: { requiredCapabilities: { [capability]: {} } },
          },
        } as JSONRPCMessage,
        back: [{
          jsonrpc: "2.0",
          id: m.id!,
          error: {
            code: -32601,
            message: `${m.method}: the host of this request does not offer ${capability}`,
          },
        } as JSONRPCMessage, ...dropped],
        deliver: [{
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          params: { requestId: related!, reason: `the host does not offer ${capability}` },
        } as JSONRPCMessage],
      };
    }
    const why = m.method === "elicitation/create"
      ? elicitationRefusal(call.capabilities, m.params)
      : undefined;
    if (why) {
      return {
        back: [{
          jsonrpc: "2.0",
          id: m.id!,
          error: {
            code: -32602,
            message: `elicitation/create (mode "${
              elicitationMode(m.params)
            }") cannot reach this host: ${why}`,
          },
        } as JSONRPCMessage, ...unasked(call, `another input request of its round cannot reach this host`)],
      };
    }
    const mark = inputKeyOf(m.params);
    const request = withoutInputKey(m);
    if (!mark) {
      // A legacy server's request: one round of its own, under a key of the gateway's.
      return this.#ask(related!, call, new Map([[`input-${++this.#inputSeq}`, request]]));
    }
    // A 2026-07-28 server's input request (era.ts): answered from what the host gave up front under its
    // key, or collected with the rest of its round and asked of the host at once, under the server's keys.
    if (call.collecting?.round !== mark.round) {
      call.collecting = { round: mark.round, of: mark.of, requests: new Map(), given: 0 };
    }
    const round = call.collecting;
    const out: HostOutgoing = {};
    const given = call.given?.[mark.key];
    if (given && typeof given === "object" && !Array.isArray(given)) {
      delete call.given![mark.key];
      round.given++;
      out.back = [{ jsonrpc: "2.0", id: m.id!, result: given } as JSONRPCMessage];
    } else {
      // A request the server sent without params goes to the host so.
      round.requests.set(mark.key, mark.bare ? { ...request, params: undefined } : request);
    }
    if (round.requests.size + round.given < round.of) return out;
    call.collecting = undefined;
    if (!round.requests.size) return out;
    return { ...this.#ask(related!, call, round.requests, true), ...out };
  }

  /**
   * The host's request answered `input_required` with `requests` (key -> the server's request), while
   * the call stays open here until the host's retry (see #resume).
   */
  #ask(
    related: string | number,
    call: OpenCall,
    requests: Map<string, Message>,
    fromModern = false,
  ): HostOutgoing {
    const state = crypto.randomUUID();
    call.waiting = { state, requests: new Map([...requests].map(([key, r]) => [key, r.id!])) };
    this.#states.set(state, related);
    // An abandoned continuation: the server's request fails and the call is cancelled downstream.
    call.timer = setTimeout(() => this.#abandon(related), this.continuationMs);
    Deno.unrefTimer(call.timer);
    const inputRequests: Params = {};
    for (const [key, r] of requests) {
      // A legacy server's request gets the params it always got (`{}` when none came).
      inputRequests[key] = r.params === undefined && !fromModern
        ? { method: r.method, params: {} }
        : { method: r.method, ...(r.params === undefined ? {} : { params: r.params }) };
    }
    return {
      send: {
        jsonrpc: "2.0",
        id: this.#answerTo.get(related) ?? related,
        result: { resultType: "input_required", inputRequests, requestState: state },
      } as JSONRPCMessage,
    };
  }

  /**
   * A request the host cancelled gets no answer: nothing is kept for it. Its id may be a retry's (the
   * call is then known by its first id).
   */
  #forget(id: unknown): unknown {
    if (typeof id !== "string" && typeof id !== "number") return id;
    let internal: string | number = id;
    for (const [first, retry] of this.#answerTo) if (retry === id) internal = first;
    this.#methods.delete(internal);
    this.#answerTo.delete(internal);
    const call = this.#calls.get(internal);
    if (call) {
      clearTimeout(call.timer);
      if (call.waiting) this.#states.delete(call.waiting.state);
      this.#calls.delete(internal);
    }
    return internal;
  }

  /** A continuation nobody came back for: its server request fails, its call is cancelled. */
  #abandon(internal: string | number): void {
    const call = this.#calls.get(internal);
    if (!call?.waiting) return;
    this.#states.delete(call.waiting.state);
    const serverRequestIds = [...call.waiting.requests.values()];
    call.waiting = undefined;
    this.#calls.delete(internal);
    this.#answerTo.delete(internal);
    for (const id of serverRequestIds) {
      this.inject?.({
        jsonrpc: "2.0",
        id,
        error: {
          code: -32001,
          message: "The host did not come back with the input (the continuation expired)",
        },
      } as JSONRPCMessage);
    }
    this.inject?.({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: internal, reason: "the host did not come back with the input it was asked for" },
    } as JSONRPCMessage);
  }

  /**
   * A retry carrying a `requestState` of ours: checked against the request it continues (same method,
   * tool and arguments), its input handed to the waiting server request, and the call's final answer
   * sent to this retry. undefined when the state is not ours (the request goes on as any other).
   */
  #resume(m: Message): HostIncoming | undefined {
    const state = m.params?.requestState;
    if (typeof state !== "string") return undefined;
    const internal = this.#states.get(state);
    const call = internal === undefined ? undefined : this.#calls.get(internal);
    const refuse = (message: string): HostIncoming => ({
      deliver: [],
      reply: { jsonrpc: "2.0", id: m.id!, error: { code: -32602, message } } as JSONRPCMessage,
    });
    if (!call?.waiting) {
      return refuse(
        "Unknown requestState: the call it continues is not open on this gateway (it ended, expired, or runs " +
          "on another replica)",
      );
    }
    if (
      m.method !== call.method || canonicalJson(m.params?.name) !== canonicalJson(call.name) ||
      canonicalJson(m.params?.arguments) !== canonicalJson(call.arguments)
    ) {
      return refuse("requestState belongs to another request (its method, name or arguments differ)");
    }
    const { requests } = call.waiting;
    this.#states.delete(state);
    clearTimeout(call.timer);
    call.waiting = undefined;
    this.#answerTo.set(internal!, m.id!);
    const responses = m.params?.inputResponses as Params | undefined;
    return {
      deliver: [...requests].map(([key, serverRequestId]) => {
        const response = responses?.[key];
        return response === undefined
          ? {
            jsonrpc: "2.0",
            id: serverRequestId,
            error: { code: -32602, message: `The host's retry carried no input response "${key}"` },
          }
          : { jsonrpc: "2.0", id: serverRequestId, result: response };
      }),
    };
  }
}
