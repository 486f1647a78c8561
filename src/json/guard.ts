/**
 * The process-wide JSON guard: `JSON.parse`, `Response.prototype.json` and `Request.prototype.json`
 * replaced by versions that V8's escaped-key bug (see safe_json.ts) cannot betray.
 *
 * Why global: the gateway parses what it reads itself with {@linkcode parseJson}, but the MCP SDK parses
 * what HTTP downstreams send on its own — `response.json()` for JSON answers (Streamable HTTP, OAuth
 * metadata and token answers) and `JSON.parse(event.data)` for every SSE event (Streamable HTTP and the
 * older HTTP+SSE transport). A custom `fetch` could cover `response.json()` but not SSE events, which
 * the SDK parses from strings; wrapping each transport would miss the next JSON.parse an SDK upgrade
 * adds. One guard installed before anything parses covers every parse in the process, the SDK's
 * included. Deno's `Body.json()` calls V8's parser directly (not the global `JSON.parse`), so it is
 * replaced too.
 *
 * A text without an escaped key (one linear scan, ~no cost: most messages have no backslash) goes to
 * V8's `JSON.parse` unchanged, reviver included; one with an escaped key is parsed by mcphub's parser,
 * and a reviver then applied by the spec's InternalizeJSONProperty walk, iteratively (any depth), with
 * `context.source` for unchanged primitives as V8 gives it.
 *
 * @module
 */
import { hasEscapedKey, type JsonSources, NATIVE_PARSE, nativeParse, parseSlowly } from "./safe_json.ts";

type Reviver = (this: unknown, key: string, value: unknown, context?: { source?: string }) => unknown;

/**
 * `JSON.parse` with its semantics (the text converted by ToString, a SyntaxError for invalid JSON, a
 * reviver applied when callable), exact even in an isolate where an earlier text poisoned V8's reading of
 * escaped keys, and never poisoning it.
 */
export function guardedJsonParse(text: unknown, reviver?: unknown): unknown {
  // ToString, as JSON.parse does (a template literal throws the same TypeError for a symbol).
  const string = typeof text === "string" ? text : `${text as string}`;
  if (!hasEscapedKey(string)) {
    return reviver === undefined ? nativeParse(string) : nativeParse(string, reviver as Reviver);
  }
  if (typeof reviver !== "function") return parseSlowly(string);
  const sources: JsonSources = new Map();
  const value = parseSlowly(string, sources);
  return internalize(value, reviver as Reviver, sources);
}

/** One object or array being walked: its holder and key, its keys (fixed on entry), the next index. */
interface Frame {
  holder: object;
  name: string;
  value: object;
  keys: string[];
  next: number;
}

/** `context` for the reviver: the source of a primitive that is still the one parsed there. */
function context(sources: JsonSources, holder: object, name: string, value: unknown): { source?: string } {
  if (value !== null && typeof value === "object") return {};
  const parsed = sources.get(holder)?.get(name);
  return parsed && Object.is(parsed.value, value) ? { source: parsed.source } : {};
}

/** Keys of `value` as InternalizeJSONProperty takes them: array indexes up to its length, or own enumerable keys. */
function keysOf(value: object): string[] {
  if (!Array.isArray(value)) return Object.keys(value);
  const length = Math.min(Math.max(Math.trunc(Number(value.length)) || 0, 0), Number.MAX_SAFE_INTEGER);
  return Array.from({ length }, (_, i) => String(i));
}

/** Puts the reviver's answer for `holder[name]` back: deleted when undefined, else a data property. */
function settle(holder: object, name: string, revived: unknown): void {
  if (revived === undefined) Reflect.deleteProperty(holder, name);
  else {
    Reflect.defineProperty(holder, name, {
      value: revived,
      writable: true,
      enumerable: true,
      configurable: true,
    });
  }
}

/**
 * InternalizeJSONProperty(root, "", reviver) over `value` (ECMA-262 25.5.1.1), with an explicit stack:
 * children in order, each read when reached (earlier revivers may have changed it), the reviver called
 * on each after its children with the holder as `this`.
 */
