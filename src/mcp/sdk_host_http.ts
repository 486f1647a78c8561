/**
 * The MCP SDK's Streamable HTTP server transport (`--listen` sessions), apart from `sdk_host.ts` so that a
 * gateway on stdio never loads it. Import it with `loadHostHttpSdk()` (`sdk_host.ts`), or as a type only: a
 * static import of this module loads it at start.
 *
 * @module
 */
// @ts-types="@modelcontextprotocol/sdk/server/webStandardStreamableHttp"
export { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
