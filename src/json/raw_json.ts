/**
 * JSON-RPC messages as bytes: a line kept as the chunks it arrived in, and a scanner that finds the
 * members of an object (or the elements of an array) without building it. The fast path reads the few
 * fields it needs (id, method, isError) from here and relays or spools the rest as it came.
 *
 * @module
 */
import { parseJson } from "./mod.ts";
import type { SpoolWriter } from "../spool/mod.ts";

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

const decoder = new TextDecoder();
const encoder = new TextEncoder();

/**
 * A line's bytes being written into the spool as they arrive (see lines.ts's LineSplitter): the writer
 * holds the bytes from `start` (the first byte of the `result` value) on; those it committed may be
 * dropped from memory ({@linkcode RawBytes.dropSpilled}) and are then read back from it when read.
 */
export interface LineSpill {
  writer: SpoolWriter;
  /** The line offset of the writer's first byte. */
  start: number;
}

const NO_BYTES = new Uint8Array(0);

/**
 * One message's bytes as the pipe delivered them (views, never copied), `length` bytes in all. A spilled
 * line ({@linkcode RawBytes.spill}) may lack a run of parts in memory: reads of them go to the spool.
 */
export class RawBytes {
  readonly #parts: Uint8Array[] = [];
  #length = 0;
  /** Start offset of each part. */
  readonly #offsets: number[] = [];
  /** Parts `[from, to)` are dropped (empty in `#parts`): their bytes are in the spill's writer. */
  #hole?: { from: number; to: number };

  /** The spool writer that takes this line's result as it arrives, if any. */
  spill?: LineSpill;

  constructor(parts: readonly Uint8Array[] = []) {
    for (const part of parts) this.append(part);
  }

  /** What a scan made of the whole (set by the LineSplitter that scanned it as it arrived): null = no container. */
  scanned?: Scanned | null;

  /**
   * The parts, in order; those of a spill's hole are empty (read them through {@linkcode RawBytes.slice},
   * or {@linkcode RawBytes.unspill} first).
   */
  get parts(): readonly Uint8Array[] {
    return this.#parts;
  }

  /** Bytes in all. */
  get length(): number {
    return this.#length;
  }

  /** Adds a part at the end (a view: the caller must not reuse its buffer). */
  append(part: Uint8Array): void {
    if (part.length === 0) return;
    this.#parts.push(part);
    this.#offsets.push(this.#length);
    this.#length += part.length;
  }

  /** The index of the part holding byte `at` (the last part for `at === length`). */
  partAt(at: number): number {
    const offsets = this.#offsets;
    let lo = 0;
    let hi = offsets.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (offsets[mid]! <= at) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** The start offset of part `i`. */
  offsetOf(i: number): number {
    return this.#offsets[i]!;
  }

  /** The length of part `i`. */
  #partLength(i: number): number {
    return (i + 1 < this.#offsets.length ? this.#offsets[i + 1]! : this.#length) - this.#offsets[i]!;
  }

  #inHole(i: number): boolean {
    return this.#hole !== undefined && i >= this.#hole.from && i < this.#hole.to;
  }

