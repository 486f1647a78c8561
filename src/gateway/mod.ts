/**
 * The host side: one MCP server per host session (meta-tools, mounted tools, passthrough of resources,
 * prompts and completions), the stdio server end, detached calls, host input, config reload, and the
 * assembly of a running gateway process. Data arrives here from the host and leaves toward the hub.
 *
 * @module
 */
export { ConfigReloader, type ConfigReloaderOptions } from "./reload.ts";
export { Gateway, type GatewayOptions, jsonResult, type RawResultTransport } from "./gateway.ts";
export {
  type GatewayCore,
  type GatewayCoreOptions,
  openGatewayCore,
  pgStoreMigrations,
  type RunningGateway,
  startGateway,
  type StartGatewayOptions,
} from "./serve.ts";
export { DetachedCalls, MAX_FINISHED, MAX_RUNNING } from "./detached.ts";
export { hostInput } from "./host_input.ts";
export { StdioServerTransport } from "./stdio_server.ts";
export { RELAY_IN_FLIGHT, RELAY_PER_WINDOW, RELAY_WINDOW_MS } from "./relay.ts";
