/**
 * What validating the `tools/list` answer of one downstream server that lists 100,000 tools costs the
 * gateway's event loop: a hub (no pin store) starts `tests/fixtures/hostile_server.ts --mode many` and
 * builds its catalog while a 1 ms ticker runs; its longest gap is the longest hold. Two ways, each in a
 * fresh process:
 *
 * - `whole`: the page validated in one piece (`ListToolsResultSchema`, as `Client.listTools` does);
 * - `sliced`: what the hub does now (`listToolsPage`: tool by tool, in slices, for pages over 1,000 tools).
 *
 * Reported per way, medians of the rounds: the longest hold from start to the catalog built, the longest
 * hold while the page was being validated (the ticker's gaps between the answer's arrival and the end of
 * its validation; the whole validation when whole), and that validation's wall time.
 *
 * ```sh
 * flock /tmp/mcphub-bench.lock deno run -A scripts/bench/list_bench.ts [--tools 100000] [--rounds 3]
 * ```
 *
 * `--host [--base DIR]` measures the host's view instead: a gateway serves a host over in-memory pipes
 * (initialize, then tools/list, answered once the 100,000-tool server is listed, parsed, validated and
 * mounted); reported, the longest hold of a 1 ms ticker from the host's initialize to its tools/list
 * answer read whole (and the holds over 50 ms, on stderr), the same from the hub's construction (a cached
 * list read there counts), and the time from the hub's construction to the host's initialize answered. With `--base DIR` (a checkout of another
 * commit, with this script copied into its `scripts/bench/`) the two alternate, baseline first. With
 * `--cache`, the hub has a tool-list cache in a fresh store (as `mcp serve` has): the run lasts until
 * the list is saved there too. `--warm`: the store already holds the list (a previous run saved it, as
 * a gateway's earlier start did): the answer comes from the cache, the run lasts until the live list,
 * the same, is parsed, mounted and saved. With either, also reported: the longest hold overlapping a
 * cache save (from its call to the end of its write: concurrent work and GC pauses in that window count
 * too) or load, the time a load took (from its call to the list read whole), and the cache's longest
 * single store statement (its own share of a hold).
 *
 * @module
 */
import { parseArgs } from "node:util";
import { Hub } from "../../src/hub/mod.ts";
import { Client } from "../../src/mcp/sdk_client.ts";
import { listSlicing } from "../../src/trust/list_tools.ts";
import { Gateway } from "../../src/gateway/gateway.ts";
import { StdioServerTransport } from "../../src/gateway/stdio_server.ts";
import { StoreToolCache, toolCacheMigrations } from "../../src/catalog/tool_cache.ts";
import { openStore } from "../../src/store/mod.ts";
import { gapTicker, manyToolsConfig, median, runChild } from "./_child.ts";

type Way = "whole" | "sliced";

interface Run {
  listHoldMs: number;
  holdMs: number;
  listMs: number;
}

async function child(way: Way, tools: number): Promise<Run> {
  if (way === "whole") listSlicing.minTools = Infinity;
  // The validation window: from the answer's arrival (the request's promise settles) to the page's end.
  let window: [number, number] | undefined;
  const proto = Client.prototype as unknown as {
    request(...a: unknown[]): Promise<unknown>;
    cacheToolMetadata(t: unknown): void;
  };
  const request = proto.request;
  proto.request = async function (this: unknown, ...a: unknown[]) {
    const r = await request.apply(this, a);
    if ((a[0] as { method?: string }).method === "tools/list") window = [performance.now(), 0];
    return r;
  };
  const cache = proto.cacheToolMetadata;
  proto.cacheToolMetadata = function (this: unknown, t: unknown) {
    if (window) window[1] = performance.now();
    return cache.call(this, t);
  };
  const hub = new Hub({
    config: manyToolsConfig(tools),
    env: Deno.env.toObject(),
    version: "bench",
    log: () => {},
  });
  const ticker = gapTicker();
  const gaps = ticker.gaps;
  try {
    await hub.start();
    await new Promise((resolve) => setTimeout(resolve, 50));
    await hub.catalogAsync();
    await new Promise((resolve) => setTimeout(resolve, 5));
  } finally {
    ticker.stop();
    await hub.close();
  }
  const [ls, le] = window!;
  const hold = (g: [number, number]) => g[1] - g[0];
  return {
    listHoldMs: way === "whole"
      ? le - ls
      : Math.max(0, ...gaps.filter((g) => g[0] >= ls && g[1] <= le).map(hold)),
    holdMs: Math.max(...gaps.map(hold)),
    listMs: le - ls,
  };
}

