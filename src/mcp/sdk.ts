/**
 * The one place that imports the MCP SDK (with `sdk_client.ts` and `sdk_http.ts`, loaded on demand, and
 * `host_server.ts`, the SDK's `Server` on its `Protocol`), so an SDK upgrade touches these files.
 * `.js` subpath imports carry a `@ts-types` hint: without it Deno resolves the
 * SDK's `./*` export to a missing `.js.d.ts` and the types silently become `any`.
 *
 * @module
 */
export type { Client } from "@modelcontextprotocol/sdk/client";
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
  ErrorCode,
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
