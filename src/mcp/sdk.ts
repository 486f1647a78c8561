/**
 * The MCP SDK, as the rest of `src/` takes it: the protocol's types and what both sides use (the message
 * schema, `McpError`, the base result schema, `Transport`), and the two seams re-exported, one per side:
 * `sdk_downstream.ts` (the client of the servers; `sdk_client.ts` and `sdk_http.ts` on demand) and
 * `sdk_host.ts` (the server of the hosts; `sdk_host_http.ts` on demand). The SDK is imported only in these
 * files, `host_server.ts` and `sdk_auth.ts` (the OAuth client), so each step of an SDK upgrade touches one
 * side's seam (docs/v2-migration.md).
 *
 * @module
 */
export type { Transport } from "@modelcontextprotocol/client";
export { JSONRPCMessageSchema, ResultSchema } from "@modelcontextprotocol/core";
export { McpError } from "./mcp_error.ts";
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
} from "@modelcontextprotocol/client";
/** v1's notification schemas, for the tests' v1 clients (the gateway's own handlers are keyed by method). */
export { ToolListChangedNotificationSchema } from "@modelcontextprotocol/core";
// The gateway's own codes (errors.ts), where importers of this module found the SDK's `ErrorCode` before.
export { ErrorCode } from "./errors.ts";
export * from "./sdk_downstream.ts";
export * from "./sdk_host.ts";