  /** Part `i`, read back from the spool when it was dropped. */
  #part(i: number): Uint8Array {
    if (!this.#inHole(i)) return this.#parts[i]!;
    const base = this.#offsets[i]! - this.spill!.start;
    return this.spill!.writer.read(base, base + this.#partLength(i));
  }

  /**
   * Lets go of the parts the spill's writer has committed (all but the last part, which a scan may still
   * read): they are read back from the spool when needed. `recycle` is given each part let go, whose
   * buffer no one else holds then (a middle part of a line is a whole chunk: it held no newline).
   */
  dropSpilled(recycle?: (part: Uint8Array) => void): void {
    const spill = this.spill;
    if (!spill) return;
    const upTo = spill.start + spill.writer.committed;
    let from = this.#hole?.from ?? this.partAt(spill.start);
    if (this.#offsets[from]! < spill.start) from++;
    let to = this.#hole?.to ?? from;
    while (to < this.#parts.length - 1 && this.#offsets[to]! + this.#partLength(to) <= upTo) {
      // Neither the first part nor the last: a whole chunk of the line's own (see LineSplitter).
      recycle?.(this.#parts[to]!);
      this.#parts[to] = NO_BYTES;
      to++;
    }
    if (to > from) this.#hole = { from, to };
  }

  /**
   * Ends the spill: the dropped parts are read back into memory, then the writer's chunks deleted. For a
   * line that is not stored after all (passed whole, not a result, or its store failed).
   *
   * @throws {SpoolWriteError} when the dropped bytes cannot be read back (then they are lost: the caller
   * must fail the message, never pass it short)
   */
  unspill(): void {
    const spill = this.spill;
    if (!spill) return;
    try {
      if (this.#hole) {
        for (let i = this.#hole.from; i < this.#hole.to; i++) {
          const base = this.#offsets[i]! - spill.start;
          this.#parts[i] = spill.writer.read(base, base + this.#partLength(i));
        }
        this.#hole = undefined;
      }
    } finally {
      this.spill = undefined;
      spill.writer.abort();
    }
  }

  /** Ends the spill of a line that is discarded (an error answer): deletes the writer's chunks. */
  discardSpill(): void {
    this.spill?.writer.abort();
    this.spill = undefined;
    this.#hole = undefined;
  }

  /** The bytes in `[start, end)` as views of the parts (no copy; a dropped part is read back). */
  slice(start: number, end: number): Uint8Array[] {
    const out: Uint8Array[] = [];
    if (end <= start) return out;
    for (let i = this.partAt(start); i < this.#parts.length; i++) {
      const base = this.#offsets[i]!;
      if (base >= end) break;
      const part = this.#part(i);
      const from = Math.max(start - base, 0);
      const to = Math.min(end - base, part.length);
      if (to > from) out.push(from === 0 && to === part.length ? part : part.subarray(from, to));
    }
    return out;
  }

  /** The bytes in `[start, end)` as one buffer (a view when they lie in one part). */
  bytes(start = 0, end = this.length): Uint8Array {
    const views = this.slice(start, end);
    if (views.length === 1) return views[0]!;
    return concat(views, end - start);
  }

  /** The bytes in `[start, end)` decoded as UTF-8. */
  text(start = 0, end = this.length): string {
    return decoder.decode(this.bytes(start, end));
  }

  /** The JSON value in `[start, end)`, parsed. @throws {SyntaxError} when it is not JSON */
  json(start = 0, end = this.length): unknown {
    return parseJson(this.text(start, end));
  }

  /** The byte at `at`. */
  at(at: number): number {
    const i = this.partAt(at);
    if (this.#inHole(i)) {
      return this.spill!.writer.read(at - this.spill!.start, at - this.spill!.start + 1)[0]!;
    }
    return this.#parts[i]![at - this.#offsets[i]!]!;
  }

  /** True when `needle` occurs in `[start, end)`. */
  includes(needle: Uint8Array, start = 0, end = this.length): boolean {
    const views = this.slice(start, end);
    let carry: Uint8Array = new Uint8Array(0);
    for (const view of views) {
      // A match may straddle two parts: search the seam with the previous part's tail.
      if (carry.length) {
        const seam = concat([carry, view.subarray(0, needle.length - 1)], -1);
        if (indexOfBytes(seam, needle) !== -1) return true;
      }
      if (indexOfBytes(view, needle) !== -1) return true;
      const tail = view.length >= needle.length - 1 ? view : concat([carry, view], -1);
      carry = tail.subarray(Math.max(0, tail.length - (needle.length - 1)));
    }
    return false;
  }
}

/** Joins byte arrays into one (`size` < 0: computed). */
export function concat(parts: readonly Uint8Array[], size: number): Uint8Array {
  if (size < 0) size = parts.reduce((n, p) => n + p.length, 0);
  const out = new Uint8Array(size);
  let at = 0;
  for (const part of parts) out.set(part, at), at += part.length;
  return out;
}

function indexOfBytes(haystack: Uint8Array, needle: Uint8Array): number {
  const first = needle[0]!;
  const last = haystack.length - needle.length;
  for (let i = haystack.indexOf(first); i !== -1 && i <= last; i = haystack.indexOf(first, i + 1)) {
    let j = 1;
    while (j < needle.length && haystack[i + j] === needle[j]) j++;
    if (j === needle.length) return i;
  }
  return -1;
}

/** UTF-8 bytes of `text`. */
export function utf8(text: string): Uint8Array {
  return encoder.encode(text);
}

/** One member of an object (`key` set) or element of an array: the byte span of its value. */
export interface Member {
  key?: string;
  /** First byte of the value. */
  start: number;
  /** One past its last byte (whitespace trimmed). */
  end: number;
  /** The container's own members, when the scan descended into it (see {@linkcode scan}'s `path`). */
  children?: Scanned;
}

/** What {@linkcode scan} found: the container's members and the byte after its closing bracket. */
export interface Scanned {
  kind: "object" | "array";
  members: Member[];
  end: number;
}

function isSpace(b: number): boolean {
  return b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
}

interface Frame {
  kind: "object" | "array";
  /** "key" (an object expecting a key or its end), "colon", "value". */
  mode: "key" | "colon" | "value";
  members: Member[];
  key?: string;
  keyStart: number;
  valueStart: number;
  /** The container just closed inside the current member, when it was descended into. */
  children?: Scanned;
  /** The path below this frame; undefined = do not descend. */
  path?: readonly string[];
}

/**
 * The direct members of the object or array starting at the first non-space byte at or after `start`,
 * and, along `path` (keys; `"*"` for the first {@linkcode STAR_LIMIT} elements of an array), the members
 * of the containers below them, all in one pass. `undefined` when the bytes are not a container.
 */
export function scan(
  raw: RawBytes,
  start = 0,
  end = raw.length,
  path: readonly string[] = [],
): Scanned | undefined {
  return new Scanner(raw, path, start, end).advance() ?? undefined;
}

/**
 * The key in `bytes[from, to)` when it is short plain ASCII (no escape: the usual case), else undefined
 * (then it is parsed as JSON): building it from the bytes costs a fraction of decoding and parsing.
 */
function keyText(bytes: Uint8Array, from: number, to: number): string | undefined {
  if (to - from > 32) return undefined;
  let key = "";
  for (let i = from; i < to; i++) {
    const b = bytes[i]!;
    if (b >= 0x80 || b === BACKSLASH || b < 0x20) return undefined;
    key += String.fromCharCode(b);
  }
  return key;
}

/** How many elements of an array a `"*"` in a scan's path descends into. */
export const STAR_LIMIT = 64;

/**
 * A resumable {@linkcode scan}: reads the bytes appended to `raw` since its last call, so a line can be
 * scanned as its chunks arrive (no pass over a 100 MB message once it is complete). Reads every byte
 * once, skipping string contents with native searches; checks structure only as far as it needs to
 * (brackets balance, keys are strings, members are separated).
 */
export class Scanner {
  readonly #raw: RawBytes;
  readonly #path: readonly string[];
  readonly #end: number;
  #at: number;
  #depth = 0;
  /** Frames of the containers being collected: the root and those along the path. */
  readonly #stack: Frame[] = [];
  /** The frame of the container at the current depth, when it is collected. */
  #frame: Frame | undefined;
  #lastSolid = -1;
  #inString = false;
  #escapes = 0;
  /** The outcome once known: the container, or null when the bytes are not one. */
  #result: Scanned | null | undefined;

  constructor(raw: RawBytes, path: readonly string[] = [], start = 0, end = Number.POSITIVE_INFINITY) {
    this.#raw = raw;
    this.#path = path;
    this.#at = start;
    this.#end = end;
  }

  /**
   * The top-level member whose value is a container still open at the end of what was read: its key and
   * the offset of its first byte (every byte read from there on belongs to it), else undefined.
   */
  openMember(): { key: string; start: number } | undefined {
    if (this.#result !== undefined || this.#depth < 2) return undefined;
    const root = this.#stack[0];
    if (!root || root.kind !== "object" || root.mode !== "value" || root.key === undefined) return undefined;
    return root.valueStart >= 0 ? { key: root.key, start: root.valueStart } : undefined;
  }

  /** Reads what has arrived: the container once it closed, null if the bytes are not one, else undefined. */
  advance(): Scanned | null | undefined {
    if (this.#result !== undefined) return this.#result;
    const raw = this.#raw;
    const end = Math.min(this.#end, raw.length);
    if (this.#at >= end) return undefined;
    let depth = this.#depth;
    const stack = this.#stack;
    let frame = this.#frame;
    let lastSolid = this.#lastSolid;
    let inString = this.#inString;
    let escapes = this.#escapes;
    const parts = raw.parts;
    const push = (f: Frame) => {
      f.members.push({ key: f.key, start: f.valueStart, end: lastSolid + 1, children: f.children });
      f.valueStart = -1;
      f.key = undefined;
      f.children = undefined;
      f.mode = f.kind === "object" ? "key" : "value";
    };
    const outcome = (() => {
      for (let pi = raw.partAt(this.#at); pi < parts.length; pi++) {
        const part = parts[pi]!;
        const base = raw.offsetOf(pi);
        if (base >= end) break;
        const limit = Math.min(part.length, end - base);
        let j = Math.max(0, this.#at - base);
        while (j < limit) {
          if (inString) {
            const q = part.indexOf(QUOTE, j);
            if (q === -1 || q >= limit) {
              // The string goes on in the next part: carry the run of backslashes that ends this one.
              let k = limit - 1;
              while (k >= j && part[k] === BACKSLASH) k--;
              escapes = k < j ? escapes + (limit - j) : limit - 1 - k;
              j = limit;
              break;
            }
            let k = q - 1;
            while (k >= j && part[k] === BACKSLASH) k--;
            const run = k < j ? escapes + (q - j) : q - 1 - k;
            escapes = 0;
            j = q + 1;
            if (run % 2 === 1) continue;
            inString = false;
            lastSolid = base + q;
            if (frame && frame.mode === "key" && frame.keyStart >= 0) {
              frame.key = frame.keyStart >= base
                ? keyText(part, frame.keyStart - base + 1, q) ??
                  JSON.parse(raw.text(frame.keyStart, base + q + 1))
                : JSON.parse(raw.text(frame.keyStart, base + q + 1));
              frame.keyStart = -1;
              frame.mode = "colon";
            }
            continue;
          }
          const b = part[j]!;
          const at = base + j;
          j++;
          if (isSpace(b)) continue;
          if (b === QUOTE) {
            inString = true;
            escapes = 0;
            if (frame) {
              if (frame.mode === "key") frame.keyStart = at;
              else if (frame.mode !== "value") return null;
              else if (frame.valueStart < 0) frame.valueStart = at;
            } else if (depth === 0) return null;
            lastSolid = at;
            continue;
          }
          if (b === OPEN_BRACE || b === OPEN_BRACKET) {
            const kind = b === OPEN_BRACE ? "object" : "array";
            let below: readonly string[] | undefined;
            if (depth === 0) below = this.#path;
            else if (frame) {
              if (frame.mode !== "value") return null;
              if (frame.valueStart < 0) frame.valueStart = at;
              const want = frame.path?.[0];
              if (
                want !== undefined &&
                (want === "*"
                  ? frame.kind === "array" && frame.members.length < STAR_LIMIT
                  : frame.key === want)
              ) {
                below = frame.path!.slice(1);
              }
            }
            depth++;
            if (depth === 1 || below !== undefined) {
              frame = {
                kind,
                mode: kind === "object" ? "key" : "value",
                members: [],
                keyStart: -1,
                valueStart: -1,
              };
              if (depth === 1 || below!.length) frame.path = below;
              stack.push(frame);
            } else frame = undefined;
            lastSolid = at;
            continue;
          }
          if (depth === 0) return null;
          if (b === CLOSE_BRACE || b === CLOSE_BRACKET) {
            if (frame && stack.length === depth) {
              if ((b === CLOSE_BRACE) !== (frame.kind === "object")) return null;
              if (frame.valueStart >= 0) push(frame);
              else if (
                frame.mode === "colon" ||
                (frame.mode === "value" && (frame.kind === "object" || frame.members.length)) ||
                // `{"a":1,}`: a comma before the brace.
                (frame.mode === "key" && frame.members.length)
              ) {
                return null;
              }
              const done: Scanned = { kind: frame.kind, members: frame.members, end: at + 1 };
              stack.pop();
              depth--;
              if (depth === 0) return done;
              frame = stack[stack.length - 1];
              frame!.children = done;
            } else {
              depth--;
              if (stack.length === depth) frame = stack[stack.length - 1];
            }
            lastSolid = at;
            continue;
          }
          if (frame) {
            if (b === COMMA) {
              if (frame.valueStart < 0) return null;
              push(frame);
              continue;
            }
            if (b === COLON) {
              if (frame.mode !== "colon") return null;
              frame.mode = "value";
              continue;
            }
            if (frame.mode !== "value") return null;
            if (frame.valueStart < 0) frame.valueStart = at;
          }
          lastSolid = at;
        }
      }
      return undefined;
    })();
    if (outcome !== undefined) {
      this.#result = outcome;
      return outcome;
    }
    this.#at = end;
    this.#depth = depth;
    this.#frame = frame;
    this.#lastSolid = lastSolid;
    this.#inString = inString;
    this.#escapes = escapes;
    // The whole range was read and the container is still open: not one (when the range is complete).
    if (end === this.#end) this.#result = null;
    return this.#result ?? undefined;
  }
}

/**
 * The value of `key` among `members`: the byte span. The last one wins, as JSON.parse would have it.
 */
export function member(members: readonly Member[], key: string): Member | undefined {
  let found: Member | undefined;
  for (const m of members) if (m.key === key) found = m;
  return found;
}

const RESOURCE = utf8('"resource');
/** Blocks of content up to this size are parsed whole for a preview; longer ones are read in part. */
const SMALL_BLOCK_BYTES = 64 * 1024;

/** A text block as a preview needs it. */
export interface PreviewBlock {
  type: string;
  text?: string;
}

/**
 * A `tools/call` result as the downstream sent it: the bytes of the `result` value inside the line that
 * carried it, with what the gateway reads of it (its members, `isError`). Relayed or spooled as is.
 */
export class RawResult {
  readonly raw: RawBytes;
  readonly start: number;
  readonly end: number;
  readonly members: readonly Member[];
  readonly isError: boolean;

  constructor(raw: RawBytes, span: Member, members: readonly Member[], isError: boolean) {
    this.raw = raw;
    this.start = span.start;
    this.end = span.end;
    this.members = members;
    this.isError = isError;
  }

  /**
   * The spill that holds this result's bytes from its first on, written into the spool as they arrived
   * (see downstream/stdio.ts), if any: finish it to store the result, else {@linkcode RawResult.unspill}.
   */
  get spill(): LineSpill | undefined {
    return this.raw.spill?.start === this.start ? this.raw.spill : undefined;
  }

  /** Makes the result whole in memory again and deletes what was spilled (see {@linkcode RawBytes.unspill}). */
  unspill(): void {
    this.raw.unspill();
  }

  /** UTF-8 bytes of the result value as sent. */
  get byteLength(): number {
    return this.end - this.start;
  }

  /** The result's bytes, as views of the chunks they arrived in. */
  parts(): Uint8Array[] {
    return this.raw.slice(this.start, this.end);
  }

  /** The result, parsed (for the rare result the gateway must change). */
  parse(): Record<string, unknown> {
    return this.raw.json(this.start, this.end) as Record<string, unknown>;
  }

  /** True when the content may hold a resource link or an embedded resource (whose URIs are rewritten). */
  mayHaveResources(): boolean {
    const content = member(this.members, "content");
    if (!content) return false;
    const blocks = content.children?.members;
    // Scanned down to the blocks (the usual case): their types say it, no search of the bytes.
    if (blocks && blocks.every((b) => b.children || this.raw.at(b.start) !== OPEN_BRACE)) {
      return blocks.some((b) => {
        const type = b.children && member(b.children.members, "type");
        if (!type || type.end - type.start > 64) return false;
        const value = this.raw.json(type.start, type.end);
        return value === "resource_link" || value === "resource";
      });
    }
    return this.raw.includes(RESOURCE, content.start, content.end);
  }

  /**
   * The content's leading text blocks, each text cut to no less than `maxUnits + 1` UTF-16 units when
   * longer (so a preview of `maxUnits` cut from it is the one the whole result gives), and `isError`.
   * Reads only the bytes it needs of a long text.
   */
  preview(maxUnits: number): { content: PreviewBlock[]; isError?: boolean } {
    const out: { content: PreviewBlock[]; isError?: boolean } = { content: [] };
    if (member(this.members, "isError")) out.isError = this.isError;
    const content = member(this.members, "content");
    // Scanned with the answer as it arrived, else now (each block's members too, in the same pass).
    const elements = content?.children ??
      (content ? scan(this.raw, content.start, content.end, ["*"]) : undefined);
    let units = 0;
    for (const element of elements?.members ?? []) {
      if (units > maxUnits) break;
      if (this.raw.at(element.start) !== OPEN_BRACE) {
        out.content.push({ type: "" });
        continue;
      }
      let block: PreviewBlock;
      if (element.end - element.start <= SMALL_BLOCK_BYTES) {
        const value = this.raw.json(element.start, element.end) as Record<string, unknown>;
        block = { type: typeof value.type === "string" ? value.type : "" };
        if (typeof value.text === "string") block.text = value.text;
      } else block = this.#longBlock(element, maxUnits - units + 1);
      if (block.text !== undefined) units += block.text.length + 1;
      out.content.push(block);
    }
    return out;
  }

  /** A large block's type and at least `units` units of its text (all of it when shorter). */
  #longBlock(element: Member, units: number): PreviewBlock {
    const inner = element.children ?? scan(this.raw, element.start, element.end);
    const type = inner && member(inner.members, "type");
    const text = inner && member(inner.members, "text");
    const block: PreviewBlock = {
      type: type && type.end - type.start < 256 ? String(this.raw.json(type.start, type.end)) : "",
    };
    if (!text || this.raw.at(text.start) !== QUOTE) return block;
    // A UTF-16 unit takes at most 6 bytes in JSON (\uXXXX).
    const want = text.start + 1 + (units + 2) * 6;
    if (want >= text.end - 1) {
      block.text = this.raw.json(text.start, text.end) as string;
      return block;
    }
    const bytes = this.raw.bytes(text.start + 1, want);
    let cut = bytes.length;
    // Not inside an escape sequence, nor inside a UTF-8 sequence.
    for (let i = 0; i < bytes.length;) {
      if (bytes[i] === BACKSLASH) {
        const size = bytes[i + 1] === 0x75 ? 6 : 2;
        if (i + size > bytes.length) {
          cut = i;
          break;
        }
        i += size;
      } else i++;
    }
    while (cut > 0 && (bytes[cut]! & 0xc0) === 0x80) cut--;
    block.text = JSON.parse(`"${decoder.decode(bytes.subarray(0, cut))}"`) as string;
    return block;
  }
}
