/**
 * The relay between one hub's downstream sessions and its upstream sessions (issue 40: moved out of
 * passthrough.ts): the client capabilities each downstream session declares, and the routing of what the
 * servers send to the host side: server-to-client requests (sampling, elicitation, roots, bounded per
 * server), log messages (with the level sent to the servers) and resource updates.
 *
 * @module
 */
import type { Hub } from "../hub/hub.ts";
import { elicitationMode, elicitationRefusal } from "../mcp/light.ts";
import { ErrorCode, McpError, relayRequestHandler, ResultSchema } from "../mcp/sdk.ts";
import type {
  Client,
  ClientCapabilities,
  LoggingLevel,
  RelayedMethod,
  RequestHandlerExtra,
  Result,
  ServerNotification,
  ServerRequest,
} from "../mcp/sdk.ts";
import type { Passthrough } from "./passthrough.ts";
import type { ServerOperation } from "../telemetry/mod.ts";

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;
type Params = Record<string, unknown>;

/** The client capabilities a downstream session declares: those of the host that the gateway relays. */
export function relayedCapabilities(host: ClientCapabilities | undefined): ClientCapabilities {
  const out: ClientCapabilities = {};
  if (host?.sampling) out.sampling = host.sampling;
  if (host?.elicitation) out.elicitation = host.elicitation;
  if (host?.roots) out.roots = host.roots;
  return out;
}

/** The MCP logging levels, least severe first. */
const LEVELS: readonly LoggingLevel[] = [
  "debug",
  "info",
  "notice",
  "warning",
  "error",
  "critical",
  "alert",
  "emergency",
];

/** A logging level's rank: 0 for the least severe, past the last for an unknown one. */
export function severity(level: unknown): number {
  const at = LEVELS.indexOf(level as LoggingLevel);
  return at < 0 ? LEVELS.length : at;
}

/** Every client capability the gateway can relay: what shared downstream sessions declare. */
export const RELAYED_CAPABILITIES: ClientCapabilities = {
  sampling: {},
  elicitation: { form: {}, url: {} },
  roots: { listChanged: true },
};

/** Options of {@linkcode SessionRelay}. */
export interface SessionRelayOptions {
  /**
   * Many upstream sessions over the same downstream sessions (HTTP): declare every relayable capability
   * downstream and route each request to its session. false = one host, whose capabilities are declared.
   */
  shared: boolean;
  log: (line: string) => void;
}

/**
 * The downstream side of every upstream session of one hub: it declares the client capabilities of
 * each new downstream session and routes what the servers send. A server-to-client request goes to the
 * session whose call caused it when that is certain (see #target), and to none otherwise; log messages
 * go to every session that sees the server (each filtered by its own level; the servers get the most
 * verbose level any session asked for; while calls run on the server, only to the sessions making them);
 * resource updates go to the sessions that subscribed.
 */
/**
 * A server's requests to the host (sampling, elicitation, roots) relayed at once by default; more are refused
 * (`listen_limits.relay_in_flight`).
 */
export const RELAY_IN_FLIGHT = 8;
/**
 * A server's requests to the host relayed per {@linkcode RELAY_WINDOW_MS} by default; more are refused
 * (`listen_limits.relay_requests`).
 */
export const RELAY_PER_WINDOW = 64;
/** `listen_limits.relay_window` by default. */
export const RELAY_WINDOW_MS = 60_000;
/** URL-mode elicitations remembered (by server and id) to route their completion; the oldest go first. */
export const REMEMBERED_ELICITATIONS = 1024;

export class SessionRelay {
  /** Per server: its requests to the host in flight and in the current window (issue 41). */
  #relayed = new Map<string, { inFlight: number; windowStart: number; count: number; refused: number }>();
  #hub: Hub;
  #options: SessionRelayOptions;
  #sessions = new Set<Passthrough>();
  /** Sessions subscribed per `SERVER\nURI` (downstream URI). */
  #subscribers = new Map<string, Set<Passthrough>>();
  /** The level the servers were last sent; per client, whether it got it. */
  #level?: LoggingLevel;
  #levelSent = new WeakMap<Client, LoggingLevel>();
  #seq = 0;
  /** The session each relayed URL-mode elicitation went to, per `SERVER\nELICITATION-ID`. */
  #elicitations = new Map<string, Passthrough>();

