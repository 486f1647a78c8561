/**
 * The MCP SDK's HTTP client transports (Streamable HTTP and SSE), apart from `sdk_downstream.ts` so that a
 * gateway on stdio never loads them: they are needed only by HTTP upstream servers and `mcp connect`.
 * Import them with `loadHttpSdk()` (`sdk_downstream.ts`), or as types only: a static import of this module
 * loads them at start. The server transport is `sdk_host_http.ts`.
 *
 * @module
 */
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
export { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
// @ts-types="@modelcontextprotocol/sdk/client/sse"
export { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
