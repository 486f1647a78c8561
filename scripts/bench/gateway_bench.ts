/**
 * Gateway benchmark.
 *
 * - Proxy overhead: `echo` calls to server-everything straight (SDK client over stdio) and through
 *   `mcphub mcp serve` (recording on, the default), one at a time and 8 in flight; calls/s and the
 *   ratio gateway/direct. The same through a gateway with `record: false` gives the cost of recording
 *   (calls/s record true / record false; the goal is >= 0.95).
 * - Start-up: spawn to the `initialize` answer, over raw pipes, of the gateway with three servers
 *   (everything, filesystem, memory) and of `minimal_server.ts` (a one-tool SDK server in Deno).
 *
 * The three proxy targets run interleaved, in rounds with a rotating order, so that a noisy machine
 * slows them alike. Every process and temp dir is gone when `main()` returns.
 *
 * Usage: deno run -A scripts/bench/gateway_bench.ts [--startup | --proxy-only]   (--startup: the start-up
 * part alone; --proxy-only: no start-up runs)
 *
 * @module
 */
import type { Client } from "@modelcontextprotocol/sdk/client";
import {
  alive,
  connectDirect,
  connectGateway,
  DENO,
  descendants,
  type GatewayClient,
  q,
  REAL,
  ROOT,
  structured,
  tempDir,
  writeConfig,
} from "../../tests/helpers.ts";
import { reap } from "./_gateway_process.ts";

/** Calls per target and mode. */
const CALLS = 2_000;
const WARMUP = 100;
/** A multiple of 6: every order of three targets, twice. */
const ROUNDS = 12;
/** Untimed calls before each timed stretch. */
const SETTLE_CALLS = 16;
const IN_FLIGHT = 8;
const STARTUP_RUNS = 7;
const MINIMAL_SERVER = `${ROOT}scripts/bench/minimal_server.ts`;

/** Throughput of one mode, in calls/s. */
export interface ProxyFigures {
  direct: number;
  gateway: number;
  gatewayNoRecord: number;
  /** gateway / direct */
  ratio: number;
  /** gateway (record: true) / gateway (record: false) */
  recordRatio: number;
}

/** What one run measured. */
export interface GatewayBenchReport {
  sequential: ProxyFigures;
  inFlight8: ProxyFigures;
  /**
   * Medians, in ms, from spawn to the `initialize` answer, and to the first `tools/list` answer (sent
   * once `initialize` is answered): the host's readiness.
   */
  startup: {
    gatewayMs: number;
    minimalMs: number;
    ratio: number;
    gatewayListMs: number;
    minimalListMs: number;
    listRatio: number;
  };
}

/** One call to time. */
export type Call = () => Promise<unknown>;

/** An `echo` call through `client` to tool `name`; an error result throws. */
export function echo(client: Client, name: string): Call {
  return async () => {
    const result = await client.callTool({ name, arguments: { message: "bench" } });
    if (result.isError) throw new Error(`Benchmark call ${name} failed: ${JSON.stringify(result.content)}`);
  };
}

