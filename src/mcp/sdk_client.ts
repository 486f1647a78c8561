/**
 * The downstream client: the v2 SDK's `Client` (`@modelcontextprotocol/client`, 2025 opening: mcphub's own
 * transports and `Era` speak 2026-07-28 under it) and its Ajv validator, loaded when the first downstream
 * server connects (`loadClientSdk` in sdk_downstream.ts). The client index itself loads with the process
 * since the host side's `Protocol` is its (host_server.ts).
 *
 * What the gateway needs of it and the SDK does not do for a gateway, kept here:
 * - its own record of each tool's output validator and task flag, filled by `listToolsPage` (trust/), since
 *   v2 keeps them over a response cache the gateway does not use (lists go through `request`, so the trust
 *   screen sees every tool the server listed);
 * - `callTool` with v1's checks (a task-required tool refused, `structuredContent` checked), the same errors;
 * - the three relayed server-to-client requests handed over as sent (`_wrapHandler`);
 * - a server's JSON-RPC error kept as sent (code, message, data), not rebuilt into the SDK's subclasses (which
 *   turn -32002 into -32602 and keep only the keys of `data` they model);
 * - prompts listed page by page without the response cache.
 *
 * @module
 */
import {
  type CallToolRequest,
  type CallToolResult,
  Client as SdkClient,
  type ClientOptions,
  type Implementation,
  type JsonSchemaValidator,
  type jsonSchemaValidator,
  type ListPromptsRequest,
  type ListPromptsResult,
  ProtocolError,
  type Request,
  type RequestMethod,
  type RequestOptions,
  type Result,
  type ResultTypeMap,
  type StandardSchemaV1,
  type Tool,
} from "@modelcontextprotocol/client";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/client/validators/ajv";
import { optional, record, safeParse, string, unknown } from "zod/v4-mini";
import { CallToolResultSchema as CoreCallToolResultSchema } from "@modelcontextprotocol/core";
import { ErrorCode, messageOf, ProtocolError as GatewayError } from "./errors.ts";

export { AjvJsonSchemaValidator };
/**
 * The schemas a server's answers are parsed with where the gateway parses them itself (`listToolsPage`,
 * `checkOutput`): v2 core's Zod schemas, which the client index loads anyway (it imports
 * `@modelcontextprotocol/core/internal`, the same schema module), so they cost nothing more here and
 * nothing at start-up. They parse as v1's did (tests/trust/list_tools_test.ts holds `listToolsPage` to v1's
 * `Client.listTools`) but for one key: core's `CallToolResultSchema` takes any `structuredContent` (the
 * 2026-07-28 revision allows any JSON value), v1's only an object.
 */
export { ListToolsResultSchema, ResultSchema, ToolSchema } from "@modelcontextprotocol/core";

/**
 * A `tools/call` result as the 2025 revisions have it (v1's schema): core's, with `structuredContent` an
 * object, so that a result whose `structuredContent` is not one is refused with v1's error (what a host saw
 * before, tests/hub/output_schema_fast_path_test.ts).
 */
export const CallToolResultSchema = CoreCallToolResultSchema.extend({
  structuredContent: optional(record(string(), unknown())),
});

/**
 * Parses `data` with a Zod schema as v1's `Client.request` did (its zod-compat `safeParse`: Zod mini's
 * top-level `safeParse`, whose error is Zod core's `$ZodRealError`): the same result, the same error.
 */
export function sdkSafeParse<T extends Parameters<typeof safeParse>[0]>(
  schema: T,
  data: unknown,
): ReturnType<typeof safeParse<T>> {
  return safeParse(schema, data);
}

/**
 * The SDK client's check of a result's `structuredContent` against the tool's `outputSchema`, unchanged,
 * but with Ajv created and each schema compiled the first time a result is checked: the SDK's default
 * compiles every output schema of every listing at once, for tools that may never be called (and one
 * Ajv instance per connection whether or not any is).
 */
export function lazyValidator(): jsonSchemaValidator {
  let ajv: AjvJsonSchemaValidator | undefined;
  return {
    getValidator<T>(schema: Parameters<jsonSchemaValidator["getValidator"]>[0]) {
      let validate: JsonSchemaValidator<T> | undefined;
      return (input: unknown) => {
        validate ??= (ajv ??= new AjvJsonSchemaValidator()).getValidator<T>(schema);
        return validate(input);
      };
    },
  };
}

