/**
 * `mcp serve --listen`: MCP Streamable HTTP at `/mcp` (HTTP/1.1 with counted connections, server.ts), many
 * sessions at once over one set of downstream connections. Each session has its own upstream server
 * ({@linkcode Gateway}): its own client capabilities, log level, progress tokens and detached calls. An
 * agent's sessions share one scoped view of the hub; every view shares the hub's downstream sessions.
 *
 * Server-to-client requests (sampling, elicitation, roots) reach the session whose call caused them:
 * a handler sends them through its own `extra.sendRequest`, which is that session's transport; code
 * outside a handler finds a session's server with {@linkcode Listener.session}.
 *
 * @module
 */
import { type ListenAddress, secretHash, sha256Hex } from "../config/mod.ts";
import { type Gateway, type GatewayCore, type GatewayCoreOptions, openGatewayCore } from "../gateway/mod.ts";
import { hasEscapedKey, parseJson } from "../json/mod.ts";
import { type Hub } from "../hub/mod.ts";
import {
  type JSONRPCMessage,
  loadHostHttpSdk,
  type WebStandardStreamableHTTPServerTransport,
  withoutInputKey,
} from "../mcp/mod.ts";
import { allowedHosts, checkHeaderSize, checkHostAndOrigin, Refusal, sameHex, TokenGuard } from "./guard.ts";
import { livePage } from "./page.ts";
import { EventBudget, SessionEvents } from "./events.ts";
import { finishedReplay, relayRawResults } from "./raw_sse.ts";
import { isModern, ModernEndpoint } from "./modern.ts";
import { Continuations } from "./continuations.ts";
import { type ConnectionInfo, headerPairs, serveHttp1 } from "./server.ts";
import { fullCollection, QuietCollector } from "./settle.ts";
import { inOrder, isRefusal, type QuotaRefusal, type Refusals, type SessionPlace } from "./quota.ts";
import { agentQuotas, type SharedQuotaOptions } from "./shared_quota.ts";
import { guardBodies } from "../json/mod.ts";
import { Telemetry } from "../telemetry/mod.ts";

/** The largest request body read (a JSON-RPC message or batch). */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;
/** The most header bytes a request may carry. */
export const MAX_HEADER_BYTES = 16 * 1024;
/** Sessions open at once; one more initialize is answered 503. */
export const MAX_SESSIONS = 1_000;
/** The reconnection delay suggested to clients in SSE `retry:`. */
export const RETRY_MS = 1_000;
/** How long a stop waits for in-flight requests before ending sessions. */
export const DRAIN_MS = 10_000;

/** What {@linkcode listen} needs. */
export interface ListenOptions extends GatewayCoreOptions {
  address: ListenAddress;
  /** Where `${VAR}` tokens are read. */
  tokenEnv: { get(key: string): string | undefined };
  /** @default MAX_BODY_BYTES */
  maxBodyBytes?: number;
  /** @default MAX_HEADER_BYTES */
  maxHeaderBytes?: number;
  /** @default DRAIN_MS */
  drainMs?: number;
  /** @default MAX_SESSIONS */
  maxSessions?: number;
  /** Seconds between reloads of the live page. @default 10 */
  refreshSeconds?: number;
  /** How quotas are shared when the store is PostgreSQL (tests, benchmarks). */
  sharedQuota?: SharedQuotaOptions;
}

/** One upstream session. */
export interface Session {
  id: string;
  /** The agent whose token opened it; undefined = unscoped. */
  agent?: string;
  /** SHA-256 of the token that opened it: a reload that no longer accepts it ends the session. */
  tokenHash?: string;
  gateway: Gateway;
  transport: WebStandardStreamableHTTPServerTransport;
  /** Last request, ms since the epoch. */
  lastSeen: number;
  /** JSON-RPC requests from the client not answered yet. */
  inflight: Set<string | number>;
  /** Of those, the `tools/call` requests counted against the agent's `concurrent_calls`. */
  calls: Set<string | number>;
  /** Its resumable events (bounded per session and, with every session's, in total). */
  events: SessionEvents;
  /** Response streams open to its host: with none, a running call has no one to answer to. */
  streams: number;
}

