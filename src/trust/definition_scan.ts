/**
 * A listed tool judged from its bytes: how deep it nests and how large it is, found by one linear pass
 * over the bytes (a counter for the depth, no recursion, nothing built), and its name read alone
 * (bounded). A definition over the limits of limits.ts is then never parsed: a 1,000,000-deep
 * `inputSchema` or a 50 MB description cost ~1 s of `JSON.parse` and schema checks before the walk of
 * limits.ts rejected them; here they cost a pass over their bytes, in steps.
 *
 * The size is counted as {@linkcode definitionProblem} counts it on the parsed value (a string: its
 * UTF-16 units + 2; a number, `true`, `false`, `null`: 8; a container: 2; an element: + 1; a member: its
 * key's units + 4), so a definition within 64 levels is judged the same either way (a repeated key
 * counts each time it appears in the bytes). A definition over both limits is named by the first the
 * bytes pass, in text order. An element's structure is checked as far as the pass needs (brackets
 * balance, strings end); one that is not a complete value is not judged here (its line then goes the
 * usual way: parsed, and refused if it is not JSON).
 *
 * @module
 */
import { type Member, RawBytes, utf8 } from "../json/raw_json.ts";
import { scanSteps } from "../json/sliced_json.ts";
import {
  MAX_DEFINITION_BYTES,
  MAX_DEFINITION_DEPTH,
  MAX_TOOL_NAME_CHARS,
  NAME_NOT_A_STRING,
  nameTooLong,
  NOT_AN_OBJECT,
  SHOWN_NAME_CHARS,
  TOO_DEEP,
  TOO_LARGE,
  UnparsedDefinition,
} from "./limits.ts";

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;
const LETTER_U = 0x75;

const OBJECT = 1;
const ARRAY = 2;

/**
 * Elements of a listed `tools` array smaller than this are parsed and walked as before (cheap: a
 * definition deeper than 64 levels takes 130 bytes, but parsing a few KiB costs microseconds); larger
 * ones are judged from their bytes first.
 */
export const SCAN_MIN_BYTES = 4 * 1024;

/**
 * Tools replaced by a stand-in, and members left unread (see {@linkcode unreadMembers}), so far: tests
 * watch them (such a value was never parsed).
 */
export const definitionScans: { standIns: number; unread: number } = { standIns: 0, unread: 0 };

/** Bytes read between two yields. */
const STEP_BYTES = 256 * 1024;

/** What one pass over a definition's bytes found. */
export interface DefinitionShape {
  /** The value is an object (its first byte is `{`). */
  object: boolean;
  /** The deepest nesting of objects and arrays (the value itself is level 1; 0 for a string or number). */
  depth: number;
  /** The size as {@linkcode definitionProblem} counts it; counting stops once a limit is passed. */
  size: number;
  /** The limit the bytes passed first, if any. */
  over?: "depth" | "size";
  /** The byte span of the value of the object's last `name` member, if any. */
  name?: { start: number; end: number };
  /** False when the bytes are not one complete value (truncated, unbalanced, more after the value). */
  complete: boolean;
}

/** The limits a pass checks (tests make them small). */
export interface ShapeLimits {
  /** @default MAX_DEFINITION_DEPTH */
  depth?: number;
  /** @default MAX_DEFINITION_BYTES */
  size?: number;
}

