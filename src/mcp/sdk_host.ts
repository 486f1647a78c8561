/**
 * The host seam: what the gateway's side as a server of its hosts takes from the MCP SDK, loaded with the
 * process: the host's session (`HostServer`, v1's `Server` behaviour on v2's `Protocol`, host_server.ts),
 * the request schemas that key its handlers (v2 core's), the handlers' `extra` (v1's shape). The Streamable HTTP server transport
 * (`sdk_host_http.ts`) loads with `--listen`. The servers' side is `sdk_downstream.ts`; `sdk.ts` re-exports
 * both.
 *
 * @module
 */
export { HostServer } from "./host_server.ts";
export {
  CallToolRequestSchema,
  CompleteRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  RootsListChangedNotificationSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/core";
export type { RequestHandlerExtra } from "./host_server.ts";

/** The SDK's Streamable HTTP server transport (`sdk_host_http.ts`), loaded by `--listen`. */
export function loadHostHttpSdk(): Promise<typeof import("./sdk_host_http.ts")> {
  return import("./sdk_host_http.ts");
}