/** Runs `calls` calls with `concurrency` workers; returns the elapsed ms. */
export async function drive(call: Call, calls: number, concurrency: number): Promise<number> {
  let started = 0;
  const worker = async () => {
    while (started < calls) {
      started++;
      await call();
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  return performance.now() - t0;
}

/** Every order of `0 … n-1`. */
function permutations(n: number): number[][] {
  if (n === 0) return [[]];
  return permutations(n - 1).flatMap((p) => Array.from({ length: n }, (_, at) => p.toSpliced(at, 0, n - 1)));
}

/**
 * Calls/s of each target over about `calls` calls (after a warm-up), interleaved in rounds. The rounds
 * cycle through every order of the targets, so that each follows each other one equally often (a
 * rotation puts one target after the direct connection 7 times in 10, and whatever that leaves behind,
 * GC in this process or a busy core, cost it ~10%); each timed stretch starts after a few untimed calls.
 */
export async function throughput(
  targets: Call[],
  concurrency: number,
  { calls = CALLS, rounds = ROUNDS, warmup = WARMUP }: { calls?: number; rounds?: number; warmup?: number } =
    {},
): Promise<number[]> {
  for (const call of targets) await drive(call, warmup, concurrency);
  const elapsed = targets.map(() => 0);
  const done = targets.map(() => 0);
  const perRound = Math.ceil(calls / rounds);
  const orders = permutations(targets.length);
  for (let round = 0; round < rounds; round++) {
    for (const i of orders[round % orders.length]!) {
      await drive(targets[i]!, SETTLE_CALLS, concurrency);
      elapsed[i] += await drive(targets[i]!, perRound, concurrency);
      done[i] += perRound;
    }
  }
  return elapsed.map((ms, i) => done[i]! / (ms / 1000));
}

/** Waits until the gateway no longer reports a server as connecting. */
export async function waitReady(gw: GatewayClient): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const { servers } = structured<{ servers: { name: string; state: string }[] }>(
      await gw.client.callTool({ name: "list_servers", arguments: {} }),
    );
    if (servers.every((s) => s.state !== "connecting")) {
      const bad = servers.filter((s) => s.state !== "connected");
      if (bad.length) throw new Error(`Gateway server not usable: ${JSON.stringify(bad)}\n${gw.stderr()}`);
      return;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`Gateway servers still connecting after 30 s\n${gw.stderr()}`);
}

function everythingConfig(record: boolean): string {
  return `servers:
  everything:
    command: node
    args: [${q(REAL.everything)}, stdio]
record: ${record}
`;
}

function figures(direct: number, gateway: number, gatewayNoRecord: number): ProxyFigures {
  return {
    direct,
    gateway,
    gatewayNoRecord,
    ratio: gateway / direct,
    recordRatio: gateway / gatewayNoRecord,
  };
}

async function proxyBench(dir: string): Promise<Pick<GatewayBenchReport, "sequential" | "inFlight8">> {
  const before = new Set(descendants(Deno.pid));
  const recordOn = await writeConfig(dir, everythingConfig(true), "record_on.yaml");
  const recordOff = await writeConfig(dir, everythingConfig(false), "record_off.yaml");
  const opened: { close(): Promise<void> }[] = [];
  try {
    const direct = await connectDirect("node", [REAL.everything, "stdio"]);
    opened.push(direct);
    const gw = await connectGateway(recordOn);
    opened.push(gw);
    const gwOff = await connectGateway(recordOff);
    opened.push(gwOff);
    await Promise.all([waitReady(gw), waitReady(gwOff)]);
    const targets = [
      echo(direct, "echo"),
      echo(gw.client, "everything__echo"),
      echo(gwOff.client, "everything__echo"),
    ];
    const [sd, sg, so] = await throughput(targets, 1);
    const [cd, cg, co] = await throughput(targets, IN_FLIGHT);
    return { sequential: figures(sd, sg, so), inFlight8: figures(cd, cg, co) };
  } finally {
    // Listed before closing: a gateway's servers would be orphaned, not ours, if it left them behind.
    const pids = descendants(Deno.pid).filter((pid) => !before.has(pid));
    await Promise.all(opened.map((c) => c.close().catch(() => {})));
    const left = await reap(pids);
    if (left) console.error(`warning: ${left} process(es) had to be killed after the proxy bench`);
  }
}

/**
 * Reads newline-delimited JSON from `readable` to its end (so the server never writes into a closed
 * pipe); `answered(id)` settles with the message with `id`, or rejects if there is none.
 */
function watchAnswers(readable: ReadableStream<Uint8Array>, ids: readonly number[]): {
  answered: (id: number) => Promise<void>;
  drained: Promise<void>;
} {
  const waits = new Map(ids.map((id) => [id, Promise.withResolvers<void>()]));
  for (const wait of waits.values()) wait.promise.catch(() => {});
  const drained = (async () => {
    let buffer = "";
    for await (const chunk of readable.pipeThrough(new TextDecoderStream())) {
      buffer += chunk;
      let nl: number;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, nl).trim();
        buffer = buffer.slice(nl + 1);
        if (!line.startsWith("{")) continue;
        const message = JSON.parse(line) as { id?: unknown; error?: unknown };
        const wait = typeof message.id === "number" ? waits.get(message.id) : undefined;
        if (!wait) continue;
        if (message.error) {
          wait.reject(new Error(`request ${message.id} failed: ${JSON.stringify(message.error)}`));
        } else wait.resolve();
      }
    }
    for (const wait of waits.values()) wait.reject(new Error("The server closed stdout before answering"));
  })();
  drained.catch((error) => {
    for (const wait of waits.values()) wait.reject(error);
  });
  return { answered: (id) => waits.get(id)!.promise, drained: drained.catch(() => {}) };
}

