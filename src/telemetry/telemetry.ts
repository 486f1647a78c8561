/**
 * What the gateway reports to an operator: a span and a duration per host request (SERVER) and per
 * downstream request (CLIENT), named and attributed per the OpenTelemetry semantic conventions for MCP,
 * W3C trace context carried in `params._meta`, and the `mcphub_` gauges and counters.
 *
 * Spans go through Deno's built-in OpenTelemetry (`OTEL_DENO=true`), with the `@opentelemetry/api`
 * package loaded only then ({@linkcode loadTelemetry}); durations and counters are kept in process for
 * `GET /metrics` either way, and mirrored to OTLP when OpenTelemetry is on.
 *
 * @module
 */
import type * as OtelApi from "@opentelemetry/api";
import { httpStatusOf } from "../mcp/light.ts";
import {
  Counter,
  DURATION_BUCKETS,
  type GaugeReading,
  Histogram,
  type Labels,
  renderGauge,
} from "./metrics.ts";

type Api = typeof OtelApi;
type Span = OtelApi.Span;
type Attributes = OtelApi.Attributes;

/** The methods the conventions name (`mcp.method.name`); any other is `_OTHER`, so input cannot add series. */
const METHODS = new Set([
  "completion/complete",
  "elicitation/create",
  "initialize",
  "logging/setLevel",
  "notifications/cancelled",
  "notifications/initialized",
  "notifications/message",
  "notifications/progress",
  "notifications/prompts/list_changed",
  "notifications/resources/list_changed",
  "notifications/resources/updated",
  "notifications/roots/list_changed",
  "notifications/tools/list_changed",
  "ping",
  "prompts/get",
  "prompts/list",
  "resources/list",
  "resources/read",
  "resources/subscribe",
  "resources/templates/list",
  "resources/unsubscribe",
  "roots/list",
  "sampling/createMessage",
  // 2026-07-28: the opening probe and the listen for change notifications (not in the conventions' list
  // of well-known values, which predates them; a custom value is allowed).
  "server/discover",
  "subscriptions/listen",
  "tools/call",
  "tools/list",
]);

