/**
 * `JSON.parse` that a hostile downstream cannot betray.
 *
 * V8 in Deno 2.9.6 has a JSON.parse bug (https://issues.chromium.org/issues/521080746,
 * nodejs/node#63785): once a JSON text with an object key holding a backslash has been parsed
 * (`{"a":1,"\\":2}`), a later object with the same preceding keys whose key is written with an escape
 * that starts like that key comes back with the wrong key (`{"a":3,"\u0041":4}` gives the keys
 * `["a", "\\"]`). One server could so corrupt every later message with escaped keys (Python's
 * `json.dumps` writes `"caf\u00e9"`) that crosses the gateway.
 *
 * {@linkcode parseJson} finds in one linear pass whether the text has an escaped key at all (almost no
 * message has: most have no backslash); if not, `JSON.parse` is exact. If it has, the text is parsed
 * here: tokens decoded one at a time (a lone string token builds no object, so the bug cannot reach it)
 * and objects built by assignment, never through V8's JSON map transitions. Such texts never reach the
 * native parser, so they cannot poison the isolate either.
 *
 * @module
 */

/** Where the JSON guard (guard.ts) keeps the `JSON.parse` it replaced, on the function it installs. */
export const NATIVE_PARSE: unique symbol = Symbol.for("mcphub.json.nativeParse");

/**
 * V8's own `JSON.parse`, captured when this module loads (or the one the guard replaced, should the guard
 * already be installed by another copy of this module): every native parse here goes through it, so
 * {@linkcode parseJson} never calls itself through an installed guard.
 */
export const nativeParse: (
  text: string,
  reviver?: (this: unknown, key: string, value: unknown) => unknown,
) => unknown = (JSON.parse as { [NATIVE_PARSE]?: typeof JSON.parse })[NATIVE_PARSE] ?? JSON.parse;

const BACKSLASH = 0x5c;
const QUOTE = 0x22;
const COLON = 0x3a;
const COMMA = 0x2c;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;
const MINUS = 0x2d;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;

/**
 * The value of the JSON text `text`: exactly what `JSON.parse(text)` gives when V8 is right (same values,
 * same key order, `__proto__` an own data property, a repeated key in its first place with its last
 * value), even in an isolate where an earlier text poisoned `JSON.parse`'s escaped keys.
 * @throws {SyntaxError} when `text` is not JSON (a text with an escaped key gets a message of the same
 * kind as JSON.parse's, naming the position)
 */
export function parseJson(text: string): unknown {
  if (!hasEscapedKey(text)) return nativeParse(text);
  return parseSlowly(text);
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/**
 * True when the JSON text `text` has an object key written with an escape, in time linear in its length:
 * the first backslash after a point outside any string starts an escape; from it the string's end is
 * found (a quote after an even run of backslashes) and the next character after whitespace says whether
 * the string was a key. In a text that is not JSON, every escaped key JSON.parse would read before it
 * fails is found: no such text reaches it.
 */
export function hasEscapedKey(text: string): boolean {
  let from = 0;
  for (;;) {
    const b = text.indexOf("\\", from);
    if (b < 0) return false;
    const q = stringEnd(text, b);
    if (q < 0) return false;
    let at = q + 1;
    while (at < text.length && isSpace(text.charCodeAt(at))) at++;
    if (text.charCodeAt(at) === COLON) return true;
    from = at;
  }
}

/**
 * The rest of a string from a point inside it: characters other than a quote or a backslash, and escapes
 * (a backslash and the character after it), at most 512 escapes at a time. It can never fail (it may match
 * nothing) and never backtracks into what it matched: each alternative starts with a different character.
 * The bound keeps irregexp's backtrack stack small: an unbounded `(?:…)*` throws "Maximum call stack size
 * exceeded" on a string of ten million escapes. One `exec` runs in irregexp's native code, ~3x faster than
 * hopping from quote to quote with `indexOf` on text full of `\"` (JSON written inside a text).
 */
const STRING_RUN = /[^"\\]*(?:\\[^][^"\\]*){0,512}/y;

/**
 * The closing quote of the string that goes on at `from` (its opening quote is before `from`), or -1 if
 * the text ends first. Each character is read once.
 */
function stringEnd(text: string, from: number): number {
  let at = from;
  for (;;) {
    STRING_RUN.lastIndex = at;
    STRING_RUN.test(text);
    const end = STRING_RUN.lastIndex;
    const c = text.charCodeAt(end);
    if (c === QUOTE) return end;
    // 512 escapes read, go on; else the text ended (a backslash as its last character included).
    if (c !== BACKSLASH || end === text.length - 1) return -1;
    at = end;
  }
}

/** Sets `key` on `target` as JSON.parse does (an own data property, `__proto__` included). */
function put(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") {
    Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  } else target[key] = value;
}

function fail(what: string, at: number): never {
  throw new SyntaxError(`${what} in JSON at position ${at}`);
}

function unexpected(text: string, at: number): never {
  if (at >= text.length) throw new SyntaxError("Unexpected end of JSON input");
  fail(`Unexpected token '${text[at]}'`, at);
}

/**
 * The source text of each primitive member, by the object or array that holds it and its key (an array
 * index as a string), with the value parsed from it: what a reviver's `context.source` is.
 */
export type JsonSources = Map<object, Map<string, { value: unknown; source: string }>>;

