/**
 * The hub: downstream connections, naming, the catalog, the gateway server,
 * the meta-tools and the finalize path. The only module that talks MCP.
 *
 * @module
 */
// The catalog (names and entries) lives below the hub; re-exported for callers of the hub API.
export * from "../catalog/mod.ts";
export {
  type CallEvent,
  type CallVia,
  errorResult,
  Hub,
  type HubOptions,
  redactUrl,
  type ReloadSummary,
  type ServerStatus,
} from "./hub.ts";
export { hasEscapedKey, parseJson } from "../json/mod.ts";
export { ConfigReloader, type ConfigReloaderOptions } from "./reload.ts";
export { Gateway, type GatewayOptions, jsonResult, type RawResultTransport } from "./gateway.ts";
export { CONTRACT_VERSION, META_TOOL_NAMES, META_TOOLS, metaToolName } from "./meta_tools.ts";
export {
  type GatewayCore,
  type GatewayCoreOptions,
  openGatewayCore,
  pgStoreMigrations,
  type RunningGateway,
  startGateway,
  type StartGatewayOptions,
} from "./serve.ts";
export { type Finalized, finalizeResult } from "./finalize.ts";
export {
  capabilitySummary,
  describeEntry,
  describeTool,
  pinnedTools,
  resolveTool,
  searchTools,
  SUMMARY_ITEM_BYTES,
  SUMMARY_TOTAL_BYTES,
} from "./discovery.ts";
export { DetachedCalls, MAX_FINISHED, MAX_RUNNING } from "./detached.ts";
export {
  backoffDelay,
  DEFAULT_RESTART_POLICY,
  type DownstreamState,
  type RestartPolicy,
} from "./downstream.ts";
export {
  listHash,
  serverFingerprint,
  StoreToolCache,
  toolCacheMigrations,
  type ToolListCache,
  toolListParts,
} from "./tool_cache.ts";
export {
  approveCommand as approveCommandText,
  definitionHash,
  type HeldTool,
  type PinStore,
  type ToolChange,
  toolPinMigrations,
  ToolPins,
  type Trust,
} from "./pinning.ts";
export { pgHubMigrations, PgToolCache, PgToolPins } from "./pg_store.ts";
export { type InjectionMarker, injectionMarkers, toolMarkers } from "./injection.ts";
export { MAX_DEFINITION_BYTES, MAX_DEFINITION_DEPTH, MAX_TOOL_NAME_CHARS } from "./limits.ts";
export { ESSENTIAL_ENV, serverEnvironment } from "./environment.ts";
export { hostInput } from "./host_input.ts";
export {
  type ByteSource,
  LineSplitter,
  MAX_HOST_MESSAGE_BYTES,
  MAX_MESSAGE_BYTES,
  OversizedMessage,
  StdioServerTransport,
} from "./stdio.ts";
export { type JSONRPCMessage, loadHttpSdk, type Transport } from "./sdk.ts";
// Types only: the classes load on demand (`loadHttpSdk`), so a gateway on stdio starts without them.
export type { StreamableHTTPClientTransport, WebStandardStreamableHTTPServerTransport } from "./sdk_http.ts";