/** A method name as a bounded label: a known MCP method, else `_OTHER`. */
export function methodLabel(method: unknown): string {
  return typeof method === "string" && METHODS.has(method) ? method : "_OTHER";
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(?:-|$)/;

/** W3C trace context as carried in `params._meta` (unprefixed keys, per SEP-414). */
export interface TraceMeta {
  traceparent: string;
  tracestate?: string;
}

/** A `traceparent` value's parts, or undefined for an invalid one (which is then ignored, as W3C says). */
export function parseTraceparent(
  value: unknown,
): { traceId: string; spanId: string; flags: number } | undefined {
  if (typeof value !== "string" || value.length > 512) return undefined;
  const match = TRACEPARENT.exec(value);
  if (!match || match[1] === "ff" || (match[1] === "00" && value.length !== 55)) return undefined;
  if (/^0+$/.test(match[2]) || /^0+$/.test(match[3])) return undefined;
  return { traceId: match[2], spanId: match[3], flags: parseInt(match[4], 16) };
}

/** How a failed operation is classed (`error.type`): a JSON-RPC error code, `tool_error`, or a local class. */
export interface OperationError {
  type: string;
  /** The JSON-RPC error message (the span's status description); never argument values. */
  message?: string;
  /** The JSON-RPC error code, when there is one (`rpc.response.status_code`). */
  code?: number;
}

/** What a SERVER operation starts from: the host's request. */
export interface ServerInit {
  method: string;
  requestId?: string | number;
  sessionId?: string;
  /** `network.transport`: `pipe` (stdio) or `tcp` (HTTP). */
  transport?: "pipe" | "tcp";
  /** The request's `params._meta`, where a `traceparent` may be. */
  meta?: unknown;
}

/** A host request being served: its span (when tracing) and its duration. */
export class ServerOperation {
  readonly method: string;
  readonly span?: Span;
  /** The host's `tracestate`, passed on with the CLIENT span's `traceparent`. */
  readonly tracestate?: string;
  #telemetry: Telemetry;
  #t0 = performance.now();
  #tool?: string;
  #ended = false;
  /** Recorded in `mcp_server_operation_duration_seconds` (a host request); false: a span only. */
  #durations: boolean;
  /** Its CLIENT operations still open (tracing only), latest last. */
  #children?: ClientOperation[];
  /** Set when the answer is a tool result with `isError: true`. */
  toolError = false;

  constructor(telemetry: Telemetry, method: string, span?: Span, tracestate?: string, durations = true) {
    this.#telemetry = telemetry;
    this.method = method;
    this.span = span;
    this.tracestate = tracestate;
    this.#durations = durations;
  }

  /** @internal A CLIENT operation under this one opened (until it ends). */
  opened(child: ClientOperation): void {
    (this.#children ??= []).push(child);
  }

  /** @internal A CLIENT operation under this one ended. */
  closed(child: ClientOperation): void {
    const children = this.#children;
    const at = children ? children.lastIndexOf(child) : -1;
    if (at >= 0) children!.splice(at, 1);
  }

  /** The latest CLIENT operation under this one still open toward `server` (tracing only). */
  openTo(server: string): ClientOperation | undefined {
    const children = this.#children;
    if (!children) return undefined;
    for (let i = children.length - 1; i >= 0; i--) if (children[i]!.server === server) return children[i];
    return undefined;
  }

  /** Names the tool (a catalog or meta-tool name, never a name only the request carried). */
  tool(name: string): void {
    this.#tool = name;
    if (this.span) {
      this.span.updateName(`${this.method} ${name}`);
      this.span.setAttribute("gen_ai.tool.name", name);
      if (this.method === "tools/call") this.span.setAttribute("gen_ai.operation.name", "execute_tool");
    }
  }

  /** Records the tool call's arguments, only when the operator opted in (they may hold secrets). */
  arguments(args: Record<string, unknown>): void {
    if (this.span && this.#telemetry.toolArguments) {
      this.span.setAttribute("gen_ai.tool.call.arguments", JSON.stringify(args));
    }
  }

  /** An event on the span (spooled, detached, …); none once it ended (a detached call outlives it). */
  event(name: string, attributes?: Attributes): void {
    if (!this.#ended) this.span?.addEvent(name, attributes);
  }

  /** Ends the operation once, recording its duration. */
  end(error?: OperationError): void {
    if (this.#ended) return;
    this.#ended = true;
    if (!error && this.toolError) error = { type: "tool_error" };
    if (this.#durations) {
      const seconds = (performance.now() - this.#t0) / 1000;
      this.#telemetry.observeServer(seconds, {
        mcp_method_name: this.method,
        gen_ai_tool_name: this.#tool ?? "",
        error_type: error?.type ?? "",
      });
    }
    if (this.span) endSpan(this.#telemetry.api!, this.span, error);
  }
}

/** What a CLIENT operation is: a request to a downstream server. */
export interface ClientInit {
  method: string;
  /** The server's config name. */
  server: string;
  /** The downstream's own tool name. */
  tool?: string;
  /** The downstream's own prompt name (`prompts/get`): `gen_ai.prompt.name`, and the span's target. */
  prompt?: string;
  /** `network.transport`: `pipe` (stdio) or `tcp` (HTTP, SSE). */
  transport?: "pipe" | "tcp";
  /**
   * Recorded in `mcp_client_operation_duration_seconds`. @default true; false for the spans of the
   * requests a connection sends on its own (see {@linkcode Telemetry.wire}) and of relayed requests.
   */
  durations?: boolean;
}

/** A request to a downstream server: its span (when tracing) and its duration. */
export class ClientOperation {
  readonly span?: Span;
  #telemetry: Telemetry;
  #init: ClientInit;
  #t0 = performance.now();
  #ended = false;
  #meta?: TraceMeta;
  #parent?: ServerOperation;

  constructor(
    telemetry: Telemetry,
    init: ClientInit,
    span?: Span,
    tracestate?: string,
    parent?: ServerOperation,
  ) {
    this.#telemetry = telemetry;
    this.#init = init;
    this.span = span;
    if (span) {
      const context = span.spanContext();
      const flags = (context.traceFlags & 0xff).toString(16).padStart(2, "0");
      this.#meta = { traceparent: `00-${context.traceId}-${context.spanId}-${flags}` };
      if (tracestate) this.#meta.tracestate = tracestate;
      telemetry.own(this.#meta.traceparent, this);
      this.#parent = parent;
      parent?.opened(this);
    }
  }

  /** The server's config name. */
  get server(): string {
    return this.#init.server;
  }

  /** `mcp.method.name`. */
  get method(): string {
    return this.#init.method;
  }

  /** What goes into the downstream request's `params._meta`: this span's `traceparent` (undefined untraced). */
  get meta(): TraceMeta | undefined {
    return this.#meta;
  }

  /** The request id, once the request is written (`jsonrpc.request.id`). */
  requestId(id: string | number): void {
    this.span?.setAttribute("jsonrpc.request.id", String(id));
  }

  /**
   * Ends the operation with a thrown error: its JSON-RPC code (or the HTTP status of a POST the transport
   * could not deliver) as `error.type` when it has one, else `_OTHER`.
   */
  fail(error: unknown, redact: (text: string) => string = (text) => text): void {
    const own = (error as { code?: unknown } | null)?.code;
    const code = typeof own === "number" ? own : httpStatusOf(error);
    if (typeof code === "number" && Number.isInteger(code)) {
      const message = (error as { message?: unknown }).message;
      this.end({
        type: String(code),
        code,
        message: typeof message === "string" ? redact(message) : undefined,
      });
    } else this.end({ type: "_OTHER" });
  }

  /** Ends the operation once, recording its duration. */
  end(error?: OperationError): void {
    if (this.#ended) return;
    this.#ended = true;
    if (this.#init.durations !== false) {
      const seconds = (performance.now() - this.#t0) / 1000;
      this.#telemetry.observeClient(seconds, {
        mcp_method_name: this.#init.method,
        gen_ai_tool_name: this.#init.tool ?? "",
        error_type: error?.type ?? "",
        server: this.#init.server,
      });
    }
    if (this.#meta) this.#telemetry.own(this.#meta.traceparent, undefined);
    this.#parent?.closed(this);
    if (this.span) endSpan(this.#telemetry.api!, this.span, error);
  }
}

/** A JSON-RPC message as {@linkcode WireTrace} reads it. */
type WireMessage = { id?: unknown; method?: unknown; params?: unknown; result?: unknown; error?: unknown };

/** The `_meta` key stamping a message with its listen (2026-07-28). */
const SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId";

/**
 * The CLIENT spans of one connection's own requests: every request written to the server that carries
 * no open CLIENT operation's `traceparent` (the opening `initialize` or `server/discover`, `tools/list`
 * pages, `subscriptions/listen`, `ping`, `logging/setLevel` and `resources/unsubscribe` the gateway sends
 * by itself, a 2026-07-28 request sent again with its inputs) gets a span of its own, a root (start-up,
 * reconnects and refreshes are the gateway's own traces), and its `traceparent` in `params._meta`; the
 * span ends with the answer (`error.type` its code), the acknowledgement of a listen, a
 * `notifications/cancelled` (`timeout` or `cancelled`) or the connection's end (`outcome_unknown`).
 * Spans only: the duration histograms count the requests made for the host.
 */
export class WireTrace {
  #telemetry: Telemetry;
  #server: string;
  #transport: "pipe" | "tcp";
  #redact: (text: string) => string;
  #pending = new Map<string | number, ClientOperation>();

  constructor(
    telemetry: Telemetry,
    server: string,
    transport: "pipe" | "tcp",
    redact: (text: string) => string,
  ) {
    this.#telemetry = telemetry;
    this.#server = server;
    this.#transport = transport;
    this.#redact = redact;
  }

  /** A message about to be written: a request gets its span and `traceparent` (a copy; never mutated). */
  out<M>(message: M): M {
    const m = message as WireMessage;
    const method = m.method;
    if (typeof method !== "string") return message;
    const params = (typeof m.params === "object" && m.params !== null ? m.params : {}) as Record<
      string,
      unknown
    >;
    const id = m.id;
    if (typeof id !== "string" && typeof id !== "number") {
      if (method === "notifications/cancelled" && this.#pending.size) {
        const reason = String(params.reason ?? "");
        this.#end(params.requestId, { type: /timed? ?out/i.test(reason) ? "timeout" : "cancelled" });
      }
      return message;
    }
    let op = this.#pending.get(id);
    if (!op) {
      const meta = params._meta as Record<string, unknown> | undefined;
      // Traced by its caller (a tool call, a request made for the host): its span is the caller's, which
      // learns the request's id here (the SDK's client does not tell it).
      const owner = this.#telemetry.owner(meta?.traceparent);
      if (owner) {
        owner.requestId(id);
        return message;
      }
      if (method === "initialize") {
        // A `server/discover` probe still unanswered was given up: the 2025 opening goes after it.
        for (const [key, probe] of this.#pending) {
          if (probe.method === "server/discover") this.#end(key, { type: "timeout" });
        }
      }
      op = this.#telemetry.client(undefined, {
        method: methodLabel(method),
        server: this.#server,
        transport: this.#transport,
        durations: false,
        root: true,
      });
      op.requestId(id);
      this.#pending.set(id, op);
    }
    const trace = op.meta;
    if (!trace) return message;
    return {
      ...m,
      params: { ...params, _meta: { ...(params._meta as Record<string, unknown> | undefined), ...trace } },
    } as M;
  }

  /** A message read from the server: the answer to a request of ours ends its span. */
  in(message: unknown): void {
    if (!this.#pending.size) return;
    const m = message as WireMessage;
    if (m.method === undefined) {
      const id = m.id;
      if (typeof id !== "string" && typeof id !== "number") return;
      const op = this.#pending.get(id);
      if (!op) return;
      // An input_required round: the request goes again under the same id, the same span.
      if ((m.result as Record<string, unknown> | undefined)?.resultType === "input_required") return;
      this.#pending.delete(id);
      if (m.error !== undefined) op.fail(m.error, this.#redact);
      else op.end();
      return;
    }
    if (m.method === "notifications/subscriptions/acknowledged") {
      const meta = (m.params as { _meta?: Record<string, unknown> } | undefined)?._meta;
      this.#end(meta?.[SUBSCRIPTION_ID]);
    }
  }

  /** A message that could not be written (`error`): its request's span ends with the failure. */
  unsent(message: unknown, error: unknown): void {
    const id = (message as WireMessage).id;
    if (typeof id !== "string" && typeof id !== "number") return;
    const op = this.#pending.get(id);
    if (!op) return;
    this.#pending.delete(id);
    op.fail(error, this.#redact);
  }

  /** The connection ended: the requests still unanswered end with `outcome_unknown`. */
  close(): void {
    for (const op of this.#pending.values()) op.end({ type: "outcome_unknown" });
    this.#pending.clear();
  }

  #end(id: unknown, error?: OperationError): void {
    if (typeof id !== "string" && typeof id !== "number") return;
    const op = this.#pending.get(id);
    if (!op) return;
    this.#pending.delete(id);
    op.end(error);
  }
}

function endSpan(api: Api, span: Span, error: OperationError | undefined): void {
  if (error) {
    span.setAttribute("error.type", error.type);
    if (error.code !== undefined) span.setAttribute("rpc.response.status_code", String(error.code));
    span.setStatus({ code: api.SpanStatusCode.ERROR, message: error.message });
  }
  span.end();
}

/** Options of {@linkcode Telemetry}. */
export interface TelemetryOptions {
  /** The OpenTelemetry API, when Deno's OpenTelemetry is on; undefined = metrics in process only. */
  api?: Api;
  /** Record tool call arguments on spans (`gen_ai.tool.call.arguments`). @default false */
  toolArguments?: boolean;
  /** The version reported as the tracer's and meter's. */
  version?: string;
}

/** The metric names of the gauges the gateway reads at scrape time, with their help text. */
export const GAUGES: Readonly<Record<string, string>> = {
  mcphub_server_state: "1 for the state each configured server is in (server, state)",
  mcphub_server_tools: "Tools a server offers, as last listed",
  mcphub_tools_held: "Tools held until approved (a changed definition, or new under trust: pin)",
  mcphub_sessions_open: "Open upstream sessions of the HTTP listener, per agent",
  mcphub_store_results: "Results held in the result store (paged with get_result until they expire)",
  mcphub_store_result_bytes: "Bytes of the results held in the result store",
};

/** How often the store's gauges are refreshed for OTLP export. */
const STORE_REFRESH_MS = 30_000;

/** The gateway's telemetry: one per process, shared by every session and hub view. */
export class Telemetry {
  readonly api?: Api;
  readonly toolArguments: boolean;
  #tracer?: OtelApi.Tracer;
  #otelServer?: OtelApi.Histogram;
  #otelClient?: OtelApi.Histogram;
  #gauges: (() => GaugeReading[])[] = [];
  #lastState = new Map<string, string>();

  readonly serverDuration = new Histogram(
    "mcp_server_operation_duration_seconds",
    "MCP request duration as observed on the gateway from the host's request until the answer is sent",
    ["mcp_method_name", "gen_ai_tool_name", "error_type"],
  );
  readonly clientDuration = new Histogram(
    "mcp_client_operation_duration_seconds",
    "MCP request duration as observed on the gateway from the request to a server until its answer",
    ["mcp_method_name", "gen_ai_tool_name", "error_type", "server"],
  );
  readonly refused = new Counter(
    "mcphub_requests_refused_total",
    "HTTP requests the listener answered with an error status (bad token, unknown agent or session, session limit, too large, stopping), by status",
    ["code"],
  );
  readonly spooledResults = new Counter(
    "mcphub_results_spooled_total",
    "Tool results over the response budget that were stored and answered with a receipt",
    ["server"],
  );
  readonly spooledBytes = new Counter(
    "mcphub_spooled_bytes_total",
    "Bytes of the tool results stored in the result store (their whole size)",
    ["server"],
  );
  readonly resultBytes = new Counter(
    "mcphub_result_bytes_total",
    "Bytes of every tool result the servers returned through the gateway",
    ["server"],
  );
  readonly stateChanges = new Counter(
    "mcphub_server_state_changes_total",
    "Times a server entered a state (connecting, connected, backoff, failed, needs_auth, …)",
    ["server", "state"],
  );

  constructor(options: TelemetryOptions = {}) {
    this.api = options.api;
    this.toolArguments = options.toolArguments ?? false;
    const api = options.api;
    if (!api) return;
    this.#tracer = api.trace.getTracer("mcphub", options.version);
    const meter = api.metrics.getMeter("mcphub", options.version);
    const advice = { explicitBucketBoundaries: [...DURATION_BUCKETS] };
    this.#otelServer = meter.createHistogram("mcp.server.operation.duration", {
      unit: "s",
      description: this.serverDuration.help,
      advice,
    });
    this.#otelClient = meter.createHistogram("mcp.client.operation.duration", {
      unit: "s",
      description: this.clientDuration.help,
      advice,
    });
    for (const [name, help] of Object.entries(GAUGES)) {
      meter.createObservableGauge(`mcphub.${name.slice("mcphub_".length)}`, { description: help })
        .addCallback((result) => {
          for (const reading of this.#readGauges()) {
            if (reading.name !== name) continue;
            for (const s of reading.series) result.observe(s.value, s.labels);
          }
        });
    }
    // The store's gauges over OTLP: refreshed on a timer (a scrape of /metrics refreshes them too).
    const timer = setInterval(() => void this.refresh(), STORE_REFRESH_MS);
    Deno.unrefTimer(timer);
    for (const counter of this.#counters()) {
      meter.createObservableCounter(`mcphub.${counter.name.slice("mcphub_".length, -"_total".length)}`, {
        description: counter.help,
      }).addCallback((result) => {
        for (const [values, total] of counter.series()) {
          result.observe(total, Object.fromEntries(counter.labelNames.map((n, i) => [n, values[i]])));
        }
      });
    }
  }

  /** True when spans are made (Deno's OpenTelemetry is on). */
  get tracing(): boolean {
    return this.#tracer !== undefined;
  }

  /**
   * Starts a SERVER operation for a host request: its parent is the `traceparent` in `params._meta` when
   * there is a valid one, else the ambient context (a new trace when there is none).
   */
  server(init: ServerInit): ServerOperation {
    const method = methodLabel(init.method);
    const tracer = this.#tracer;
    if (!tracer) return new ServerOperation(this, method);
    const api = this.api!;
    // On stdio there is no ambient context (no HTTP request span): the root, without asking for it.
    const { parent, tracestate } = this.#remoteParent(
      init.meta,
      init.transport === "pipe" ? api.ROOT_CONTEXT : api.context.active(),
    );
    const attributes: Attributes = { "mcp.method.name": method };
    if (init.requestId !== undefined) attributes["jsonrpc.request.id"] = String(init.requestId);
    if (init.sessionId) attributes["mcp.session.id"] = init.sessionId;
    if (init.transport) attributes["network.transport"] = init.transport;
    const span = tracer.startSpan(method, { kind: api.SpanKind.SERVER, attributes }, parent);
    return new ServerOperation(this, method, span, tracestate);
  }

  /** The parent a `traceparent` in `meta` (a request's `params._meta`) names, else `fallback`. */
  #remoteParent(
    meta: unknown,
    fallback: OtelApi.Context,
  ): { parent: OtelApi.Context; tracestate?: string } {
    const api = this.api!;
    const bag = typeof meta === "object" && meta !== null ? meta as Record<string, unknown> : undefined;
    const remote = parseTraceparent(bag?.traceparent);
    if (!remote) return { parent: fallback };
    const state = bag?.tracestate;
    const parent = api.trace.setSpanContext(api.ROOT_CONTEXT, {
      traceId: remote.traceId,
      spanId: remote.spanId,
      traceFlags: remote.flags,
      isRemote: true,
    });
    return { parent, tracestate: typeof state === "string" && state.length <= 512 ? state : undefined };
  }

  /**
   * Starts a CLIENT operation for a request to a downstream server, a child of `parent` when given (else
   * of the ambient context, or with `root` a trace of its own).
   */
  client(parent: ServerOperation | undefined, init: ClientInit & { root?: boolean }): ClientOperation {
    const tracer = this.#tracer;
    if (!tracer) return new ClientOperation(this, init);
    const api = this.api!;
    // The parent is explicit: no ambient context to look up.
    const context = parent?.span
      ? api.trace.setSpan(api.ROOT_CONTEXT, parent.span)
      : init.root
      ? api.ROOT_CONTEXT
      : api.context.active();
    const attributes: Attributes = {
      "mcp.method.name": init.method,
      "mcphub.server.name": init.server,
    };
    if (init.tool !== undefined) {
      attributes["gen_ai.tool.name"] = init.tool;
      if (init.method === "tools/call") attributes["gen_ai.operation.name"] = "execute_tool";
    }
    if (init.prompt !== undefined) attributes["gen_ai.prompt.name"] = init.prompt;
    if (init.transport) attributes["network.transport"] = init.transport;
    const target = init.tool ?? init.prompt;
    const name = target !== undefined ? `${init.method} ${target}` : init.method;
    const span = tracer.startSpan(name, { kind: api.SpanKind.CLIENT, attributes }, context);
    return new ClientOperation(this, init, span, parent?.tracestate, parent);
  }

  /** The CLIENT operations open now, by `traceparent` (see {@linkcode Telemetry.owner}). */
  #owned = new Map<string, ClientOperation>();

  /** @internal A CLIENT operation's `traceparent` while it is open. */
  own(traceparent: string, op: ClientOperation | undefined): void {
    if (op) this.#owned.set(traceparent, op);
    else this.#owned.delete(traceparent);
  }

  /** The open CLIENT operation whose `traceparent` this is: a request its caller already traced. */
  owner(traceparent: unknown): ClientOperation | undefined {
    return typeof traceparent === "string" ? this.#owned.get(traceparent) : undefined;
  }

  /**
   * The spans of the requests one connection to `server` writes that no caller traced (undefined when
   * not tracing): see {@linkcode WireTrace}. `redact` clears the server's secrets from error messages.
   */
  wire(
    server: string,
    transport: "pipe" | "tcp",
    redact: (text: string) => string = (text) => text,
  ): WireTrace | undefined {
    return this.#tracer ? new WireTrace(this, server, transport, redact) : undefined;
  }

  /**
   * A request a server sent to be relayed to the host (sampling, elicitation, roots; a 2026-07-28
   * server's input requests): the gateway receives it as the server's client, so a SERVER span (span
   * only, no duration), a child of the `traceparent` the server put in its `params._meta`, else of the
   * CLIENT operation whose call it is part of (`cause`), else a trace of its own. The request to the host
   * is then a CLIENT operation under it ({@linkcode Telemetry.client}). Undefined when not tracing.
   */
  relayed(init: {
    method: string;
    server: string;
    requestId?: string | number;
    transport?: "pipe" | "tcp";
    meta?: unknown;
    cause?: ClientOperation;
  }): ServerOperation | undefined {
    const tracer = this.#tracer;
    if (!tracer) return undefined;
    const api = this.api!;
    const method = methodLabel(init.method);
    const fallback = init.cause?.span
      ? api.trace.setSpan(api.ROOT_CONTEXT, init.cause.span)
      : api.ROOT_CONTEXT;
    const { parent, tracestate } = this.#remoteParent(init.meta, fallback);
    const attributes: Attributes = { "mcp.method.name": method, "mcphub.server.name": init.server };
    if (init.requestId !== undefined) attributes["jsonrpc.request.id"] = String(init.requestId);
    if (init.transport) attributes["network.transport"] = init.transport;
    const span = tracer.startSpan(method, { kind: api.SpanKind.SERVER, attributes }, parent);
    return new ServerOperation(this, method, span, tracestate, false);
  }

  /** A server changed state: counted, and a span of its own when tracing (reconnects show in traces). */
  serverState(server: string, state: string, failures: number): void {
    if (this.#lastState.get(server) === state) return;
    const from = this.#lastState.get(server);
    this.#lastState.set(server, state);
    this.stateChanges.add(1, { server, state });
    const tracer = this.#tracer;
    if (!tracer) return;
    const attributes: Attributes = { "mcphub.server.name": server, "mcphub.server.state": state };
    if (from) attributes["mcphub.server.previous_state"] = from;
    if (failures) attributes["mcphub.server.failures"] = failures;
    tracer.startSpan(`mcphub.server.state ${state}`, {
      kind: this.api!.SpanKind.INTERNAL,
      attributes,
      root: true,
    }).end();
  }

  /** A finished tool call (the hub's record): result and spool byte counters. */
  callRecorded(server: string, resultBytes: number, spooled: boolean): void {
    this.resultBytes.add(resultBytes, { server });
    if (spooled) {
      this.spooledResults.add(1, { server });
      this.spooledBytes.add(resultBytes, { server });
    }
  }

  /** @internal */
  observeServer(seconds: number, labels: Labels): void {
    this.serverDuration.observe(seconds, labels);
    this.#otelServer?.record(seconds, otelAttributes(labels));
  }

  /** @internal */
  observeClient(seconds: number, labels: Labels): void {
    this.clientDuration.observe(seconds, labels);
    this.#otelClient?.record(seconds, otelAttributes(labels));
  }

  #refreshers: (() => Promise<void>)[] = [];

  /**
   * Adds work to do before gauges are read (a query of the store whose answer a gauge then reads): run by
   * {@linkcode Telemetry.refresh} before each scrape. A failure leaves the last values.
   */
  refresher(refresh: () => Promise<void>): () => void {
    this.#refreshers.push(refresh);
    return () => {
      const at = this.#refreshers.indexOf(refresh);
      if (at >= 0) this.#refreshers.splice(at, 1);
    };
  }

  /** Runs every refresher (see {@linkcode Telemetry.refresher}); never rejects. */
  async refresh(): Promise<void> {
    await Promise.allSettled(this.#refreshers.map((refresh) => refresh()));
  }

  /** Adds gauges read at each scrape (their names are among {@linkcode GAUGES}). */
  gauges(read: () => GaugeReading[]): () => void {
    this.#gauges.push(read);
    return () => {
      const at = this.#gauges.indexOf(read);
      if (at >= 0) this.#gauges.splice(at, 1);
    };
  }

  #readGauges(): GaugeReading[] {
    const byName = new Map<string, GaugeReading>();
    for (const read of this.#gauges) {
      for (const reading of read()) {
        const into = byName.get(reading.name);
        if (into) into.series.push(...reading.series);
        else byName.set(reading.name, { ...reading, series: [...reading.series] });
      }
    }
    return [...byName.values()];
  }

  #counters(): Counter[] {
    return [this.refused, this.spooledResults, this.spooledBytes, this.resultBytes, this.stateChanges];
  }

  /** Every metric in the Prometheus text format (version 0.0.4). */
  render(): string {
    let out = this.serverDuration.render() + this.clientDuration.render();
    for (const counter of this.#counters()) out += counter.render();
    for (const reading of this.#readGauges()) out += renderGauge(reading);
    return out;
  }
}

/** The Prometheus label names as the conventions' attribute keys (OTLP carries the dotted names). */
function otelAttributes(labels: Labels): Attributes {
  const out: Attributes = { "mcp.method.name": labels.mcp_method_name };
  if (labels.gen_ai_tool_name) out["gen_ai.tool.name"] = labels.gen_ai_tool_name;
  if (labels.error_type) out["error.type"] = labels.error_type;
  if (labels.server) out["mcphub.server.name"] = labels.server;
  return out;
}

/** What {@linkcode loadTelemetry} needs. */
export interface LoadTelemetryOptions {
  /** Deno's OpenTelemetry is on (`OTEL_DENO=true`): load the API and make spans. */
  tracing: boolean;
  /** @default false */
  toolArguments?: boolean;
  version?: string;
}

/** The gateway's telemetry, with the OpenTelemetry API loaded only when tracing is on. */
export async function loadTelemetry(options: LoadTelemetryOptions): Promise<Telemetry> {
  const api = options.tracing ? await import("@opentelemetry/api") : undefined;
  return new Telemetry({ api, toolArguments: options.toolArguments, version: options.version });
}
