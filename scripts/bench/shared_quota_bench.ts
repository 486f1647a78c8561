/**
 * What the shared quotas cost a call: one `listen()` listener on a SQLite store (quotas per process) against
 * the same on a PostgreSQL store (quotas across replicas, see src/http/shared_quota.ts), in one run on a
 * throwaway local cluster (`tests/store/_pg.ts`). An agent's `echo` calls (SDK client over Streamable HTTP,
 * the test fixture server behind) one at a time and 8 in flight, rounds interleaved. Three listeners:
 *
 * - `sqlite`: the baseline (no store round-trip).
 * - `postgres`: the defaults (leases: a call place is kept 1 s after a call ends, requests are claimed
 *   600 at a time for the default 60,000 a minute).
 * - `postgres, no lease`: `lingerMs: 0` and `requestSlice: 1`: every request and every call goes to the
 *   store (the cost a per-request round-trip would add).
 *
 * Usage: deno run -A scripts/bench/shared_quota_bench.ts [--rounds N] [--calls N]
 *
 * @module
 */
import { parseArgs } from "node:util";
import { parseConfig } from "../../src/config/mod.ts";
import { isPostgresUrl, PgStore } from "../../src/store/mod.ts";
import { listen, type Listener } from "../../src/http/mod.ts";
import type { SharedQuotaOptions } from "../../src/http/shared_quota.ts";
import { pgCluster } from "../../tests/store/_pg.ts";
import { DENO, FIXTURE, q } from "../../tests/helpers.ts";
import { httpClient } from "../../tests/http/http_helpers.ts";

const TOKEN = "bench-token-0123456789abcdef";

/** One listener's figures (ms). */
export interface QuotaVariant {
  name: string;
  p50: number;
  p99: number;
  /** Calls per second with 8 in flight. */
  parallelPerS: number;
  /** Transactions the store committed per call (PostgreSQL only: every statement, heartbeats included). */
  storeOpsPerCall?: number;
}

/** What one run measured. */
export interface SharedQuotaBenchReport {
  variants: QuotaVariant[];
}

function quantile(samples: number[], at: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(at * sorted.length))]!;
}

async function start(dir: string, store: string, shared?: SharedQuotaOptions): Promise<Listener> {
  const config = parseConfig(
    `servers:
  fx:
    command: ${q(DENO)}
    args: [run, -A, ${q(FIXTURE)}, --state, ${q(dir)}]
record: false
agents:
  bench:
    token: \${TOK_BENCH}
`,
    `${dir}/mcphub.yaml`,
    { env: { get: (key) => Deno.env.get(key) }, cwd: dir },
  );
  return await listen({
    config,
    env: Deno.env.toObject(),
    tokenEnv: { get: (key) => key === "TOK_BENCH" ? TOKEN : undefined },
    version: "bench",
    log: () => {},
    address: { hostname: "127.0.0.1", port: 0 },
    storePath: store,
    drainMs: 200,
    sharedQuota: shared,
  });
}

