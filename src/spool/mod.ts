/**
 * Bounded, lossless results: a result over the response budget is stored in
 * full ({@linkcode Spool}), the agent gets a receipt that fits the budget
 * ({@linkcode buildReceipt}), and pages it back with `get_result`
 * ({@linkcode getResultResponse}).
 *
 * ```ts ignore
 * const db = openStore(path, { migrations: [...spoolMigrations] });
 * const spool = new Spool(db);
 * const stored = spool.put(JSON.stringify(result), { server, tool, namespaced });
 * const receipt = buildReceipt({ result, originalBytes: stored.totalBytes, callId: stored.callId,
 *   server, tool, namespaced, budget });
 * ```
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
export {
  type GetResultArgs,
  type GetResultOptions,
  getResultResponse,
  MAX_PAGE_BYTES,
  OutOfScopeError,
  PAGE_OVERHEAD_BYTES,
  pageBytesFor,
  type ResultEncoding,
  unavailableResponse,
} from "./get_result.ts";