  constructor(hub: Hub, options: SessionRelayOptions) {
    this.#hub = hub;
    this.#options = options;
    hub.configureSessions((name, client) => this.#configure(name, client));
    // A session connected after logging/setLevel gets the level too.
    hub.onChange(() => {
      if (!this.#level) return;
      for (const d of this.#hub.downstreams) {
        if (d.client && this.#levelSent.get(d.client) !== this.#level) void this.#sendLevel(d.client);
      }
    });
  }

  /** True when many upstream sessions share the downstream ones. */
  get shared(): boolean {
    return this.#options.shared;
  }

  /** A number that orders calls across sessions (the latest related call wins). */
  nextSeq(): number {
    return ++this.#seq;
  }

  /** Adds an upstream session; returns the function that removes it (and its subscriptions, level). */
  attach(session: Passthrough): () => void {
    this.#sessions.add(session);
    return () => {
      if (!this.#sessions.delete(session)) return;
      for (const [key, set] of this.#subscribers) {
        if (!set.delete(session) || set.size) continue;
        this.#subscribers.delete(key);
        const at = key.indexOf("\n");
        const client = this.#hub.downstream(key.slice(0, at))?.client;
        client?.unsubscribeResource({ uri: key.slice(at + 1) }).catch(() => {});
      }
      void this.setLevel();
    };
  }

  /** What a new downstream session declares: the host's capabilities (one host), or all relayable ones. */
  #capabilities(): ClientCapabilities {
    if (this.#options.shared) return RELAYED_CAPABILITIES;
    const [first] = this.#sessions;
    return relayedCapabilities(first?.hostCapabilities());
  }

  /** A new downstream session: declares the capabilities and installs the relays. */
  #configure(name: string, client: Client): void {
    const caps = this.#capabilities();
    client.registerCapabilities(caps);
    // Relayed as sent, answered as the host answered (no SDK model in between drops a key).
    const relay = (method: RelayedMethod, capability: keyof ClientCapabilities) =>
      relayRequestHandler(
        client,
        method,
        (params, extra) => this.#toHost(name, method, capability, params, extra.signal, extra.requestId),
      );
    if (caps.sampling) relay("sampling/createMessage", "sampling");
    if (caps.elicitation) relay("elicitation/create", "elicitation");
    if (caps.roots) relay("roots/list", "roots");
    client.setNotificationHandler("notifications/message", (n) => {
      for (const s of this.#logReaders(name)) s.logMessage(name, n.params);
    });
    client.setNotificationHandler("notifications/resources/updated", (n) => {
      // One host gets what the server sends, as directly; shared sessions only what they subscribed to.
      const subscribed = this.#subscribers.get(`${name}\n${n.params.uri}`);
      for (const s of this.#sessions) {
        if (s.sees(name) && (!this.#options.shared || subscribed?.has(s))) s.resourceUpdated(name, n.params);
      }
    });
    client.setNotificationHandler("notifications/elicitation/complete", (n) => {
      this.#elicitationComplete(name, n.params);
    });
    client.setNotificationHandler("notifications/resources/list_changed", () => {
      for (const s of this.#sessions) if (s.sees(name)) s.resourceListChanged();
    });
    client.setNotificationHandler("notifications/prompts/list_changed", () => {
      for (const s of this.#sessions) if (s.sees(name)) s.promptListChanged(name);
    });
  }

  /**
   * The sessions a log message of server `name` goes to: those with a call running on it (a message
   * sent while a session's call runs is that call's, and no other session's to read), or with none
   * running, every session that uses the server (its own messages: start-up, roots, subscriptions).
   */
  #logReaders(name: string): Passthrough[] {
    const using = [...this.#sessions].filter((s) => s.sees(name));
    const calling = using.filter((s) => s.latestCall(name));
    return calling.length ? calling : using;
  }

  /**
   * The session a request of server `name` belongs to. MCP does not tie a server's request to the call
   * that caused it (stdio carries no relation), so it is the one session with a call running on that
   * server, or with none running, the one session that uses it; otherwise why none can be chosen.
   */
  #target(name: string): { session: Passthrough; related?: Extra } | string {
    const calling = [...this.#sessions].filter((s) => s.latestCall(name));
    if (calling.length === 1) return { session: calling[0]!, related: calling[0]!.latestCall(name)!.extra };
    if (calling.length > 1) return `calls of ${calling.length} sessions are running on server "${name}"`;
    const using = [...this.#sessions].filter((s) => s.sees(name));
    if (using.length === 1 || (!this.#options.shared && using.length)) return { session: using.at(-1)! };
    return using.length
      ? `no call is running on server "${name}" and ${using.length} sessions use it`
      : `no session uses server "${name}"`;
  }

  /** A server-to-client request relayed to its host, as part of the call that caused it when one runs. */
  async #toHost(
    name: string,
    method: string,
    capability: keyof ClientCapabilities,
    params: Params | undefined,
    signal: AbortSignal,
    requestId?: string | number,
  ): Promise<Result> {
    // Tracing: a SERVER span for the request as the gateway received it, under the server's traceparent,
    // else the CLIENT span of the call it is part of (see Telemetry.relayed).
    const telemetry = this.#hub.telemetry;
    let op: ServerOperation | undefined;
    if (telemetry?.tracing) {
      const target = this.#target(name);
      const caller = typeof target !== "string" && target.related
        ? target.session.operationOf(target.related)
        : undefined;
      op = telemetry.relayed({
        method,
        server: name,
        requestId,
        transport: this.#hub.downstream(name)?.config.url === undefined ? "pipe" : "tcp",
        meta: params?._meta,
        cause: caller?.openTo(name),
      });
    }
    try {
      const result = await this.#limited(name, method, capability, params, signal, op);
      op?.end();
      return result;
    } catch (error) {
      op?.end(relayFailure(error));
      throw error;
    }
  }

  /** A server's request to the host, within the server's bounds of requests in flight and per window. */
  async #limited(
    name: string,
    method: string,
    capability: keyof ClientCapabilities,
    params: Params | undefined,
    signal: AbortSignal,
    op: ServerOperation | undefined,
  ): Promise<Result> {
    // Bounded per server: one server cannot flood the host (or tie up its user) with requests. The bounds
    // in effect are the config's (`listen_limits.relay_*`), as a reload left them.
    const limits = this.#hub.config.listenLimits;
    let use = this.#relayed.get(name);
    if (!use) this.#relayed.set(name, use = { inFlight: 0, windowStart: Date.now(), count: 0, refused: 0 });
    const now = Date.now();
    if (now - use.windowStart >= limits.relayWindowMs) {
      if (use.refused > 1) {
        this.#options.log(`server "${name}": ${use.refused} requests to the host refused in that window`);
      }
      Object.assign(use, { windowStart: now, count: 0, refused: 0 });
    }
    const why = use.inFlight >= limits.relayInFlight
      ? `${use.inFlight} requests to the host in flight, the most relayed at once ` +
        `(listen_limits.relay_in_flight: ${limits.relayInFlight})`
      : use.count >= limits.relayRequests
      ? `sent ${use.count} requests to the host in ${formatWindow(limits.relayWindowMs)}, the most relayed ` +
        `(listen_limits.relay_requests: ${limits.relayRequests} per relay_window)`
      : undefined;
    if (why) {
      if (use.refused++ === 0) {
        this.#options.log(`server "${name}": requests to the host refused: it has ${why}`);
      }
      throw new McpError(
        ErrorCode.InternalError,
        `${method} refused: server "${name}" has ${why}; retry later`,
      );
    }
    use.inFlight++;
    use.count++;
    try {
      return await this.#relayToHost(name, method, capability, params, signal, op);
    } finally {
      use.inFlight--;
    }
  }

  async #relayToHost(
    name: string,
    method: string,
    capability: keyof ClientCapabilities,
    params: Params | undefined,
    signal: AbortSignal,
    op?: ServerOperation,
  ): Promise<Result> {
    const target = this.#target(name);
    if (typeof target === "string") {
      // Never a guess: another session's host must not see this request.
      throw new McpError(
        ErrorCode.InternalError,
        `${method} not relayed: ${target}, and MCP does not say which one asked; it is sent to none ` +
          "(a session's requests are relayed while its calls are the only ones running on the server)",
      );
    }
    // As a direct connection to a host without the capability answers: method not found.
    if (!target.session.hostCapabilities()?.[capability]) {
      throw new McpError(
        ErrorCode.MethodNotFound,
        `${method}: the host of this session does not offer ${capability}`,
      );
    }
    if (method === "elicitation/create") {
      // A mode the host did not declare is refused here, by name, as its own SDK would refuse it.
      const why = elicitationRefusal(target.session.hostCapabilities() as Params | undefined, params);
      if (why) {
        throw new McpError(
          ErrorCode.InvalidParams,
          `elicitation/create (mode "${elicitationMode(params)}") not relayed: ${why}`,
        );
      }
      const id = params?.elicitationId;
      if (elicitationMode(params) === "url" && typeof id === "string") {
        this.#elicitations.set(`${name}\n${id}`, target.session);
        if (this.#elicitations.size > REMEMBERED_ELICITATIONS) {
          this.#elicitations.delete(this.#elicitations.keys().next().value!);
        }
      }
    }
    const telemetry = op && this.#hub.telemetry;
    if (!telemetry) return await target.session.requestHost(method, params, signal, target.related);
    // The request to the host is the gateway's: a CLIENT span, whose traceparent the host gets.
    const toHost = telemetry.client(op, { method, server: name, durations: false });
    const meta = toHost.meta ? { ...(params?._meta as Params | undefined), ...toHost.meta } : undefined;
    try {
      const result = await target.session.requestHost(
        method,
        meta ? { ...params, _meta: meta } : params,
        signal,
        target.related,
      );
      toHost.end();
      return result;
    } catch (error) {
      toHost.end(relayFailure(error));
      throw error;
    }
  }

  /**
   * A server's `notifications/elicitation/complete`: to the session its URL-mode elicitation was relayed
   * to; for one the gateway did not relay (named in a -32042 error), to the session #target picks.
   */
  #elicitationComplete(name: string, params: Params & { elicitationId: string }): void {
    const key = `${name}\n${params.elicitationId}`;
    let session = this.#elicitations.get(key);
    this.#elicitations.delete(key);
    if (!session) {
      const target = this.#target(name);
      if (typeof target !== "string") session = target.session;
    }
    if (session && this.#sessions.has(session) && session.sees(name)) session.elicitationComplete(params);
  }

  /**
   * Records a session's `logging/setLevel` (undefined = recompute after a session left) and sends the
   * servers the most verbose level any session asked for.
   */
  async setLevel(cause?: ServerOperation): Promise<void> {
    let level: LoggingLevel | undefined;
    for (const s of this.#sessions) {
      if (s.level && (!level || severity(s.level) < severity(level))) level = s.level;
    }
    if (!level) return;
    this.#level = level;
    await Promise.all(this.#hub.downstreams.map((d) => d.client && this.#sendLevel(d.client, cause)));
  }

  /** Sends the level to one server; `cause`: the host's `logging/setLevel` it is sent for (traced). */
  async #sendLevel(client: Client, cause?: ServerOperation): Promise<void> {
    const level = this.#level;
    if (!level || !client.getServerCapabilities()?.logging) return;
    this.#levelSent.set(client, level);
    const telemetry = cause?.span && this.#hub.telemetry;
    const d = telemetry && this.#hub.downstreams.find((d) => d.client === client);
    // A CLIENT span under the host's request (else the connection's own span: see Telemetry.wire).
    const op = d && telemetry.client(cause, {
      method: "logging/setLevel",
      server: d.name,
      transport: d.config.url === undefined ? "pipe" : "tcp",
      durations: false,
    });
    const sent = op?.meta
      ? client.request({ method: "logging/setLevel", params: { level, _meta: { ...op.meta } } }, ResultSchema)
      : client.setLoggingLevel(level);
    await sent.then(() => op?.end(), (error) => {
      op?.fail(error, (text) => d!.redact(text));
      this.#options.log(`logging/setLevel failed downstream: ${(error as Error).message}`);
    });
  }

  /** Records a subscription; true when the server should be told (always: subscribing twice is harmless). */
  subscribe(session: Passthrough, name: string, uri: string): void {
    const key = `${name}\n${uri}`;
    let set = this.#subscribers.get(key);
    if (!set) this.#subscribers.set(key, set = new Set());
    set.add(session);
  }

  /** Removes a subscription; true when no session is subscribed any more (the server should be told). */
  unsubscribe(session: Passthrough, name: string, uri: string): boolean {
    const key = `${name}\n${uri}`;
    const set = this.#subscribers.get(key);
    set?.delete(session);
    if (set?.size) return false;
    this.#subscribers.delete(key);
    return true;
  }
}

/** A relayed request's failure as `error.type`: its JSON-RPC code, else `_OTHER`. */
function relayFailure(error: unknown): { type: string; code?: number; message?: string } {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== "number" || !Number.isInteger(code)) return { type: "_OTHER" };
  const message = (error as { message?: unknown }).message;
  return { type: String(code), code, message: typeof message === "string" ? message : undefined };
}

/** A window as written in the config: whole seconds when it is, else milliseconds. */
function formatWindow(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}
