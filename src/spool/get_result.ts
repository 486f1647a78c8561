/**
 * The `get_result` meta-tool's answer: one bounded page of a stored result,
 * or a status that says why there is none and what to do next. The gateway
 * wraps the returned object as the tool result.
 *
 * @module
 */
import { codePointFloor, isContinuationByte, utf8Length } from "./_utf8.ts";
import { MIN_BUDGET_BYTES } from "./receipt.ts";
import { isCallId, type ResultStore, type StoredMeta } from "./spool.ts";

/** The largest page, and the page size when the budget is unlimited (0). */
export const MAX_PAGE_BYTES = 8192;

/** What a page's answer costs besides its data, as the page size formula reserves it. */
export const PAGE_OVERHEAD_BYTES = 448;

/** The encodings `get_result` accepts; base64 is the default. */
export type ResultEncoding = "base64" | "utf8";

/** The arguments of `get_result`, unvalidated as they arrive. */
export interface GetResultArgs {
  callId: unknown;
  cursor?: unknown;
  encoding?: unknown;
}

/** Options for {@linkcode getResultResponse}. */
export interface GetResultOptions {
  /** The response budget in bytes; 0 = unlimited. */
  budget: number;
  /** The calling agent's scope check; a `false` makes the call fail with {@linkcode OutOfScopeError}. */
  canRead?: (meta: StoredMeta) => boolean;
}

/**
 * The stored result belongs to a server or tool outside the calling agent's
 * scope. The gateway answers with an error (not a status), so an agent cannot
 * read another scope's bytes by reusing a callId. The message names no server
 * or tool; the fields carry them for logs.
 */
export class OutOfScopeError extends Error {
  override name = "OutOfScopeError";
  constructor(
    readonly callId: string,
    readonly server: string,
    readonly tool: string,
    options?: ErrorOptions,
  ) {
    super(
      `Cannot return stored result ${callId}: it came from a tool outside this agent's scope; ` +
        "retrieve it through an agent whose servers and tools include that tool",
      options,
    );
  }
}

/**
 * Bytes per `get_result` page for a response budget: `min(8192, floor((budget - 448) / 3))`,
 * which keeps the base64 page, twice over (structured and text forms), and its envelope inside the budget.
 *
 * @throws {RangeError} when `budget` is neither 0 (unlimited) nor an integer >= 512
 */
export function pageBytesFor(budget: number): number {
  if (budget === 0) return MAX_PAGE_BYTES;
  if (!Number.isSafeInteger(budget) || budget < MIN_BUDGET_BYTES) {
    throw new RangeError(
      `Response budget must be 0 (unlimited) or at least ${MIN_BUDGET_BYTES} bytes, got ${budget}`,
    );
  }
  return Math.min(MAX_PAGE_BYTES, Math.floor((budget - PAGE_OVERHEAD_BYTES) / 3));
}

const UNAVAILABLE_REASON = "The callId is unknown or its stored result has expired.";
const UNAVAILABLE_HINT = "Results are kept 24 hours; rerun the original tool call for a new callId.";
const CURSOR_HINT = "A page with done: true was the last; use cursor 0 to read it again.";
const ECHO_MAX = 64;

function echoCallId(callId: unknown, max: number): string {
  const text = typeof callId === "string" ? callId : JSON.stringify(callId) ?? String(callId);
  return text.length > max ? `${text.slice(0, codePointFloor(text, max))}…` : text;
}

function parseEncoding(value: unknown): ResultEncoding {
  if (value === undefined || value === null || value === "base64") return "base64";
  if (value === "utf8") return "utf8";
  throw new TypeError(`encoding must be "base64" (the default) or "utf8", got ${JSON.stringify(value)}`);
}

function parseCursor(value: unknown): number {
  if (value === undefined || value === null) return 0;
  if (typeof value !== "number") {
    throw new TypeError(
      `cursor must be a non-negative integer byte offset (0 first, then each nextCursor), got ${
        JSON.stringify(value)
      }`,
    );
  }
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(
      `cursor must be a non-negative integer byte offset (0 first, then each nextCursor), got ${value}`,
    );
  }
  return value;
}