/** What `--host` measured in one process: the whole way from the gateway's start to the host's answer. */
interface HostRun {
  /** Longest gap of a 1 ms ticker from the host's `initialize` to its `tools/list` answer read whole. */
  holdMs: number;
  /** Time from the host's `initialize` to that answer. */
  answerMs: number;
  /** Longest gap from the hub's construction (a cache read in it included) to that answer. */
  startHoldMs: number;
  /** Time from the hub's construction to the host's `initialize` answered (the gateway's first answer). */
  firstMs: number;
  /** Time from the host's `initialize` sent to its answer. */
  initMs: number;
  /** Time from the host's `initialize` sent to its `tools/list` answer read whole. */
  listMs: number;
  /** Bytes of the answer's line. */
  answerBytes: number;
  /** Holds over 50 ms: `ms@start+ms`. */
  holds: string[];
  /** `performance.now()` at the host's `initialize` (to line the holds up with `--v8-flags=--trace-gc`). */
  startedAt: number;
  /** With a cache: the longest hold from a save's call to the end of its write (GC pauses in it count). */
  saveHoldMs: number;
  /** With a cache: the longest hold from a load's call to its list read whole (the start's read of it). */
  loadHoldMs: number;
  /** With a cache: the time from a load's call to its list read whole (the longest such load). */
  loadMs: number;
  /** With a cache: its longest store statement (a part written, checkpointed or read; 18 MB at once). */
  statementMs: number;
}

/**
 * The host's view: a gateway (hub, no store) in this process serves a host over in-memory pipes; the
 * host sends `initialize`, `notifications/initialized` and `tools/list`, which is answered once the
 * 100,000-tool server is listed, parsed, validated and mounted; a 1 ms ticker runs throughout.
 */
