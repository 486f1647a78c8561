/**
 * The gateway's side of the host's session: v2's `Protocol` (from `@modelcontextprotocol/client`, the
 * index the downstream `Client` loads too: one copy of the protocol code in the process) with what v1's
 * `Server` (1.32) did for the gateway, answer for answer on the 2025 wire (`tests/mcp/host_server_test.ts`
 * holds it to v1's `Server`): the `initialize` answer (version negotiation, capabilities, serverInfo,
 * instructions), `notifications/initialized`, `logging/setLevel` when logging is advertised, the capability
 * checks on requests, notifications and handlers, the checks of `tools/call` requests and results, the
 * list-changed notifications.
 *
 * It serves the legacy codec only: a 2026-07-28 host's requests reach it made legacy by `host_era.ts`,
 * which also stamps `resultType` and the cache hints (the legacy codec stamps nothing), so the fast path's
 * bytes and this path's agree. What v2 does otherwise for a gateway, kept as v1 did it:
 * - handlers keyed by a request schema, the request parsed with that schema (the gateway's `tools/call`
 *   schema is looser than the wire's), its ZodError thrown as is; the handler gets v1's `extra`
 *   ({@linkcode RequestHandlerExtra}: signal, requestId, _meta, sendNotification, sendRequest, authInfo,
 *   sessionId, requestInfo), built from v2's context;
 * - a handler's -32002 reaches the host as -32002 (the legacy codec sends -32602);
 * - a request to the host that times out or whose connection closes fails with v1's -32001 / -32000
 *   `McpError`, not v2's `SdkError` (the relay hands it to the server that asked).
 *
 * @module
 */
import {
  type BaseContext,
  type ClientCapabilities,
  type Implementation,
  LATEST_PROTOCOL_VERSION,
  mergeCapabilities,
  type MessageExtraInfo,
  Protocol,
  type ProtocolOptions,
  SdkError,
  SdkErrorCode,
  type ServerCapabilities,
  type StandardSchemaV1,
  SUPPORTED_PROTOCOL_VERSIONS,
  type Transport,
} from "@modelcontextprotocol/client";
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  CreateTaskResultSchema,
} from "@modelcontextprotocol/core";
import { safeParse } from "zod/v4-mini";
import { ErrorCode, messageOf } from "./errors.ts";
import { McpError } from "./mcp_error.ts";

/** The capability a request handler needs, by method (as v1's `Server` checks it). */
const HANDLER_NEEDS: Record<string, keyof ServerCapabilities> = {
  "completion/complete": "completions",
  "logging/setLevel": "logging",
  "prompts/get": "prompts",
  "prompts/list": "prompts",
  "resources/list": "resources",
  "resources/templates/list": "resources",
  "resources/read": "resources",
  "tools/call": "tools",
  "tools/list": "tools",
  "tasks/get": "tasks",
  "tasks/list": "tasks",
  "tasks/result": "tasks",
  "tasks/cancel": "tasks",
};

/** The options of v1's `Server` the gateway gives. */
export type HostServerOptions = ProtocolOptions & {
  capabilities?: ServerCapabilities;
  instructions?: string;
};

/** What a handler gets beside the request: v1's `RequestHandlerExtra`, made from v2's context. */
export interface Extra {
  signal: AbortSignal;
  requestId: string | number;
  _meta?: Record<string, unknown>;
  sessionId?: string;
  authInfo?: unknown;
  requestInfo?: unknown;
  sendNotification(n: { method: string; params?: Record<string, unknown> }): Promise<void>;
  sendRequest(
    r: { method: string; params?: Record<string, unknown> },
    schema: unknown,
    options?: unknown,
  ): Promise<
    unknown
  >;
}

/** v2's handler context with v1's `extra` made from it. */
type Ctx = BaseContext & { extra: Extra };
/** v1's generic name for the handlers' extra (the gateway's code names it so). */
export type RequestHandlerExtra<_R = unknown, _N = unknown> = Extra;

/** Params as sent (the custom-schema form's schema that checks nothing). */
const AS_SENT: StandardSchemaV1<unknown, unknown> = {
  "~standard": { version: 1, vendor: "mcphub", validate: (value: unknown) => ({ value }) },
};

/** A Zod object schema's `method` literal (v1 and core schemas alike). */
function methodOf(schema: unknown): string {
  const shape =
    (schema as { shape?: { method?: { value?: unknown; _zod?: { def?: { values?: unknown[] } } } } })
      .shape;
  const m = shape?.method?.value ?? shape?.method?._zod?.def?.values?.[0];
  if (typeof m !== "string") throw new Error("Schema is missing a method literal");
  return m;
}

/**
 * v2's local failures of a request to the host as v1's McpError (-32001 timed out, -32000 connection
 * closed): what the relay hands back to the server that asked.
 */
function asV1(error: unknown): unknown {
  if (!(error instanceof SdkError)) return error;
  if (error.code === SdkErrorCode.RequestTimeout) {
    return new McpError(ErrorCode.RequestTimeout, error.message, error.data);
  }
  if (error.code === SdkErrorCode.ConnectionClosed) {
    return new McpError(ErrorCode.ConnectionClosed, error.message, error.data);
  }
  return error;
}

