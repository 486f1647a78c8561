/**
 * `subscriptions/listen` (MCP 2026-07-28) on a host connection: the revision's one way for a client to
 * receive change notifications. A listen request names what the host wants (`toolsListChanged`,
 * `promptsListChanged`, `resourcesListChanged`, `resourceSubscriptions`: URIs); the gateway answers at
 * once with `notifications/subscriptions/acknowledged` carrying the part it honors, then sends every
 * matching change notification, each stamped with `_meta["io.modelcontextprotocol/subscriptionId"]` (the
 * listen request's id), until the host cancels the request (`notifications/cancelled`, or over HTTP by
 * closing the stream). The listen request gets a result only when the gateway ends it (shutting down,
 * revocation): `{resultType: "complete", _meta: {subscriptionId, serverInfo}}`.
 *
 * The gateway's server (the SDK's, built for sessions) already produces the 2025 notifications for its
 * host, scoped to the agent; this turns them into the revision's: a list_changed goes to each listen that
 * asked for it, a resource update to each that listed its URI. A URI is subscribed through the gateway's
 * own `resources/subscribe` (so it is routed, scoped and subscribed downstream as a 2025 host's is; an
 * unknown or out-of-scope URI is not honored) and unsubscribed when the last listen naming it ends. So that
 * a change after the acknowledgement is always notified, a listen first has the gateway's server list
 * what it watches once (its list_changed compares with what was listed): the acknowledgement follows the
 * answers. Requests made here carry ids of their own (`mcphub-listen-N`); their answers stay here.
 *
 * @module
 */
import type { JSONRPCMessage } from "./sdk.ts";

/** The `_meta` key that stamps a notification with the listen request it belongs to (2026-07-28). */
export const SUBSCRIPTION_ID_KEY = "io.modelcontextprotocol/subscriptionId";
/** Listens open at once on one connection (per agent over HTTP); more are refused. */
export const MAX_LISTENS = 256;
/** Resource URIs one listen may name. */
export const MAX_LISTEN_URIS = 256;

type Params = Record<string, unknown>;
type Id = string | number;
type Message = { id?: Id; method?: string; params?: Params; result?: Params; error?: unknown };

/** What a listen asks for (the revision's SubscriptionFilter). */
export interface ListenFilter {
  toolsListChanged?: boolean;
  promptsListChanged?: boolean;
  resourcesListChanged?: boolean;
  resourceSubscriptions?: string[];
}

/** The list a filter bit watches, and the change notification it lets through. */
const LISTS = [
  { bit: "toolsListChanged", method: "tools/list", notification: "notifications/tools/list_changed" },
  { bit: "promptsListChanged", method: "prompts/list", notification: "notifications/prompts/list_changed" },
  {
    bit: "resourcesListChanged",
    method: "resources/list",
    notification: "notifications/resources/list_changed",
  },
] as const;

/** One open listen. */
interface Listen {
  id: Id;
  requested: ListenFilter;
  /** Answers awaited before the acknowledgement: internal id -> the URI subscribed (or "" for a list). */
  waiting: Map<string, string>;
  /** URIs whose subscription succeeded. */
  subscribed: string[];
  /** The part honored, once acknowledged. */
  honored?: ListenFilter;
}

/** What the listens of a connection make of a message. */
export interface ListenStep {
  /** Messages for the gateway's server (its own requests). */
  deliver: JSONRPCMessage[];
  /** Messages for the host's listens (acknowledgements, stamped notifications, closing results). */
  notify: JSONRPCMessage[];
  /** An answer to the host's request (a refusal). */
  reply?: JSONRPCMessage;
}

/** True for a `subscriptions/listen` filter the revision allows (`notifications` an object of known shapes). */
function validFilter(value: unknown): value is ListenFilter {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const f = value as Params;
  for (const { bit } of LISTS) if (f[bit] !== undefined && typeof f[bit] !== "boolean") return false;
  const uris = f.resourceSubscriptions;
  return uris === undefined || (Array.isArray(uris) && uris.every((u) => typeof u === "string"));
}

/** A notification stamped with the listen it is sent on. */
function stamp(method: string, params: Params | undefined, id: Id): JSONRPCMessage {
  const meta = (params?._meta ?? {}) as Params;
  return {
    jsonrpc: "2.0",
    method,
    params: { ...params, _meta: { ...meta, [SUBSCRIPTION_ID_KEY]: id } },
  } as JSONRPCMessage;
}