/**
 * The JSON text parsed without V8's JSON object builder: an explicit stack (no recursion, so any depth
 * JSON.parse takes), each string token `JSON.parse`d alone, objects built by assignment. With `sources`,
 * the source text of every primitive member is recorded there (for a reviver's `context.source`).
 */
export function parseSlowly(text: string, sources?: JsonSources): unknown {
  const n = text.length;
  const containers: (unknown[] | Record<string, unknown>)[] = [];
  const keys: string[] = [];
  let at = 0;

  const skip = () => {
    while (at < n && isSpace(text.charCodeAt(at))) at++;
  };

  /** The string whose opening quote is at `at`; `at` moves past it. */
  const string = (): string => {
    const start = at;
    const q = stringEnd(text, start + 1);
    if (q < 0) fail("Unterminated string", n);
    at = q + 1;
    try {
      return nativeParse(text.slice(start, at)) as string;
    } catch (error) {
      // The token's own message, at its place in the whole text.
      const message = (error as Error).message;
      const cut = message.indexOf(" in JSON at position ");
      if (cut < 0) throw new SyntaxError(`${message} (the string at position ${start})`, { cause: error });
      const inner = parseInt(message.slice(cut + 21), 10);
      fail(message.slice(0, cut), start + (Number.isFinite(inner) ? inner : 0));
    }
  };

  /** A key and its colon, at `at` (after whitespace); `what` is the error when no key is there. */
  const key = (what: string): string => {
    skip();
    if (text.charCodeAt(at) !== QUOTE) {
      if (at >= n) unexpected(text, at);
      fail(what, at);
    }
    const k = string();
    skip();
    if (text.charCodeAt(at) !== COLON) {
      if (at >= n) unexpected(text, at);
      fail("Expected ':' after property name", at);
    }
    at++;
    return k;
  };

  const digits = (): number => {
    const start = at;
    while (at < n) {
      const c = text.charCodeAt(at);
      if (c < ZERO || c > NINE) break;
      at++;
    }
    return at - start;
  };

  const number = (): number => {
    const start = at;
    if (text.charCodeAt(at) === MINUS) {
      at++;
      const c = text.charCodeAt(at);
      if (!(c >= ZERO && c <= NINE)) fail("No number after minus sign", at);
    }
    if (text.charCodeAt(at) === ZERO) {
      at++;
      const c = text.charCodeAt(at);
      if (c >= ZERO && c <= NINE) fail("Unexpected number", at);
    } else digits();
    if (text.charCodeAt(at) === DOT) {
      at++;
      if (digits() === 0) fail("Unterminated fractional number", at);
    }
    const e = text.charCodeAt(at);
    if (e === 0x65 || e === 0x45) {
      at++;
      const s = text.charCodeAt(at);
      if (s === 0x2b || s === MINUS) at++;
      if (digits() === 0) fail("Exponent part is missing a number", at);
    }
    // The grammar checked, Number() reads it as JSON.parse does.
    return Number(text.slice(start, at));
  };

  const literal = (word: string, value: unknown): unknown => {
    if (text.startsWith(word, at)) {
      at += word.length;
      return value;
    }
    let i = 0;
    while (i < word.length && text.charCodeAt(at + i) === word.charCodeAt(i)) i++;
    return unexpected(text, at + i);
  };

  parse: for (;;) {
    // A value starts at `at` (after whitespace).
    skip();
    let value: unknown;
    const valueStart = at;
    const c = text.charCodeAt(at);
    if (c === LBRACE) {
      at++;
      skip();
      if (text.charCodeAt(at) === RBRACE) {
        at++;
        value = {};
      } else {
        const k = key("Expected property name or '}'");
        containers.push({});
        keys.push(k);
        continue;
      }
    } else if (c === LBRACKET) {
      at++;
      skip();
      if (text.charCodeAt(at) === RBRACKET) {
        at++;
        value = [];
      } else {
        containers.push([]);
        keys.push("");
        continue;
      }
    } else if (c === QUOTE) value = string();
    else if (c === MINUS || (c >= ZERO && c <= NINE)) value = number();
    else if (c === 0x74) value = literal("true", true);
    else if (c === 0x66) value = literal("false", false);
    else if (c === 0x6e) value = literal("null", null);
    else unexpected(text, at);

    // The value goes into its container; containers it completes go into theirs.
    let primitive = sources !== undefined && (value === null || typeof value !== "object");
    for (;;) {
      const top = containers.at(-1);
      if (top === undefined) {
        skip();
        if (at < n) fail("Unexpected non-whitespace character after JSON", at);
        return value;
      }
      skip();
      const next = text.charCodeAt(at);
      if (primitive) {
        primitive = false;
        let members = sources!.get(top);
        if (!members) sources!.set(top, members = new Map());
        const source = text.slice(valueStart, at).trimEnd();
        members.set(Array.isArray(top) ? String(top.length) : keys.at(-1)!, { value, source });
      }
      if (Array.isArray(top)) {
        top.push(value);
        if (next === COMMA) {
          at++;
          continue parse;
        }
        if (next !== RBRACKET) {
          if (at >= n) unexpected(text, at);
          fail("Expected ',' or ']' after array element", at);
        }
      } else {
        put(top, keys.at(-1)!, value);
        if (next === COMMA) {
          at++;
          keys[keys.length - 1] = key("Expected double-quoted property name");
          continue parse;
        }
        if (next !== RBRACE) {
          if (at >= n) unexpected(text, at);
          fail("Expected ',' or '}' after property value", at);
        }
      }
      at++;
      value = containers.pop();
      keys.pop();
    }
  }
}