/** A relay of a server-to-client request: the params as sent (undefined when absent), the request's signal. */
export type RelayHandler = (
  params: Record<string, unknown> | undefined,
  extra: { signal: AbortSignal; requestId?: string | number },
) => Promise<Result>;

/** A Standard Schema that takes any params as they are (the relay reads them from the request itself). */
const AS_SENT = {
  "~standard": {
    version: 1 as const,
    vendor: "mcphub",
    validate: (value: unknown) => ({ value }),
  },
};

/** The error codes whose errors the SDK rebuilds into subclasses (and rewrites); kept as sent instead. */
const REBUILT = new Set<number>([
  ErrorCode.InvalidParams,
  ErrorCode.ResourceNotFound,
  ErrorCode.MissingRequiredClientCapability,
  ErrorCode.UnsupportedProtocolVersion,
  ErrorCode.UrlElicitationRequired,
]);

/** An answer the client reads (the part `_onresponse` looks at). */
interface Answer {
  id: string | number;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

/**
 * Where a result's `resultType` waits while the SDK's 2025 codec reads the result (it deletes the key, which
 * a 2026-07-28 server behind `Era` sends): put back by `request`, so the relay keeps it as direct does.
 */
const RESULT_TYPE = "\u0000mcphub.resultType";

/** The SDK's private table of requests awaiting their answer (see `_onresponse`). */
interface ResponseHandlers {
  _responseHandlers: Map<number, (response: unknown) => void>;
}

/** What the gateway's downstream client is made with (the SDK's options it sets). */
export interface DownstreamClientOptions {
  capabilities: ClientOptions["capabilities"];
  jsonSchemaValidator: jsonSchemaValidator;
}

/**
 * A downstream connection's client: the SDK's `Client` in its 2025 opening (`versionNegotiation: legacy`),
 * with the gateway's record of tools and the relays described in this module's comment.
 */
export class Client extends SdkClient {
  #validators = new Map<string, JsonSchemaValidator<unknown>>();
  #taskRequired = new Set<string>();
  #validator: jsonSchemaValidator;
  /** The relayed server-to-client requests' handlers, by method (see `relayRequest`). */
  #relays = new Map<string, RelayHandler>();

  constructor(info: Implementation, options: Partial<DownstreamClientOptions> = {}) {
    const validator = options.jsonSchemaValidator ?? lazyValidator();
    super(info, {
      capabilities: options.capabilities ?? {},
      jsonSchemaValidator: validator,
      versionNegotiation: { mode: "legacy" },
    });
    this.#validator = validator;
  }

  /** Declares client capabilities before connecting (the host's, as the gateway's own types have them). */
  override registerCapabilities(capabilities: object): void {
    super.registerCapabilities(capabilities as Parameters<SdkClient["registerCapabilities"]>[0]);
  }