/** The listens of one host connection (or of one agent's requests over HTTP). */
export class HostListens {
  #listens = new Map<Id, Listen>();
  /** Internal request id -> the listen it serves (none: an unsubscribe, or its listen ended) and its URI. */
  #internal = new Map<string, { owner?: Id; uri: string; subscribe: boolean }>();
  /** Live subscriptions per URI (held by acknowledged or acknowledging listens). */
  #uris = new Map<string, number>();
  /** Lists the gateway's server was asked for once (a baseline for its list_changed). */
  #listed = new Set<string>();
  #seq = 0;
  /** The gateway's capabilities and info, once its server opened (acknowledgements wait for them). */
  #server?: { capabilities: Params; info: unknown };

  /** True when `id` is an open listen. */
  has(id: unknown): boolean {
    return (typeof id === "string" || typeof id === "number") && this.#listens.has(id);
  }

  /** The number of open listens. */
  get size(): number {
    return this.#listens.size;
  }

  /** The gateway's server opened: its capabilities bound what is honored; waiting listens are acknowledged. */
  opened(capabilities: Params, info: unknown): JSONRPCMessage[] {
    this.#server = { capabilities, info };
    return [...this.#listens.values()].flatMap((l) => this.#acknowledge(l));
  }

  /** A host's `subscriptions/listen` request. */
  listen(m: Message): ListenStep {
    const refuse = (code: number, message: string): ListenStep => ({
      deliver: [],
      notify: [],
      reply: { jsonrpc: "2.0", id: m.id!, error: { code, message } } as JSONRPCMessage,
    });
    const filter = m.params?.notifications;
    if (!validFilter(filter)) {
      return refuse(
        -32602,
        "Invalid params: subscriptions/listen needs params.notifications, an object with optional booleans " +
          "toolsListChanged, promptsListChanged, resourcesListChanged and resourceSubscriptions, an array of URIs",
      );
    }
    if (this.#listens.has(m.id!)) return refuse(-32600, `A listen with id ${JSON.stringify(m.id)} is open`);
    if (this.#listens.size >= MAX_LISTENS) {
      return refuse(-32603, `Subscription limit reached: ${MAX_LISTENS} listens are open; close one first`);
    }
    const uris = [...new Set(filter.resourceSubscriptions ?? [])];
    if (uris.length > MAX_LISTEN_URIS) {
      return refuse(
        -32602,
        `A listen may name at most ${MAX_LISTEN_URIS} resource URIs (${uris.length} named)`,
      );
    }
    const listen: Listen = { id: m.id!, requested: filter, waiting: new Map(), subscribed: [] };
    this.#listens.set(m.id!, listen);
    const deliver: JSONRPCMessage[] = [];
    for (const { bit, method } of LISTS) {
      if (filter[bit] !== true || this.#listed.has(method) || !this.#offers(bit)) continue;
      this.#listed.add(method);
      deliver.push(this.#request(listen, method, {}, ""));
    }
    for (const uri of uris) deliver.push(this.#request(listen, "resources/subscribe", { uri }, uri));
    return { deliver, notify: this.#acknowledge(listen) };
  }

  /** False when the gateway's server is known not to offer a list's changes (it is not listed for it). */
  #offers(bit: string): boolean {
    if (!this.#server) return true;
    const caps = this.#server.capabilities as Record<string, Params | undefined>;
    const kind = bit === "toolsListChanged"
      ? "tools"
      : bit === "promptsListChanged"
      ? "prompts"
      : "resources";
    return caps[kind]?.listChanged === true;
  }

  #request(listen: Listen | undefined, method: string, params: Params, uri: string): JSONRPCMessage {
    const id = `mcphub-listen-${++this.#seq}`;
    this.#internal.set(id, { owner: listen?.id, uri, subscribe: method === "resources/subscribe" });
    listen?.waiting.set(id, uri);
    return { jsonrpc: "2.0", id, method, params } as JSONRPCMessage;
  }

  /** The acknowledgement, once nothing is awaited (and an empty one ends the listen at once). */
  #acknowledge(listen: Listen): JSONRPCMessage[] {
    if (listen.honored || listen.waiting.size || !this.#server) return [];
    const caps = this.#server.capabilities as Record<string, Params | undefined>;
    const r = listen.requested;
    const honored: ListenFilter = {};
    if (r.toolsListChanged === true && caps.tools?.listChanged) honored.toolsListChanged = true;
    if (r.promptsListChanged === true && caps.prompts?.listChanged) honored.promptsListChanged = true;
    if (r.resourcesListChanged === true && caps.resources?.listChanged) honored.resourcesListChanged = true;
    if (listen.subscribed.length && caps.resources?.subscribe) {
      honored.resourceSubscriptions = listen.subscribed;
    }
    listen.honored = honored;
    const ack = stamp("notifications/subscriptions/acknowledged", { notifications: honored }, listen.id);
    // Nothing to send on it: acknowledged, then ended (as the SDK's HTTP entry does).
    if (!Object.keys(honored).length) return [ack, ...this.#end(listen).notify];
    return [ack];
  }

  /** An answer of the gateway's server: a request made here (kept here), or undefined when not. */
  answered(m: Message): ListenStep | undefined {
    if (typeof m.id !== "string" || !this.#internal.has(m.id)) return undefined;
    const { owner, uri, subscribe } = this.#internal.get(m.id)!;
    this.#internal.delete(m.id);
    const listen = owner === undefined ? undefined : this.#listens.get(owner);
    const step: ListenStep = { deliver: [], notify: [] };
    if (!listen?.waiting.has(m.id)) {
      // Its listen ended while it was asked: a subscription made meanwhile, that no listen holds, is given back.
      if (subscribe && m.error === undefined && !this.#uris.get(uri)) {
        step.deliver.push(this.#request(undefined, "resources/unsubscribe", { uri }, uri));
      }
      return step;
    }
    listen.waiting.delete(m.id);
    if (uri && m.error === undefined) {
      listen.subscribed.push(uri);
      this.#uris.set(uri, (this.#uris.get(uri) ?? 0) + 1);
    }
    step.notify = this.#acknowledge(listen);
    return step;
  }

  /** The host cancelled a listen (or its stream closed): its URIs no other listen holds are unsubscribed. */
  cancel(id: unknown): ListenStep | undefined {
    if (!this.has(id)) return undefined;
    const listen = this.#listens.get(id as Id)!;
    this.#listens.delete(listen.id);
    return { deliver: this.#release(listen), notify: [] };
  }

  #release(listen: Listen): JSONRPCMessage[] {
    // Subscriptions still being made are given back when answered (their answers find no listen).
    listen.waiting.clear();
    const deliver: JSONRPCMessage[] = [];
    for (const uri of listen.subscribed) {
      const left = (this.#uris.get(uri) ?? 1) - 1;
      if (left > 0) {
        this.#uris.set(uri, left);
        continue;
      }
      this.#uris.delete(uri);
      deliver.push(this.#request(undefined, "resources/unsubscribe", { uri }, uri));
    }
    listen.subscribed = [];
    return deliver;
  }

  /** Ends a listen from the gateway's side: its closing result (and unsubscriptions). */
  #end(listen: Listen): ListenStep {
    this.#listens.delete(listen.id);
    const deliver = this.#release(listen);
    const result = {
      jsonrpc: "2.0",
      id: listen.id,
      result: {
        resultType: "complete",
        _meta: {
          [SUBSCRIPTION_ID_KEY]: listen.id,
          ...(this.#server?.info ? { "io.modelcontextprotocol/serverInfo": this.#server.info } : {}),
        },
      },
    } as JSONRPCMessage;
    return { deliver, notify: [result] };
  }

  /** Ends listens (all, or those `which` picks): their closing results, and unsubscriptions to deliver. */
  end(which: (id: Id) => boolean = () => true): ListenStep {
    const step: ListenStep = { deliver: [], notify: [] };
    for (const listen of [...this.#listens.values()]) {
      if (!which(listen.id)) continue;
      const ended = this.#end(listen);
      step.deliver.push(...ended.deliver);
      step.notify.push(...ended.notify);
    }
    return step;
  }

  /** A change notification of the gateway's server: one stamped copy per acknowledged listen asking for it. */
  route(m: Message): JSONRPCMessage[] {
    const list = LISTS.find((l) => l.notification === m.method);
    const uri = m.method === "notifications/resources/updated" ? m.params?.uri : undefined;
    if (!list && typeof uri !== "string") return [];
    const out: JSONRPCMessage[] = [];
    for (const listen of this.#listens.values()) {
      const honored = listen.honored;
      if (!honored) continue;
      const wanted = list
        ? honored[list.bit] === true
        : honored.resourceSubscriptions?.includes(uri as string);
      if (wanted) out.push(stamp(m.method!, m.params, listen.id));
    }
    return out;
  }
}