function internalize(value: unknown, reviver: Reviver, sources: JsonSources): unknown {
  const root = { "": value };
  const stack: Frame[] = [];
  const enter = (holder: object, name: string, child: unknown): unknown => {
    if (child !== null && typeof child === "object") {
      stack.push({ holder, name, value: child, keys: keysOf(child), next: 0 });
      return undefined;
    }
    return reviver.call(holder, name, child, context(sources, holder, name, child));
  };
  // The root is an object (a text with an escaped key has one), so it is a frame.
  const first = enter(root, "", value);
  if (stack.length === 0) return first;
  for (;;) {
    const frame = stack.at(-1)!;
    if (frame.next < frame.keys.length) {
      const name = frame.keys[frame.next++]!;
      const child = (frame.value as Record<string, unknown>)[name];
      const depth = stack.length;
      const revived = enter(frame.value, name, child);
      if (stack.length === depth) settle(frame.value, name, revived);
      continue;
    }
    stack.pop();
    const revived = reviver.call(frame.holder, frame.name, frame.value, {});
    if (stack.length === 0) return revived;
    settle(frame.holder, frame.name, revived);
  }
}

/** The function installed as `JSON.parse`: named and sized like the original, marked with it. */
const guardedParse = Object.defineProperties(
  {
    parse(text: string, reviver?: Reviver): unknown {
      return guardedJsonParse(text, reviver);
    },
  }.parse,
  { [NATIVE_PARSE]: { value: nativeParse } },
);

/** `Body.json()` for Response and Request: the text (UTF-8, a BOM dropped, as json() decodes it), guarded. */
const guardedBodyJson = {
  async json(this: Body): Promise<unknown> {
    return guardedJsonParse(await this.text());
  },
}.json;

/** The globals whose `prototype.json` is guarded. */
const BODIES = ["Response", "Request"] as const;
/** Marks a global's getter or `fetch` replaced by {@linkcode installJsonGuard} (by any copy of this module). */
const LAZY_GUARD = Symbol.for("mcphub.json.lazyBodyGuard");

/** The globals' own descriptors while this module's lazy guard stands in for them. */
const replaced = new Map<string, PropertyDescriptor>();
let bodiesGuarded = false;

/**
 * Guards `Response.prototype.json` and `Request.prototype.json` now (Deno loads the classes if they are
 * not loaded yet), and puts back the globals {@linkcode installJsonGuard} stood in for. For code that makes
 * bodies without going through those globals or `fetch` (`Deno.serve`'s requests). Idempotent.
 */
export function guardBodies(): void {
  if (bodiesGuarded) return;
  bodiesGuarded = true;
  for (const [name, descriptor] of replaced) Object.defineProperty(globalThis, name, descriptor);
  replaced.clear();
  for (const name of BODIES) {
    const body = (globalThis[name] as { prototype?: Body } | undefined)?.prototype;
    if (body && body.json !== guardedBodyJson) body.json = guardedBodyJson;
  }
}

/**
 * Installs the guard in this isolate: `JSON.parse` at once; `Response.prototype.json` and
 * `Request.prototype.json` (each property keeps its attributes) when first needed. Deno loads fetch,
 * its classes and web streams on the first use of one of their globals (~5 ms of start-up that
 * `mcp serve` over stdio does not need before it answers), so the globals `Response`, `Request` and
 * `fetch` stand in until then and guard the bodies on first use. Idempotent; {@linkcode parseJson} keeps
 * calling V8's own parser. main.ts does it first thing, before the SDK loads.
 */
export function installJsonGuard(): void {
  if (!jsonGuardInstalled()) JSON.parse = guardedParse as typeof JSON.parse;
  if (bodiesGuarded || replaced.size) return;
  const descriptors = [...BODIES, "fetch"].map((name) =>
    [name, Object.getOwnPropertyDescriptor(globalThis, name)] as const
  );
  const lazy = descriptors.every(([name, d]) =>
    d?.configurable && (name === "fetch" ? typeof d.value === "function" : typeof d.get === "function")
  );
  // Loaded already, or not Deno's lazy globals (another runtime): guarded now.
  if (!lazy || descriptors.some(([, d]) => (d!.get ?? d!.value)[LAZY_GUARD])) return guardBodies();
  for (const [name, descriptor] of descriptors) {
    replaced.set(name, descriptor!);
    if (name === "fetch") {
      const fetch = descriptor!.value as typeof globalThis.fetch;
      const first = Object.assign(
        { fetch: (...args: Parameters<typeof fetch>) => (guardBodies(), fetch(...args)) }.fetch,
        { [LAZY_GUARD]: true },
      );
      Object.defineProperty(globalThis, name, { ...descriptor, value: first });
      continue;
    }
    const get = descriptor!.get!;
    const first = Object.assign(function (this: unknown) {
      guardBodies();
      return get.call(this);
    }, { [LAZY_GUARD]: true });
    Object.defineProperty(globalThis, name, { ...descriptor, get: first });
  }
}

/** True when {@linkcode installJsonGuard} has run in this isolate (by this or another copy of the module). */
export function jsonGuardInstalled(): boolean {
  return NATIVE_PARSE in JSON.parse;
}
