/**
 * What hostile tool metadata costs the gateway's event loop. On a synthetic catalog (default 100,000
 * tools) plus one tool whose description is 256 KiB of capital "D"s, each way of building and querying
 * the catalog runs in a fresh process of its own (so its memory is its own), timed from the servers'
 * tool lists to the first search answered, then 20 search_tools, 20 resolve_tool and 20 describe_tool:
 *
 * - `sync`: catalog and resolver index built in one piece (the baseline: it holds the loop throughout);
 * - `process`: the catalog built in one piece, the index in 20 ms slices in process (the hub before
 *   the index worker);
 * - `worker`: the catalog built in slices, the index in a Web Worker (`src/resolver/index_host.ts`) started
 *   for this build, in a macrotask of its own as the build begins, the catalog's first slice a macrotask
 *   after it (as the hub does when a catalog's servers list 5,000 tools or more: `warmSoon`), queries
 *   answered by message (a hub's first build); reported with how long making the worker held the loop;
 * - `reuse`: the same with the hub's index worker already started (`IndexWorkerPool`: by an earlier build,
 *   or at idle once the catalog grew large), as every later build of the hub finds it.
 *
 * Reported per way: the longest the event loop was held (a 1 ms ticker's longest gap) while building
 * and while querying, the time to searchable, and the peak RSS (VmHWM; the process's RSS elsewhere).
 * Then did-you-mean for a 3,000-character unknown name.
 *
 * ```sh
 * deno run -A scripts/bench/hostile_bench.ts [--tools 100000] [--only idle,sync,process,worker] [--trace-gc] [--v8-flags=…]
 * ```
 *
 * `--v8-flags=…` passes V8 flags to the runs (experiments). `--trace-gc` runs each way with V8's `--trace-gc` and names, for every hold over 50 ms, the garbage
 * collections (the gateway's own, or the index worker's) that overlap it.
 *
 * @module
 */
import { parseArgs } from "node:util";
import {
  buildCatalog,
  CatalogIndex,
  type CatalogServer,
  catalogSteps,
  type PackedCatalogServer,
  packTool,
} from "../../src/catalog/mod.ts";
import { buildIndex, catalogRevision, resolveResponse, searchResponse } from "../../src/resolver/mod.ts";
import {
  type Discovery,
  INDEX_WORKER_MODULE,
  IndexWorkerPool,
  localDiscovery,
  workerDiscovery,
  type WorkerFactory,
} from "../../src/resolver/index_host.ts";
import { Stepper } from "../../src/json/slices.ts";
import { describeEntry } from "../../src/hub/discovery.ts";
import { syntheticCatalog } from "./resolver_bench.ts";

/** One way of building and querying the catalog. */
export type Way = "idle" | "sync" | "process" | "worker" | "reuse";
const WAYS: readonly Way[] = ["idle", "sync", "process", "worker", "reuse"];

/** What one way measured. */
export interface WayReport {
  way: Way;
  tools: number;
  /** Start of the catalog build to the first search answer. */
  searchableMs: number;
  buildHoldMs: number;
  queryHoldMs: number;
  /** Mean time of one query (search, resolve or describe). */
  queryMs: number;
  peakRssMb: number;
  /** Longest hold in each step: catalog, index, query. */
  steps: Record<string, number>;
  /** Holds over 50 ms: `step@start+ms`. */
  gaps: string[];
  /** Holds over 50 ms with their times (ms of `performance.now()`), for `--trace-gc`. */
  holds: Hold[];
  /**
   * `worker`: when (`performance.now()`) Deno was asked to make the index worker, how long that held this
   * thread, and the whole hold of the event loop it was part of (what else ran in the same turn).
   */
  workerMade?: { at: number; ms: number; hold?: number };
  /** `--trace-gc`: `performance.now()` at the end of the calibrating `gc()`, and when the index worker started. */
  calibration?: { gcEnd: number; buildAt?: number; workerAt?: number };
}

/** One hold of the event loop over 50 ms. */
export interface Hold {
  step: string;
  start: number;
  ms: number;
  /** `--trace-gc` on Linux: of the hold, the ms this thread ran and the ms it waited for a CPU. */
  ranMs?: number;
  waitedMs?: number;
}

/** This thread's CPU time and run-queue wait so far, in ms (Linux `/proc/thread-self/schedstat`). */
function schedstat(): [number, number] | undefined {
  try {
    const [ran, waited] = Deno.readTextFileSync("/proc/thread-self/schedstat").split(" ").map(Number);
    return [ran! / 1e6, waited! / 1e6];
  } catch {
    return undefined;
  }
}

