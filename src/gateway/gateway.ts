/**
 * The upstream side: one MCP server that an agent host talks to, advertising
 * the meta-tools and the mounted downstream tools of the hub.
 *
 * @module
 */
import { CallToolRequestSchema, HostServer, ListToolsRequestSchema } from "../mcp/sdk.ts";
import { invalidParams } from "../mcp/errors.ts";
import { CLIENT_CAPABILITIES_KEY } from "../mcp/light.ts";
import type {
  CallToolRequest,
  CallToolResult,
  Progress,
  RequestHandlerExtra,
  ServerNotification,
  ServerRequest,
  Tool,
  Transport,
} from "../mcp/sdk.ts";
import { errorResult, type Hub } from "../hub/hub.ts";
import type { NameReference } from "../catalog/mod.ts";
import type { CatalogTool } from "../catalog/mod.ts";
import {
  CONTRACT_VERSION,
  DESCRIBE_TOOL_CODE,
  META_TOOLS,
  type MetaToolName,
  metaToolName,
} from "../hub/meta_tools.ts";
// Code mode's names; the room itself loads with the first run_code call or declarations read (start-up time).
import { closeSandboxes, loadCode, RUN_CODE, TYPES_URI as CODE_TYPES_URI } from "../code/light.ts";
import { DetachedCalls, TooManyDetachedError } from "./detached.ts";
import { MAX_TOOL_NAME_CHARS } from "../trust/limits.ts";
import { Passthrough } from "./passthrough.ts";
import { GATEWAY_CAPABILITIES } from "./initialize.ts";
import type { SessionRelay } from "./relay.ts";
import { describeTool, resolveTool, searchTools } from "../hub/discovery.ts";
import { decideExposure, type Exposure } from "../hub/exposure.ts";
import { StdioServerTransport } from "./stdio_server.ts";
import { codeTypesQuery, codeTypesResource, gatewayInstructions, listServers } from "./meta.ts";
import { advertisedSteps, type Listed, listedOf, mountedDefinition, sameListedSteps } from "./tool_list.ts";
import { member, RawResult } from "../json/raw_json.ts";
import { Stepper } from "../json/slices.ts";
import type { OperationError, ServerOperation, Telemetry } from "../telemetry/mod.ts";
import type { DetachedRows } from "../store/mod.ts";

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * `tools/call` with the name left unchecked by the SDK, so that a non-string name gets the protocol's
 * InvalidParams from us (the SDK's own schema failure surfaces as -32603 with a validation dump).
 */
const LooseCallToolRequestSchema = CallToolRequestSchema.extend({
  params: CallToolRequestSchema.shape.params.omit({ name: true }).passthrough(),
});

/** A tool name as a caller sent it: a non-empty string of at most MAX_TOOL_NAME_CHARS, else InvalidParams. */
function checkToolName(name: unknown, what: string): string {
  if (typeof name !== "string" || name === "") invalidParams(`${what} must be a non-empty string`);
  if (name.length > MAX_TOOL_NAME_CHARS) {
    invalidParams(
      `Unknown tool "${clipName(name)}": tool names are at most ${MAX_TOOL_NAME_CHARS} characters ` +
        `(this one has ${name.length}). Call list_servers or search_tools to see the available tools.`,
    );
  }
  return name;
}

/** A meta-tool implementation: returns the JSON object of its result, or a full CallToolResult. */
export type MetaHandler = (
  args: Record<string, unknown>,
  extra: Extra,
) => Promise<Record<string, unknown> | CallToolResult> | Record<string, unknown> | CallToolResult;

/** Options of {@linkcode Gateway}. */
export interface GatewayOptions {
  version: string;
  log: (line: string) => void;
  /** Extra meta-tools implemented by other modules (get_result, stats, …). */
  handlers?: Partial<Record<MetaToolName, MetaHandler>>;
  /** Pins in effect (the agent's, else the config's). @default config.pin */
  pins?: readonly string[];
  /**
   * Starts the downstream connections; called once, after the host's `initialize`, so each
   * downstream session declares the client capabilities the host declared (sampling, elicitation, roots).
   */
  start?: () => void;
  /** The relay shared by every upstream session of the hub; undefined = one of this gateway's own. */
  relay?: SessionRelay;
  /**
   * `expose: auto`: calls per public name from the call records (this agent's), read once when the
   * session starts; the session's own calls are counted on top.
   */
  usage?: () => Promise<ReadonlyMap<string, number>>;
  /** A span and a duration per host request (see telemetry/); undefined = none, at no cost. */
  telemetry?: Telemetry;
  /** Detached calls' states in the store, for `poll_result` on any replica (HTTP); undefined = in memory only. */
  detachedRows?: DetachedRows;
}

/** A meta-tool result: the JSON object as `structuredContent` and as one compact text block. */
export function jsonResult(value: Record<string, unknown>): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(value) }], structuredContent: value };
}