/** A running listener. */
export interface Listener {
  /** `http://HOST:PORT` as bound (the real port when 0 was asked for). */
  origin: string;
  core: GatewayCore;
  /** Open sessions. */
  sessions(): Session[];
  /** One open session by id: `session(id).gateway.server` sends server-to-client requests to it. */
  session(id: string): Session | undefined;
  /** What an agent (undefined = unscoped) has had refused by its quota. */
  refusals(agent: string | undefined): Refusals;
  /** The listener's TCP connections now, and what it shed. */
  connections(): {
    open: number;
    pending: number;
    busy: number;
    trusted: number;
    shed: number;
    acceptErrors: number;
  };
  /** Resolves once stopped. */
  done: Promise<void>;
  /** Drains in-flight requests (bounded), ends every session, stops every child. Idempotent. */
  stop(): Promise<void>;
}

function isRequest(
  message: JSONRPCMessage,
): message is JSONRPCMessage & { id: string | number; method: string } {
  return "method" in message && "id" in message;
}

function isResponse(message: JSONRPCMessage): message is JSONRPCMessage & { id: string | number } {
  return !("method" in message) && "id" in message;
}

/** The JSON-RPC body the Streamable HTTP spec prescribes for an unknown session. */
function sessionNotFound(): Response {
  return new Response(
    JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null }) +
      "\n",
    { status: 404, headers: { "content-type": "application/json" } },
  );
}

/**
 * Starts listening. Refuses to start (RangeError with the fix) when a token variable is unset or a
 * non-loopback address would be served without tokens.
 */
