/**
 * Definition trust: limits on a tool definition, the one tools/list screen for every transport (judged
 * from the bytes), injection markers, definition pins and their verdicts (SQLite and PostgreSQL).
 * Below the hub and the downstream connections, which consult it for every list.
 *
 * @module
 */
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
