/**
 * The one place that imports the MCP SDK (with `sdk_client.ts` and `sdk_http.ts`, loaded on demand, and
 * `host_server.ts`, the SDK's `Server` on its `Protocol`), so an SDK upgrade touches these files.
 * `.js` subpath imports carry a `@ts-types` hint: without it Deno resolves the
 * SDK's `./*` export to a missing `.js.d.ts` and the types silently become `any`.
 *
 * @module
 */
export type { Client } from "@modelcontextprotocol/sdk/client";
// The gateway's own codes (errors.ts), where importers of this module found the SDK's `ErrorCode` before.
export { ErrorCode } from "./errors.ts";
export { HostServer } from "./host_server.ts";
// @ts-types="@modelcontextprotocol/sdk/validation"
export type { JsonSchemaValidator, jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation";

/**
 * The SDK's `Client` and Ajv (`sdk_client.ts`), loaded when the first downstream connects: the host's
 * `initialize` is answered without them (see host_server.ts).
 */
export function loadClientSdk(): Promise<typeof import("./sdk_client.ts")> {
  return import("./sdk_client.ts");
}

/** The SDK's HTTP transports (`sdk_http.ts`), loaded on first use: a gateway on stdio starts without them. */
export function loadHttpSdk(): Promise<typeof import("./sdk_http.ts")> {
  return import("./sdk_http.ts");
}
// @ts-types="@modelcontextprotocol/sdk/shared/transport"
export type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
// @ts-types="@modelcontextprotocol/sdk/types"
export {
  CallToolRequestSchema,
  CallToolResultSchema,
  JSONRPCMessageSchema,
  ListToolsRequestSchema,
  ListToolsResultSchema,
  McpError,
  ToolListChangedNotificationSchema,
  ToolSchema,
} from "@modelcontextprotocol/sdk/types.js";
// @ts-types="@modelcontextprotocol/sdk/types"
export {
  CompleteRequestSchema,
  CreateMessageRequestSchema,
  ElicitationCompleteNotificationSchema,
  ElicitRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  PromptListChangedNotificationSchema,
  ReadResourceRequestSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ResultSchema,
  RootsListChangedNotificationSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  CreateMessageRequestSchema as CreateMessage,
  ElicitRequestSchema as Elicit,
  ListRootsRequestSchema as ListRoots,
  RequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { Client as SdkClient } from "@modelcontextprotocol/sdk/client";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { Result as SdkResult } from "@modelcontextprotocol/sdk/types.js";

/** The server-to-client requests the gateway relays, each with params as loose as the base request's. */
const RELAYED = {
  "sampling/createMessage": RequestSchema.extend({ method: CreateMessage.shape.method }),
  "elicitation/create": RequestSchema.extend({ method: Elicit.shape.method }),
  "roots/list": RequestSchema.extend({ method: ListRoots.shape.method }),
};

/** A server-to-client request the gateway relays. */
export type RelayedMethod = keyof typeof RELAYED;

/**
 * Installs the relay of a server-to-client request on a downstream client: `handler` gets the params
 * exactly as the server sent them and its answer goes back as given. The SDK `Client`'s own handling
 * (a parse of the request and of the answer against its models, which drops every key they do not
 * name: an elicitation's `$schema`, `title`, `x-…` keys) is skipped; the host validates what it is sent.
 */
export function relayRequestHandler(
  client: SdkClient,
  method: RelayedMethod,
  handler: (
    params: Record<string, unknown> | undefined,
    extra: { signal: AbortSignal; requestId?: string | number },
  ) => Promise<SdkResult>,
): void {
  // The base Protocol's setRequestHandler (the Client's own wraps elicitation and sampling in parses).
  let base: { setRequestHandler: SdkClient["setRequestHandler"] } | undefined;
  for (let p = Object.getPrototypeOf(client); p; p = Object.getPrototypeOf(p)) {
    if (Object.hasOwn(p, "setRequestHandler")) base = p;
  }
  base!.setRequestHandler.call(
    client,
    RELAYED[method],
    (request, extra) => handler(request.params as Record<string, unknown> | undefined, extra),
  );
}
// @ts-types="@modelcontextprotocol/sdk/types"
export type {
  CallToolRequest,
  CallToolResult,
  ClientCapabilities,
  JSONRPCMessage,
  ListToolsResult,
  LoggingLevel,
  Progress,
  Prompt,
  Result,
  ServerNotification,
  ServerRequest,
  Tool,
} from "@modelcontextprotocol/sdk/types.js";
/** The SDK's own parse of a request's result (what `Client.request` runs on an answer). */
// @ts-types="@modelcontextprotocol/sdk/server/zod-compat"
export { safeParse as sdkSafeParse } from "@modelcontextprotocol/sdk/server/zod-compat.js";
// @ts-types="@modelcontextprotocol/sdk/shared/protocol"
export type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
