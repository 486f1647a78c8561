/**
 * JSON.parse and JSON.stringify of a huge message in steps (see slices.ts), so that one server's
 * 100,000-tool `tools/list` answer (18 MB) never holds the gateway's event loop for the ~1 s that
 * decoding, parsing, serializing and encoding it in one piece take.
 *
 * Parsing: the line's structure is read by the byte scanner of raw_json.ts (strings and escapes
 * skipped, brackets balanced) a piece of the line at a time; then the big containers are rebuilt member
 * by member, each run of small members decoded and `JSON.parse`d on its own. The value is the one
 * `JSON.parse` gives (same values, same key order, `__proto__` an own key), and invalid JSON is a
 * SyntaxError. Serializing: the big arrays are serialized element by element and encoded in pieces;
 * the bytes are those of `JSON.stringify`.
 *
 * @module
 */
import { RawBytes, type Scanned, Scanner } from "./raw_json.ts";
import { parseJson } from "./mod.ts";

/** Lines of at least this many bytes are parsed in steps; smaller ones take `JSON.parse` at once. */
export const SLICED_PARSE_MIN_BYTES = 1024 * 1024;

/**
 * How lines are split (tests make the pieces tiny to split every container), and how many sliced parses
 * are under way (tests watch it).
 */
export const slicedParse: { runBytes: number; scanBytes: number; active: number } = {
  /**
   * A member up to this size is parsed whole; consecutive small members are parsed together up to it
   * (one decode and one `JSON.parse` each: ~1 ms).
   */
  runBytes: 64 * 1024,
  /** Bytes of the line the scanner reads between two yields. */
  scanBytes: 256 * 1024,
  active: 0,
};

/**
 * Levels of big containers split at most. Each level is one more scan of its bytes; a container below
 * this depth is parsed whole (an input built to defeat the split, not a message).
 */
const MAX_SPLIT_DEPTH = 16;

/** Keys along which the first scan collects members: a `tools/list` answer's tools in the same pass. */
const HINT_PATH = ["result", "tools"];

/** Decodes pieces of a line; a byte-order mark inside the line is kept (JSON.parse then rejects it). */
const pieceDecoder = new TextDecoder("utf-8", { ignoreBOM: true });

/**
 * True when `raw` is long enough to be parsed in steps ({@linkcode SLICED_PARSE_MIN_BYTES}); whether it
 * holds an object or an array is for {@linkcode leadSteps} to say (its first token may come late).
 */
export function slicedParseApplies(raw: RawBytes): boolean {
  return raw.length >= SLICED_PARSE_MIN_BYTES;
}

/**
 * The offset of the first byte of `raw` that is not JSON whitespace (after a byte-order mark at its very
 * start, which decoding drops), or -1; in steps, as a line may open with megabytes of whitespace.
 * {@linkcode parseSteps} takes a line whose first token is `{` or `[`; another is parsed at once.
 */
export function* leadSteps(raw: RawBytes): Generator<void, number> {
  for (let at = bomLength(raw); at < raw.length; at += slicedParse.scanBytes) {
    const first = firstSolid(raw, at, slicedParse.scanBytes);
    if (first >= 0) return first;
    yield;
  }
  return -1;
}

/** 3 when the bytes start with a UTF-8 byte-order mark (TextDecoder drops it), else 0. */
function bomLength(raw: RawBytes): number {
  return raw.length >= 3 && raw.at(0) === 0xef && raw.at(1) === 0xbb && raw.at(2) === 0xbf ? 3 : 0;
}

function isSpace(b: number): boolean {
  return b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
}

/** The first byte in `[from, from + limit)` that is not JSON whitespace, or -1. */
function firstSolid(raw: RawBytes, from: number, limit: number): number {
  const end = Math.min(raw.length, from + limit);
  for (let i = raw.partAt(from); i < raw.parts.length && raw.offsetOf(i) < end; i++) {
    const part = raw.parts[i]!;
    const base = raw.offsetOf(i);
    const stop = Math.min(part.length, end - base);
    for (let j = Math.max(0, from - base); j < stop; j++) {
      if (!isSpace(part[j]!)) return base + j;
    }
  }
  return -1;
}