/**
 * The probe: a 1 ms ticker whose gaps over 50 ms are holds (under `trace`, each with what the thread
 * did meanwhile: ran, or waited for a CPU). `label` names the current step.
 */
function probe(
  label: () => string,
  trace: boolean,
  onGap: (ms: number, start: number) => void,
): { holds: Hold[]; stop: () => void } {
  const holds: Hold[] = [];
  let last = performance.now();
  let sched = trace ? schedstat() : undefined;
  const ticker = setInterval(() => {
    const now = performance.now();
    const next = sched ? schedstat() : undefined;
    onGap(now - last, last);
    if (now - last > 50) {
      const hold: Hold = { step: label(), start: last, ms: now - last };
      if (sched && next) {
        hold.ranMs = next[0] - sched[0];
        hold.waitedMs = next[1] - sched[1];
      }
      holds.push(hold);
    }
    last = now;
    sched = next;
  }, 1);
  return { holds, stop: () => clearInterval(ticker) };
}

function servers(tools: number): CatalogServer[] {
  const { servers } = syntheticCatalog(tools, 1);
  servers.push({
    name: "hostile",
    description: "",
    tags: [],
    useWhen: [],
    toolUseWhen: {},
    tools: [{
      name: "SHOUT".repeat(600),
      description: "D".repeat(256 * 1024),
      inputSchema: { type: "object" },
    }],
  });
  return servers;
}

const QUERIES = [
  "create a calendar event",
  "read a text file",
  "send a message to the team",
  "list open issues in the repository",
  "D".repeat(2000),
];

function peakRssMb(): number {
  try {
    const status = Deno.readTextFileSync("/proc/self/status");
    const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1]);
    if (kb) return kb / 1024;
  } catch {
    // not Linux
  }
  return Deno.memoryUsage().rss / 2 ** 20;
}

/** Runs one way in this process; `servers` come first so generating them is not counted. */
async function runWay(way: Way, tools: number, trace = false): Promise<WayReport> {
  if (way === "idle") return await idle(trace);
  // As the hub keeps them: each server's tools packed (JSON text), the listed objects dropped.
  const input: PackedCatalogServer[] = servers(tools).map((s) => ({ ...s, tools: s.tools.map(packTool) }));
  let phase: "build" | "query" = "build";
  let step = "settle";
  const held = { build: 0, query: 0 };
  const steps: Record<string, number> = {};
  const calibration = trace ? { gcEnd: calibrate() } as NonNullable<WayReport["calibration"]> : undefined;
  let workerMade: WayReport["workerMade"];
  const { holds, stop } = probe(() => step, trace, (gap, start) => {
    held[phase] = Math.max(held[phase], gap);
    steps[step] = Math.max(steps[step] ?? 0, gap);
    if (workerMade && workerMade.hold === undefined && start <= workerMade.at) {
      if (workerMade.at <= start + gap) workerMade.hold = gap;
    }
  });
  let pool: IndexWorkerPool | undefined;
  if (way === "reuse") {
    // The hub's worker, started (and its resolver loaded) before this build, by an empty build.
    pool = new IndexWorkerPool();
    (await workerDiscovery([], { pool })).close();
  }
  // Settle the ticker before timing.
  await new Promise((resolve) => setTimeout(resolve, 20));
  held.build = 0;
  delete steps.settle;
  steps.catalog = 0;
  step = "catalog";
  const context = (revision: string) => ({ contractVersion: "1", catalogRevision: revision });
  const t0 = performance.now();
  if (calibration) calibration.buildAt = t0;
  let warming: Promise<void> | undefined;
  if (way === "worker") {
    // As the hub does when a large catalog's build begins: its worker started in a macrotask of its own,
    // the catalog's slices a macrotask after it.
    const made: WorkerFactory = () => {
      const at = performance.now();
      if (calibration) calibration.workerAt = at;
      const worker = new Worker(INDEX_WORKER_MODULE, { type: "module" });
      workerMade = { at, ms: performance.now() - at, hold: undefined };
      return worker;
    };
    pool = new IndexWorkerPool(made);
    warming = pool.warmSoon();
  }
  let catalog;
  let names: CatalogIndex;
  let discovery: Discovery;
  if (way === "sync") {
    catalog = buildCatalog(input);
    names = new CatalogIndex(catalog);
    const index = buildIndex(catalog);
    const revision = catalogRevision(catalog);
    discovery = {
      revision,
      where: "process",
      search: (args, ctx) => Promise.resolve(searchResponse(index, args, ctx)),
      resolve: (args, ctx) => Promise.resolve(resolveResponse(index, args, ctx)),
      close: () => {},
    };
  } else if (way === "process") {
    catalog = buildCatalog(input);
    names = new CatalogIndex(catalog);
    step = "index";
    discovery = await localDiscovery(catalog);
  } else {
    const built = await new Stepper(function* () {
      const tools = yield* catalogSteps(input);
      return { tools, names: yield* CatalogIndex.build(tools) };
    }()).after(warming).finishAsync();
    catalog = built.tools;
    names = built.names;
    step = "index";
    if (calibration && way === "reuse") calibration.workerAt = performance.now();
    discovery = await workerDiscovery(catalog, { pool });
  }
  await discovery.search({ query: QUERIES[0]! }, context(discovery.revision));
  const searchableMs = performance.now() - t0;
  // A block at the very end of the build is counted before the phase changes.
  await new Promise((resolve) => setTimeout(resolve, 5));
  phase = "query";
  step = "query";
  const q0 = performance.now();
  let n = 0;
  for (let i = 0; i < 20; i++) {
    const query = QUERIES[i % QUERIES.length]!;
    const hits = await discovery.search({ query, max_hits: 5 }, context(discovery.revision));
    await discovery.resolve({ query }, context(discovery.revision));
    const name = hits.matches[0]?.namespaced ?? catalog[i]!.namespaced;
    describeEntry(names.find({ tool: name })!, discovery.revision);
    n += 3;
  }
  const queryMs = (performance.now() - q0) / n;
  await new Promise((resolve) => setTimeout(resolve, 5));
  stop();
  discovery.close();
  pool?.close();
  return {
    way,
    tools: catalog.length,
    searchableMs,
    buildHoldMs: held.build,
    queryHoldMs: held.query,
    queryMs,
    peakRssMb: peakRssMb(),
    steps,
    gaps: holds.slice(0, 40).map((h) => `${h.step}@${h.start.toFixed(0)}+${h.ms.toFixed(0)}`),
    holds,
    calibration,
    workerMade,
  };
}