export { invalidParams } from "../mcp/errors.ts";
export { admitReceipt, mountedDefinition } from "./tool_list.ts";

function isResult(value: unknown): value is CallToolResult {
  return typeof value === "object" && value !== null && Array.isArray((value as CallToolResult).content);
}

/** Pause between a call's last progress notification and its result (see #progressForwarder). */
const PROGRESS_GAP_MS = 5;

/** The longest tool name echoed back in an error. */
const ECHO_NAME_CHARS = 128;

/** A name as echoed in an error: cut to a bound (a hostile or mistaken name may be huge). */
function clipName(name: string): string {
  return name.length <= ECHO_NAME_CHARS ? name : `${name.slice(0, ECHO_NAME_CHARS)}…`;
}

/** A transport that can answer a request with a result relayed as its bytes (see raw_json.ts). */
export interface RawResultTransport extends Transport {
  /** Answers request `id` with a result relayed as the bytes it came in (`result` is the JSON value). */
  /** `options.resultType`: the result has that member already (a 2026-07-28 host's gets one else). */
  sendResult(
    id: string | number,
    result: readonly Uint8Array[],
    options?: { resultType?: boolean },
  ): Promise<void>;
}

function isRawResultTransport(transport: Transport): transport is RawResultTransport {
  return typeof (transport as Partial<RawResultTransport>).sendResult === "function";
}

/** A failed request's JSON-RPC error, as the SDK's server builds it. */
function errorFields(error: unknown): { code: number; message: string; data?: unknown } {
  const e = (error ?? {}) as { code?: unknown; message?: unknown; data?: unknown };
  const fields: { code: number; message: string; data?: unknown } = {
    code: typeof e.code === "number" && Number.isSafeInteger(e.code) ? e.code : -32603,
    message: typeof e.message === "string" ? e.message : "Internal error",
  };
  if (e.data !== undefined) fields.data = e.data;
  return fields;
}

function utf8Length(text: string): number {
  return new TextEncoder().encode(text).length;
}

/** The gateway server of one `mcp serve` process. */
export class Gateway {
  readonly server: HostServer;
  #hub: Hub;
  #options: GatewayOptions;
  #handlers: Partial<Record<MetaToolName, MetaHandler>>;
  #unsubscribe: () => void;
  #connected = false;
  #closed = false;
  #initialized = false;
  /** What the client last saw of tools/list (or was told changed). */
  #listed?: Listed;
  /** A tool-list comparison is waiting for the catalog; another is due after it (see #notifyIfChanged). */
  #comparing = false;
  #compareAgain = false;
  /** Detached calls of this process. */
  readonly detached: DetachedCalls;
  /** Resources, prompts, completion, logging and server-to-client requests. */
  readonly passthrough: Passthrough;
  #started = false;
  /** Calls per public name (`expose: auto`): the records' when read, plus this session's. */
  #usage = new Map<string, number>();
  /** Advertised bytes of a catalog entry's definition (see mountedDefinition). */
  #sizes = new WeakMap<CatalogTool, number>();