export async function listen(options: ListenOptions): Promise<Listener> {
  const { config, log } = options;
  let guard = await TokenGuard.create(config.agents, options.tokenEnv, config.path, options.agent);
  guard.checkBind(options.address.hostname, config.path);
  // Tokens once required stay required (a reload that drops every token must not open the listener).
  const tokensRequired = guard.required;
  const allowed = allowedHosts(options.address.hostname, config.allowedHosts);
  const maxHeaderBytes = options.maxHeaderBytes ?? MAX_HEADER_BYTES;
  // The sessions' transport (v2's server package: Ajv and a protocol bundle, ~25 ms of CPU) loads while
  // the listener binds and the servers start; the first session waits for it, /readyz does not.
  const hostHttp = loadHostHttpSdk();
  hostHttp.catch(() => {}); // awaited (and so reported) by the first session
  const metricsHash = config.metricsToken === undefined
    ? undefined
    : await secretHash(config.metricsToken, "metrics_token", options.tokenEnv, config.path);
  // /metrics is always served: the durations and counters are kept whether or not OTLP export is on.
  const telemetry = options.telemetry ?? new Telemetry();
  const maxSessions = options.maxSessions ?? MAX_SESSIONS;
  const core = openGatewayCore({
    ...options,
    agent: undefined,
    shared: true,
    telemetry,
    refusals: (agent) => {
      // Called by the stats meta-tool, once `quota` (below) exists.
      const refused = quota.refusals(agent);
      return refused && Object.values(refused).some((n) => n > 0) ? { ...refused } : undefined;
    },
  });
  const quota = agentQuotas({
    config: () => core.hub.config,
    maxSessions,
    storePath: options.storePath,
    env: options.env,
    log,
    shared: options.sharedQuota,
  });
  /** Each open session's place in its agent's `sessions` quota. */
  const places = new WeakMap<Session, SessionPlace>();
  const sessions = new Map<string, Session>();
  const eventBudget = new EventBudget(config.listenLimits.eventsTotal);
  /** The 2026-07-28 requests of each agent (undefined = unscoped): no sessions (modern.ts). */
  const modern = new Map<string | undefined, ModernEndpoint>();
  /** MRTR continuations across the replicas on the store (continuations.ts). */
  const continuations = new Continuations(core.reader, log);
  const modernEndpoint = (agent: string | undefined): ModernEndpoint => {
    let endpoint = modern.get(agent);
    if (!endpoint) {
      const gateway = core.gateway(agent === undefined ? core.hub : core.view(agent), undefined, true);
      modern.set(agent, endpoint = new ModernEndpoint(gateway, agent, continuations));
    }
    return endpoint;
  };
  // A retry another replica forwarded here: the agent's endpoint takes it up as its own.
  continuations.take = (agent, body, signal) =>
    modernEndpoint(agent === "" ? undefined : agent).serve(body as Record<string, unknown>, signal, true);
  let draining = false;
  let drained: (() => void) | undefined;

  const settleIfIdle = () => {
    if (drained && [...sessions.values()].every((s) => s.inflight.size === 0)) drained();
  };

  const endSession = async (session: Session, why: string) => {
    if (!sessions.delete(session.id)) return;
    places.get(session)?.release();
    for (const _ of session.calls) quota.release(session.agent);
    session.calls.clear();
    session.events.clear();
    log(`session ${session.id.slice(0, 8)} ended: ${why}`);
    await session.gateway.close();
  };

  const maxBodyBytes = options.maxBodyBytes ?? MAX_BODY_BYTES;
  const newSession = async (agent: string | undefined, tokenHash: string | undefined): Promise<Session> => {
    const { WebStandardStreamableHTTPServerTransport } = await hostHttp;
    const hub: Hub = agent === undefined ? core.hub : core.view(agent);
    const gateway = core.gateway(hub);
    // The bounds in effect (a reload may have changed them): the session's own, and all sessions' together.
    const { eventsPerSession, eventsTotal } = core.hub.config.listenLimits;
    eventBudget.max = eventsTotal;
    const events = new SessionEvents({ budget: eventBudget, maxBytes: eventsPerSession });
    const session: Session = {
      id: "",
      agent,
      tokenHash,
      gateway,
      lastSeen: Date.now(),
      inflight: new Set(),
      calls: new Set(),
      events,
      streams: 0,
      // A tools/call result is written into the response as the bytes the downstream sent (raw_sse.ts).
      transport: relayRawResults(
        new WebStandardStreamableHTTPServerTransport({
          sessionIdGenerator: () => crypto.randomUUID(),
          onsessioninitialized: (id) => {
            session.id = id;
            sessions.set(id, session);
          },
          onsessionclosed: (id) => {
            const open = sessions.get(id);
            if (open) void endSession(open, "closed by the client");
          },
          maxRequestBodySize: maxBodyBytes,
          // Resumable streams: a client reconnects with Last-Event-ID and gets what it missed.
          eventStore: events,
          retryInterval: RETRY_MS,
        }),
      ),
    };
    await gateway.connect(session.transport);
    // Count the client's requests until answered: drain waits for them, and a session with one open
    // is not idle.
    const transport = session.transport;
    const onmessage = transport.onmessage;
    const send = transport.send.bind(transport);
    type Extra = Parameters<NonNullable<typeof onmessage>>[1];
    const deliver = (message: JSONRPCMessage, extra: Extra, refusal: QuotaRefusal | undefined) => {
      if (isRequest(message)) {
        // The agent's quota: a refused request is answered here with a retry hint, never run.
        if (refusal) {
          const { retryAfterSeconds: _, ...error } = refusal;
          void send({ jsonrpc: "2.0", id: message.id, error }).catch(() => {});
          return;
        }
        if (session.id !== "" && !sessions.has(session.id)) {
          // Admitted (from the shared store) after its session ended: never run; its place goes back.
          if (message.method === "tools/call") quota.release(session.agent);
          return;
        }
        session.inflight.add(message.id);
        if (message.method === "tools/call") session.calls.add(message.id);
      } else if ("method" in message && message.method === "notifications/cancelled") {
        // A cancelled request gets no answer: its place is given back now.
        const id = (message.params as { requestId?: string | number } | undefined)?.requestId;
        if (id !== undefined && session.calls.delete(id)) quota.release(session.agent);
        if (id !== undefined) session.inflight.delete(id);
      }
      onmessage?.(message, extra);
    };
    // A decision the shared store has to make holds this session's later messages behind it (in order).
    transport.onmessage = inOrder((message: JSONRPCMessage, extra: Extra) => {
      const decided = isRequest(message) ? quota.admit(session.agent, message.method) : undefined;
      if (decided instanceof Promise) return decided.then((refusal) => deliver(message, extra, refusal));
      return deliver(message, extra, decided);
    });
    transport.send = async (message, sendOptions) => {
      try {
        // A 2026-07-28 server's input request keeps its round's marker only for a 2026-07-28 host.
        return await send(withoutInputKey(message), sendOptions);
      } finally {
        if (isResponse(message)) {
          if (session.calls.delete(message.id)) quota.release(session.agent);
          session.inflight.delete(message.id);
          session.lastSeen = Date.now();
          settleIfIdle();
        }
      }
    };
    return session;
  };

  const handleMcp = async (
    request: Request,
    agent: string | undefined,
    tokenHash: string | undefined,
  ): Promise<Response> => {
    const id = request.headers.get("mcp-session-id");
    if (id !== null) {
      const session = sessions.get(id);
      // Another agent's session id is as unknown as a made-up one.
      if (!session || session.agent !== agent || session.tokenHash !== tokenHash) return sessionNotFound();
      session.lastSeen = Date.now();
      const last = request.method === "GET" ? request.headers.get("last-event-id") : null;
      const replay = last === null ? undefined : session.events.answeredReplay(last);
      if (replay) return finishedReplay(session.transport, replay, session.id);
      return watchStream(session, await handleRequest(session.transport, request, maxBodyBytes));
    }
    if (request.method !== "POST") {
      return new Refusal(400, "Bad Request: Mcp-Session-Id header is required").response();
    }
    // MCP 2026-07-28: no session; the message says so (modern.ts).
    const body = await readBody(request, maxBodyBytes);
    if (body.parsed !== undefined && isModern(request, body.parsed)) {
      if (draining) {
        return new Refusal(503, "Service Unavailable: the gateway is stopping", { "retry-after": "5" })
          .response();
      }
      return await modernEndpoint(agent).handle(request, body.parsed, tokenHash);
    }
    request = body.request;
    if (draining) {
      return new Refusal(503, "Service Unavailable: the gateway is stopping", { "retry-after": "5" })
        .response();
    }
    const own = [...sessions.values()].filter((s) => s.agent === agent).length;
    const place = await quota.openSession(agent, own);
    if (isRefusal(place)) {
      const { retryAfterSeconds, ...error } = place;
      return new Response(JSON.stringify({ jsonrpc: "2.0", id: null, error }) + "\n", {
        status: 429,
        headers: { "content-type": "application/json", "retry-after": String(retryAfterSeconds) },
      });
    }
    const limit = maxSessions;
    if (sessions.size >= limit) {
      place.release();
      return new Refusal(
        503,
        `Service Unavailable: ${limit} sessions are open, the most this gateway keeps; retry later`,
        { "retry-after": "5" },
      ).response();
    }
    let session: Session | undefined;
    try {
      session = await newSession(agent, tokenHash);
      places.set(session, place);
      const response = watchStream(session, await handleRequest(session.transport, request, maxBodyBytes));
      // Not an initialize request (or a refused one): no session was made.
      if (!session.id) {
        place.release();
        session.events.clear();
        await session.gateway.close();
      }
      return response;
    } catch (error) {
      if (!session?.id || !sessions.has(session.id)) place.release();
      throw error;
    }
  };

  const unwatch = telemetry.gauges(() => {
    const open = new Map<string, number>([["", 0], ...config.agents.map((a) => [a.name, 0] as const)]);
    for (const session of sessions.values()) {
      const agent = session.agent ?? "";
      open.set(agent, (open.get(agent) ?? 0) + 1);
    }
    // Refusals by quota so far, per agent (config names only) and quota.
    const refused = [...open.keys()].flatMap((agent) =>
      Object.entries(quota.refusals(agent === "" ? undefined : agent)).map(([kind, value]) => ({
        labels: { agent, quota: kind },
        value,
      }))
    );
    return [{
      name: "mcphub_sessions_open",
      help: "Open upstream sessions of the HTTP listener, per agent (none: unscoped)",
      series: [...open].map(([agent, value]) => ({ labels: { agent }, value })),
    }, {
      name: "mcphub_quota_refusals",
      help:
        "Requests and sessions refused by an agent's quota since the gateway started, per agent and quota",
      series: refused,
    }];
  });

  /** `GET /metrics`: with `metrics_token:` that bearer token; without, only where no token is required. */
  const metrics = async (request: Request): Promise<Response> => {
    if (request.method !== "GET" && request.method !== "HEAD") {
      return new Refusal(405, "Method Not Allowed: GET /metrics", { allow: "GET, HEAD" }).response();
    }
    if (metricsHash !== undefined) {
      const match = /^Bearer +([\x21-\x7e]+)\s*$/i.exec(request.headers.get("authorization") ?? "");
      if (!match || !sameHex(await sha256Hex(match[1]), metricsHash)) {
        throw new Refusal(
          401,
          "Unauthorized: /metrics needs the metrics_token as Authorization: Bearer TOKEN",
          {
            "www-authenticate": 'Bearer realm="mcphub-metrics"',
          },
        );
      }
    } else if (guard.required) {
      throw new Refusal(
        401,
        "Unauthorized: this gateway requires tokens; set metrics_token: in mcphub.yaml to scrape /metrics",
        { "www-authenticate": 'Bearer realm="mcphub-metrics"' },
      );
    }
    await telemetry.refresh();
    return new Response(request.method === "HEAD" ? null : telemetry.render(), {
      headers: { "content-type": "text/plain; version=0.0.4; charset=utf-8", "cache-control": "no-store" },
    });
  };

  // A reload re-derives the tokens: every request is checked against the config in effect, and the
  // sessions whose token it no longer accepts are ended at once (their streams too).
  let guardConfig = config;
  let rebuilding: Promise<TokenGuard> | undefined;
  const currentGuard = (): Promise<TokenGuard> => {
    const next = core.hub.config;
    if (next === guardConfig) return rebuilding ?? Promise.resolve(guard);
    guardConfig = next;
    const built = TokenGuard.create(next.agents, options.tokenEnv, next.path, options.agent, {
      required: tokensRequired,
      problem: (message) => log(`config reload: ${message}`),
    }).then((fresh) => {
      if (rebuilding === built) {
        guard = fresh;
        rebuilding = undefined;
        for (const session of [...sessions.values()]) {
          if (!fresh.accepts(session.agent, session.tokenHash)) {
            void endSession(session, "its token is no longer valid after a config reload");
          }
        }
        // A 2026-07-28 host's listen streams too (they are its only long-lived requests).
        for (const [agent, endpoint] of modern) {
          const ended = endpoint.endListens((hash) => !fresh.accepts(agent, hash));
          if (ended) {
            log(`${ended} listen stream(s) ended: their token is no longer valid after a config reload`);
          }
        }
      }
      return fresh;
    });
    rebuilding = built;
    return built;
  };
  const stopWatching = core.hub.onChange(() => void currentGuard());

  const route = async (request: Request, connection: ConnectionInfo): Promise<Response> => {
    checkHeaderSize(request, maxHeaderBytes);
    checkHostAndOrigin(request, allowed);
    const url = new URL(request.url);
    const path = url.pathname;
    if (path === "/healthz") return json({ status: draining ? "stopping" : "ok" }, draining ? 503 : 200);
    if (path === "/readyz") return readiness(core.hub, draining);
    if (path === "/metrics") return await metrics(request);
    const mcp = /^\/mcp(?:\/([^/]+))?\/?$/.exec(path);
    if (mcp) {
      const { agent, hash } = await (await currentGuard()).credentialOf(
        request,
        mcp[1] === undefined ? undefined : decodeURIComponent(mcp[1]),
      );
      connection.trust(agent);
      return await handleMcp(request, agent, hash);
    }
    if (path === "/" && (request.method === "GET" || request.method === "HEAD")) {
      const agent = await (await currentGuard()).agentOf(request, undefined);
      await core.flush();
      const hub = agent === undefined ? core.hub : core.view(agent);
      return livePage(core.reader, hub, agent, options.refreshSeconds ?? 10);
    }
    return new Refusal(404, "Not found: MCP is served at /mcp").response();
  };

  // Request bodies' json() is guarded first (see json/guard.ts).
  guardBodies();
  const limits = config.listenLimits;
  // After a burst of results, one full collection once the listener is quiet (see settle.ts).
  const collect = fullCollection();
  const quiet = collect ? new QuietCollector(collect) : undefined;
  const server = serveHttp1({
    hostname: options.address.hostname,
    port: options.address.port,
    maxConnections: limits.maxConnections,
    maxPending: limits.maxPending,
    headerTimeoutMs: limits.headerTimeoutMs,
    idleTimeoutMs: limits.idleTimeoutMs,
    maxHeaderBytes,
    log,
    onWritten: quiet && ((bytes) => quiet.note(bytes)),
    handler: async (request, connection) => {
      let response: Response;
      try {
        response = await route(request, connection);
      } catch (error) {
        if (!(error instanceof Refusal)) throw error;
        response = error.response();
      }
      // Refused before or by MCP handling (token, agent, session, size, stopping): counted by status.
      if (response.status >= 400) telemetry.refused.add(1, { code: String(response.status) });
      return response;
    },
  });
  const addr = server.addr;
  const host = addr.hostname.includes(":") ? `[${addr.hostname}]` : addr.hostname;
  const origin = `http://${host}:${addr.port}`;

  const idleMs = config.sessionIdleMs;
  const sweep = setInterval(() => {
    const now = Date.now();
    for (const session of sessions.values()) {
      // A running call keeps its session only while a stream to its host is open: a host that went
      // away without cancelling leaves it idle, and ending the session cancels the call downstream.
      const busy = (session.inflight.size > 0 && session.streams > 0) || session.gateway.detached.running > 0;
      if (!busy && now - session.lastSeen >= idleMs) void endSession(session, `idle for ${idleMs}ms`);
    }
  }, Math.min(60_000, Math.max(250, Math.floor(idleMs / 4))));

  void core.hub.start();

  let stopping: Promise<void> | undefined;
  const done = Promise.withResolvers<void>();
  const stop = () => {
    stopping ??= (async () => {
      draining = true;
      clearInterval(sweep);
      stopWatching();
      const bound = options.drainMs ?? DRAIN_MS;
      const idle = new Promise<void>((resolve) => drained = resolve);
      settleIfIdle();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const waited = await Promise.race([
        idle.then(() => true),
        new Promise<boolean>((resolve) => timer = setTimeout(() => resolve(false), bound)),
      ]);
      clearTimeout(timer);
      const open = [...sessions.values()];
      const pending = open.reduce((n, s) => n + s.inflight.size, 0);
      if (!waited) {
        log(`stopping: ${pending} request(s) still running after ${bound}ms; ending them`);
        // A definite answer rather than a stream that just ends: the client knows to stop waiting.
        await Promise.allSettled(open.flatMap((s) =>
          [...s.inflight].map((id) =>
            s.transport.send({
              jsonrpc: "2.0",
              id,
              error: {
                code: -32603,
                message:
                  `The gateway is stopping: this request was still running after the ${bound}ms drain ` +
                  "bound and was cancelled; its outcome is unknown and it was not retried.",
              },
            })
          )
        ));
      }
      await Promise.allSettled(open.map((s) => endSession(s, "the gateway is stopping")));
      continuations.stop();
      quiet?.stop();
      await Promise.allSettled([...modern.values()].map((m) => m.close()));
      await quota.close();
      modern.clear();
      await Promise.race([server.shutdown(), new Promise((resolve) => timer = setTimeout(resolve, 2000))]);
      clearTimeout(timer);
      unwatch();
      server.closeAll();
      await core.close();
      done.resolve();
    })();
    return stopping;
  };
  return {
    origin,
    core,
    sessions: () => [...sessions.values()],
    session: (id) => sessions.get(id),
    refusals: (agent) => quota.refusals(agent),
    connections: () => server.counts(),
    done: done.promise,
    stop,
  };
}