/**
 * `--trace-gc` runs only (V8 started with `--expose-gc`): one full collection now, whose trace line
 * (reason "testing") ties V8's clock (ms since the isolate started) to `performance.now()`.
 */
function calibrate(): number {
  (globalThis as unknown as { gc: () => void }).gc();
  return performance.now();
}

/** The machine's noise floor: the longest gap of the same ticker in a process doing nothing for 10 s. */
async function idle(trace: boolean): Promise<WayReport> {
  const calibration = trace ? { gcEnd: calibrate() } : undefined;
  let max = 0;
  const { holds, stop } = probe(() => "idle", trace, (gap) => max = Math.max(max, gap));
  await new Promise((resolve) => setTimeout(resolve, 10_000));
  stop();
  return {
    way: "idle",
    tools: 0,
    searchableMs: 0,
    buildHoldMs: max,
    queryHoldMs: 0,
    queryMs: 0,
    peakRssMb: peakRssMb(),
    steps: { idle: max },
    gaps: holds.map((h) => `idle@${h.start.toFixed(0)}+${h.ms.toFixed(0)}`),
    holds,
    calibration,
  };
}

/** Runs one way in a child process of its own and returns its report (and V8's GC trace with `trace`). */
async function inChild(
  way: Way,
  tools: number,
  trace = false,
  v8Flags = "",
): Promise<WayReport & { attribution?: string[] }> {
  const out = trace ? await Deno.makeTempFile({ prefix: "hostile_bench_" }) : undefined;
  try {
    const child = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        ...(trace || v8Flags
          ? [`--v8-flags=${[...(trace ? ["--trace-gc", "--expose-gc"] : []), ...(v8Flags ? [v8Flags] : [])]}`]
          : []),
        new URL(import.meta.url).pathname,
        "--child",
        way,
        "--tools",
        String(tools),
        ...(out ? ["--out", out] : []),
      ],
      stdout: "piped",
      stderr: "inherit",
    }).output();
    if (!child.success) throw new Error(`the ${way} run exited with ${child.code}`);
    const text = new TextDecoder().decode(child.stdout);
    if (!out) return JSON.parse(text);
    const report: WayReport = JSON.parse(await Deno.readTextFile(out));
    return { ...report, attribution: attribute(report, parseGcTrace(text)) };
  } finally {
    if (out) await Deno.remove(out).catch(() => {});
  }
}