/**
 * The value of the JSON text in `raw` (an object or an array, whose first byte is at `lead` when known:
 * see {@linkcode leadSteps}), as `JSON.parse` of its UTF-8 decoding gives it, built in steps (run with a
 * {@link Stepper}).
 * @throws {SyntaxError} when it is not JSON (the message names the byte where the scan or a piece failed)
 */
export function* parseSteps(raw: RawBytes, lead?: number): Generator<void, unknown> {
  slicedParse.active++;
  try {
    const start = lead ?? (yield* leadSteps(raw));
    if (start < 0) throw notJson(raw, raw.length, "no JSON value");
    const top = yield* scanSteps(raw, start, raw.length, HINT_PATH);
    if (!top) throw notJson(raw, start);
    // Only whitespace may follow the value (looked at a piece at a time: it may be long).
    for (let at = top.end; at < raw.length; at += slicedParse.scanBytes) {
      const rest = firstSolid(raw, at, slicedParse.scanBytes);
      if (rest >= 0) throw notJson(raw, rest, "unexpected non-whitespace after the JSON value");
      yield;
    }
    return yield* build(raw, top, 0);
  } finally {
    slicedParse.active--;
  }
}

/** A SyntaxError for the bytes of `raw` that are not JSON, near byte `at`. */
function notJson(raw: RawBytes, at: number, what = "not valid JSON", cause?: unknown): SyntaxError {
  return new SyntaxError(`${what} (byte ${at} of a ${raw.length}-byte line)`, { cause });
}

/**
 * Scans the container at `[start, end)` a piece of the line at a time: the scanner reads a growing view
 * of the line (the same bytes, appended as it goes).
 */
export function* scanSteps(
  raw: RawBytes,
  start: number,
  end: number,
  path: readonly string[],
): Generator<void, Scanned | null> {
  const view = new RawBytes();
  const scanner = new Scanner(view, path, start, end);
  const parts = raw.parts;
  const first = raw.partAt(start);
  // The parts before the container, as they are (the scanner starts at `start`).
  for (let i = 0; i < first; i++) view.append(parts[i]!);
  const step = slicedParse.scanBytes;
  let read = 0;
  for (let i = first; i < parts.length && raw.offsetOf(i) < end; i++) {
    const part = parts[i]!;
    for (let at = 0; at < part.length; at += step) {
      view.append(part.subarray(at, Math.min(part.length, at + step)));
      const outcome = scanner.advance();
      if (outcome !== undefined) return outcome;
      read += Math.min(step, part.length - at);
      if (read >= step) {
        read = 0;
        yield;
      }
    }
  }
  return scanner.advance() ?? null;
}

/** Bytes of a line decoded, as TextDecoder gives them inside the whole line. */
function text(raw: RawBytes, start: number, end: number): string {
  return pieceDecoder.decode(raw.bytes(start, end));
}

/** `JSON.parse` of `[start, end)` of the line wrapped in `open`/`close`: a SyntaxError says where. */
function parsePiece(raw: RawBytes, start: number, end: number, open = "", close = ""): unknown {
  try {
    return parseJson(open + text(raw, start, end) + close);
  } catch (error) {
    if (error instanceof SyntaxError) throw notJson(raw, start, `${error.message} in the piece at`, error);
    throw error;
  }
}

/** Sets `key` on `target` as JSON.parse does (an own data property, `__proto__` included). */
function put(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") {
    Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  } else target[key] = value;
}