/** Counts `response`'s body as a stream open to `session`'s host until it ends or is cancelled. */
function watchStream(session: Session, response: Response): Response {
  if (!response.body || !response.headers.get("content-type")?.includes("text/event-stream")) return response;
  session.streams++;
  let open = true;
  const done = () => {
    if (!open) return;
    open = false;
    session.streams--;
    session.lastSeen = Date.now();
  };
  const reader = response.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done: end, value } = await reader.read();
        if (end) {
          done();
          controller.close();
        } else controller.enqueue(value);
      } catch (error) {
        done();
        controller.error(error);
      }
    },
    cancel(reason) {
      done();
      return reader.cancel(reason);
    },
  });
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

function json(value: unknown, status = 200): Response {
  return new Response(JSON.stringify(value) + "\n", {
    status,
    headers: { "content-type": "application/json", "cache-control": "no-store" },
  });
}

/** `/readyz`: 200 once no enabled server is still connecting; counts only (no names, no errors). */
function readiness(hub: Hub, draining: boolean): Response {
  const servers = hub.servers().filter((s) => s.enabled);
  const count = (state: string) => servers.filter((s) => s.state === state).length;
  const connecting = count("connecting");
  const connected = count("connected");
  const ready = !draining && connecting === 0;
  return json({
    ready,
    servers: servers.length,
    connected,
    connecting,
    not_connected: servers.length - connected - connecting,
  }, ready ? 200 : 503);
}