/** One collection in V8's `--trace-gc` output. */
export interface GcEvent {
  isolate: string;
  /** V8's clock (ms since its isolate started) when the pause ended. */
  at: number;
  kind: string;
  /** The pause. */
  ms: number;
  /** A mark-compact's incremental marking before its final pause: biggest step and wall time. */
  biggestStep?: number;
  markingWall?: number;
}

/** The collections in a `--trace-gc` output (lines of two isolates may interleave; a broken one is skipped). */
export function parseGcTrace(text: string): GcEvent[] {
  const events: GcEvent[] = [];
  const line =
    /\[\d+:(0x[0-9a-f]+)\]\s+(\d+) ms: ([A-Za-z -]+?)(?: \(([a-z ]+)\))? [\d.]+ \([\d.]+\) -> [\d.]+ \([\d.]+\) MB, pooled: [\d.]+ MB, ([\d.]+) \/ [\d.]+ ms(?: \(\+ [\d.]+ ms in \d+ steps since start of marking, biggest step ([\d.]+) ms, walltime since start of marking ([\d.]+) ms\))?([^\n]*)/g;
  for (const m of text.matchAll(line)) {
    const kind = m[3]! + (m[4] ? ` (${m[4]})` : "");
    events.push({
      isolate: m[1]!,
      at: Number(m[2]),
      kind: /\btesting\b/.test(m[8] ?? "") ? "testing" : kind,
      ms: Number(m[5]),
      biggestStep: m[6] ? Number(m[6]) : undefined,
      markingWall: m[7] ? Number(m[7]) : undefined,
    });
  }
  return events;
}

/**
 * Each hold over 50 ms with the collections that overlap it: the gateway's own (`main`: a pause, or a
 * step of incremental marking when only a marking window overlaps) and the index worker's (`worker`,
 * its clock placed at the worker's start, so ±10 ms). A hold with none is our code or the machine
 * (compare the noise floor).
 */
export function attribute(report: WayReport, events: GcEvent[]): string[] {
  const cal = events.find((e) => e.kind === "testing");
  if (!report.calibration || !cal) return ["no calibration line in the GC trace"];
  const mainOffset = cal.at - report.calibration.gcEnd;
  const main = events.filter((e) => e.isolate === cal.isolate && e !== cal);
  const worker = events.filter((e) => e.isolate !== cal.isolate);
  const workerAt = report.calibration.workerAt;
  const lines: string[] = [];
  for (const hold of report.holds) {
    const from = hold.start, to = hold.start + hold.ms;
    const causes: string[] = [];
    for (const e of main) {
      const end = e.at - mainOffset;
      if (end - e.ms < to && end > from) causes.push(`main ${e.kind} ${e.ms.toFixed(0)} ms`);
      else if (e.markingWall && end - e.markingWall < to && end > from) {
        causes.push(`main incremental marking (steps up to ${e.biggestStep!.toFixed(0)} ms)`);
      }
    }
    if (workerAt !== undefined) {
      for (const e of worker) {
        const end = e.at + workerAt;
        if (end - e.ms < to && end > from) causes.push(`worker ${e.kind} ${e.ms.toFixed(0)} ms`);
      }
    }
    const sched = hold.ranMs !== undefined
      ? ` [ran ${hold.ranMs.toFixed(0)} ms, waited for a CPU ${hold.waitedMs!.toFixed(0)} ms, blocked ${
        Math.max(0, hold.ms - hold.ranMs - hold.waitedMs!).toFixed(0)
      } ms]`
      : "";
    lines.push(
      `${hold.step}@${from.toFixed(0)}+${hold.ms.toFixed(0)}${sched}: ${
        causes.length ? causes.join(", ") : "no GC"
      }`,
    );
  }
  const pauses = (events: GcEvent[], from: number, to: number) => {
    const by = new Map<string, number[]>();
    for (const e of events.filter((e) => e.at >= from && e.at <= to)) {
      by.set(e.kind, [...by.get(e.kind) ?? [], e.ms]);
    }
    return [...by].map(([kind, ms]) => `${ms.length} ${kind} (longest ${Math.max(...ms).toFixed(0)} ms)`)
      .join(", ") || "none";
  };
  lines.push(
    `main isolate from the build on: ${
      pauses(
        main,
        mainOffset + (report.calibration.buildAt ?? 0),
        Infinity,
      )
    }`,
  );
  if (workerAt !== undefined) lines.push(`index worker: ${pauses(worker, -Infinity, Infinity)}`);
  const timed = report.holds.filter((h) => h.step !== "settle" && h.ranMs !== undefined);
  if (timed.length) {
    const most = (f: (h: Hold) => number) => Math.max(...timed.map(f)).toFixed(0);
    lines.push(
      `of the timed holds over 50 ms, this thread ran at most ${
        most((h) => h.ranMs!)
      } ms in one, ran or was blocked at most ${
        most((h) => h.ms - h.waitedMs!)
      } ms (the rest of each it waited for a CPU)`,
    );
  }
  return lines;
}