/** Runs the benchmark, prints the report, returns the figures. */
export async function main(args: string[] = []): Promise<SharedQuotaBenchReport> {
  const { values } = parseArgs({
    args,
    options: { rounds: { type: "string", default: "5" }, calls: { type: "string", default: "400" } },
  });
  const rounds = Math.max(1, Number(values.rounds));
  const calls = Math.max(10, Number(values.calls));
  const cluster = await pgCluster();
  const root = await Deno.makeTempDir({ prefix: "mcphub_quota_bench_" });
  const setups: [string, () => Promise<string>, SharedQuotaOptions | undefined][] = [
    ["sqlite", () => Promise.resolve(`${root}/sqlite/store.db`), undefined],
    ["postgres", () => cluster.database(), undefined],
    ["postgres, no lease", () => cluster.database(), { lingerMs: 0, requestSlice: 1 }],
  ];
  const running: {
    name: string;
    listener: Listener;
    client: Awaited<ReturnType<typeof httpClient>>;
    /** The store's database, when PostgreSQL. */
    pg?: PgStore;
  }[] = [];
  try {
    for (const [name, store, shared] of setups) {
      const dir = `${root}/${name.replace(/\W+/g, "_")}`;
      await Deno.mkdir(dir, { recursive: true });
      const location = await store();
      const listener = await start(dir, location, shared);
      const client = await httpClient(`${listener.origin}/mcp`, TOKEN, name);
      running.push({
        name,
        listener,
        client,
        pg: isPostgresUrl(location) ? new PgStore(location, { max: 1 }) : undefined,
      });
    }
    const call = (client: (typeof running)[number]["client"]) =>
      client.callTool({ name: "fx__echo", arguments: { text: "x" } });
    for (const { client } of running) for (let i = 0; i < 100; i++) await call(client);
    const commits = async (pg: PgStore | undefined) => {
      if (!pg) return 0;
      const [row] = await pg.all(
        "SELECT xact_commit AS n FROM pg_stat_database WHERE datname = current_database()",
      );
      return Number(row?.n ?? 0);
    };
    // The server publishes each backend's counts within a second.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const before = await Promise.all(running.map((r) => commits(r.pg)));
    const samples = new Map(running.map((r) => [r.name, [] as number[]]));
    const parallel = new Map(running.map((r) => [r.name, [] as number[]]));
    // Blocks of 25 calls, the listeners' order rotated each block: load on a shared machine drifts, and
    // each listener gets the same share of it.
    for (let round = 0; round < rounds; round++) {
      for (let block = 0; block < Math.ceil(calls / 25); block++) {
        for (let k = 0; k < running.length; k++) {
          const { name, client } = running[(block + round + k) % running.length]!;
          for (let i = 0; i < 25; i++) {
            const t = performance.now();
            await call(client);
            samples.get(name)!.push(performance.now() - t);
          }
        }
      }
      for (let k = 0; k < running.length; k++) {
        const { name, client } = running[(round + k) % running.length]!;
        const t = performance.now();
        let next = 0;
        await Promise.all(Array.from({ length: 8 }, async () => {
          while (next++ < calls) await call(client);
        }));
        parallel.get(name)!.push(calls / ((performance.now() - t) / 1000));
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const after = await Promise.all(running.map((r) => commits(r.pg)));
    const variants: QuotaVariant[] = running.map(({ name, pg }, i) => ({
      name,
      p50: quantile(samples.get(name)!, 0.5),
      p99: quantile(samples.get(name)!, 0.99),
      parallelPerS: quantile(parallel.get(name)!, 0.5),
      // Less this query's own commit (one per reading).
      ...(pg
        ? { storeOpsPerCall: (after[i]! - before[i]! - 1) / (samples.get(name)!.length + rounds * calls) }
        : {}),
    }));
    const base = variants[0]!;
    console.log(
      `${rounds} rounds × ${
        Math.ceil(calls / 25) * 25
      } sequential calls and ${calls} with 8 in flight each, ` +
        "interleaved:",
    );
    for (const v of variants) {
      console.log(
        `  ${v.name.padEnd(20)} p50 ${v.p50.toFixed(3)} ms (${(v.p50 / base.p50).toFixed(3)}×, ` +
          `${((v.p50 - base.p50) * 1000).toFixed(0)} µs added)  p99 ${v.p99.toFixed(3)} ms  ` +
          `8 in flight ${v.parallelPerS.toFixed(0)} calls/s (${
            (v.parallelPerS / base.parallelPerS).toFixed(3)
          }×)` +
          (v.storeOpsPerCall === undefined
            ? ""
            : `  store transactions per call ${v.storeOpsPerCall.toFixed(3)}`),
      );
    }
    return { variants };
  } finally {
    for (const { client, listener, pg } of running) {
      await client[Symbol.asyncDispose]();
      await listener.stop();
      await pg?.close();
    }
    await Deno.remove(root, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) await main(Deno.args);