// What one byte costs in a utf8 page's two serialized forms: escaped once in
// structuredContent, then escaped again inside the text block's JSON.
const ASCII_COST = new Uint8Array(128).map((_, byte) => {
  if (byte === 0x22 || byte === 0x5c) return 2 + 4;
  if (byte === 8 || byte === 9 || byte === 10 || byte === 12 || byte === 13) return 2 + 3;
  if (byte < 0x20) return 6 + 7;
  return 1 + 1;
});

function base64Length(bytes: number): number {
  return 4 * Math.ceil(bytes / 3);
}

/**
 * The end of the longest run of whole characters from the start of `bytes`
 * whose cost is at most `allowance` (always at least one character), and that cost.
 */
function utf8PageEnd(bytes: Uint8Array, atEnd: boolean, allowance: number): { end: number; cost: number } {
  let cost = 0;
  let end = 0;
  while (end < bytes.length) {
    const lead = bytes[end];
    const size = lead < 0x80 ? 1 : lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
    if (end + size > bytes.length && !atEnd) break;
    const add = lead < 0x80 ? ASCII_COST[lead] : 2 * size;
    if (end > 0 && cost + add > allowance) break;
    cost += add;
    end = Math.min(bytes.length, end + size);
  }
  return { end, cost };
}

/** The bytes of `response` as the gateway returns it: the object as structuredContent and as one JSON text block. */
function wrappedBytes(response: Record<string, unknown>): number {
  // = serializedBytes({content: [{type: "text", text: json}], structuredContent: response}), in one pass:
  // compact JSON holds no raw control characters, so re-escaping it only doubles `"` and `\`.
  const json = JSON.stringify(response);
  let escapes = 0;
  for (let i = 0; i < json.length; i++) {
    const unit = json.charCodeAt(i);
    if (unit === 0x22 || unit === 0x5c) escapes++;
  }
  return WRAPPER_BYTES + 2 * utf8Length(json) + escapes;
}

// `{"content":[{"type":"text","text":""}],"structuredContent":}`
const WRAPPER_BYTES = 60;

/** The first candidate that fits the budget once wrapped (the last one if none does). */
function firstThatFits(budget: number, candidates: Record<string, unknown>[]): Record<string, unknown> {
  if (budget === 0) return candidates[0];
  return candidates.find((candidate) => wrappedBytes(candidate) <= budget) ??
    candidates[candidates.length - 1];
}

const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * Answers `get_result`: `{status: "ok", callId, mediaType, data | text, cursor, nextCursor, done, totalBytes}`
 * for a page; `{status: "unavailable", reason, callId, hint?}` for an unknown, malformed or expired callId;
 * `{status: "cursor_out_of_range", reason, callId, cursor, totalBytes, hint?}` past the end.
 *
 * Every answer fits the budget as the gateway returns it (the object as
 * structuredContent and again as one compact JSON text block): a page is
 * {@linkcode pageBytesFor} bytes, shortened when long cursors would push it
 * over; a status drops its hint, then shortens, when the budget is tight.
 * With `encoding: "utf8"` the page is `text` that ends on a character
 * boundary and serializes no larger than the base64 page would, so
 * `nextCursor - cursor` may be shorter than a full page. A page always
 * advances, and `done` says whether it was the last.
 *
 * @throws {TypeError} when `callId` is missing, or `cursor`/`encoding` has the wrong type (InvalidParams)
 * @throws {RangeError} when `cursor` is negative, fractional, or (utf8) inside a character (InvalidParams)
 * @throws {OutOfScopeError} when `canRead` refuses the stored result's tool
 */