export async function main(args: readonly string[] = Deno.args): Promise<void> {
  const { values } = parseArgs({
    args: [...args],
    options: {
      tools: { type: "string", default: "100000" },
      only: { type: "string", default: WAYS.join(",") },
      child: { type: "string" },
      out: { type: "string" },
      "trace-gc": { type: "boolean", default: false },
      "v8-flags": { type: "string", default: "" },
    },
  });
  const tools = Number(values.tools);
  if (values.child) {
    const report = JSON.stringify(await runWay(values.child as Way, tools, values.out !== undefined));
    // Under --trace-gc, stdout is V8's: the report goes to a file of its own.
    if (values.out) await Deno.writeTextFile(values.out, report);
    else console.log(report);
    return;
  }
  const trace = values["trace-gc"];
  const ways = values.only.split(",").filter((w): w is Way => (WAYS as readonly string[]).includes(w));
  console.log(`${(tools + 1).toLocaleString("en")} tools, one with a 256 KiB run of capitals`);
  const reports: WayReport[] = [];
  for (const way of ways) {
    const r = await inChild(way, tools, trace, values["v8-flags"]);
    reports.push(r);
    if (way === "idle") {
      console.log(
        `noise floor (a process doing nothing for 10 s): event loop held at most ${
          r.buildHoldMs.toFixed(0)
        } ms`,
      );
      continue;
    }
    const label = {
      idle: "",
      sync: "catalog + index in one piece (baseline)",
      process: "index in slices, in process (before)  ",
      worker: "catalog in slices, index in a worker   ",
      reuse: "the same, the hub's worker already up  ",
    }[way];
    console.log(
      `${label}: searchable in ${r.searchableMs.toFixed(0)} ms; event loop held at most ${
        r.buildHoldMs.toFixed(0)
      } ms building (catalog ${r.steps.catalog!.toFixed(0)}, index ${r.steps.index?.toFixed(0) ?? "-"}), ${
        r.queryHoldMs.toFixed(0)
      } ms querying (${r.queryMs.toFixed(1)} ms a query); peak RSS ${r.peakRssMb.toFixed(0)} MB`,
    );
  }
  for (const r of reports.filter((r) => r.workerMade)) {
    const { ms, hold } = r.workerMade!;
    console.log(
      `  ${r.way}: making the index worker held the loop ${ms.toFixed(0)} ms${
        hold !== undefined ? `, in a hold of ${hold.toFixed(0)} ms` : ""
      }`,
    );
  }
  for (const r of reports.filter((r) => r.way === "worker" || r.way === "reuse")) {
    if (r.gaps.length) console.log(`  ${r.way}: holds over 50 ms (step@ms+held): ${r.gaps.join(" ")}`);
  }
  for (const r of reports) {
    const lines = (r as { attribution?: string[] }).attribution;
    if (lines?.length) {
      console.log(
        `  ${r.way}: holds over 50 ms and the collections under them:\n    ${lines.join("\n    ")}`,
      );
    }
  }
  const base = reports.find((r) => r.way === "sync");
  if (base) {
    for (const r of reports.filter((r) => r !== base && r.way !== "idle")) {
      console.log(
        `  ${r.way}: ${
          (Math.max(r.buildHoldMs, r.queryHoldMs) / base.buildHoldMs).toFixed(4)
        }x the baseline's hold, ${(r.searchableMs / base.searchableMs).toFixed(2)}x its time to searchable, ${
          (r.peakRssMb / base.peakRssMb).toFixed(2)
        }x its peak RSS`,
      );
    }
  }
  const index = new CatalogIndex(buildCatalog(servers(tools)));
  const t0 = performance.now();
  index.closest("Q".repeat(3000));
  const short = performance.now();
  index.closest("github__craete_issue");
  const t1 = performance.now();
  console.log(
    `did-you-mean: a 3,000-character unknown name ${(short - t0).toFixed(0)} ms, a 20-character one ${
      (t1 - short).toFixed(0)
    } ms`,
  );
}

if (import.meta.main) await main();
