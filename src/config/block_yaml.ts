/**
 * A strict reader for the plain block YAML that mcphub.yaml is written in, so that `mcp serve` can read
 * its config without loading the `yaml` package (a CommonJS package of ~80 modules: tens of ms before the
 * host's `initialize` is answered).
 *
 * It reads a subset: block mappings (plain keys of letters, digits, `_`, `.`, `/`, `-`, or quoted keys) and
 * block sequences, with compact mappings in sequence items; one-line scalars, plain or quoted, resolved by
 * the YAML 1.2 core schema (null, booleans, decimal integers, strings); one-line flow lists of scalars
 * (`[a, "b"]`) and the empty `{}`; comments. Anything else returns undefined, and the caller reads the file
 * with `yaml` itself: anchors, aliases, tags, block scalars, multi-line scalars, floats, hex and octal
 * numbers, flow mappings, nested flow collections, duplicate keys, `<<`, tabs, CR line ends, document
 * markers and directives, any indentation it does not expect. The nodes it returns are shaped like
 * `yaml`'s (same kind symbols, `items`, `key`/`value`, `value`, `source`, `range`), so the same checks
 * read both; every problem is reported from `yaml`'s reading (see `read.ts`).
 *
 * @module
 */
import type { Node } from "yaml";
import { MAP, NODE_TYPE, PAIR, SCALAR, SEQ } from "./yaml_nodes.ts";

/** What {@linkcode readBlockYaml} returns: the document's root (a mapping), or null for an empty file. */
export interface BlockDocument {
  contents: Node | null;
}

/** One line with content: its indentation, its text from there (trailing spaces cut), where that text starts. */
interface Line {
  indent: number;
  text: string;
  offset: number;
}

/** Thrown inside the reader when the text leaves the subset. */
class OutsideSubset extends Error {}

function outside(): never {
  throw new OutsideSubset();
}

/** Characters that send the whole file to `yaml`: tabs, CR, other controls, BOM, NEL and Unicode line breaks. */
// deno-lint-ignore no-control-regex -- control characters are exactly what this finds
const UNSUPPORTED_CHARS = /[\t\r\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]/;
/** A plain key: nothing that needs thought about quoting, indicators or typing. */
const PLAIN_KEY = /^[A-Za-z0-9_][A-Za-z0-9_./-]*$/;
/**
 * A plain item of a flow list (spaces around it cut): words of safe characters, no flow indicators, no `:`
 * or `#`, and not starting with an indicator (`-` only before a safe character).
 */
