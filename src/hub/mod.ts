/**
 * The core: the hub's connections to every downstream, catalog lookup, and the one call path
 * (call → time → finalize → record), with the discovery answers behind the meta-tools. Below the host side
 * (`gateway/`, `http/`), above one server's connection (`downstream/`) and definition trust (`trust/`).
 *
 * @module
 */
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
export {
  CONTRACT_VERSION,
  DESCRIBE_TOOL_CODE,
  META_TOOL_NAMES,
  META_TOOLS,
  metaToolName,
} from "./meta_tools.ts";
export { type Finalized, finalizeResult } from "./finalize.ts";
export {
  BYTES_PER_TOKEN,
  decideExposure,
  DEFAULT_EXPOSE_BUDGET_TOKENS,
  type Exposure,
  type ExposureOptions,
} from "./exposure.ts";
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
