/**
 * The spool's API without `get_result`'s paging (`get_result.ts`): what `mcp serve` needs before it answers
 * the host's `initialize` (start-up time). `mod.ts` is all of it.
 *
 * @module
 */
export {
  CHUNK_BYTES,
  isCallId,
  PRUNE_INTERVAL_MS,
  PUT_SLICE_BYTES,
  type PutMeta,
  type ResultStore,
  RETENTION_MS,
  Spool,
  spoolMigrations,
  type SpoolOptions,
  type SpoolPage,
  SpoolWriteError,
  SpoolWriter,
  type StoredMeta,
  type WriterTarget,
} from "./spool.ts";
export { PgSpool, pgSpoolMigrations } from "./pg_spool.ts";
export {
  buildReceipt,
  MIN_BUDGET_BYTES,
  type ReceiptInput,
  type ReceiptResult,
  type ResultLike,
  serializedBytes,
  type StoredReceipt,
  type TextContent,
} from "./receipt.ts";