/**
 * Spawns `args` (with `env` added to this process's environment), sends `initialize` and returns the ms
 * until the answer; then closes stdin and waits for the process and its `children` expected descendants
 * to exit.
 */
export async function timeInitialize(
  args: string[],
  children: number,
  env?: Record<string, string>,
): Promise<number> {
  return (await timeStartup(args, children, env, { list: false })).initializeMs;
}

/**
 * {@linkcode timeInitialize}, and (unless `list` is false) the ms from spawn to the answer of the first
 * `tools/list`, sent with `notifications/initialized` once `initialize` is answered (a host's readiness).
 */
export async function timeStartup(
  args: string[],
  children: number,
  env?: Record<string, string>,
  { list = true }: { list?: boolean } = {},
): Promise<{ initializeMs: number; toolsListMs: number }> {
  const t0 = performance.now();
  const child = new Deno.Command(DENO, { args, env, stdin: "piped", stdout: "piped", stderr: "null" })
    .spawn();
  const writer = child.stdin.getWriter();
  const encode = (message: unknown) => new TextEncoder().encode(`${JSON.stringify(message)}\n`);
  const initialize = {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "mcphub-bench", version: "1.0.0" },
    },
  };
  const watched = watchAnswers(child.stdout, [1, 2]);
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await writer.write(encode(initialize));
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error("No initialize (or tools/list) answer within 30 s")), 30_000);
    });
    await Promise.race([watched.answered(1), timeout]);
    const initializeMs = performance.now() - t0;
    let toolsListMs = NaN;
    if (list) {
      await writer.write(encode({ jsonrpc: "2.0", method: "notifications/initialized" }));
      await writer.write(encode({ jsonrpc: "2.0", id: 2, method: "tools/list" }));
      await Promise.race([watched.answered(2), timeout]);
      toolsListMs = performance.now() - t0;
    }
    // Let the downstreams start before closing, so that none is spawned after we list them.
    const deadline = Date.now() + 10_000;
    while (descendants(child.pid).length < children && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 25));
    }
    const pids = [child.pid, ...descendants(child.pid)];
    await writer.close().catch(() => {});
    const left = await reap(pids);
    if (left) console.error(`warning: ${left} process(es) had to be killed after a start-up run`);
    return { initializeMs, toolsListMs };
  } finally {
    clearTimeout(timer);
    await writer.close().catch(() => {});
    if (alive(child.pid)) await reap([child.pid, ...descendants(child.pid)], 0);
    await child.status;
    await watched.drained;
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/**
 * Start-up to the `initialize` answer, `runs` spawns of each alternated (after one unmeasured each):
 * the medians, in ms, and their ratio.
 */
export async function startupBench(dir: string, runs = STARTUP_RUNS): Promise<GatewayBenchReport["startup"]> {
  const files = `${dir}/files`;
  await Deno.mkdir(files, { recursive: true });
  const config = await writeConfig(
    dir,
    `servers:
  everything:
    command: node
    args: [${q(REAL.everything)}, stdio]
  filesystem:
    command: node
    args: [${q(REAL.filesystem)}, ${q(files)}]
  memory:
    command: node
    args: [${q(REAL.memory)}]
    env:
      MEMORY_FILE_PATH: ${q(`${dir}/memory.jsonl`)}
`,
    "startup.yaml",
  );
  const gateway = [
    "run",
    "-A",
    `${ROOT}main.ts`,
    "--config",
    config,
    "--db",
    `${dir}/startup.db`,
    "mcp",
    "serve",
  ];
  const minimal = ["run", "-A", MINIMAL_SERVER];
  // One unmeasured run each fills Deno's module cache, creates the database and caches the tool lists.
  await timeStartup(gateway, 3);
  await timeStartup(minimal, 0);
  const gatewayRuns: { initializeMs: number; toolsListMs: number }[] = [];
  const minimalRuns: typeof gatewayRuns = [];
  for (let i = 0; i < runs; i++) {
    gatewayRuns.push(await timeStartup(gateway, 3));
    minimalRuns.push(await timeStartup(minimal, 0));
  }
  const g = median(gatewayRuns.map((r) => r.initializeMs));
  const m = median(minimalRuns.map((r) => r.initializeMs));
  const gl = median(gatewayRuns.map((r) => r.toolsListMs));
  const ml = median(minimalRuns.map((r) => r.toolsListMs));
  return {
    gatewayMs: g,
    minimalMs: m,
    ratio: g / m,
    gatewayListMs: gl,
    minimalListMs: ml,
    listRatio: gl / ml,
  };
}

function rate(n: number): string {
  return `${Math.round(n)} calls/s`;
}

/** Runs the benchmark, prints the figures and returns them. */
export async function main(
  { proxyOnly = false }: { proxyOnly?: boolean } = {},
): Promise<GatewayBenchReport | Pick<GatewayBenchReport, "sequential" | "inFlight8">> {
  const before = new Set(descendants(Deno.pid));
  await using dir = await tempDir("mcphub_gateway_bench_");
  try {
    const proxy = await proxyBench(dir.path);
    for (const [label, f] of [["sequential", proxy.sequential], ["8 in flight", proxy.inFlight8]] as const) {
      console.log(
        `proxy ${label}: direct ${rate(f.direct)}, gateway ${rate(f.gateway)}, ratio ${f.ratio.toFixed(2)}`,
      );
    }
    for (const [label, f] of [["sequential", proxy.sequential], ["8 in flight", proxy.inFlight8]] as const) {
      console.log(
        `recording ${label}: record true ${rate(f.gateway)}, record false ${rate(f.gatewayNoRecord)}, ` +
          `ratio ${f.recordRatio.toFixed(2)} (goal >= 0.95)`,
      );
    }
    if (proxyOnly) return proxy;
    const startup = await startupBench(dir.path);
    printStartup(startup);
    return { ...proxy, startup };
  } finally {
    const left = await reap(descendants(Deno.pid).filter((pid) => !before.has(pid)));
    if (left) console.error(`warning: ${left} leftover process(es) of the gateway bench were killed`);
  }
}

function printStartup(startup: GatewayBenchReport["startup"]): void {
  console.log(
    `start-up to initialize (median of ${STARTUP_RUNS}): gateway with 3 servers ${
      startup.gatewayMs.toFixed(0)
    } ms, minimal SDK server ${startup.minimalMs.toFixed(0)} ms, ratio ${startup.ratio.toFixed(2)}`,
  );
  console.log(
    `start-up to the first tools/list answer (median of ${STARTUP_RUNS}): gateway with 3 servers ${
      startup.gatewayListMs.toFixed(0)
    } ms, minimal SDK server ${startup.minimalListMs.toFixed(0)} ms, ratio ${startup.listRatio.toFixed(2)}`,
  );
}

/** The start-up part alone (`--startup`): prints and returns its figures. */
export async function startupMain(): Promise<GatewayBenchReport["startup"]> {
  const before = new Set(descendants(Deno.pid));
  await using dir = await tempDir("mcphub_gateway_bench_");
  try {
    const startup = await startupBench(dir.path);
    printStartup(startup);
    return startup;
  } finally {
    const left = await reap(descendants(Deno.pid).filter((pid) => !before.has(pid)));
    if (left) console.error(`warning: ${left} leftover process(es) of the gateway bench were killed`);
  }
}

if (import.meta.main) {
  if (Deno.args.includes("--startup")) await startupMain();
  else await main({ proxyOnly: Deno.args.includes("--proxy-only") });
}
