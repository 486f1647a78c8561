/**
 * The finalize path: every successful call's result is measured against
 * `response_budget` here, and an oversized one is spooled in full and replaced
 * by a receipt. Fails open: if the spool cannot take it, the complete result
 * goes through and one warning is logged.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import {
  buildReceipt,
  type PutMeta,
  type ResultStore,
  SpoolWriter,
  type StoredMeta,
} from "../spool/light.ts";
import type { CallToolResult } from "../mcp/sdk.ts";
import type { RawResult } from "../json/raw_json.ts";
import { messageOf } from "../mcp/errors.ts";

/** What finalizing needs besides the result. */
export interface FinalizeOptions {
  /** Bytes; 0 = unlimited. */
  budget: number;
  verbatim: boolean;
  /** Opened lazily on the first oversized result; undefined when no store can be had. */
  spool?: () => ResultStore | undefined;
  /** Called with a warning when spooling fails (the caller logs it once). */
  warn?: (message: string) => void;
  server: string;
  tool: string;
  namespaced: string;
  agent?: string;
}

/**
 * A fast-path result longer than this (and over the budget) is written into the spool as it arrives,
 * so the gateway holds a slice of it rather than all of it (see json/lines.ts's LineSplitter.spill): below
 * it, holding the result costs less than reading it back should it be passed after all.
 */
export const SPILL_AFTER_BYTES = 1024 * 1024;

/**
 * The spill policy of a gateway's stdio servers: past {@linkcode SPILL_AFTER_BYTES} and the budget,
 * unless results pass whole; into the store `spool` opens, when it can write as bytes arrive (SQLite).
 */
export function spillPolicy(
  config: () => { budget: number; verbatim: boolean },
  spool: (() => ResultStore | undefined) | undefined,
): { threshold(): number | undefined; open(): SpoolWriter | undefined } {
  return {
    threshold() {
      const { budget, verbatim } = config();
      return verbatim || budget === 0 || !spool ? undefined : Math.max(budget, SPILL_AFTER_BYTES);
    },
    open() {
      const store = spool?.() as { writer?: () => SpoolWriter } | undefined;
      return typeof store?.writer === "function" ? store.writer() : undefined;
    },
  };
}

/** The outcome of finalizing one result. */
export interface Finalized {
  result: CallToolResult;
  /** UTF-8 bytes of the serialized original result. */
  originalBytes: number;
  /** UTF-8 bytes of what goes to the caller. */
  returnedBytes: number;
  spooled: boolean;
}

/** The outcome of finalizing a result relayed as bytes: passed as they came, or a receipt. */
export interface FinalizedRaw extends Omit<Finalized, "result"> {
  result: CallToolResult | RawResult;
}

/**
 * One result in one of its two encodings (parsed, or the bytes the downstream sent), as the one finalize
 * path needs it: its size, itself to pass, and, once a store is open, the preview its receipt shows and
 * how it is stored whole.
 */
interface Encoded<R> {
  bytes: number;
  pass(): R;
  prepare(
    spool: ResultStore,
    budget: number,
  ): { preview: unknown; store(meta: PutMeta): Promise<StoredMeta> };
}

/**
 * The one finalize path: under the budget (or verbatim, or no budget) the result passes; over it, it is
 * stored whole and answered with a receipt. It fails open: a store that cannot be opened or written lets
 * the result pass whole, with a warning, never cut.
 */
async function finalizeEncoded<R>(
  encoded: Encoded<R>,
  options: FinalizeOptions,
): Promise<Omit<Finalized, "result"> & { result: R | CallToolResult }> {
  const originalBytes = encoded.bytes;
  const pass = () => ({
    result: encoded.pass(),
    originalBytes,
    returnedBytes: originalBytes,
    spooled: false,
  });
  if (options.verbatim || options.budget === 0 || originalBytes <= options.budget) return pass();
  let spool: ResultStore | undefined;
  try {
    spool = options.spool?.();
  } catch (error) {
    options.warn?.(
      `the result store cannot be opened, so oversized results pass through whole: ${messageOf(error)}`,
    );
    return pass();
  }
  if (!spool) return pass();
  try {
    const { preview, store } = encoded.prepare(spool, options.budget);
    const stored = await store({
      server: options.server,
      tool: options.tool,
      namespaced: options.namespaced,
      agent: options.agent,
    });
    const receipt = buildReceipt({
      result: preview as CallToolResult,
      originalBytes,
      callId: stored.callId,
      server: options.server,
      tool: options.tool,
      namespaced: options.namespaced,
      budget: options.budget,
    }) as unknown as CallToolResult;
    return {
      result: receipt,
      originalBytes,
      returnedBytes: Buffer.byteLength(JSON.stringify(receipt), "utf8"),
      spooled: true,
    };
  } catch (error) {
    options.warn?.(`spooling an oversized result failed, so it passes through whole: ${messageOf(error)}`);
    return pass();
  }
}

/** Measures a result against the budget and spools it when over. */
export function finalizeResult(result: CallToolResult, options: FinalizeOptions): Promise<Finalized> {
  const serialized = JSON.stringify(result);
  return finalizeEncoded({
    bytes: Buffer.byteLength(serialized, "utf8"),
    pass: () => result,
    prepare: (spool) => ({ preview: result, store: (meta) => Promise.resolve(spool.put(serialized, meta)) }),
  }, options);
}

/**
 * {@linkcode finalizeResult} for a result relayed as bytes: measured by its bytes, passed as they came
 * when under budget, else stored from those bytes (in slices that let other calls run) and answered with
 * a receipt whose preview is read from the leading bytes. Fails open the same way, read back whole (or,
 * should that fail, an error: never a result cut short).
 */
export function finalizeRawResult(result: RawResult, options: FinalizeOptions): Promise<FinalizedRaw> {
  const originalBytes = result.byteLength;
  return finalizeEncoded<CallToolResult | RawResult>({
    bytes: originalBytes,
    // A result written into the spool as it arrived (see downstream/stdio.ts) that is passed after all is
    // made whole.
    pass: () => (result.unspill(), result),
    prepare: (spool, budget) => {
      const spill = result.spill;
      if (result.raw.spill && (!spill || spill.writer.store !== spool)) result.unspill();
      // Read before the result is stored: a store that publishes elsewhere (PostgreSQL) deletes the
      // spilled bytes it read them from once they are published.
      const preview = result.preview(budget);
      return {
        preview,
        store: async (meta) => {
          // Spilled as it arrived: the rest is written and the result listed. A store without the
          // streaming put (another backend) takes the text.
          const stored: StoredMeta = spill && spill.writer.store === spool
            ? await spill.writer.finish(result.raw.slice(spill.start + spill.writer.given, result.end), meta)
            : typeof spool.putBytes === "function"
            ? await spool.putBytes(result.parts(), meta)
            : await spool.put(result.raw.text(result.start, result.end), meta);
          if (stored.totalBytes !== originalBytes) {
            throw new Error(`${stored.totalBytes} bytes were stored of ${originalBytes}`);
          }
          return stored;
        },
      };
    },
  }, options);
}