export async function getResultResponse(
  spool: ResultStore,
  args: GetResultArgs,
  options: GetResultOptions,
): Promise<Record<string, unknown>> {
  const { budget } = options;
  const encoding = parseEncoding(args.encoding);
  const cursor = parseCursor(args.cursor);
  const { callId } = args;
  if (callId === undefined || callId === null) {
    throw new TypeError("callId is required: pass the 32-hex callId from a stored-result receipt");
  }
  const pageBytes = pageBytesFor(budget);
  const meta = isCallId(callId) ? await spool.meta(callId) : undefined;
  if (!meta) return unavailable(callId, budget);
  if (options.canRead && !options.canRead(meta)) {
    throw new OutOfScopeError(meta.callId, meta.server, meta.tool);
  }
  const page = await spool.readPage(meta.callId, cursor, pageBytes);
  if (page === "unavailable") return unavailable(callId, budget);
  if (page === "cursor_out_of_range") return cursorOutOfRange(meta, cursor, budget);

  const { bytes, totalBytes } = page;
  const atEnd = (length: number) => cursor + length === totalBytes;
  const build = (length: number): Record<string, unknown> => {
    const slice = bytes.subarray(0, length);
    return {
      status: "ok",
      callId: meta.callId,
      mediaType: "application/json",
      ...(encoding === "utf8" ? { text: decoder.decode(slice) } : { data: slice.toBase64() }),
      cursor,
      nextCursor: cursor + length,
      done: cursor + length >= totalBytes,
      totalBytes,
    };
  };
  let length = bytes.length;
  if (encoding === "utf8") {
    if (bytes.length > 0 && isContinuationByte(bytes[0])) {
      throw new RangeError(
        `cursor ${cursor} falls inside a UTF-8 character; with encoding "utf8" use 0 or a nextCursor ` +
          'from a utf8 page, or read with encoding "base64"',
      );
    }
    length = utf8PageEnd(bytes, atEnd(length), 2 * base64Length(pageBytes)).end;
  }
  let response = build(length);
  if (budget === 0) return response;
  // The page size formula leaves room for typical cursors; very long ones can still push a small budget over.
  for (let excess = wrappedBytes(response) - budget; excess > 0; excess = wrappedBytes(response) - budget) {
    let shorter: number;
    if (encoding === "utf8") {
      const { cost } = utf8PageEnd(bytes.subarray(0, length), atEnd(length), Number.POSITIVE_INFINITY);
      shorter = utf8PageEnd(bytes.subarray(0, length), atEnd(length), cost - excess).end;
    } else {
      shorter = Math.max(1, length - 3 * Math.ceil(excess / 8));
    }
    if (shorter >= length) break;
    length = shorter;
    response = build(length);
  }
  return response;
}

/**
 * The answer for a callId this caller cannot read: the same bytes whether the id is unknown, expired
 * or belongs to a tool outside the caller's scope (so a scope cannot probe another's ids).
 */
export function unavailableResponse(callId: unknown, budget: number): Record<string, unknown> {
  return unavailable(callId, budget);
}

function unavailable(callId: unknown, budget: number): Record<string, unknown> {
  const base = { status: "unavailable", reason: UNAVAILABLE_REASON };
  return firstThatFits(budget, [
    { ...base, callId: echoCallId(callId, ECHO_MAX), hint: UNAVAILABLE_HINT },
    { ...base, callId: echoCallId(callId, ECHO_MAX) },
    { ...base, callId: echoCallId(callId, 8) },
  ]);
}

function cursorOutOfRange(meta: StoredMeta, cursor: number, budget: number): Record<string, unknown> {
  const { callId, totalBytes } = meta;
  const valid = totalBytes > 0 ? `valid cursors are 0 to ${totalBytes - 1}` : "the only valid cursor is 0";
  const base = { status: "cursor_out_of_range" };
  const facts = { callId, cursor, totalBytes };
  return firstThatFits(budget, [
    {
      ...base,
      reason: `Cursor ${cursor} is past the end of the ${totalBytes}-byte stored result; ${valid}.`,
      ...facts,
      hint: CURSOR_HINT,
    },
    {
      ...base,
      reason: `Cursor ${cursor} is past the end of the ${totalBytes}-byte stored result; ${valid}.`,
      ...facts,
    },
    { ...base, reason: `Past the end; ${valid}.`, ...facts },
  ]);
}