  constructor(hub: Hub, options: GatewayOptions) {
    this.#hub = hub;
    this.#options = options;
    if (hub.config.expose === "auto" && options.usage) {
      options.usage().then((counts) => {
        for (const [name, calls] of counts) this.#usage.set(name, (this.#usage.get(name) ?? 0) + calls);
        this.#notifyIfChanged();
      }).catch((error) => options.log(`warning: reading the call records for expose: auto failed: ${error}`));
    }
    this.server = new HostServer(
      { name: "mcphub", version: options.version },
      { capabilities: GATEWAY_CAPABILITIES, instructions: gatewayInstructions(hub) },
    );
    this.passthrough = new Passthrough(hub, this.server, {
      log: options.log,
      ready: () => (this.#begin(), hub.settled()),
      relay: options.relay,
      own: {
        resources: () => hub.codeMode ? [codeTypesResource()] : [],
        read: async (uri) => {
          const query = codeTypesQuery(uri);
          if (!hub.codeMode || query === undefined) return undefined;
          const { codeDeclarations } = await loadCode();
          const text = await codeDeclarations(hub, { query: query || undefined });
          return { contents: [{ uri, mimeType: "application/typescript", text }] };
        },
      },
      telemetry: options.telemetry,
      operation: (extra) => this.#operation(extra),
    });
    this.detached = new DetachedCalls({ shared: options.detachedRows });
    this.#handlers = {
      list_servers: () => listServers(hub, this),
      call_tool: (args, extra) => this.#callTool(args, extra),
      poll_result: (args) => this.detached.pollAnywhere(args.callId, hub.agent),
      search_tools: (args) => searchTools(hub, args),
      resolve_tool: (args) => resolveTool(hub, args),
      describe_tool: (args) => this.#describeTool(args),
      run_code: (args, extra) => this.#runCode(args, extra),
      ...options.handlers,
    };
    this.server.setRequestHandler(ListToolsRequestSchema, async () => {
      this.#begin();
      // The first answer is complete: cached tool lists at once, else wait for start-up (startup_wait).
      await hub.settled();
      // Built in slices, so a large catalog does not hold the event loop (then read from it at once).
      await hub.catalogAsync();
      // The answer's definitions built in steps too; it is serialized in slices (see CoalescingWriter).
      const meta = this.metaTools();
      const mounted = this.mountedTools();
      const tools = await new Stepper(advertisedSteps(meta, mounted)).finishAsync();
      this.#listed = listedOf(meta, mounted);
      return { tools };
    });
    this.server.setRequestHandler(
      LooseCallToolRequestSchema,
      (request, extra) => this.#onCall(request as unknown as CallToolRequest, extra),
    );
    this.server.oninitialized = () => {
      this.#begin();
      this.passthrough.initialized();
      this.#initialized = true;
      this.#notifyIfChanged();
    };
    this.#unsubscribe = hub.onChange(() => this.#notifyIfChanged());
  }

  /**
   * Starts the downstream connections once the host's capabilities are known: at `initialized`,
   * or at the first request after `initialize` from a host that skips the notification.
   */
  #begin(): void {
    if (this.#started || this.server.getClientCapabilities() === undefined) return;
    this.#started = true;
    this.#options.start?.();
  }

