/**
 * Where the resolver index of a catalog lives. A small catalog's index is built in this isolate (in
 * slices, see `buildIndexAsync`); a large one's (at least {@link INDEX_WORKER_MIN_TOOLS} tools) in a
 * Web Worker (`index_worker.ts`), so the garbage collection of its heap (1.4 GB at 100,000 tools)
 * never pauses the gateway's event loop. Both answer the same {@link Discovery} interface with the
 * same results: the worker runs the resolver's own `searchResponse`/`resolveResponse`.
 *
 * @module
 */
import { type CatalogTool, entryFields } from "../catalog/mod.ts";
import type { QueryArguments, ResolveResponse, ResponseContext, SearchResponse } from "./mod.ts";
import type { WireTool, WorkerReply, WorkerRequest } from "./index_worker.ts";

/** Catalogs of at least this many tools are indexed in a worker; smaller ones in process. */
export const INDEX_WORKER_MIN_TOOLS = 5000;

/**
 * Longest, in ms, the event loop is held cloning one batch of tools for the worker: the batch size
 * adapts to it, up to {@link INDEX_BATCH_MAX} tools (1,000 tools took 30–80 ms to clone on a loaded
 * 2-core machine).
 */
export const INDEX_BATCH_MS = 10;

/** Most tools in one batch for the worker. */
export const INDEX_BATCH_MAX = 256;

/** Longest a query to the worker may take before it is answered with an error. */
export const INDEX_QUERY_TIMEOUT_MS = 30_000;

/** The search index of one catalog, and its content-addressed revision. */
export interface Discovery {
  readonly revision: string;
  /** Where the index lives. */
  readonly where: "process" | "worker";
  search(args: QueryArguments, context: ResponseContext): Promise<SearchResponse>;
  resolve(args: QueryArguments, context: ResponseContext): Promise<ResolveResponse>;
  /** Frees the index (terminates the worker); later queries reject with {@link IndexGoneError}. */
  close(): void;
}

/** The worker holding an index stopped (closed, crashed or timed out) before it answered. */
export class IndexGoneError extends Error {
  override name = "IndexGoneError";
}

/** Options of {@link localDiscovery}. */
export interface DiscoveryOptions {
  /** Aborting frees the index: later queries reject with {@link IndexGoneError}. */
  signal?: AbortSignal;
}

/** Options of {@link workerDiscovery}. */
export interface WorkerDiscoveryOptions extends DiscoveryOptions {
  /** Longest the build may take. @default 60 s plus 1 ms per tool */
  buildTimeoutMs?: number;
  /** @default {@link INDEX_QUERY_TIMEOUT_MS} */
  queryTimeoutMs?: number;
  /** Called once when the worker fails after it was built (a crash or a query timeout). */
  onFailure?: (message: string) => void;
  /**
   * Where the worker comes from and goes back to once the discovery closes (reused by the next build).
   * @default a worker of this discovery's own, terminated when it closes
   */
  pool?: IndexWorkerPool;
}

/** The index built in this isolate, in slices that yield to the event loop (today's path for small catalogs). */
export async function localDiscovery(
  tools: readonly CatalogTool[],
  options: DiscoveryOptions = {},
): Promise<Discovery> {
  // Loaded on first use, not at start: the resolver (its lexicon above all) is a large share of the
  // gateway's start-up time, and `initialize` is answered before any catalog is indexed.
  const { buildIndexAsync, catalogRevisionAsync, resolveResponse, searchResponse } = await import(
    "./mod.ts"
  );
  const [built, revision] = await Promise.all([buildIndexAsync(tools), catalogRevisionAsync(tools)]);
  let index: typeof built | undefined = built;
  let closed = false;
  const close = () => {
    closed = true;
    index = undefined;
  };
  if (options.signal?.aborted) close();
  options.signal?.addEventListener("abort", close, { once: true });
  const live = () => {
    if (closed || !index) throw new IndexGoneError("The search index was replaced by a newer catalog");
    return index;
  };
  return {
    revision,
    where: "process",
    search: (args, context) => Promise.resolve().then(() => searchResponse(live(), args, context)),
    resolve: (args, context) => Promise.resolve().then(() => resolveResponse(live(), args, context)),
    close,
  };
}

const macrotask = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/** The one place a worker is made (a test replaces it to count or fake workers). */
export type WorkerFactory = () => Worker;

/** The module an index worker runs (`index_worker_main.ts`: it lowers its thread's priority, then loads `index_worker.ts`). */
export const INDEX_WORKER_MODULE: string = new URL("./index_worker_main.ts", import.meta.url).href;

const newIndexWorker: WorkerFactory = () => new Worker(INDEX_WORKER_MODULE, { type: "module" });

let leases = 0;

/**
 * The index workers of one hub, kept between builds. Starting a worker holds the event loop while Deno
 * makes its isolate (25–115 ms on a loaded 2-core machine), so a hub starts one at most once: a build
 * takes the idle worker (or starts one), and a discovery that is closed after its build finished
 * hands its worker back for the next build (its index freed). A worker that crashed, hung, failed or
 * was stopped mid-build is terminated, never reused: the next build starts a new one. {@link close}
 * terminates every worker (an idle worker would otherwise keep the process alive).
 */
