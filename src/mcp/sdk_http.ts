/**
 * The MCP SDK's HTTP transports, apart from `sdk.ts` so that a gateway on stdio never loads them
 * (Streamable HTTP and SSE clients, the Streamable HTTP server): they cost start-up time and are needed
 * only by HTTP upstream servers, `--listen` and `mcp connect`. Import them with `loadHttpSdk()` (`sdk.ts`), or
 * as types only: a static import of this module loads them at start.
 *
 * @module
 */
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
export { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
// @ts-types="@modelcontextprotocol/sdk/server/webStandardStreamableHttp"
export { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
// @ts-types="@modelcontextprotocol/sdk/client/sse"
export { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
