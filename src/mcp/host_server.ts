/**
 * The gateway's side of the host's session: the SDK's `Server` as the gateway uses it, on the SDK's own
 * `Protocol`, without the module that defines `Server`.
 *
 * Why: `@modelcontextprotocol/sdk/server` (and `/client`) import the SDK's Ajv validator statically, and
 * loading Ajv is ~30 ms of the ~65 ms the SDK costs at start-up; the host's `initialize` waited for it
 * although nothing before the first downstream connection uses it (the gateway never calls the
 * `Server` methods that validate: `elicitInput`). The downstream `Client`, and Ajv with it, now load
 * when the first server connects (`loadClientSdk` in sdk.ts).
 *
 * Behaviour is the SDK's `Server` (1.32) for everything the gateway calls: the `initialize` answer (the
 * protocol version negotiation, capabilities, serverInfo, instructions), `notifications/initialized`,
 * `logging/setLevel` when logging is advertised, the capability checks on requests, notifications and
 * handlers, the checks of `tools/call` requests and results, and the list-changed notifications.
 * `tests/mcp/host_server_test.ts` holds it to the SDK's `Server` answer for answer.
 *
 * @module
 */
// @ts-types="@modelcontextprotocol/sdk/shared/protocol"
import {
  mergeCapabilities,
  Protocol,
  type ProtocolOptions,
  type RequestHandlerExtra,
} from "@modelcontextprotocol/sdk/shared/protocol.js";
// @ts-types="@modelcontextprotocol/sdk/experimental/tasks/helpers"
import {
  assertClientRequestTaskCapability,
  assertToolsCallTaskCapability,
} from "@modelcontextprotocol/sdk/experimental/tasks/helpers.js";
// @ts-types="@modelcontextprotocol/sdk/server/zod-compat"
import {
  type AnyObjectSchema,
  getLiteralValue,
  getObjectShape,
  safeParse,
  type SchemaOutput,
} from "@modelcontextprotocol/sdk/server/zod-compat.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  type ClientCapabilities,
  CreateTaskResultSchema,
  type Implementation,
  InitializedNotificationSchema,
  type InitializeRequest,
  InitializeRequestSchema,
  type InitializeResult,
  LATEST_PROTOCOL_VERSION,
  McpError as V1McpError,
  type ServerCapabilities,
  type ServerNotification,
  type ServerRequest,
  type ServerResult,
  SetLevelRequestSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/sdk/types.js";
import { ErrorCode, messageOf } from "./errors.ts";
import { McpError } from "./mcp_error.ts";

// A host's error answer, a timeout or a closed connection on the host side reach the gateway as v1's
// McpError (this Protocol's): still "a peer's JSON-RPC error" to `instanceof McpError`.
McpError.accept(V1McpError);

/** The capability a request handler needs, by method (as the SDK's `Server` checks it). */
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

/** The options of the SDK's `Server` the gateway gives. */
export type HostServerOptions = ProtocolOptions & {
  capabilities?: ServerCapabilities;
  instructions?: string;
};

/** The gateway's server side of one host session (see the module). */
export class HostServer extends Protocol<ServerRequest, ServerNotification, ServerResult> {
  readonly #info: Implementation;
  // Read by the capability checks, which Protocol's constructor already runs (its ping handler), before
  // this class's own fields exist: a private field (#) would throw there.
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
    this.setRequestHandler(InitializeRequestSchema, (request) => this.#onInitialize(request));
    this.setNotificationHandler(InitializedNotificationSchema, () => this.oninitialized?.());
    // The SDK's answer to `logging/setLevel` (the gateway's passthrough replaces it with its own, which
    // keeps the level): an empty result.
    if (this.capabilities.logging) this.setRequestHandler(SetLevelRequestSchema, () => ({}));
  }

  /** Adds capabilities; only before connecting (as the SDK's `Server`). */
  registerCapabilities(capabilities: ServerCapabilities): void {
    if (this.transport) throw new Error("Cannot register capabilities after connecting to transport");
    this.capabilities = mergeCapabilities(this.capabilities ?? {}, capabilities);
  }

  /** As the SDK's `Server`: a `tools/call` handler gets a checked request and its result is checked. */
  override setRequestHandler<T extends AnyObjectSchema>(
    schema: T,
    handler: (request: SchemaOutput<T>, extra: Extra) => ServerResult | Promise<ServerResult>,
  ): void {
    const methodSchema = getObjectShape(schema)?.method;
    if (!methodSchema) throw new Error("Schema is missing a method literal");
    const method = getLiteralValue(methodSchema);
    if (typeof method !== "string") throw new Error("Schema method literal must be a string");
    if (method !== "tools/call") return super.setRequestHandler(schema, handler);
    return super.setRequestHandler(schema, async (request, extra) => {
      const checked = safeParse(CallToolRequestSchema, request);
      if (!checked.success) {
        throw new McpError(
          ErrorCode.InvalidParams,
          `Invalid tools/call request: ${messageOf(checked.error)}`,
        );
      }
      const result = await Promise.resolve(handler(request, extra));
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
        throw new McpError(ErrorCode.InvalidParams, `Invalid tools/call result: ${messageOf(answer.error)}`);
      }
      return answer.data;
    });
  }

  /** The host's capabilities, once it initialized. */
  getClientCapabilities(): ClientCapabilities | undefined {
    return this.#clientCapabilities;
  }

  /** The host's name and version, once it initialized. */
  getClientVersion(): Implementation | undefined {
    return this.#clientVersion;
  }

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

  #onInitialize(request: InitializeRequest): InitializeResult {
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

  protected assertCapabilityForMethod(method: ServerRequest["method"]): void {
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

  protected assertNotificationCapability(method: ServerNotification["method"]): void {
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
      case "notifications/elicitation/complete":
        if (!this.#clientCapabilities?.elicitation?.url) {
          throw new Error(`Client does not support URL elicitation (required for ${method})`);
        }
        break;
    }
  }

  protected assertRequestHandlerCapability(method: string): void {
    // Protocol's constructor registers handlers before this class set its capabilities.
    const own = this.capabilities;
    if (!own) return;
    const need = Object.hasOwn(HANDLER_NEEDS, method) ? HANDLER_NEEDS[method] : undefined;
    if (need && !own[need]) {
      throw new Error(
        `Server does not support ${need === "tasks" ? "tasks capability" : need} (required for ${method})`,
      );
    }
  }

  protected assertTaskCapability(method: string): void {
    assertClientRequestTaskCapability(this.#clientCapabilities?.tasks?.requests, method, "Client");
  }

  protected assertTaskHandlerCapability(method: string): void {
    if (!this.capabilities) return;
    assertToolsCallTaskCapability(this.capabilities.tasks?.requests, method, "Server");
  }
}

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;