/**
 * A request body's bytes, read until done or until past `maxBytes` (then the rest is cancelled, unread):
 * `over` says which.
 */
async function readCapped(
  body: ReadableStream<Uint8Array>,
  maxBytes: number,
): Promise<{ bytes: Uint8Array<ArrayBuffer>; over: boolean }> {
  const chunks: Uint8Array[] = [];
  let received = 0;
  const reader = body.getReader();
  try {
    while (received <= maxBytes) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      received += value.byteLength;
    }
    if (received > maxBytes) await reader.cancel();
  } finally {
    reader.releaseLock();
  }
  const bytes = new Uint8Array(received);
  let at = 0;
  for (const chunk of chunks) bytes.set(chunk, at), at += chunk.byteLength;
  return { bytes, over: received > maxBytes };
}

/**
 * A session-less POST's body read once (up to `maxBytes`), parsed when it is JSON, and the request again
 * with the same bytes for whoever answers it (the SDK's transport reads the body itself).
 */
async function readBody(request: Request, maxBytes: number): Promise<{ request: Request; parsed?: unknown }> {
  if (request.body === null || Number(request.headers.get("content-length")) > maxBytes) return { request };
  const { bytes, over } = await readCapped(request.body, maxBytes);
  const again = new Request(request.url, {
    method: request.method,
    headers: headerPairs(request.headers),
    body: bytes,
    signal: request.signal,
  });
  if (over) return { request: again };
  try {
    return { request: again, parsed: parseJson(new TextDecoder().decode(bytes)) };
  } catch {
    return { request: again };
  }
}