  /**
   * Sends `tools/list_changed` when what `tools/list` would answer differs from
   * what the client last listed, never before `initialized`; state changes that do
   * not change the list (connecting, backoff) send nothing.
   */
  #notifyIfChanged(): void {
    // A client that has not listed yet will see the current list when it does.
    if (!this.#connected || !this.#initialized || this.#listed === undefined) return;
    // One comparison at a time, after the catalog is built in slices (a burst of changes is one more).
    if (this.#comparing) {
      this.#compareAgain = true;
      return;
    }
    this.#comparing = true;
    this.#hub.catalogAsync().then(async () => {
      const listed = this.#listed;
      if (!this.#connected || listed === undefined) return;
      const now = listedOf(this.metaTools(), this.mountedTools());
      // Compared in steps (a relisted server's definitions are new objects: compared by their JSON).
      if (await new Stepper(sameListedSteps(now, listed)).finishAsync()) return;
      // Listed again meanwhile: that answer is what the client saw.
      if (this.#listed !== listed) return;
      this.#listed = now;
      this.server.sendToolListChanged().catch(() => {});
    }).catch((error) => this.#options.log(`warning: comparing the tool list failed: ${error}`))
      .finally(() => {
        this.#comparing = false;
        if (this.#compareAgain) {
          this.#compareAgain = false;
          this.#notifyIfChanged();
        }
      });
  }

  /** The meta-tools this gateway implements, in their advertised order. */
  metaTools(): Tool[] {
    const code = this.#hub.codeMode;
    return (Object.keys(META_TOOLS) as MetaToolName[])
      .filter((name) => this.#handlers[name] && (name !== "run_code" || code))
      .map((name) => name === "describe_tool" && code ? DESCRIBE_TOOL_CODE : META_TOOLS[name]);
  }

  /** describe_tool; with code mode on, `run_code` gives the declarations of the callable tools. */
  async #describeTool(args: Record<string, unknown>): Promise<Record<string, unknown>> {
    const { tool, query } = args;
    if (typeof tool !== "string" || metaToolName(tool) !== "run_code" || !this.#hub.codeMode) {
      return await describeTool(this.#hub, args);
    }
    if (query !== undefined && query !== null && typeof query !== "string") {
      invalidParams(`describe_tool: "query" must be a string`);
    }
    const def = META_TOOLS.run_code;
    const { codeDeclarations } = await loadCode();
    return {
      contract_version: CONTRACT_VERSION,
      name: RUN_CODE,
      description: def.description,
      inputSchema: def.inputSchema,
      declarations: await codeDeclarations(this.#hub, { query: (query ?? undefined) as string | undefined }),
      resource: CODE_TYPES_URI,
    };
  }

  /** run_code: now, or detached (collected with poll_result). */
  async #runCode(args: Record<string, unknown>, extra: Extra): Promise<CallToolResult> {
    const hub = this.#hub;
    const { runCode, runCodeInput } = await loadCode();
    const input = runCodeInput(hub, args);
    const detach = args.detach;
    if (detach !== undefined && detach !== null && typeof detach !== "boolean") {
      invalidParams(`run_code: "detach" must be true or false`);
    }
    const op = this.#operation(extra);
    if (detach !== true) return await runCode(hub, input, { signal: extra.signal, trace: op });
    let callId: string;
    try {
      callId = this.detached.start(
        { namespaced: RUN_CODE, agent: hub.agent },
        (signal) => runCode(hub, input, { signal, via: "detach", trace: op }),
      );
      op?.event("mcphub.call.detached", { "mcphub.call.id": callId, "mcphub.tool.name": RUN_CODE });
    } catch (error) {
      if (error instanceof TooManyDetachedError) return errorResult(`run_code: ${error.message}`);
      throw error;
    }
    await this.detached.stored(callId);
    return jsonResult({
      status: "accepted",
      callId,
      tool: RUN_CODE,
      timeoutMs: input.timeoutMs,
      nextAction: "Call poll_result with this callId until its status is no longer pending.",
    });
  }

  /** Pins in effect: the agent's, else the config's. */
  get pins(): readonly string[] {
    return this.#options.pins ?? this.#hub.scope?.pin ?? this.#hub.config.pin;
  }

  /** The exposure in force now: what `expose` mounts of the catalog in scope, and why. */
  exposure(): Exposure {
    const config = this.#hub.config;
    // Each server's tools in the order it listed them, servers in config order.
    return decideExposure(this.#hub.listedOrder(this.#hub.catalog()), {
      expose: config.expose,
      pins: this.pins,
      budgetTokens: config.exposeBudgetTokens,
      bytes: (entry) => this.#advertisedBytes(entry),
      metaBytes: this.metaTools().reduce((n, t) => n + utf8Length(JSON.stringify(t)), 0),
      usage: this.#usage,
    });
  }

  #advertisedBytes(entry: CatalogTool): number {
    let bytes = this.#sizes.get(entry);
    if (bytes === undefined) {
      bytes = utf8Length(JSON.stringify(mountedDefinition(entry)));
      this.#sizes.set(entry, bytes);
    }
    return bytes;
  }

  /**
   * Downstream tools mounted under their public names: all of them, in lazy mode the pinned ones, in auto
   * mode as {@linkcode Gateway.exposure} decides; then, for an agent with a tool_schema_budget, those
   * whose whole definitions fit, first fit in name order (a schema is never cut).
   * In the order the servers list them (servers in config order), as `tools/list` answers.
   */
  mountedTools(): CatalogTool[] {
    const chosen = this.exposure().tools;
    const budget = this.#hub.scope?.toolSchemaBudget;
    if (budget === undefined) return chosen;
    let left = budget;
    const byName = [...chosen].sort((a, b) =>
      a.namespaced < b.namespaced ? -1 : a.namespaced > b.namespaced ? 1 : 0
    );
    const fit = new Set(byName.filter((entry) => {
      const bytes = utf8Length(JSON.stringify(mountedDefinition(entry)));
      if (bytes > left) return false;
      left -= bytes;
      return true;
    }));
    return chosen.filter((entry) => fit.has(entry));
  }