  /** Records the tools of a listing (all its pages' tools at once, as v1's `cacheToolMetadata` did). */
  cacheToolMetadata(tools: Tool[]): void {
    this.#validators.clear();
    this.#taskRequired.clear();
    for (const tool of tools) {
      if (tool.outputSchema) {
        this.#validators.set(
          tool.name,
          this.#validator.getValidator(
            tool.outputSchema as Parameters<jsonSchemaValidator["getValidator"]>[0],
          ),
        );
      }
      if (tool.execution?.taskSupport === "required") this.#taskRequired.add(tool.name);
    }
  }

  /** The output-schema check of a listed tool, if it declared an `outputSchema`. */
  getToolOutputValidator(name: string): JsonSchemaValidator<unknown> | undefined {
    return this.#validators.get(name);
  }

  /** `execution.taskSupport: "required"`: `callTool` refuses it (a task call is for the SDK's own API). */
  isToolTaskRequired(name: string): boolean {
    return this.#taskRequired.has(name);
  }

  /**
   * Calls a tool, with the checks v1's `Client.callTool` made (the gateway's record, not the SDK's cache):
   * a task-required tool is refused, and a tool with an `outputSchema` must return `structuredContent`
   * that matches it (unless the result is an error).
   */
  override async callTool(
    params: CallToolRequest["params"],
    options?: RequestOptions,
  ): Promise<CallToolResult> {
    if (this.isToolTaskRequired(params.name)) {
      throw new GatewayError(
        ErrorCode.InvalidRequest,
        `Tool "${params.name}" requires task-based execution. Use client.experimental.tasks.callToolStream() instead.`,
      );
    }
    const result = await this.request({ method: "tools/call", params }, options) as CallToolResult;
    const validate = this.getToolOutputValidator(params.name);
    if (!validate) return result;
    if (!result.structuredContent && !result.isError) {
      throw new GatewayError(
        ErrorCode.InvalidRequest,
        `Tool ${params.name} has an output schema but did not return structured content`,
      );
    }
    if (result.structuredContent) {
      let verdict: ReturnType<JsonSchemaValidator<unknown>>;
      try {
        verdict = validate(result.structuredContent);
      } catch (error) {
        throw new GatewayError(
          ErrorCode.InvalidParams,
          `Failed to validate structured content: ${messageOf(error)}`,
        );
      }
      if (!verdict.valid) {
        throw new GatewayError(
          ErrorCode.InvalidParams,
          `Structured content does not match the tool's output schema: ${verdict.errorMessage}`,
        );
      }
    }
    return result;
  }

  /** A request, its result's `resultType` kept as the server sent it (see `_onresponse`). */
  override request<M extends RequestMethod>(
    request: { method: M; params?: Record<string, unknown> },
    options?: RequestOptions,
  ): Promise<ResultTypeMap[M]>;
  override request<T extends StandardSchemaV1>(
    request: Request,
    resultSchema: T,
    options?: RequestOptions,
  ): Promise<StandardSchemaV1.InferOutput<T>>;
  override request(request: Request, schemaOrOptions?: unknown, options?: unknown): Promise<unknown> {
    const base = super.request as (...args: unknown[]) => Promise<unknown>;
    return base.call(this, request, schemaOrOptions, options).then((result) => {
      if (typeof result === "object" && result !== null && Object.hasOwn(result, RESULT_TYPE)) {
        const { [RESULT_TYPE]: resultType, ...rest } = result as Record<string, unknown>;
        return { ...rest, resultType };
      }
      return result;
    });
  }

  /** One page of prompts, from the server (never from the SDK's response cache, never aggregated). */
  override listPrompts(
    params?: ListPromptsRequest["params"],
    options?: RequestOptions,
  ): Promise<ListPromptsResult> {
    return this.request({ method: "prompts/list", params: params ?? {} }, options) as Promise<
      ListPromptsResult
    >;
  }

  /**
   * Relays a server-to-client request (`sampling/createMessage`, `elicitation/create`, `roots/list`):
   * `handler` gets the request's params exactly as the server sent them and its answer goes back as given.
   * The SDK's own handling (a parse of the request and of the answer against its models, which drops
   * every key they do not name: an elicitation's `$schema`, `title`, `x-…` keys) is skipped.
   */
  relayRequest(method: string, handler: RelayHandler): void {
    this.#relays.set(method, handler);
    // Registered in the custom-params form (no wire-schema parse); `_wrapHandler` puts the relay in its place.
    this.setRequestHandler(method, { params: AS_SENT }, () => ({}));
  }

  /** A relayed request reaches its relay as sent: the SDK's checks of it (and of the answer) are skipped. */
  protected override _wrapHandler(
    method: string,
    handler: Parameters<SdkClient["_wrapHandler"]>[1],
  ): Parameters<SdkClient["_wrapHandler"]>[1] {
    // Also called while the SDK's constructor runs (its own handlers), before this class's fields exist.
    const relay = #relays in this ? this.#relays.get(method) : undefined;
    if (!relay) return super._wrapHandler(method, handler);
    return (request, ctx) =>
      relay(request.params as Record<string, unknown> | undefined, {
        signal: ctx.mcpReq.signal,
        requestId: ctx.mcpReq.id,
      });
  }

  /** A server's JSON-RPC error is handed on as it came (`ProtocolError` with its code, message and data). */
  protected override _onresponse(response: Parameters<SdkClient["_onresponse"]>[0]): void {
    const result = (response as Answer).result;
    if (
      typeof result === "object" && result !== null && !Array.isArray(result) &&
      Object.hasOwn(result, "resultType")
    ) {
      const { resultType, ...rest } = result as Record<string, unknown>;
      response = { ...response, result: { ...rest, [RESULT_TYPE]: resultType } } as typeof response;
    }
    const error = (response as Answer).error;
    if (error && REBUILT.has(error.code)) {
      const handlers = (this as unknown as ResponseHandlers)._responseHandlers;
      const id = Number((response as Answer).id);
      const handler = handlers?.get(id);
      if (handler) {
        handlers.set(
          id,
          (answer) =>
            handler(
              answer instanceof Error ? new ProtocolError(error.code, error.message, error.data) : answer,
            ),
        );
      }
    }
    super._onresponse(response);
  }
}