const FLOW_PLAIN =
  /^(?:[A-Za-z0-9_./~+=]|-(?=[A-Za-z0-9_./~+=@-]))(?:[A-Za-z0-9_./~+=@'"()!?&*%$;<>|^\\-]| (?! *$))*$/;
/** Characters that may not start a plain scalar in block context (`-` is handled apart). */
const NOT_PLAIN_FIRST = ",[]{}#&*!|>'\"%@`?:";

/**
 * Reads `text` when it is entirely in the subset described in the module doc; undefined otherwise (the
 * caller then reads it with `yaml`, which also reports every error).
 */
export function readBlockYaml(text: string): BlockDocument | undefined {
  if (UNSUPPORTED_CHARS.test(text)) return undefined;
  const lines: Line[] = [];
  let start = 0;
  for (const raw of text.split("\n")) {
    const offset = start;
    start += raw.length + 1;
    const line = raw.replace(/ +$/, "");
    if (line === "") continue;
    const indent = line.length - line.trimStart().length;
    // trimStart cuts only what UNSUPPORTED_CHARS let through: spaces, and Unicode spaces yaml does not cut.
    if (line.slice(0, indent) !== " ".repeat(indent)) return undefined;
    const content = line.slice(indent);
    if (content.startsWith("#")) continue;
    if (indent === 0 && /^(?:---|\.\.\.|%)/.test(content)) return undefined;
    lines.push({ indent, text: content, offset: offset + indent });
  }
  try {
    return { contents: new BlockReader(lines).document() };
  } catch (error) {
    if (error instanceof OutsideSubset) return undefined;
    throw error;
  }
}

/** `{line, col}` (1-based) of an offset in `text`, as `yaml`'s `LineCounter.linePos` gives them. */
export function linePositions(text: string): { linePos(offset: number): { line: number; col: number } } {
  const starts = [0];
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) starts.push(i + 1);
  return {
    linePos(offset) {
      let low = 0;
      let high = starts.length - 1;
      while (low < high) {
        const mid = (low + high + 1) >> 1;
        if (starts[mid]! <= offset) low = mid;
        else high = mid - 1;
      }
      return { line: low + 1, col: offset - starts[low]! + 1 };
    },
  };
}

class BlockReader {
  #lines: Line[];
  #at = 0;

  constructor(lines: Line[]) {
    this.#lines = lines;
  }

  document(): Node | null {
    const first = this.#peek();
    if (!first) return null;
    if (first.indent !== 0 || isDash(first.text)) outside();
    const root = this.#mapping(0);
    if (this.#peek()) outside();
    return root;
  }

  #peek(): Line | undefined {
    return this.#lines[this.#at];
  }

  /** The next line may not be indented deeper than `indent` (what is left there is not in the subset). */
  #expectEnd(indent: number): void {
    const next = this.#peek();
    if (next && next.indent > indent) outside();
  }

  #block(indent: number): Node {
    return isDash(this.#peek()!.text) ? this.#sequence(indent) : this.#mapping(indent);
  }

  #mapping(indent: number): Node {
    const pairs: unknown[] = [];
    const keys = new Set<string>();
    const start = this.#peek()!.offset;
    for (let line = this.#peek(); line && line.indent === indent && !isDash(line.text); line = this.#peek()) {
      this.#at++;
      const entry = splitEntry(line.text) ?? outside();
      if (keys.has(entry.key)) outside();
      keys.add(entry.key);
      const key = scalar(entry.key, entry.keySource, line.offset, line.offset + entry.keyLength);
      const rest = line.text.slice(entry.rest);
      const value = this.#value(rest, indent, line.offset + entry.rest, true);
      pairs.push({ [NODE_TYPE]: PAIR, key, value });
    }
    return collection(MAP, pairs, start);
  }

  #sequence(indent: number): Node {
    const items: Node[] = [];
    const start = this.#peek()!.offset;
    for (let line = this.#peek(); line && line.indent === indent && isDash(line.text); line = this.#peek()) {
      const rest = line.text.slice(1).replace(/^ +/, "");
      const column = line.text.length - rest.length;
      if (isDash(rest)) outside();
      if (rest !== "" && !rest.startsWith("#") && splitEntry(rest)) {
        // `- key: value`: a mapping whose keys sit at the column of the first one.
        this.#lines[this.#at] = { indent: indent + column, text: rest, offset: line.offset + column };
        items.push(this.#mapping(indent + column));
        this.#expectEnd(indent);
        continue;
      }
      this.#at++;
      items.push(this.#value(rest, indent, line.offset + column, false));
    }
    return collection(SEQ, items, start);
  }

  /**
   * The value after `key:` or `- ` (`rest`, leading spaces cut) on a line at `indent`: inline, or the block
   * on the lines below. A list may sit at the key's own indentation (`sameIndentList`).
   */
  #value(rest: string, indent: number, offset: number, sameIndentList: boolean): Node {
    if (rest === "" || rest.startsWith("#")) {
      const next = this.#peek();
      if (next && (next.indent > indent || (sameIndentList && next.indent === indent && isDash(next.text)))) {
        const node = this.#block(next.indent);
        this.#expectEnd(indent);
        return node;
      }
      return scalar(null, "", offset, offset);
    }
    const node = inlineValue(rest, offset);
    // A deeper line after an inline value would continue it (a multi-line scalar) or be an error.
    this.#expectEnd(indent);
    return node;
  }
}

function isDash(text: string): boolean {
  return text === "-" || text.startsWith("- ");
}

function scalar(value: unknown, source: string, start: number, end: number): Node {
  return { [NODE_TYPE]: SCALAR, value, source, range: [start, end, end] } as unknown as Node;
}

function collection(type: symbol, items: unknown[], start: number): Node {
  return { [NODE_TYPE]: type, items, range: [start, start, start] } as unknown as Node;
}

/**
 * `key: rest` or `key:`: the key, its length, and where `rest` starts in `text`; undefined when `text` is
 * no mapping entry at all (a scalar). A colon that does not end a simple key is outside the subset.
 */
function splitEntry(
  text: string,
): { key: string; keySource: string; keyLength: number; rest: number } | undefined {
  let key: string;
  let after: number;
  if (text[0] === '"' || text[0] === "'") {
    const end = quotedEnd(text);
    if (text[end] !== ":") return undefined;
    key = unquote(text.slice(0, end));
    after = end + 1;
  } else {
    const colon = findColon(text);
    if (colon < 0) return undefined;
    key = text.slice(0, colon);
    if (!PLAIN_KEY.test(key) || typeof resolvePlain(key) !== "string") outside();
    after = colon + 1;
  }
  if (after < text.length && text[after] !== " ") outside();
  let rest = after;
  while (text[rest] === " ") rest++;
  return { key, keySource: key, keyLength: after - 1, rest };
}

/** The first `:` followed by a space or the end of the line; -1 when there is none. */
function findColon(text: string): number {
  for (let i = text.indexOf(":"); i >= 0; i = text.indexOf(":", i + 1)) {
    if (i === text.length - 1 || text[i + 1] === " ") return i;
  }
  return -1;
}