  /**
   * The input schema `tools/list` publishes for tool `name` when it may declare `x-mcp-header`
   * properties (a mounted tool's whose schema names the key; undefined otherwise: meta-tools declare
   * none, and a tool not mounted is published to no host), for the HTTP listener's `Mcp-Param-*` check.
   */
  async headerSchema(name: string): Promise<unknown> {
    if (metaToolName(name)) return undefined;
    const entry = await this.#hub.find({ tool: name });
    const schema = entry?.definition.inputSchema;
    if (!schema || !JSON.stringify(schema).includes('"x-mcp-header"')) return undefined;
    return this.mountedTools().includes(entry!) ? schema : undefined;
  }

  #onCall(request: CallToolRequest, extra: Extra): Promise<CallToolResult>;
  #onCall(request: CallToolRequest, extra: Extra, raw: true): Promise<CallToolResult | RawResult>;
  async #onCall(request: CallToolRequest, extra: Extra, raw?: true): Promise<CallToolResult | RawResult> {
    this.#begin();
    const name = checkToolName(request.params.name as unknown, 'tools/call: "name"');
    const args = (request.params.arguments ?? {}) as Record<string, unknown>;
    const meta = metaToolName(name);
    const op = this.#operation(extra);
    if (meta) {
      const handler = this.#handlers[meta];
      if (meta === "run_code" && !this.#hub.codeMode) {
        invalidParams(
          `Tool "${clipName(name)}" is not enabled: code mode is off (set code_mode: true in mcphub.yaml, ` +
            "at the top level or for the agent)",
        );
      }
      if (!handler) {
        invalidParams(`Tool "${name}" is not available in this version`);
      }
      op?.tool(name);
      // call_tool on the fast path relays the downstream's bytes as a mounted tool's call does.
      if (meta === "call_tool" && raw) return await this.#callTool(args, extra, true);
      const value = await handler(args, extra);
      if (op && isResult(value) && value.isError === true) op.toolError = true;
      return isResult(value) ? value : jsonResult(value);
    }
    const entry = await this.#hub.find({ tool: name });
    if (!entry) {
      // A mounted tool is called by its public name; say which one a bare downstream name means.
      const bare = name.includes("__") ? [] : await this.#hub.bare(name);
      const mounted = new Set(this.mountedTools().map((t) => t.namespaced));
      const names = bare.map((t) => t.namespaced).filter((n) => mounted.has(n));
      if (names.length) {
        invalidParams(
          `Unknown tool "${clipName(name)}": mounted tools are named server__tool; use ${
            names.map((n) => `"${n}"`).join(" or ")
          }.`,
        );
      }
      return this.#notFound({ tool: name });
    }
    return await this.#run(entry, args, extra, { via: "mount", raw });
  }

  /**
   * One downstream call for the host, mounted or through call_tool: its progress forwarded, the server's
   * requests to the host related to it (`passthrough.track`), then the hub's one call path.
   */
  async #run(
    entry: CatalogTool,
    args: Record<string, unknown>,
    extra: Extra,
    options: { via: "mount" | "call_tool"; raw?: true; timeoutMs?: number },
  ): Promise<CallToolResult | RawResult> {
    if (this.#hub.config.expose === "auto") {
      // Usage decides what auto mounts past its budget: a tool called now may earn its place.
      this.#usage.set(entry.namespaced, (this.#usage.get(entry.namespaced) ?? 0) + 1);
      this.#notifyIfChanged();
    }
    const op = this.#operation(extra);
    // call_tool's span keeps its own name; a mounted tool's is the tool's.
    if (options.via === "mount") op?.tool(entry.namespaced);
    op?.arguments(args);
    const progress = this.#progressForwarder(extra);
    const release = this.passthrough.track(entry.server, extra);
    try {
      const result = await this.#hub.call(entry, args, {
        via: options.via,
        signal: extra.signal,
        timeoutMs: options.timeoutMs,
        onProgress: progress.onProgress,
        raw: options.raw ?? false,
        trace: op,
        clientCapabilities: hostCapabilities(extra._meta),
      });
      if (op && result.isError === true) op.toolError = true;
      return result;
    } finally {
      release();
      await progress.settle();
    }
  }

  /**
   * Forwards a call's progress to the host. `settle()` (before the result is returned) waits until the
   * last progress notification is written and then a moment more: an SDK-based host handles a response
   * at once but a notification a microtask later, so a progress notification read in the same chunk as
   * the response would be dropped as "unknown token" (a direct connection loses it the same way).
   */
  #progressForwarder(extra: Extra): { onProgress?: (p: Progress) => void; settle(): Promise<void> } {
    const token = extra._meta?.progressToken;
    if (token === undefined) return { settle: () => Promise.resolve() };
    let last: Promise<unknown> | undefined;
    return {
      onProgress: (progress) => {
        last = extra.sendNotification({
          method: "notifications/progress",
          params: { ...progress, progressToken: token },
        }).catch(() => {});
      },
      settle: async () => {
        if (!last) return;
        await last;
        await new Promise((resolve) => setTimeout(resolve, PROGRESS_GAP_MS));
      },
    };
  }

  /** A reference to a server that is down is a tool error naming its state; anything else is unknown. */
  #notFound(ref: NameReference): CallToolResult {
    const down = this.#hub.unavailable(ref);
    if (down) return errorResult(`${down}. Call list_servers for the state of every server.`);
    this.#unknownTool(ref.server ? `${ref.server}__${ref.tool}` : ref.tool);
  }

  /**
   * call_tool with a bare downstream name: the one tool in scope that has it, or InvalidParams listing
   * every candidate when several servers have it.
   */
  async #bareName(ref: NameReference): Promise<CatalogTool | undefined> {
    if (ref.server || ref.tool.includes("__")) return undefined;
    const found = await this.#hub.bare(ref.tool);
    if (found.length <= 1) return found[0];
    invalidParams(
      `call_tool: "${clipName(ref.tool)}" is a tool of ${found.length} servers; name one of ${
        found.map((t) => `"${t.namespaced}"`).join(", ")
      }.`,
    );
  }

  #unknownTool(name: string): never {
    const near = this.#hub.closest(name);
    invalidParams(
      `Unknown tool "${clipName(name)}".${
        near.length ? ` Did you mean ${near.map((n) => `"${n}"`).join(", ")}?` : ""
      }` +
        " Call list_servers or search_tools to see the available tools.",
    );
  }

  #callTool(args: Record<string, unknown>, extra: Extra): Promise<CallToolResult>;
  #callTool(args: Record<string, unknown>, extra: Extra, raw: true): Promise<CallToolResult | RawResult>;
  async #callTool(
    args: Record<string, unknown>,
    extra: Extra,
    raw?: true,
  ): Promise<CallToolResult | RawResult> {
    const { server, tool, arguments: callArgs, detach, timeout_ms: timeoutMs } = args;
    checkToolName(tool, 'call_tool: "tool"');
    if (server !== undefined && server !== null && typeof server !== "string") {
      invalidParams(`call_tool: "server" must be a string`);
    }
    if (
      callArgs !== undefined && callArgs !== null && (typeof callArgs !== "object" || Array.isArray(callArgs))
    ) {
      invalidParams(`call_tool: "arguments" must be an object`);
    }
    if (
      timeoutMs !== undefined && timeoutMs !== null &&
      (typeof timeoutMs !== "number" || !Number.isInteger(timeoutMs) || timeoutMs < 1)
    ) {
      invalidParams(`call_tool: "timeout_ms" must be a positive integer (milliseconds)`);
    }
    if (detach !== undefined && detach !== null && typeof detach !== "boolean") {
      invalidParams(`call_tool: "detach" must be true or false`);
    }
    const ref = { server: (server ?? undefined) as string | undefined, tool: tool as string };
    const entry = await this.#hub.find(ref) ?? await this.#bareName(ref);
    if (!entry) return this.#notFound(ref);
    const input = (callArgs ?? {}) as Record<string, unknown>;
    if (detach === true) {
      const limit = this.#hub.config.callTimeoutMs;
      const bound = typeof timeoutMs === "number" ? Math.min(timeoutMs, limit) : limit;
      let callId: string;
      const op = this.#operation(extra);
      op?.arguments(input);
      try {
        callId = this.detached.start(
          { namespaced: entry.namespaced, agent: this.#hub.agent },
          (signal) => this.#hub.call(entry, input, { via: "detach", signal, timeoutMs: bound, trace: op }),
        );
        op?.event("mcphub.call.detached", { "mcphub.call.id": callId, "mcphub.tool.name": entry.namespaced });
      } catch (error) {
        if (error instanceof TooManyDetachedError) return errorResult(`call_tool: ${error.message}`);
        throw error;
      }
      // Polled from any replica on the store: the start is written before the host hears the callId.
      await this.detached.stored(callId);
      return jsonResult({
        status: "accepted",
        callId,
        server: entry.server,
        tool: entry.short,
        downstream: entry.tool,
        namespaced: entry.namespaced,
        timeoutMs: bound,
        nextAction: "Call poll_result with this callId until its status is no longer pending.",
      });
    }
    return await this.#run(entry, input, extra, {
      via: "call_tool",
      raw,
      timeoutMs: (timeoutMs ?? undefined) as number | undefined,
    });
  }

  /**
   * Serves on a transport. On the gateway's stdio, and on any transport that can send a result as bytes
   * (`sendResult`: a `--listen` session's, see http/raw_sse.ts), a `tools/call` of a mounted tool takes the
   * fast path (see {@linkcode Gateway.#fastPath}).
   */
  async connect(transport: Transport): Promise<void> {
    if (transport instanceof StdioServerTransport) {
      transport.intercept = (message) => this.#fastPath(message as Record<string, unknown>, transport);
    }
    await this.server.connect(transport);
    if (!(transport instanceof StdioServerTransport) && isRawResultTransport(transport)) {
      // The message was parsed and checked by the transport already; the SDK's server gets what is left.
      const onmessage = transport.onmessage;
      transport.onmessage = (message, extra) => {
        if (this.#fastPath(message as unknown as Record<string, unknown>, transport)) return;
        onmessage?.call(transport, message, extra);
      };
    }
    if (this.#options.telemetry) this.#observe(transport, this.#options.telemetry);
    this.#connected = true;
  }

  /** Host requests being served, by request id (telemetry on): their spans and start times. */
  #operations = new Map<string | number, ServerOperation>();

  #operation(extra: Extra): ServerOperation | undefined {
    return this.#operations.size ? this.#operations.get(extra.requestId) : undefined;
  }

  /**
   * Watches the transport's traffic (telemetry on): a SERVER operation from each request's arrival until
   * its answer is sent, whichever path answers it (the SDK's server or the fast path).
   */
  #observe(transport: Transport, telemetry: Telemetry): void {
    const operations = this.#operations;
    const kind = transport instanceof StdioServerTransport ? "pipe" : "tcp";
    const begin = (message: Record<string, unknown>) => {
      const { id, method } = message;
      const params = message.params as Record<string, unknown> | undefined;
      if (typeof method !== "string") return;
      if (id === undefined) {
        // A request the host cancelled gets no answer: its operation ends here.
        if (method === "notifications/cancelled" && params && typeof params === "object") {
          finish(params.requestId, { type: "cancelled" });
        }
        return;
      }
      if ((typeof id !== "string" && typeof id !== "number") || operations.has(id)) return;
      operations.set(
        id,
        telemetry.server({
          method,
          requestId: id,
          sessionId: transport.sessionId,
          transport: kind,
          meta: params && typeof params === "object" ? params._meta : undefined,
        }),
      );
    };
    const finish = (id: unknown, error?: OperationError) => {
      if (typeof id !== "string" && typeof id !== "number") return;
      const op = operations.get(id);
      if (!op) return;
      operations.delete(id);
      op.end(error);
    };
    if (transport instanceof StdioServerTransport) {
      const intercept = transport.intercept;
      transport.intercept = (message) => {
        begin(message as Record<string, unknown>);
        return intercept?.(message) ?? false;
      };
    } else {
      const onmessage = transport.onmessage;
      transport.onmessage = (message, extra) => {
        begin(message as unknown as Record<string, unknown>);
        onmessage?.call(transport, message, extra);
      };
    }
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      const m = message as Record<string, unknown>;
      if (!("method" in m) && "id" in m) {
        const error = m.error as { code?: unknown; message?: unknown } | undefined;
        if (error && typeof error === "object") {
          const code = typeof error.code === "number" ? error.code : undefined;
          finish(m.id, {
            type: code === undefined ? "_OTHER" : String(code),
            code,
            message: typeof error.message === "string" ? error.message : undefined,
          });
        } else {
          const result = m.result as { isError?: unknown } | undefined;
          if (result?.isError === true) {
            const op = typeof m.id === "string" || typeof m.id === "number"
              ? operations.get(m.id)
              : undefined;
            if (op) op.toolError = true;
          }
          finish(m.id);
        }
      }
      return send(message, options);
    };
    if (isRawResultTransport(transport)) {
      const sendResult = transport.sendResult.bind(transport);
      transport.sendResult = (id, result, options) => {
        finish(id);
        return sendResult(id, result, options);
      };
    }
  }

  /** Calls of the fast path still running, by request id: what a host's `notifications/cancelled` aborts. */
  #fastCalls = new Map<string | number, AbortController>();

  /**
   * The fast path (stdio, or a `--listen` session): a `tools/call` of a mounted tool or of `call_tool` (and
   * its cancellation) handled here instead of by the SDK's server, so that its result can be relayed as the
   * bytes the downstream sent (see raw_json.ts). The call itself takes the same path as the SDK's
   * (`#onCall`: scope, records, timeouts, budget); its notifications and requests to the host are related
   * to it as the SDK's are (on HTTP they go on the call's own stream). False leaves the message to the
   * SDK: anything else, or one that is not exactly a well-formed request (the SDK then answers it as it
   * always has).
   */
  #fastPath(message: Record<string, unknown>, transport: RawResultTransport): boolean {
    if (message.jsonrpc !== "2.0") return false;
    const params = message.params as Record<string, unknown> | undefined;
    if (typeof params !== "object" || params === null || Array.isArray(params)) return false;
    if (message.method === "notifications/cancelled" && !("id" in message)) {
      const id = params.requestId as string | number;
      const controller = this.#fastCalls.get(id);
      if (!controller) return false;
      controller.abort(params.reason);
      return true;
    }
    const id = message.id;
    if (message.method !== "tools/call" || (typeof id !== "string" && typeof id !== "number")) return false;
    if (this.server.getClientCapabilities() === undefined || this.#fastCalls.has(id)) return false;
    const { name, arguments: args, _meta: meta } = params;
    // A mounted tool, or call_tool (whose result is the downstream's too); other meta-tools answer parsed.
    if (typeof name !== "string") return false;
    const metaTool = metaToolName(name);
    if (metaTool && metaTool !== "call_tool") return false;
    if (args !== undefined && (typeof args !== "object" || args === null || Array.isArray(args))) {
      return false;
    }
    if (meta !== undefined && (typeof meta !== "object" || meta === null || Array.isArray(meta))) {
      return false;
    }
    const token = (meta as Record<string, unknown> | undefined)?.progressToken;
    if (token !== undefined && typeof token !== "string" && typeof token !== "number") return false;
    const controller = new AbortController();
    this.#fastCalls.set(id, controller);
    const extra = {
      signal: controller.signal,
      requestId: id,
      _meta: meta,
      sendNotification: (notification) => this.server.notification(notification, { relatedRequestId: id }),
      sendRequest: (request, schema, options) =>
        this.server.request(request, schema, { ...options as object, relatedRequestId: id }),
    } as Extra;
    const request = { method: "tools/call", params } as CallToolRequest;
    this.#onCall(request, extra, true).then(
      (result) => {
        if (controller.signal.aborted) return;
        return result instanceof RawResult
          ? transport.sendResult(id, result.parts(), {
            resultType: member(result.members, "resultType") !== undefined,
          })
          : transport.send({ jsonrpc: "2.0", id, result });
      },
      (error) => {
        // As the SDK's server answers a failed request (and, cancelled, does not answer).
        if (controller.signal.aborted) return;
        return transport.send({ jsonrpc: "2.0", id, error: errorFields(error) });
      },
    ).catch(() => {}).finally(() => this.#fastCalls.delete(id));
    return true;
  }

  /** Stops serving (the hub is closed by its owner). */
  async close(): Promise<void> {
    // Closing the server closes its transport, whose close may call this again: once is enough.
    if (this.#closed) return;
    this.#closed = true;
    this.detached.cancelAll();
    for (const controller of this.#fastCalls.values()) controller.abort();
    this.#unsubscribe();
    this.passthrough.close();
    for (const op of this.#operations.values()) op.end({ type: "cancelled" });
    this.#operations.clear();
    this.#connected = false;
    await closeSandboxes();
    await this.server.close().catch(() => {});
  }
}

/** The client capabilities a 2026-07-28 host's request declared in its `_meta` envelope, if any. */
function hostCapabilities(meta: unknown): Record<string, unknown> | undefined {
  const caps = (meta as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_KEY];
  return caps && typeof caps === "object" && !Array.isArray(caps)
    ? caps as Record<string, unknown>
    : undefined;
}
