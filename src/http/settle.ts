/**
 * Memory given back after a burst of traffic (issue 41). A burst of results over `--listen` leaves V8's
 * young generation grown and nearly empty, old space uncompacted, and the buffers of delivered responses
 * waiting for the next major GC: RSS 1 s after 200 sessions × 40 calls of 30 KB was ~185 MB over the idle
 * gateway, of which ~110 MB is garbage that V8's own memory reducer returns only some 10 s later, and not
 * at all on some runs under load. {@linkcode QuietCollector} runs one full collection once the listener has
 * been quiet for `quietMs` after at least `minBytes` went through it: when no request is waiting (the pause
 * is tens of ms on a heap of that size), once per burst, never during a steady stream.
 *
 * The collection is V8's own `gc()`, exposed at run time (`--expose-gc` set by `node:v8`, the function
 * taken from a fresh `node:vm` context): no permission and no launcher flag, so `deno run`, the installed
 * command and a compiled binary all have it. Where that fails, nothing is collected early.
 *
 * @module
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/** V8's full collection, or undefined where the runtime does not give it. */
export function fullCollection(): (() => void) | undefined {
  try {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc");
    return typeof gc === "function" ? () => gc() : undefined;
  } catch {
    return undefined;
  }
}

/** Options of {@linkcode QuietCollector}. */
export interface QuietOptions {
  /** How long the listener must be quiet (no bytes noted) before collecting. */
  quietMs: number;
  /** How many bytes must have gone through since the last collection for a quiet spell to collect. */
  minBytes: number;
}

/** The listener's defaults: a 500 ms pause after 16 MiB. */
export const QUIET_DEFAULTS: QuietOptions = { quietMs: 500, minBytes: 16 * 1024 * 1024 };

/**
 * Runs `collect` once the bytes noted since the last collection reach `minBytes` and then none are noted for
 * `quietMs`. One timer at most, armed when the threshold is crossed and re-armed at its end for the time
 * left when bytes came meanwhile (noting bytes is an addition and a clock read: it sits on every write).
 */
export class QuietCollector {
  #collect: () => void;
  #options: QuietOptions;
  #bytes = 0;
  #last = 0;
  #timer?: ReturnType<typeof setTimeout>;
  #stopped = false;
  /** How many collections have run. */
  collections = 0;

  constructor(collect: () => void, options: QuietOptions = QUIET_DEFAULTS) {
    this.#collect = collect;
    this.#options = options;
  }

  /** True while a collection waits for its quiet spell. */
  get armed(): boolean {
    return this.#timer !== undefined;
  }

  /** Bytes went through the listener (a request body read, a response chunk written). */
  note(bytes: number): void {
    this.#bytes += bytes;
    this.#last = performance.now();
    if (this.#timer === undefined && !this.#stopped && this.#bytes >= this.#options.minBytes) {
      this.#arm(this.#options.quietMs);
    }
  }

  /** No collection after this. */
  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #arm(ms: number): void {
    this.#timer = setTimeout(() => this.#fire(), ms);
    // A waiting collection never keeps the process alive.
    Deno.unrefTimer(this.#timer);
  }

  #fire(): void {
    this.#timer = undefined;
    const quiet = performance.now() - this.#last;
    if (quiet < this.#options.quietMs) return this.#arm(this.#options.quietMs - quiet);
    this.#bytes = 0;
    this.collections++;
    this.#collect();
  }
}
