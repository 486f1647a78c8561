/**
 * The catalog: public names (`server__tool`), the entries built from what the servers listed, and the
 * tool-list cache that answers a first tools/list before the servers connect (SQLite; the PostgreSQL one
 * lives with the pins in `trust/`). Pure, below `hub/` and `resolver/`, which both use it.
 *
 * @module
 */
export {
  buildCatalog,
  CatalogIndex,
  type CatalogServer,
  catalogSteps,
  type CatalogTool,
  editDistance,
  type EntryFields,
  entryFields,
  type PackedCatalogServer,
  PackedTool,
  packTool,
  reviveEntry,
  type ToolDefinition,
  unpackTool,
} from "./catalog.ts";
export { CANONICAL_MAX_DEPTH, canonicalJson } from "./canonical.ts";
export { drain, sortSteps, STEP } from "./_steps.ts";
export {
  MAX_PUBLIC_NAME,
  type NameReference,
  planNames,
  type PlannedName,
  PUBLIC_NAME_PATTERN,
  SEPARATOR,
  shortHash,
  splitReference,
} from "./naming.ts";
export {
  listHash,
  serverFingerprint,
  StoreToolCache,
  toolCacheMigrations,
  type ToolListCache,
  toolListParts,
} from "./tool_cache.ts";
export { sha256Hex } from "./hashing.ts";