/** The value of a scanned container: big members rebuilt in turn, runs of small ones parsed together. */
function* build(raw: RawBytes, scanned: Scanned, depth: number): Generator<void, unknown> {
  const { members } = scanned;
  const runBytes = slicedParse.runBytes;
  const isArray = scanned.kind === "array";
  const array: unknown[] = [];
  const object: Record<string, unknown> = {};
  let i = 0;
  while (i < members.length) {
    const m = members[i]!;
    const b = raw.at(m.start);
    if (m.end - m.start > runBytes && (b === 0x7b || b === 0x5b) && depth + 1 < MAX_SPLIT_DEPTH) {
      // A big container: scanned (unless the scan above already did) and rebuilt in its own steps.
      const inner = m.children ?? (yield* scanSteps(raw, m.start, m.end, []));
      if (!inner || inner.end !== m.end) throw notJson(raw, m.start);
      const value = yield* build(raw, inner, depth + 1);
      if (isArray) array.push(value);
      else put(object, m.key!, value);
      i++;
      yield;
      continue;
    }
    // A run of small members (or one big one that is not split), from a member's value to the last's.
    let j = i + 1;
    while (j < members.length && members[j]!.end - m.start <= runBytes) j++;
    const last = members[j - 1]!.end;
    if (isArray) {
      const values = parsePiece(raw, m.start, last, "[", "]") as unknown[];
      if (values.length !== j - i) throw notJson(raw, m.start);
      for (const value of values) array.push(value);
    } else {
      // From the first key's opening quote: the run is `"k":v,"k2":v2`, parsed as an object.
      const keyAt = keyStart(raw, m.start);
      const values = parsePiece(raw, keyAt, last, "{", "}") as Record<string, unknown>;
      // Keys come out in JSON.parse's order (integer-like first), which is also the order they take in
      // `object` however they are put; a repeated key keeps its first place and its last value.
      for (const key of Object.keys(values)) put(object, key, values[key]);
    }
    i = j;
    yield;
  }
  return isArray ? array : object;
}

/**
 * The opening quote of the key of the member whose value starts at `valueStart`: back over the colon,
 * whitespace and the key string (a quote preceded by an even run of backslashes).
 */
function keyStart(raw: RawBytes, valueStart: number): number {
  let at = valueStart - 1;
  while (isSpace(raw.at(at))) at--;
  at--; // the colon
  while (isSpace(raw.at(at))) at--;
  // `at` is the key's closing quote.
  for (at--; at >= 0; at--) {
    if (raw.at(at) !== 0x22) continue;
    let k = at - 1;
    while (raw.at(k) === 0x5c) k--;
    if ((at - 1 - k) % 2 === 0) return at;
  }
  throw notJson(raw, valueStart);
}

// ---------------------------------------------------------------------------------------------------

/** An array with at least this many elements is serialized element by element in steps. */
export const SLICED_STRINGIFY_MIN_ITEMS = 1_000;

/** Levels of plain objects and arrays walked to find such an array (a message's `result.tools` is 2). */
const MAX_WALK_DEPTH = 4;

/** Characters of JSON text encoded at a time. */
const ENCODE_CHARS = 256 * 1024;

/** Elements serialized between two yields. */
const ELEMENTS_PER_STEP = 64;

const encoder = new TextEncoder();

function isPlain(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return (proto === Object.prototype || proto === null) &&
    typeof (value as { toJSON?: unknown }).toJSON !== "function";
}

/**
 * True when `value` holds, within {@linkcode MAX_WALK_DEPTH} levels of plain objects and arrays, an array
 * of at least {@linkcode SLICED_STRINGIFY_MIN_ITEMS} elements (a 100,000-tool `tools/list` answer).
 * Looks at a few keys: cheap enough for every message.
 */
export function slicedStringifyApplies(value: unknown, depth = 0): boolean {
  if (depth >= MAX_WALK_DEPTH) return false;
  if (Array.isArray(value)) {
    if (value.length >= SLICED_STRINGIFY_MIN_ITEMS) return true;
    return value.length <= 16 && value.some((v) => slicedStringifyApplies(v, depth + 1));
  }
  if (!isPlain(value)) return false;
  let keys = 0;
  for (const key in value) {
    if (++keys > 16) return false;
    if (Object.hasOwn(value, key) && slicedStringifyApplies(value[key], depth + 1)) return true;
  }
  return false;
}

/**
 * The UTF-8 bytes of `JSON.stringify(value)` followed by `suffix`, built in steps: plain objects and
 * arrays near the top are walked, a big array serialized element by element, everything else by
 * `JSON.stringify` itself; the text is encoded a piece at a time.
 * @throws {TypeError} where JSON.stringify throws (a cycle, a BigInt)
 */
