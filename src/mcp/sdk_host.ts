/**
 * The host seam: what the gateway's side as a server of its hosts takes from the MCP SDK, loaded with the
 * process: the host's session (`HostServer`, the SDK's `Server` on its `Protocol`, host_server.ts), the
 * request schemas that key its handlers, the handlers' `extra`. The Streamable HTTP server transport
 * (`sdk_host_http.ts`) loads with `--listen`. The servers' side is `sdk_downstream.ts`; `sdk.ts` re-exports
 * both.
 *
 * @module
 */
export { HostServer } from "./host_server.ts";
// @ts-types="@modelcontextprotocol/sdk/types"
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
} from "@modelcontextprotocol/sdk/types.js";
// @ts-types="@modelcontextprotocol/sdk/shared/protocol"
export type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";

/** The SDK's Streamable HTTP server transport (`sdk_host_http.ts`), loaded by `--listen`. */
export function loadHostHttpSdk(): Promise<typeof import("./sdk_host_http.ts")> {
  return import("./sdk_host_http.ts");
}
