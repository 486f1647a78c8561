/**
 * What hostile tool metadata costs the gateway's event loop. On a synthetic catalog (default 100,000
 * tools) plus one tool whose description is 256 KiB of capital "D"s, each way of building and querying
 * the catalog runs in a fresh process of its own (so its memory is its own), timed from the servers'
 * tool lists to the first search answered, then 20 search_tools, 20 resolve_tool and 20 describe_tool:
 *
 * - `sync`: catalog and resolver index built in one piece (the baseline: it holds the loop throughout);
 * - `process`: the catalog built in one piece, the index in 20 ms slices in process (the hub before
 *   the index worker);
 * - `worker`: what the hub does now: the catalog built in slices, the index in a Web Worker
 *   (`src/hub/index_host.ts`), queries answered by message.
 *
 * Reported per way: the longest the event loop was held (a 1 ms ticker's longest gap) while building
 * and while querying, the time to searchable, and the peak RSS (VmHWM; the process's RSS elsewhere).
 * Then did-you-mean for a 3,000-character unknown name.
 *
 * ```sh
 * deno run -A scripts/bench/hostile_bench.ts [--tools 100000] [--only sync,process,worker]
 * ```
 *
 * @module
 */
import { parseArgs } from "node:util";
import { buildCatalog, CatalogIndex, type CatalogServer, catalogSteps } from "../../src/catalog/mod.ts";
import { buildIndex, catalogRevision, resolveResponse, searchResponse } from "../../src/resolver/mod.ts";
import { type Discovery, localDiscovery, workerDiscovery } from "../../src/hub/index_host.ts";
import { Stepper } from "../../src/hub/slices.ts";
import { describeEntry } from "../../src/hub/discovery.ts";
import { syntheticCatalog } from "./resolver_bench.ts";

/** One way of building and querying the catalog. */
export type Way = "idle" | "sync" | "process" | "worker";
const WAYS: readonly Way[] = ["idle", "sync", "process", "worker"];

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
async function runWay(way: Way, tools: number): Promise<WayReport> {
  if (way === "idle") return await idle();
  const input = servers(tools);
  let phase: "build" | "query" = "build";
  let step = "catalog";
  const held = { build: 0, query: 0 };
  const steps: Record<string, number> = {};
  const gaps: string[] = [];
  let last = performance.now();
  const ticker = setInterval(() => {
    const now = performance.now();
    held[phase] = Math.max(held[phase], now - last);
    steps[step] = Math.max(steps[step] ?? 0, now - last);
    if (now - last > 50) gaps.push(`${step}@${last.toFixed(0)}+${(now - last).toFixed(0)}`);
    last = now;
  }, 1);
  // Settle the ticker before timing.
  await new Promise((resolve) => setTimeout(resolve, 20));
  held.build = 0;
  steps.catalog = 0;
  const context = (revision: string) => ({ contractVersion: "1", catalogRevision: revision });
  const t0 = performance.now();
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
    }()).finishAsync();
    catalog = built.tools;
    names = built.names;
    step = "index";
    discovery = await workerDiscovery(catalog);
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
  clearInterval(ticker);
  discovery.close();
  return {
    way,
    tools: catalog.length,
    searchableMs,
    buildHoldMs: held.build,
    queryHoldMs: held.query,
    queryMs,
    peakRssMb: peakRssMb(),
    steps,
    gaps: gaps.slice(0, 40),
  };
}

/** The machine's noise floor: the longest gap of the same ticker in a process doing nothing for 10 s. */
async function idle(): Promise<WayReport> {
  let last = performance.now();
  let max = 0;
  const gaps: string[] = [];
  const ticker = setInterval(() => {
    const now = performance.now();
    max = Math.max(max, now - last);
    if (now - last > 50) gaps.push(`idle@${last.toFixed(0)}+${(now - last).toFixed(0)}`);
    last = now;
  }, 1);
  await new Promise((resolve) => setTimeout(resolve, 10_000));
  clearInterval(ticker);
  return {
    way: "idle",
    tools: 0,
    searchableMs: 0,
    buildHoldMs: max,
    queryHoldMs: 0,
    queryMs: 0,
    peakRssMb: peakRssMb(),
    steps: { idle: max },
    gaps,
  };
}

/** Runs one way in a child process of its own and returns its report. */
async function inChild(way: Way, tools: number): Promise<WayReport> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL(import.meta.url).pathname, "--child", way, "--tools", String(tools)],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (!out.success) throw new Error(`the ${way} run exited with ${out.code}`);
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

export async function main(args: readonly string[] = Deno.args): Promise<void> {
  const { values } = parseArgs({
    args: [...args],
    options: {
      tools: { type: "string", default: "100000" },
      only: { type: "string", default: WAYS.join(",") },
      child: { type: "string" },
    },
  });
  const tools = Number(values.tools);
  if (values.child) {
    console.log(JSON.stringify(await runWay(values.child as Way, tools)));
    return;
  }
  const ways = values.only.split(",").filter((w): w is Way => (WAYS as readonly string[]).includes(w));
  console.log(`${(tools + 1).toLocaleString("en")} tools, one with a 256 KiB run of capitals`);
  const reports: WayReport[] = [];
  for (const way of ways) {
    const r = await inChild(way, tools);
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
    }[way];
    console.log(
      `${label}: searchable in ${r.searchableMs.toFixed(0)} ms; event loop held at most ${
        r.buildHoldMs.toFixed(0)
      } ms building (catalog ${r.steps.catalog!.toFixed(0)}, index ${r.steps.index?.toFixed(0) ?? "-"}), ${
        r.queryHoldMs.toFixed(0)
      } ms querying (${r.queryMs.toFixed(1)} ms a query); peak RSS ${r.peakRssMb.toFixed(0)} MB`,
    );
  }
  const worker = reports.find((r) => r.way === "worker");
  if (worker?.gaps.length) console.log(`  worker: holds over 50 ms (step@ms+held): ${worker.gaps.join(" ")}`);
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