async function hostChild(tools: number, cached: boolean, warm = false): Promise<HostRun> {
  const dir = cached ? Deno.makeTempDirSync() : undefined;
  const store = dir ? openStore(`${dir}/s.db`, { migrations: toolCacheMigrations }) : undefined;
  if (store && warm) {
    // A run before this one listed the server and cached its list (as a gateway's previous start did).
    const first = new Hub({
      config: manyToolsConfig(tools),
      env: Deno.env.toObject(),
      version: "bench",
      log: () => {},
      toolCache: new StoreToolCache(store),
    });
    await first.start();
    await first.close();
  }
  // The cache's saves, timed: the live list's save comes after the host's answer; one written in steps
  // (this checkout) lasts until its promise settles, and its holds count too.
  // The cache's reads and writes, timed (windows from the call to the end of a write or read in steps).
  let saved = -Infinity;
  let written: Promise<unknown> = Promise.resolve();
  const windows: { save: [number, number][]; load: [number, number][] } = { save: [], load: [] };
  const timed = (kind: "save" | "load", r: unknown) => {
    const window: [number, number] = [performance.now(), Infinity];
    windows[kind].push(window);
    const end = () => window[1] = performance.now();
    if (r instanceof Promise) r.then(end, end);
    else end();
    return window;
  };
  class TimedCache extends StoreToolCache {
    // deno-lint-ignore no-explicit-any
    override save(...args: [any, any, any, any?, any?]): any {
      const start = performance.now();
      const r = super.save(...args);
      timed("save", r)[0] = start;
      saved = performance.now();
      written = Promise.resolve(r).catch(() => {});
      return r;
    }
    // deno-lint-ignore no-explicit-any
    override load(...args: [any, any]): any {
      const start = performance.now();
      const r = super.load(...args);
      timed("load", r)[0] = start;
      return r;
    }
    // deno-lint-ignore no-explicit-any
    override loadAsync(...args: [any, any]): any {
      const start = performance.now();
      const r = super.loadAsync(...args);
      timed("load", r)[0] = start;
      return r;
    }
  }
  // Started before the hub (a cache read in its constructor is a hold too); the host's window starts at t0.
  const ticker = gapTicker();
  const gaps = ticker.gaps;
  const early: [number, number][] = [];
  // Each store statement of the cache, timed: the longest is the cache's own share of a hold.
  let statementMs = 0;
  const timeCall = <T>(run: () => T): T => {
    const start = performance.now();
    try {
      return run();
    } finally {
      statementMs = Math.max(statementMs, performance.now() - start);
    }
  };
  const db = store &&
    new Proxy(store, {
      get(target, key) {
        if (key === "prepare") {
          return (sql: string) => {
            const statement = target.prepare(sql);
            return new Proxy(statement, {
              get(s, k) {
                const value = Reflect.get(s, k);
                return typeof value === "function"
                  ? (...a: unknown[]) => timeCall(() => value.apply(s, a))
                  : value;
              },
            });
          };
        }
        if (key === "exec") return (sql: string) => timeCall(() => target.exec(sql));
        const value = Reflect.get(target, key);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  const made = performance.now();
  const hub = new Hub({
    config: manyToolsConfig(tools),
    env: Deno.env.toObject(),
    version: "bench",
    log: () => {},
    toolCache: db && new TimedCache(db),
  });
  // A turn of the ticker: a hold in the hub's constructor is recorded before the host's window.
  await new Promise((resolve) => setTimeout(resolve, 5));
  const gateway = new Gateway(hub, { version: "bench", log: () => {}, start: () => void hub.start() });
  const input = new TransformStream<Uint8Array, Uint8Array>();
  const host = input.writable.getWriter();
  const encoder = new TextEncoder();
  const send = (message: unknown) => host.write(encoder.encode(JSON.stringify(message) + "\n"));
  // The host reads the answers line by line, as bytes (the tools/list answer is kept whole).
  const lines: Uint8Array[][] = [[]];
  let wake: () => void = () => {};
  const output = new WritableStream<Uint8Array>({
    write(chunk) {
      let at = 0;
      for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, at)) {
        lines[lines.length - 1]!.push(chunk.slice(at, nl));
        lines.push([]);
        at = nl + 1;
      }
      if (at < chunk.length) lines[lines.length - 1]!.push(chunk.slice(at));
      wake();
    },
  });
  const answer = async (): Promise<Uint8Array[]> => {
    while (lines.length < 2) await new Promise<void>((resolve) => wake = resolve);
    return lines.shift()!;
  };
  const transport = new StdioServerTransport(input.readable, output);
  let t0 = 0, t1 = 0, bytes = 0, initialized = 0, listed = 0;
  try {
    await gateway.connect(transport);
    early.push(...gaps);
    t0 = ticker.restart();
    await send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "bench", version: "1" },
      },
    });
    await answer();
    initialized = performance.now();
    await send({ jsonrpc: "2.0", method: "notifications/initialized" });
    await send({ jsonrpc: "2.0", id: 2, method: "tools/list", params: {} });
    const list = await answer();
    t1 = listed = performance.now();
    bytes = list.reduce((n, part) => n + part.length, 0);
    const head = new TextDecoder().decode(list[0]!.subarray(0, 40));
    if (!head.startsWith('{"result":{"tools":[')) {
      throw new Error(`unexpected answer: ${head}`);
    }
    // With the cache: the run lasts until the live list was saved (after the answer, or before it; from a
    // warm cache the answer comes first): its holds count too.
    if (db) {
      while (!(saved > t0)) await new Promise((r) => setTimeout(r, 10));
      await written;
      await new Promise((r) => setTimeout(r, 10));
      t1 = Math.max(t1, performance.now());
    }
  } finally {
    ticker.stop();
    await gateway.close();
    await hub.close();
    await host.close().catch(() => {});
    store?.close();
    if (dir) Deno.removeSync(dir, { recursive: true });
  }
  const within = gaps.filter((g) => g[0] >= t0 && g[1] <= t1 + 2);
  // The longest hold overlapping the cache's windows of one kind (a call that ran at once lies in one).
  const cacheHold = (kind: "save" | "load") =>
    Math.max(
      0,
      ...[...early, ...gaps].filter((g) => windows[kind].some(([s, e]) => g[1] >= s && g[0] <= e))
        .map((g) => g[1] - g[0]),
    );
  const fromStart = [...early, ...gaps].filter((g) => g[1] >= made && g[0] <= t1 + 2);
  return {
    holdMs: Math.max(0, ...within.map((g) => g[1] - g[0])),
    startHoldMs: Math.max(0, ...fromStart.map((g) => g[1] - g[0])),
    firstMs: initialized - made,
    initMs: initialized - t0,
    listMs: listed - t0,
    answerMs: t1 - t0,
    answerBytes: bytes,
    holds: within.filter((g) => g[1] - g[0] > 50).map((g) =>
      `${(g[1] - g[0]).toFixed(0)}@${(g[0] - t0).toFixed(0)}`
    ),
    startedAt: t0,
    saveHoldMs: cacheHold("save"),
    statementMs,
    loadHoldMs: cacheHold("load"),
    loadMs: Math.max(0, ...windows.load.map(([s, e]) => e - s)),
  };
}