/**
 * `transport.handleRequest(request)`, except that a POST body with an escaped object key is parsed here
 * with {@linkcode parseJson} and handed to the SDK parsed: the SDK's own `JSON.parse` is V8's, which a
 * poisoned isolate betrays on escaped keys (see hub/safe_json.ts). Any other body (none, too large, not
 * JSON, no escaped key) reaches the SDK as it came, which answers it as before.
 */
async function handleRequest(
  transport: WebStandardStreamableHTTPServerTransport,
  request: Request,
  maxBytes: number,
): Promise<Response> {
  if (request.method !== "POST" || request.body === null) return await transport.handleRequest(request);
  if (Number(request.headers.get("content-length")) > maxBytes) return await transport.handleRequest(request);
  const { bytes: body, over } = await readCapped(request.body, maxBytes);
  // Not `signal: request.signal`: reading it makes Deno.serve warn of its legacy abort-on-success on every
  // --listen gateway, and nothing downstream of here (the SDK's transport) listens to it.
  const again = new Request(request.url, {
    method: request.method,
    headers: headerPairs(request.headers),
    body,
  });
  if (!over) {
    const text = new TextDecoder().decode(body);
    if (hasEscapedKey(text)) {
      let parsedBody: unknown;
      try {
        parsedBody = parseJson(text);
      } catch {
        // not JSON: the SDK answers it
      }
      if (parsedBody !== undefined) return await transport.handleRequest(again, { parsedBody });
    }
  }
  return await transport.handleRequest(again);
}