export function* stringifySteps(value: unknown, suffix = ""): Generator<void, Uint8Array[]> {
  slicedStringify.active++;
  try {
    const pieces = yield* piecesSteps(value);
    pieces.push(suffix);
    const out: Uint8Array[] = [];
    let batch = "";
    for (const piece of pieces) {
      batch += piece;
      if (batch.length >= ENCODE_CHARS) {
        out.push(encoder.encode(batch));
        batch = "";
        yield;
      }
    }
    if (batch) out.push(encoder.encode(batch));
    return out;
  } finally {
    slicedStringify.active--;
  }
}

/** Messages being serialized in steps right now (tests watch it to count calls answered meanwhile). */
export const slicedStringify: { active: number } = { active: 0 };

/**
 * `JSON.stringify(value)` built in steps as {@linkcode stringifySteps} builds it, as one string (the tool
 * cache stores a 100,000-tool list as text).
 * @throws {TypeError} where JSON.stringify throws, or when `value` has no JSON form
 */
export function* jsonTextSteps(value: unknown): Generator<void, string> {
  const pieces = yield* piecesSteps(value);
  yield;
  return pieces.join("");
}

/** The pieces of the JSON text of `value`. @throws {TypeError} when it has none (undefined, a function) */
function* piecesSteps(value: unknown): Generator<void, string[]> {
  const pieces: string[] = [];
  // JSON.stringify of a value with no JSON form (undefined, a function) is undefined: no text.
  if ((yield* walk(value, "", pieces, 0)) === undefined) throw new TypeError("The value has no JSON form");
  return pieces;
}

/**
 * Appends the JSON text of `value` (the member `key` of its holder) to `pieces`; returns undefined,
 * appending nothing, where JSON.stringify leaves the member out (undefined, a function, a symbol).
 */
function* walk(
  value: unknown,
  key: string,
  pieces: string[],
  depth: number,
): Generator<void, true | undefined> {
  const walkable = depth < MAX_WALK_DEPTH && (Array.isArray(value) || isPlain(value));
  if (!walkable) {
    // toJSON gets its key, as JSON.stringify gives it.
    const v = typeof (value as { toJSON?: unknown })?.toJSON === "function"
      ? (value as { toJSON(key: string): unknown }).toJSON(key)
      : value;
    const text = JSON.stringify(v);
    if (text === undefined) return undefined;
    pieces.push(text);
    return true;
  }
  if (Array.isArray(value)) {
    // A big array's elements one by one, each whole; a small array's walked (it may hold a big one).
    const big = value.length >= SLICED_STRINGIFY_MIN_ITEMS;
    pieces.push("[");
    for (let i = 0; i < value.length; i++) {
      if (i) pieces.push(",");
      const element = value[i];
      if (big) {
        const v = typeof (element as { toJSON?: unknown })?.toJSON === "function"
          ? (element as { toJSON(key: string): unknown }).toJSON(String(i))
          : element;
        pieces.push(JSON.stringify(v) ?? "null");
        if (i % ELEMENTS_PER_STEP === ELEMENTS_PER_STEP - 1) yield;
      } else if ((yield* walk(element, String(i), pieces, depth + 1)) === undefined) pieces.push("null");
    }
    pieces.push("]");
    return true;
  }
  const object = value as Record<string, unknown>;
  pieces.push("{");
  let first = true;
  for (const k of Object.keys(object)) {
    const at = pieces.length;
    pieces.push(first ? "" : ",", JSON.stringify(k), ":");
    if ((yield* walk(object[k], k, pieces, depth + 1)) === undefined) pieces.length = at;
    else first = false;
  }
  pieces.push("}");
  return true;
}

/**
 * The value of the JSON text `text`, as {@linkcode parseJson} gives it, built in steps: a text of
 * {@linkcode ENCODE_CHARS} characters or more is encoded a piece at a time (never between the halves of a
 * surrogate pair) and parsed by {@linkcode parseSteps}; a shorter one at once.
 * @throws {SyntaxError} when it is not JSON
 */
export function* parseTextSteps(text: string): Generator<void, unknown> {
  if (text.length < ENCODE_CHARS) return parseJson(text);
  const raw = new RawBytes();
  for (let at = 0; at < text.length;) {
    let end = Math.min(text.length, at + ENCODE_CHARS);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
    raw.append(encoder.encode(text.slice(at, end)));
    at = end;
    yield;
  }
  return yield* parseSteps(raw);
}