/** The index just past the quoted scalar `text` starts with; a quote left open (multi-line) is outside. */
function quotedEnd(text: string): number {
  const quote = text[0];
  for (let i = 1; i < text.length; i++) {
    if (quote === '"' && text[i] === "\\") {
      i++;
    } else if (text[i] === quote) {
      if (quote === "'" && text[i + 1] === "'") i++;
      else return i + 1;
    }
  }
  return outside();
}

const ESCAPES: Record<string, string> = {
  "0": "\0",
  a: "\x07",
  b: "\b",
  e: "\x1b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  '"': '"',
  "/": "/",
  "\\": "\\",
};

/** The string a one-line quoted scalar stands for (`''` in single quotes; the common `\` escapes in double). */
function unquote(quoted: string): string {
  const body = quoted.slice(1, -1);
  if (quoted[0] === "'") return body.replaceAll("''", "'");
  return body.replace(/\\(u[0-9a-fA-F]{4}|.)?/g, (_, escape: string | undefined) => {
    if (escape === undefined) return outside();
    if (escape.length === 5) {
      const code = parseInt(escape.slice(1), 16);
      return code >= 0xd800 && code <= 0xdfff ? outside() : String.fromCharCode(code);
    }
    return ESCAPES[escape] ?? outside();
  });
}

/** What may follow a value on its line: nothing, or a comment after a space. */
function onlyComment(tail: string): boolean {
  return tail === "" || /^ +#/.test(tail);
}

/** An inline value: a quoted or plain scalar, a one-line flow list of scalars, or `{}`. */
function inlineValue(rest: string, offset: number): Node {
  const first = rest[0]!;
  if (first === '"' || first === "'") {
    const end = quotedEnd(rest);
    if (!onlyComment(rest.slice(end))) outside();
    const value = unquote(rest.slice(0, end));
    return scalar(value, value, offset, offset + end);
  }
  if (first === "[") return flowList(rest, offset);
  if (first === "{") {
    if (!/^\{\}(?: +#.*)?$/.test(rest)) outside();
    return collection(MAP, [], offset);
  }
  const hash = rest.indexOf(" #");
  const raw = (hash >= 0 ? rest.slice(0, hash) : rest).replace(/ +$/, "");
  if (first === "-" ? raw.length < 2 || raw[1] === " " : NOT_PLAIN_FIRST.includes(first)) outside();
  // `a: b: c` is a nested mapping yaml rejects on one line; a value ending in `:` is a key.
  if (raw.includes(": ") || raw.endsWith(":")) outside();
  return scalar(resolvePlain(raw), raw, offset, offset + raw.length);
}

/** `[a, "b", 'c']` on one line: scalars only, no empty or trailing items. */
function flowList(rest: string, offset: number): Node {
  const items: Node[] = [];
  let i = 1;
  const skipSpaces = () => {
    while (rest[i] === " ") i++;
  };
  skipSpaces();
  if (rest[i] === "]") {
    i++;
  } else {
    for (;;) {
      skipSpaces();
      const itemStart = i;
      if (rest[i] === '"' || rest[i] === "'") {
        const end = i + quotedEnd(rest.slice(i));
        const value = unquote(rest.slice(i, end));
        items.push(scalar(value, value, offset + itemStart, offset + end));
        i = end;
      } else {
        while (i < rest.length && !",]".includes(rest[i]!)) i++;
        const raw = rest.slice(itemStart, i).replace(/ +$/, "");
        if (!FLOW_PLAIN.test(raw)) outside();
        items.push(scalar(resolvePlain(raw), raw, offset + itemStart, offset + i));
      }
      skipSpaces();
      if (rest[i] === "]") {
        i++;
        break;
      }
      if (rest[i] !== ",") outside();
      i++;
      skipSpaces();
      if (rest[i] === "]") outside();
    }
  }
  if (!onlyComment(rest.slice(i))) outside();
  return collection(SEQ, items, offset);
}

/**
 * A plain scalar by the YAML 1.2 core schema, as `yaml` resolves it: null, a boolean, a decimal integer
 * (`parseInt`, as `yaml` does without `intAsBigInt`) or a string. Floats, hex, octal, infinity and NaN are
 * left to `yaml`.
 */
function resolvePlain(raw: string): unknown {
  if (/^(?:~|[Nn]ull|NULL)?$/.test(raw)) return null;
  if (/^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/.test(raw)) return raw[0] === "t" || raw[0] === "T";
  if (/^[-+]?[0-9]+$/.test(raw)) return parseInt(raw, 10);
  if (
    /^0o[0-7]+$/.test(raw) || /^0x[0-9a-fA-F]+$/.test(raw) ||
    /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/.test(raw) ||
    /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/.test(raw) ||
    /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/.test(raw)
  ) {
    return outside();
  }
  return raw;
}