export class IndexWorkerPool {
  #idle?: Worker;
  /** A {@link warmSoon} whose macrotask has not run yet. */
  #warming?: { promise: Promise<void>; done: () => void; timer: ReturnType<typeof setTimeout> };
  /** Workers lent to a build, with what ends that build's discovery when the pool closes. */
  readonly #busy = new Map<Worker, (message: string) => void>();
  readonly #create: WorkerFactory;
  #closed = false;
  /** Workers started so far. */
  started = 0;

  constructor(create: WorkerFactory = newIndexWorker) {
    this.#create = create;
  }

  /** Starts a worker now if there is none (idle or busy), so that a later build does not wait for it. */
  warm(): void {
    const warming = this.#warming;
    this.#warming = undefined;
    clearTimeout(warming?.timer);
    try {
      if (this.#closed || this.#idle || this.#busy.size) return;
      this.#idle = this.#start();
    } finally {
      // Scheduled once the worker is made: a macrotask after this one.
      warming?.done();
    }
  }

  /**
   * {@link warm} in a macrotask of its own, if there is no worker (idle, busy or about to start): the
   * promise settles one macrotask after that one, so that what the caller starts once it settles (a
   * catalog slice, say) never runs in the same turn of the event loop as Deno making the isolate (the
   * two made one hold of their sums). Undefined when there is nothing to wait for; {@link close} settles
   * it too.
   */
  warmSoon(): Promise<void> | undefined {
    if (this.#closed || this.#idle || this.#busy.size) return undefined;
    if (this.#warming) return this.#warming.promise;
    const { promise, resolve } = Promise.withResolvers<void>();
    const warming = {
      promise,
      done: () => setTimeout(resolve, 0),
      timer: setTimeout(() => this.warm(), 0),
    };
    this.#warming = warming;
    return promise;
  }

  /** Whether an idle worker waits for the next build (else {@link take} starts one). */
  get ready(): boolean {
    return this.#idle !== undefined;
  }

  /** A worker for one build: the idle one, else a new one; `onClose` ends the build's discovery at {@link close}. */
  take(onClose: (message: string) => void = () => {}): Worker {
    if (this.#closed) throw new IndexGoneError("The search index workers were shut down");
    const worker = this.#idle ?? this.#start();
    this.#idle = undefined;
    worker.onerror = null;
    worker.onmessageerror = null;
    worker.onmessage = null;
    this.#busy.set(worker, onClose);
    return worker;
  }

  /** Takes back a healthy worker whose lease ended (`release` posted): kept idle, or terminated if one is. */
  give(worker: Worker): void {
    if (!this.#busy.delete(worker)) return;
    if (this.#closed || this.#idle) return worker.terminate();
    this.#idle = worker;
    this.#watchIdle(worker);
  }

  /** Terminates a worker that crashed, hung or holds stale work. */
  discard(worker: Worker): void {
    this.#busy.delete(worker);
    if (this.#idle === worker) this.#idle = undefined;
    worker.terminate();
  }

  /** Terminates every worker; later builds are refused with {@link IndexGoneError}. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#warming?.timer);
    this.#warming?.done();
    this.#warming = undefined;
    this.#idle?.terminate();
    this.#idle = undefined;
    const busy = [...this.#busy];
    this.#busy.clear();
    for (const [worker, onClose] of busy) {
      worker.terminate();
      onClose("The search index workers were shut down");
    }
  }

  #start(): Worker {
    const worker = this.#create();
    this.started++;
    this.#watchIdle(worker);
    return worker;
  }

  /** An idle worker that fails (its module did not load, say) is dropped; the next build starts another. */
  #watchIdle(worker: Worker): void {
    worker.onmessage = null;
    worker.onerror = (event: ErrorEvent) => {
      event.preventDefault();
      if (this.#idle === worker) this.discard(worker);
    };
    worker.onmessageerror = () => {
      if (this.#idle === worker) this.discard(worker);
    };
  }
}

/**
 * The index built and queried in a Web Worker (from `options.pool`, else one of its own that is
 * terminated with the discovery). The tools are sent in batches that each take about
 * {@link INDEX_BATCH_MS} to clone, with a macrotask yield between them. Rejects (and terminates the worker)
 * when the worker cannot start, fails or times out building; the caller falls back to
 * {@link localDiscovery}.
 */
export async function workerDiscovery(
  tools: readonly CatalogTool[],
  options: WorkerDiscoveryOptions = {},
): Promise<Discovery> {
  const signal = options.signal;
  const replaced = "The search index was replaced by a newer catalog";
  if (signal?.aborted) throw new IndexGoneError(replaced);
  const own = options.pool === undefined;
  const pool = options.pool ?? new IndexWorkerPool();
  // Starting a worker holds the event loop while Deno makes its isolate (see IndexWorkerPool): in a
  // macrotask of its own, with nothing else of this build in it.
  const starts = !pool.ready;
  if (starts) {
    await macrotask();
    if (signal?.aborted) {
      if (own) pool.close();
      throw new IndexGoneError(replaced);
    }
  }
  const worker = pool.take((message) => stop(message));
  const lease = ++leases;
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  let built = Promise.withResolvers<string>();
  // Rejected by stop() even while no one awaits it yet (the batches are still being sent).
  built.promise.catch(() => {});
  let gone: string | undefined;
  let ready = false;
  let nextId = 0;
  /** Ends this discovery; `healthy`: the worker finished its build and may serve the next one. */
  const stop = (message: string, healthy = false) => {
    if (gone !== undefined) return;
    gone = message;
    signal?.removeEventListener("abort", aborted);
    if (healthy && ready && !own) {
      worker.postMessage({ lease, type: "release" } satisfies WorkerRequest);
      pool.give(worker);
    } else {
      pool.discard(worker);
      if (own) pool.close();
    }
    built.reject(new IndexGoneError(message));
    for (const p of pending.values()) p.reject(new IndexGoneError(message));
    pending.clear();
  };
  const aborted = () => stop(replaced, true);
  signal?.addEventListener("abort", aborted, { once: true });
  worker.onmessage = (event: MessageEvent<WorkerReply>) => {
    const reply = event.data;
    // Answers to an earlier lease of this worker (queries it finished after that one was closed).
    if (gone !== undefined || reply.lease !== lease) return;
    if (reply.type === "built") built.resolve(reply.revision);
    else if (reply.type === "failed") stop(`The search index worker failed: ${reply.message}`);
    else {
      const p = pending.get(reply.id);
      if (!p) return;
      pending.delete(reply.id);
      if ("error" in reply) p.reject(rebuilt(reply.error));
      else p.resolve(reply.value);
    }
  };
  worker.onerror = (event: ErrorEvent) => {
    // Handled here: an unhandled worker error would end the gateway.
    event.preventDefault();
    const message = `The search index worker crashed: ${event.message}`;
    const failed = gone === undefined && ready;
    stop(message);
    if (failed) options.onFailure?.(message);
  };
  worker.onmessageerror = () => stop("The search index worker sent a message that could not be read");
  const post = (request: WorkerRequest) => {
    if (gone === undefined) worker.postMessage(request);
  };
  const buildTimeout = options.buildTimeoutMs ?? 60_000 + tools.length;
  const timer = setTimeout(
    () => stop(`The search index worker took longer than ${buildTimeout} ms to build`),
    buildTimeout,
  );
  let revision: string;
  try {
    if (starts) await macrotask();
    let size = 32;
    for (let at = 0; at < tools.length && gone === undefined;) {
      const batch: WireTool[] = tools.slice(at, at + size).map(entryFields);
      const t0 = performance.now();
      post({ lease, type: "tools", tools: batch });
      const took = performance.now() - t0;
      at += batch.length;
      // Sized so that one batch clones in about INDEX_BATCH_MS (hostile descriptions make tools uneven).
      const scale = Math.min(2, INDEX_BATCH_MS / Math.max(took, 0.1));
      size = Math.max(8, Math.min(INDEX_BATCH_MAX, Math.round(size * scale)));
      await macrotask();
    }
    post({ lease, type: "build" });
    revision = await built.promise;
  } catch (error) {
    stop(error instanceof Error ? error.message : String(error));
    throw error;
  } finally {
    clearTimeout(timer);
  }
  built = Promise.withResolvers<string>();
  built.promise.catch(() => {});
  ready = true;
  const queryTimeout = options.queryTimeoutMs ?? INDEX_QUERY_TIMEOUT_MS;
  const query = <T>(kind: "search" | "resolve", args: QueryArguments, context: ResponseContext) => {
    if (gone !== undefined) return Promise.reject(new IndexGoneError(gone));
    const id = nextId++;
    const answer = new Promise<unknown>((resolve, reject) => pending.set(id, { resolve, reject }));
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const message = `The search index worker did not answer within ${queryTimeout} ms`;
        stop(message);
        options.onFailure?.(message);
        reject(new IndexGoneError(message));
      }, queryTimeout);
    });
    post({
      lease,
      type: "query",
      id,
      kind,
      args: { query: args.query, max_hits: args.max_hits, page_token: args.page_token },
      context,
    });
    return Promise.race([answer, timeout]).finally(() => clearTimeout(timer)) as Promise<T>;
  };
  return {
    revision,
    where: "worker",
    search: (args, context) => query<SearchResponse>("search", args, context),
    resolve: (args, context) => query<ResolveResponse>("resolve", args, context),
    close: () => stop(replaced, true),
  };
}

/** The resolver's argument errors keep their class across the thread: the gateway maps them to InvalidParams. */
function rebuilt(error: { name: string; message: string }): Error {
  if (error.name === "RangeError") return new RangeError(error.message);
  if (error.name === "TypeError") return new TypeError(error.message);
  return new Error(error.message);
}
