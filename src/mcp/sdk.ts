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
// @ts-types="@modelcontextprotocol/sdk/shared/transport"
export type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
// @ts-types="@modelcontextprotocol/sdk/types"
export { JSONRPCMessageSchema, ResultSchema } from "@modelcontextprotocol/sdk/types.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import { McpError as V1McpError } from "@modelcontextprotocol/sdk/types.js";

/** Where v2's errors carry their brands (`Symbol.for`: the same in every copy of the v2 packages). */
const BRANDS = Symbol.for("mcp.sdk.errorBrands");

/**
 * A JSON-RPC error: made as v1's `McpError` (its message prefixed "MCP error N:"), and `instanceof` true
 * also for the v2 client's `ProtocolError` (a server's error on a downstream connection), matched by its
 * brand as v2 matches its own across bundles, so that "a peer's JSON-RPC error" is one test on both SDK
 * lines without loading v2 at start.
 */
export class McpError extends V1McpError {
  /** A peer's error as it came (no prefix added to its message), as the v2 client hands it on. */
  static asSent(code: number, message: string, data?: unknown): McpError {
    const error = new McpError(code, message, data);
    error.message = message;
    return error;
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    if (Function.prototype[Symbol.hasInstance].call(V1McpError, value)) return true;
    if (typeof value !== "object" || value === null) return false;
    const brands = (value as { [BRANDS]?: { has(brand: string): boolean } })[BRANDS];
    return typeof brands?.has === "function" && brands.has("mcp.ProtocolError");
  }
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
/** v1's notification schemas, for the tests' v1 clients (the gateway's own handlers are keyed by method). */
// @ts-types="@modelcontextprotocol/sdk/types"
export { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
// The gateway's own codes (errors.ts), where importers of this module found the SDK's `ErrorCode` before.
export { ErrorCode } from "./errors.ts";
export * from "./sdk_downstream.ts";
export * from "./sdk_host.ts";
