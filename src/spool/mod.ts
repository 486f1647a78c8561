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
export * from "./light.ts";
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