/** The gateway's server side of one host session (see the module). */
export class HostServer extends Protocol<Ctx> {
  /** Requests whose handler threw -32002, which the legacy codec sends as -32602 (restored in `send`). */
  readonly #notFound = new Set<string | number>();
  readonly #info: Implementation;
  private capabilities?: ServerCapabilities;
  readonly #instructions?: string;
  #clientCapabilities?: ClientCapabilities;
  #clientVersion?: Implementation;
  /** Called once the host sent `notifications/initialized`. */
  oninitialized?: () => void;

  constructor(info: Implementation, options?: HostServerOptions) {
    super(options);
    this.#info = info;
    this.capabilities = options?.capabilities ?? {};
    this.#instructions = options?.instructions;
    // deno-lint-ignore no-explicit-any
    (this as any).setRequestHandler("initialize", (request: any) => this.#onInitialize(request));
    // deno-lint-ignore no-explicit-any
    (this as any).setNotificationHandler("notifications/initialized", () => this.oninitialized?.());
    // deno-lint-ignore no-explicit-any
    if (this.capabilities.logging) (this as any).setRequestHandler("logging/setLevel", () => ({}));
  }

  /** v1's `extra` for a handler, from v2's context and the transport's message info. */
  protected buildContext(ctx: BaseContext, info?: MessageExtraInfo): Ctx {
    // deno-lint-ignore no-explicit-any
    const c = ctx as any;
    const extra: Extra = {
      signal: c.mcpReq.signal,
      requestId: c.mcpReq.id,
      // v2 lifts the envelope's reserved keys out of `_meta` (`ctx.mcpReq.envelope`); v1 left them there.
      _meta: c.mcpReq.envelope ? { ...c.mcpReq._meta, ...c.mcpReq.envelope } : c.mcpReq._meta,
      sessionId: c.sessionId,
      authInfo: c.http?.authInfo,
      requestInfo: (info as { requestInfo?: unknown } | undefined)?.requestInfo,
      sendNotification: (n) => c.mcpReq.notify(n),
      sendRequest: (r, schema, options) =>
        c.mcpReq.send(r, schema, options).catch((e: unknown) => Promise.reject(asV1(e))),
    };
    return { ...ctx, extra };
  }

  /** A request to the host; its local failures as v1's McpError ({@linkcode asV1}). */
  // deno-lint-ignore no-explicit-any
  override request(request: any, schema?: any, options?: any): any {
    return (super.request as (...a: unknown[]) => Promise<unknown>).call(this, request, schema, options)
      .catch((e: unknown) => Promise.reject(asV1(e)));
  }

  /** Connects, with the transport's `send` restoring the -32002s the legacy codec changed (`#notFound`). */
  override connect(transport: Transport): Promise<void> {
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      const m = message as { id?: string | number; error?: { code: number } };
      if (
        m.error && m.id !== undefined && this.#notFound.delete(m.id) &&
        m.error.code === ErrorCode.InvalidParams
      ) {
        message = { ...message, error: { ...m.error, code: ErrorCode.ResourceNotFound } } as typeof message;
      }
      return send(message, options);
    };
    return super.connect(transport);
  }

