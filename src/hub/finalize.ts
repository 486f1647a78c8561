/**
 * The finalize path: every successful call's result is measured against
 * `response_budget` here, and an oversized one is spooled in full and replaced
 * by a receipt. Fails open: if the spool cannot take it, the complete result
 * goes through and one warning is logged.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { buildReceipt, type PutMeta, type ResultStore, type StoredMeta } from "../spool/mod.ts";
import type { CallToolResult } from "./sdk.ts";
import type { RawResult } from "./raw_json.ts";

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

/** The outcome of finalizing one result. */
export interface Finalized {
  result: CallToolResult;
  /** UTF-8 bytes of the serialized original result. */
  originalBytes: number;
  /** UTF-8 bytes of what goes to the caller. */
  returnedBytes: number;
  spooled: boolean;
}

/** Measures a result against the budget and spools it when over. */
export async function finalizeResult(result: CallToolResult, options: FinalizeOptions): Promise<Finalized> {
  const serialized = JSON.stringify(result);
  const originalBytes = Buffer.byteLength(serialized, "utf8");
  const pass: Finalized = { result, originalBytes, returnedBytes: originalBytes, spooled: false };
  if (options.verbatim || options.budget === 0 || originalBytes <= options.budget) return pass;
  let spool: ResultStore | undefined;
  try {
    spool = options.spool?.();
  } catch (error) {
    options.warn?.(
      `the result store cannot be opened, so oversized results pass through whole: ${message(error)}`,
    );
    return pass;
  }
  if (!spool) return pass;
  try {
    const stored = await spool.put(serialized, {
      server: options.server,
      tool: options.tool,
      namespaced: options.namespaced,
      agent: options.agent,
    });
    const receipt = buildReceipt({
      result,
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
    options.warn?.(`spooling an oversized result failed, so it passes through whole: ${message(error)}`);
    return pass;
  }
}

/** The outcome of finalizing a result relayed as bytes: passed as they came, or a receipt. */
export interface FinalizedRaw extends Omit<Finalized, "result"> {
  result: CallToolResult | RawResult;
}

/**
 * {@linkcode finalizeResult} for a result relayed as bytes: measured by its bytes, passed as they came
 * when under budget, else stored from those bytes (in slices that let other calls run) and answered with
 * a receipt whose preview is read from the leading bytes. Fails open the same way.
 */
export async function finalizeRawResult(result: RawResult, options: FinalizeOptions): Promise<FinalizedRaw> {
  const originalBytes = result.byteLength;
  const pass: FinalizedRaw = { result, originalBytes, returnedBytes: originalBytes, spooled: false };
  if (options.verbatim || options.budget === 0 || originalBytes <= options.budget) return pass;
  let spool: ResultStore | undefined;
  try {
    spool = options.spool?.();
  } catch (error) {
    options.warn?.(
      `the result store cannot be opened, so oversized results pass through whole: ${message(error)}`,
    );
    return pass;
  }
  if (!spool) return pass;
  try {
    const meta: PutMeta = {
      server: options.server,
      tool: options.tool,
      namespaced: options.namespaced,
      agent: options.agent,
    };
    // A store without the streaming put (another backend) takes the text.
    const stored: StoredMeta = typeof spool.putBytes === "function"
      ? await spool.putBytes(result.parts(), meta)
      : await spool.put(result.raw.text(result.start, result.end), meta);
    const receipt = buildReceipt({
      result: result.preview(options.budget),
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
    options.warn?.(`spooling an oversized result failed, so it passes through whole: ${message(error)}`);
    return pass;
  }
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