function inChild(way: Way, tools: number): Promise<Run> {
  return runChild<Run>(import.meta.filename!, ["--child", way, "--tools", String(tools)], way);
}

/** `--host`: this script's host mode, run from `root` (this checkout, or a baseline's with this script copied in). */
function inHostChild(root: string, tools: number, mode: string): Promise<HostRun> {
  return runChild<HostRun>(
    `${root}/scripts/bench/list_bench.ts`,
    ["--child", mode, "--tools", String(tools)],
    `host (${root})`,
  );
}

/** `--host [--base DIR]`: the host's view, this checkout against a baseline checkout, alternating. */
async function hostMain(
  tools: number,
  rounds: number,
  base: string | undefined,
  mode: string,
): Promise<void> {
  const here = new URL("../..", import.meta.url).pathname.replace(/\/$/, "");
  const roots = base ? [["base", base], ["this", here]] : [["this", here]];
  const runs = new Map<string, HostRun[]>();
  for (let round = 0; round < rounds; round++) {
    for (const [name, root] of roots) {
      const run = await inHostChild(root!, tools, mode);
      runs.set(name!, [...runs.get(name!) ?? [], run]);
      console.error(`round ${round + 1} ${name}: ${JSON.stringify(run)}`);
    }
  }
  console.log(
    `${tools.toLocaleString("en")} tools on one server, host initialize to tools/list answered` +
      `${
        mode === "host-warm"
          ? " and the live list saved to a warm cache"
          : mode === "host-cache"
          ? " and the list cached in the store"
          : ""
      }, ` +
      `medians of ${rounds} rounds`,
  );
  for (const [name, rs] of runs) {
    const m = (f: (r: HostRun) => number) => median(rs.map(f)).toFixed(0).padStart(6);
    console.log(
      `${name.padEnd(5)} longest hold ${m((r) => r.holdMs)} ms (${
        m((r) => r.startHoldMs)
      } ms from the hub's start); initialize answered ${m((r) => r.firstMs)} ms after the hub's start ` +
        `(${m((r) => r.initMs)} ms after it was sent); tools/list answered after ${
          m((r) => r.listMs)
        } ms, run ${m((r) => r.answerMs)} ms ` +
        `(${(rs[0]!.answerBytes / 1e6).toFixed(1)} MB)` +
        (mode === "host"
          ? ""
          : `; longest hold saving the list ${m((r) => r.saveHoldMs)} ms, loading it ${
            m((r) => r.loadHoldMs)
          } ms (read in ${m((r) => r.loadMs ?? NaN)} ms); longest cache statement ${
            m((r) => r.statementMs)
          } ms`),
    );
  }
}

/** Runs the benchmark and prints one line per way. */
export async function main(argv: string[] = []): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      tools: { type: "string", default: "100000" },
      rounds: { type: "string", default: "3" },
      child: { type: "string" },
      host: { type: "boolean", default: false },
      cache: { type: "boolean", default: false },
      warm: { type: "boolean", default: false },
      base: { type: "string" },
    },
  });
  const tools = Number(values.tools);
  if (values.child?.startsWith("host")) {
    console.log(
      JSON.stringify(await hostChild(tools, values.child !== "host", values.child === "host-warm")),
    );
    Deno.exit(0);
  }
  if (values.host) {
    const mode = values.warm ? "host-warm" : values.cache ? "host-cache" : "host";
    return await hostMain(tools, Number(values.rounds), values.base, mode);
  }
  if (values.child) {
    console.log(JSON.stringify(await child(values.child as Way, tools)));
    Deno.exit(0);
  }
  const runs = new Map<Way, Run[]>();
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const way of ["whole", "sliced"] as const) {
      runs.set(way, [...runs.get(way) ?? [], await inChild(way, tools)]);
    }
  }
  console.log(`${tools.toLocaleString("en")} tools on one server, medians of ${values.rounds} rounds`);
  for (const [way, rs] of runs) {
    const m = (f: (r: Run) => number) => median(rs.map(f)).toFixed(0).padStart(6);
    console.log(
      `${way.padEnd(7)} longest hold validating tools/list ${m((r) => r.listHoldMs)} ms; ` +
        `validation took ${m((r) => r.listMs)} ms; start to catalog, longest hold ${m((r) => r.holdMs)} ms`,
    );
  }
}

if (import.meta.main) await main(Deno.args);