  /** A handler whose -32002 reaches the host as -32002 (see `#notFound`). */
  // deno-lint-ignore no-explicit-any
  #keepCodes(handler: (request: any, ctx: Ctx) => unknown) {
    // deno-lint-ignore no-explicit-any
    return async (request: any, ctx: Ctx) => {
      try {
        return await handler(request, ctx);
      } catch (error) {
        if ((error as { code?: unknown })?.code === ErrorCode.ResourceNotFound) {
          this.#notFound.add(ctx.mcpReq.id);
        }
        throw error;
      }
    };
  }

  /** Adds capabilities; only before connecting (as v1's `Server`). */
  registerCapabilities(capabilities: ServerCapabilities): void {
    if (this.transport) throw new Error("Cannot register capabilities after connecting to transport");
    this.capabilities = mergeCapabilities(this.capabilities ?? {}, capabilities);
  }

  // @ts-expect-error: v1's schema-keyed form (the gateway's handlers), beside v2's method-keyed ones
  override setRequestHandler<T extends StandardSchemaV1>(
    schema: T,
    handler: (request: StandardSchemaV1.InferOutput<T>, extra: Extra) => unknown,
  ): void;
  // @ts-expect-error: v1's schema-keyed form (the gateway's handlers), beside v2's method-keyed ones
  override setRequestHandler(schemaOrMethod: unknown, given: unknown, more?: unknown): void {
    if (typeof schemaOrMethod === "string") {
      return super.setRequestHandler(schemaOrMethod as never, given as never, more as never);
    }
    const handler = given as (request: unknown, extra: Extra) => unknown;
    const schema = schemaOrMethod as Parameters<typeof safeParse>[0];
    const method = methodOf(schema);
    // v2 parses a method-keyed request with the era's wire schema; v1 parsed it with the handler's own
    // schema (the gateway's tools/call schema is looser than the wire's): the custom form takes the params as
    // sent, and the request is parsed here as v1 did, its ZodError thrown as is.
    const parse = (params: unknown) => {
      const parsed = safeParse(schema, params === undefined ? { method } : { method, params });
      if (!parsed.success) throw parsed.error;
      return parsed.data;
    };
    const wrapped = method !== "tools/call"
      ? (params: unknown, ctx: Ctx) => handler(parse(params), ctx.extra)
      : async (params: unknown, ctx: Ctx) => {
        const request = parse(params);
        const checked = safeParse(CallToolRequestSchema, { method, params });
        if (!checked.success) {
          throw new McpError(
            ErrorCode.InvalidParams,
            `Invalid tools/call request: ${messageOf(checked.error)}`,
          );
        }
        if (checked.data.params.task && !this.capabilities?.tasks?.requests?.tools?.call) {
          throw new Error("Server does not support task creation (required for tools/call)");
        }
        const result = await Promise.resolve(handler(request, ctx.extra));
        if (checked.data.params.task) {
          const task = safeParse(CreateTaskResultSchema, result);
          if (!task.success) {
            throw new McpError(
              ErrorCode.InvalidParams,
              `Invalid task creation result: ${messageOf(task.error)}`,
            );
          }
          return task.data;
        }
        const answer = safeParse(CallToolResultSchema, result);
        if (!answer.success) {
          throw new McpError(
            ErrorCode.InvalidParams,
            `Invalid tools/call result: ${messageOf(answer.error)}`,
          );
        }
        return answer.data;
      };
    return super.setRequestHandler(
      method as never,
      { params: AS_SENT } as never,
      this.#keepCodes(wrapped) as never,
    );
  }

  /** By method, or by a notification schema as v1 took it (its method literal). */
  // deno-lint-ignore no-explicit-any
  override setNotificationHandler(schemaOrMethod: any, handler: any): void {
    const method = typeof schemaOrMethod === "string" ? schemaOrMethod : methodOf(schemaOrMethod);
    return super.setNotificationHandler(method as never, handler);
  }

  /** The host's capabilities, once it initialized. */
  getClientCapabilities(): ClientCapabilities | undefined {
    return this.#clientCapabilities;
  }
  /** The host's name and version, once it initialized. */
  getClientVersion(): Implementation | undefined {
    return this.#clientVersion;
  }
  /** The gateway's capabilities as advertised. */
  getCapabilities(): ServerCapabilities {
    return this.capabilities ?? {};
  }
  sendToolListChanged(): Promise<void> {
    return this.notification({ method: "notifications/tools/list_changed" });
  }
  sendResourceListChanged(): Promise<void> {
    return this.notification({ method: "notifications/resources/list_changed" });
  }
  sendPromptListChanged(): Promise<void> {
    return this.notification({ method: "notifications/prompts/list_changed" });
  }

  // deno-lint-ignore no-explicit-any
  #onInitialize(request: any) {
    const requested = request.params.protocolVersion;
    this.#clientCapabilities = request.params.capabilities;
    this.#clientVersion = request.params.clientInfo;
    const protocolVersion = SUPPORTED_PROTOCOL_VERSIONS.includes(requested)
      ? requested
      : LATEST_PROTOCOL_VERSION;
    return {
      protocolVersion,
      capabilities: this.getCapabilities(),
      serverInfo: this.#info,
      ...(this.#instructions && { instructions: this.#instructions }),
    };
  }

  protected assertCapabilityForMethod(method: string): void {
    const client = this.#clientCapabilities;
    if (method === "sampling/createMessage" && !client?.sampling) {
      throw new Error(`Client does not support sampling (required for ${method})`);
    }
    if (method === "elicitation/create" && !client?.elicitation) {
      throw new Error(`Client does not support elicitation (required for ${method})`);
    }
    if (method === "roots/list" && !client?.roots) {
      throw new Error(`Client does not support listing roots (required for ${method})`);
    }
  }

  protected assertNotificationCapability(method: string): void {
    const own = this.getCapabilities();
    const missing = (what: string) => new Error(`Server does not support ${what} (required for ${method})`);
    switch (method) {
      case "notifications/message":
        if (!own.logging) throw missing("logging");
        break;
      case "notifications/resources/updated":
      case "notifications/resources/list_changed":
        if (!own.resources) throw missing("notifying about resources");
        break;
      case "notifications/tools/list_changed":
        if (!own.tools) throw missing("notifying of tool list changes");
        break;
      case "notifications/prompts/list_changed":
        if (!own.prompts) throw missing("notifying of prompt list changes");
        break;
    }
  }

  protected assertRequestHandlerCapability(method: string): void {
    const own = this.capabilities;
    if (!own) return;
    const need = Object.hasOwn(HANDLER_NEEDS, method) ? HANDLER_NEEDS[method] : undefined;
    if (need && !own[need]) {
      throw new Error(
        `Server does not support ${need === "tasks" ? "tasks capability" : need} (required for ${method})`,
      );
    }
  }
}