/** {@linkcode definitionShapeSteps} at once. */
export function definitionShape(
  raw: RawBytes,
  start = 0,
  end = raw.length,
  limits: ShapeLimits = {},
): DefinitionShape {
  const steps = definitionShapeSteps(raw, start, end, limits);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/**
 * The shape of the JSON value in `raw[start, end)`, in one pass over its bytes that yields every
 * {@link STEP_BYTES}. Its work and memory are linear in the bytes whatever they hold: the depth is a
 * counter (with one byte per open container to check that brackets match), strings are skipped by
 * native search once the size no longer needs counting.
 */
export function* definitionShapeSteps(
  raw: RawBytes,
  start = 0,
  end = raw.length,
  limits: ShapeLimits = {},
): Generator<void, DefinitionShape> {
  const pass = new ShapePass(raw, limits.depth ?? MAX_DEFINITION_DEPTH, limits.size ?? MAX_DEFINITION_BYTES);
  let base = start;
  for (const view of raw.slice(start, end)) {
    for (let w = 0; w < view.length; w += STEP_BYTES) {
      const part = view.subarray(w, w + STEP_BYTES);
      if (!pass.feed(part, base)) return pass.shape;
      base += part.length;
      yield;
    }
  }
  return pass.finish();
}

/**
 * The state of one pass over a value's bytes, fed a window at a time. The hot loop keeps its state in
 * locals (written back at the end of a window): a `{"type":"array","items":` run of 24 MB is ~3 million
 * strings and 2 million brackets.
 */
class ShapePass {
  readonly shape: DefinitionShape = { object: false, depth: 0, size: 0, complete: false };
  readonly #raw: RawBytes;
  readonly #maxDepth: number;
  readonly #maxSize: number;
  /** The kind of each open container, by depth (grown as needed: one byte a level). */
  #kinds: Uint8Array;
  /** While counting: whether the container at each depth expects a key next (depth ≤ maxDepth + 1). */
  readonly #keyNext: Uint8Array;
  #counting = true;
  #size = 0;
  #depth = 0;
  #inString = false;
  /** The string being read is a key (while counting; at depth 1 always). */
  #isKey = false;
  /** Counting a string: 1 after a backslash; the hex digits of a `\u` escape still to come. */
  #escaped = 0;
  #hex = 0;
  /** Not counting: the run of backslashes that ended the previous window, inside a string. */
  #escapes = 0;
  #inScalar = false;
  /** The value at depth 0 is over (more than whitespace after it is not one value). */
  #done = false;
  // The object's own members (depth 1): where the key is, and whether it is `name`.
  #topKeyStart = -1;
  /** 0 key, 1 colon, 2 value. */
  #topState = 0;
  #nameKey = false;
  /** The `name` value being read: 1 a string, 2 a container, 3 a scalar. */
  #nameOpen = 0;
  #nameStart = -1;
  #nameEnd = -1;

  constructor(raw: RawBytes, maxDepth: number, maxSize: number) {
    this.#raw = raw;
    this.#maxDepth = maxDepth;
    this.#maxSize = maxSize;
    this.#kinds = new Uint8Array(maxDepth + 2);
    this.#keyNext = new Uint8Array(maxDepth + 2);
  }

  #over(which: "depth" | "size"): void {
    this.shape.over ??= which;
    this.#counting = false;
  }

  /** A value begins at `at` at depth 1: notes a `name` value. */
  #topValue(at: number, kind: 1 | 2 | 3): void {
    if (this.#topState === 2 && this.#nameKey) {
      this.#nameOpen = kind;
      this.#nameStart = at;
      this.#nameEnd = at + 1;
    }
  }

  /** A string ended at `at` (its closing quote) at depth 1 of an object. */
  #topString(at: number): void {
    if (this.#topState === 0) {
      this.#nameKey = isName(this.#raw, this.#topKeyStart, at);
      this.#topState = 1;
    } else if (this.#nameOpen === 1) this.#nameEnd = at + 1;
  }

  #commitName(): void {
    if (this.#nameOpen) this.shape.name = { start: this.#nameStart, end: this.#nameEnd };
    this.#nameOpen = 0;
    this.#nameKey = false;
  }

  /** Reads `part`, whose first byte is at `base`; false once the bytes are known not to be one value. */
  feed(part: Uint8Array, base: number): boolean {
    const maxSize = this.#maxSize;
    const keyNext = this.#keyNext;
    let kinds = this.#kinds;
    let counting = this.#counting;
    let size = this.#size;
    let depth = this.#depth;
    let inString = this.#inString;
    let isKey = this.#isKey;
    let escaped = this.#escaped;
    let hex = this.#hex;
    let escapes = this.#escapes;
    let inScalar = this.#inScalar;
    let done = this.#done;
    let maxSeen = this.shape.depth;
    const limit = part.length;
    let ok = true;
    let j = 0;
    scan: while (j < limit) {
      if (inString) {
        if (counting) {
          const b = part[j]!;
          j++;
          if (escaped) {
            escaped = 0;
            if (b === LETTER_U) hex = 4;
            continue;
          }
          if (hex) {
            hex--;
            continue;
          }
          if (b === QUOTE) {
            inString = false;
            if (depth === 0) done = true;
            else if (depth === 1 && kinds[1] === OBJECT) this.#topString(base + j - 1);
            continue;
          }
          if (b === BACKSLASH) escaped = 1;
          else if ((b & 0xc0) === 0x80) continue;
          // A unit (a 4-byte sequence is two: a surrogate pair).
          size += b >= 0xf0 ? 2 : 1;
          if (size > maxSize) {
            this.#over("size");
            counting = false;
            // Read on without counting: a backslash just read escapes the next byte.
            escapes = escaped;
            escaped = 0;
            hex = 0;
          }
          continue;
        }
        // Not counting: a short string byte by byte, a long one by native search.
        let q = -1;
        let run = escapes;
        const stop = Math.min(limit, j + 32);
        for (let k = j; k < stop; k++) {
          const c = part[k]!;
          if (c === BACKSLASH) run++;
          else if (c === QUOTE && run % 2 === 0) {
            q = k;
            break;
          } else run = 0;
        }
        if (q === -1 && stop < limit) {
          escapes = run;
          j = stop;
          for (;;) {
            const found = part.indexOf(QUOTE, j);
            if (found === -1) break;
            let k = found - 1;
            while (k >= j && part[k] === BACKSLASH) k--;
            const r = k < j ? escapes + (found - j) : found - 1 - k;
            escapes = 0;
            j = found + 1;
            if (r % 2 === 0) {
              q = found;
              break;
            }
          }
          if (q === -1) {
            let k = limit - 1;
            while (k >= j && part[k] === BACKSLASH) k--;
            escapes = k < j ? escapes + (limit - j) : limit - 1 - k;
            j = limit;
            break;
          }
        } else if (q === -1) {
          // The window ends inside the string: carry the run of backslashes that ends it.
          escapes = run;
          j = limit;
          break;
        }
        j = q + 1;
        escapes = 0;
        inString = false;
        if (depth === 0) done = true;
        else if (depth === 1 && kinds[1] === OBJECT) this.#topString(base + q);
        continue;
      }
      const b = part[j]!;
      j++;
      if (b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09) {
        inScalar = false;
        continue;
      }
      // After the value, only the rest of a number or literal at the top may come.
      if (done && !(inScalar && depth === 0 && isScalarByte(b))) {
        ok = false;
        break;
      }
      if (b === QUOTE) {
        inScalar = false;
        if (counting && depth > 0 && kinds[depth] === ARRAY && ++size > maxSize) {
          this.#over("size");
          counting = false;
        }
        if (depth === 1) this.#topValue(base + j - 1, 1);
        inString = true;
        escapes = 0;
        escaped = 0;
        hex = 0;
        isKey = depth > 0 &&
          (depth === 1 && kinds[1] === OBJECT ? this.#topState === 0 : keyNext[depth] === 1);
        if (isKey) {
          if (depth < keyNext.length) keyNext[depth] = 0;
          if (depth === 1) this.#topKeyStart = base + j - 1;
        }
        if (counting && (size += isKey ? 4 : 2) > maxSize) {
          this.#over("size");
          counting = false;
        }
        continue;
      }
      if (b === OPEN_BRACE || b === OPEN_BRACKET) {
        inScalar = false;
        if (counting && depth > 0 && kinds[depth] === ARRAY && ++size > maxSize) {
          this.#over("size");
          counting = false;
        }
        if (depth === 1) this.#topValue(base + j - 1, 2);
        depth++;
        if (depth > maxSeen) maxSeen = depth;
        if (depth >= kinds.length) {
          const grown = new Uint8Array(kinds.length * 2);
          grown.set(kinds);
          kinds = this.#kinds = grown;
        }
        const kind = b === OPEN_BRACE ? OBJECT : ARRAY;
        kinds[depth] = kind;
        if (depth === 1) {
          this.shape.object = kind === OBJECT;
          this.#topState = 0;
        }
        if (counting) {
          if (depth > this.#maxDepth) {
            this.#over("depth");
            counting = false;
          } else {
            keyNext[depth] = kind === OBJECT ? 1 : 0;
            if ((size += 2) > maxSize) {
              this.#over("size");
              counting = false;
            }
          }
        }
        continue;
      }
      if (b === CLOSE_BRACE || b === CLOSE_BRACKET) {
        inScalar = false;
        if (depth === 0 || kinds[depth] !== (b === CLOSE_BRACE ? OBJECT : ARRAY)) {
          ok = false;
          break;
        }
        depth--;
        if (depth <= 1) {
          if (depth === 0) {
            done = true;
            this.#commitName();
          } else if (this.#nameOpen === 2) this.#nameEnd = base + j;
        }
        continue;
      }
      if (depth === 0) {
        // A number or literal at the top is read as a scalar below; structure bytes are not a value.
        if (b === COMMA || b === COLON) {
          ok = false;
          break scan;
        }
      } else if (b === COMMA) {
        inScalar = false;
        if (counting && kinds[depth] === OBJECT) keyNext[depth] = 1;
        if (depth === 1) {
          this.#commitName();
          this.#topState = 0;
        }
        continue;
      } else if (b === COLON) {
        inScalar = false;
        if (depth === 1) this.#topState = 2;
        continue;
      }
      // A byte of a number or a literal.
      if (!inScalar) {
        inScalar = true;
        if (counting && depth > 0 && kinds[depth] === ARRAY && ++size > maxSize) {
          this.#over("size");
          counting = false;
        }
        if (depth === 1) this.#topValue(base + j - 1, 3);
        if (counting && (size += 8) > maxSize) {
          this.#over("size");
          counting = false;
        }
      }
      if (depth === 1 && this.#nameOpen === 3) this.#nameEnd = base + j;
      if (depth === 0) done = true;
    }
    this.#counting = counting;
    this.#size = size;
    this.#depth = depth;
    this.#inString = inString;
    this.#isKey = isKey;
    this.#escaped = escaped;
    this.#hex = hex;
    this.#escapes = escapes;
    this.#inScalar = inScalar;
    this.#done = done;
    this.shape.depth = maxSeen;
    return ok;
  }

  /** The shape once every byte was read. */
  finish(): DefinitionShape {
    this.shape.size = this.#size;
    this.shape.complete = this.#depth === 0 && !this.#inString && this.#done;
    return this.shape;
  }
}

/** A byte that may belong to a number or literal (not structure, not a quote). */
function isScalarByte(b: number): boolean {
  return b !== QUOTE && b !== OPEN_BRACE && b !== OPEN_BRACKET && b !== CLOSE_BRACE && b !== CLOSE_BRACKET &&
    b !== COMMA && b !== COLON;
}

/** True when the key string at `[from, to]` (its quotes) is `name`. */
function isName(raw: RawBytes, from: number, to: number): boolean {
  if (to - from === 5) {
    return raw.at(from + 1) === 0x6e && raw.at(from + 2) === 0x61 && raw.at(from + 3) === 0x6d &&
      raw.at(from + 4) === 0x65;
  }
  // Escaped (`"n\u0061me"`): at most 6 bytes a character.
  if (to - from > 4 * 6 + 1) return false;
  try {
    return JSON.parse(raw.text(from, to + 1)) === "name";
  } catch {
    return false;
  }
}

/**
 * The stand-in for the definition at `raw[start, end)` when its bytes are over the depth or size limit,
 * else undefined (also when the bytes are not one complete value: the usual parse then decides). Its
 * reason is the one {@linkcode definitionProblem} gives: not an object, then the name, then the limits.
 */
export function* judgeDefinitionSteps(
  raw: RawBytes,
  start: number,
  end: number,
): Generator<void, UnparsedDefinition | undefined> {
  const shape = yield* definitionShapeSteps(raw, start, end);
  if (!shape.complete || shape.over === undefined) return undefined;
  if (!shape.object) return new UnparsedDefinition(undefined, NOT_AN_OBJECT);
  const span = shape.name;
  if (!span || raw.at(span.start) !== QUOTE) return new UnparsedDefinition(undefined, NAME_NOT_A_STRING);
  const name = yield* nameSteps(raw, span.start, span.end);
  if (name === undefined) return undefined;
  if (name.units === 0) return new UnparsedDefinition(undefined, NAME_NOT_A_STRING);
  if (name.units > MAX_TOOL_NAME_CHARS) return new UnparsedDefinition(name.shown, nameTooLong(name.units));
  return new UnparsedDefinition(name.shown, shape.over === "depth" ? TOO_DEEP : TOO_LARGE);
}

/** Bytes of a name decoded whole; a longer one is counted, and only its start decoded. */
const WHOLE_NAME_BYTES = 4096;

/**
 * The UTF-16 length of the JSON string at `raw[start, end)` (quotes included) and its first
 * {@link SHOWN_NAME_CHARS} + 1 units; undefined when it is not a valid string.
 */
function* nameSteps(
  raw: RawBytes,
  start: number,
  end: number,
): Generator<void, { units: number; shown: string } | undefined> {
  if (end - start <= WHOLE_NAME_BYTES) {
    let text: unknown;
    try {
      text = JSON.parse(raw.text(start, end));
    } catch {
      return undefined;
    }
    if (typeof text !== "string") return undefined;
    return { units: text.length, shown: text.slice(0, SHOWN_NAME_CHARS + 1) };
  }
  let units = 0;
  let escaped = false;
  let hex = 0;
  let read = 0;
  for (const part of raw.slice(start + 1, end - 1)) {
    for (let j = 0; j < part.length; j++) {
      const b = part[j]!;
      if (escaped) {
        escaped = false;
        if (b === LETTER_U) hex = 4;
      } else if (hex) hex--;
      else if (b === BACKSLASH) escaped = true, units++;
      else if ((b & 0xc0) !== 0x80) units += b >= 0xf0 ? 2 : 1;
    }
    read += part.length;
    if (read >= STEP_BYTES) {
      read = 0;
      yield;
    }
  }
  // The start, cut before an escape or a UTF-8 sequence the bound splits (a unit takes at most 6 bytes).
  const bytes = raw.bytes(start + 1, Math.min(end - 1, start + 1 + (SHOWN_NAME_CHARS + 2) * 6));
  let cut = bytes.length;
  for (let i = 0; i < bytes.length;) {
    if (bytes[i] === BACKSLASH) {
      const size = bytes[i + 1] === LETTER_U ? 6 : 2;
      if (i + size > bytes.length) {
        cut = i;
        break;
      }
      i += size;
    } else i++;
  }
  while (cut > 0 && cut < bytes.length && (bytes[cut]! & 0xc0) === 0x80) cut--;
  let shown: unknown;
  try {
    shown = JSON.parse(`"${new TextDecoder().decode(bytes.subarray(0, cut))}"`);
  } catch {
    return undefined;
  }
  if (typeof shown !== "string") return undefined;
  return { units, shown: shown.slice(0, SHOWN_NAME_CHARS + 1) };
}

/** A listed tool replaced by its stand-in: where it was, and what stands in for it. */
export interface StandIn {
  /** Its index in the `tools` array. */
  index: number;
  /** Its bytes in the line. */
  span: Member;
  definition: UnparsedDefinition;
}

/**
 * The elements of the `tools` array at `tools` (a member of a scanned line, with its elements when the
 * scan collected them) that are over the limits, judged from their bytes (see
 * {@linkcode judgeDefinitionSteps}); only elements of {@link SCAN_MIN_BYTES} or more are looked at.
 */
export function* standInSteps(raw: RawBytes, tools: Member): Generator<void, StandIn[]> {
  const elements = tools.children ?? (yield* scanSteps(raw, tools.start, tools.end, []));
  if (!elements || elements.kind !== "array") return [];
  const out: StandIn[] = [];
  for (let index = 0; index < elements.members.length; index++) {
    const span = elements.members[index]!;
    if (span.end - span.start < SCAN_MIN_BYTES) continue;
    const definition = yield* judgeDefinitionSteps(raw, span.start, span.end);
    if (definition) out.push({ index, span, definition }), definitionScans.standIns++;
  }
  return out;
}

const NULL = utf8("null");

/** Bytes of a line put in place of a value (see {@linkcode replaceSpans}). */
export interface Replacement {
  span: Member;
  bytes: Uint8Array;
}

/** The line with each stand-in's bytes replaced by `null` (views of the line's parts, no copy). */
export function withoutStandIns(raw: RawBytes, standIns: readonly StandIn[]): RawBytes {
  return replaceSpans(raw, standIns.map(({ span }) => ({ span, bytes: NULL })));
}

/** The line with the bytes of each span replaced (spans apart, in any order; views, no copy). */
export function replaceSpans(raw: RawBytes, replacements: readonly Replacement[]): RawBytes {
  const out = new RawBytes();
  let at = 0;
  for (const { span, bytes } of [...replacements].sort((a, b) => a.span.start - b.span.start)) {
    for (const view of raw.slice(at, span.start)) out.append(view);
    out.append(bytes);
    at = span.end;
  }
  for (const view of raw.slice(at, raw.length)) out.append(view);
  return out;
}

/**
 * Members of a `tools/list` answer the gateway does not read (neither `jsonrpc`, `id`, `result`, `error`,
 * nor the result's `tools` and `nextCursor`) of this size or more are not parsed: each is read as an
 * empty value of its kind (`{}`, `[]`, `""`, else `null`), so a 50 MB `_meta` costs no `JSON.parse`.
 */
export const UNREAD_MEMBER_BYTES = 64 * 1024;

const READ_TOP = new Set(["jsonrpc", "id", "result", "error"]);
const READ_RESULT = new Set(["tools", "nextCursor"]);
const EMPTY: Record<number, Uint8Array> = {
  [OPEN_BRACE]: utf8("{}"),
  [OPEN_BRACKET]: utf8("[]"),
  [QUOTE]: utf8('""'),
};

/**
 * The members of a `tools/list` answer (`top`, the envelope's, and `result`, its result's) that are not
 * read and not parsed (see {@link UNREAD_MEMBER_BYTES}), with their empty values.
 */
export function unreadMembers(
  raw: RawBytes,
  top: readonly Member[],
  result: readonly Member[],
): Replacement[] {
  const out: Replacement[] = [];
  const add = (members: readonly Member[], read: Set<string>) => {
    for (const span of members) {
      if (span.end - span.start < UNREAD_MEMBER_BYTES || read.has(span.key!)) continue;
      out.push({ span, bytes: EMPTY[raw.at(span.start)] ?? NULL });
    }
  };
  add(top, READ_TOP);
  add(result, READ_RESULT);
  definitionScans.unread += out.length;
  return out;
}

/**
 * Puts the stand-ins in place of the `null`s that {@linkcode withoutStandIns} left in a parsed answer's
 * `result.tools`.
 */
export function putStandIns(message: unknown, standIns: readonly StandIn[]): void {
  const tools = (message as { result?: { tools?: unknown } } | null)?.result?.tools;
  if (!Array.isArray(tools)) return;
  for (const { index, definition } of standIns) {
    if (tools[index] === null) tools[index] = definition;
  }
}
