/**
 * The shared PostgreSQL store against the local SQLite one, in one run on a throwaway local cluster (see
 * `tests/store/_pg.ts`): page reads at the start, middle and end of a 100 MB result, the time to put
 * 100 MB, and the cost of recording calls on PostgreSQL (a gateway with `record: true` ÷ `record: false`,
 * sequential calls to a real server). Figures are medians; ratios are PostgreSQL ÷ SQLite.
 *
 * Usage: deno run -A scripts/bench/pg_store_bench.ts [--rounds N] (or `deno task bench pg_store`)
 *
 * @module
 */
import { parseArgs } from "node:util";
import { openStore, PgStore } from "../../src/store/mod.ts";
import { CHUNK_BYTES, PgSpool, type ResultStore, Spool, spoolMigrations } from "../../src/spool/mod.ts";
import { pgStoreMigrations } from "../../src/gateway/mod.ts";
import { pgCluster } from "../../tests/store/_pg.ts";
import { connectGateway, q, REAL, writeConfig } from "../../tests/helpers.ts";

const MB = 1024 * 1024;
const PAGE = 8192;

/** What one run measured (ms, medians). */
export interface PgStoreBenchReport {
  pageReadMs: Record<"sqlite" | "postgres", { start: number; middle: number; end: number }>;
  putMs: Record<"sqlite" | "postgres", number>;
  recording: { onCallsPerS: number; offCallsPerS: number; ratio: number; sqliteRatio: number };
}

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function payload(bytes: number): string {
  const line = '{"file":"src/hub/hub.ts","line":1234,"text":"finalize(result, options)"},';
  return line.repeat(Math.ceil(bytes / line.length)).slice(0, bytes);
}

async function pageReads(store: ResultStore, callId: string, total: number, reads: number) {
  const middle = Math.floor(total / 2 / CHUNK_BYTES) * CHUNK_BYTES - PAGE / 2;
  const at = { start: 0, middle, end: total - PAGE };
  const out = { start: 0, middle: 0, end: 0 };
  for (const where of ["start", "middle", "end"] as const) {
    await store.readPage(callId, at[where], PAGE);
    const samples: number[] = [];
    for (let i = 0; i < reads; i++) {
      const t = performance.now();
      const page = await store.readPage(callId, at[where], PAGE);
      samples.push(performance.now() - t);
      if (typeof page !== "object" || page.bytes.length !== PAGE) throw new Error("bad page");
    }
    out[where] = median(samples);
  }
  return out;
}

async function callsPerSecond(config: string, db: string, calls: number): Promise<number> {
  const gw = await connectGateway(config, { db, env: { XDG_DATA_HOME: `${config}.data` } });
  try {
    const call = () => gw.client.callTool({ name: "memory__search_nodes", arguments: { query: "x" } });
    for (let i = 0; i < 50; i++) await call();
    const t = performance.now();
    for (let i = 0; i < calls; i++) await call();
    return calls / ((performance.now() - t) / 1000);
  } finally {
    await gw.close();
  }
}

/** Runs the benchmark, prints the report, returns the figures. */
export async function main(args: string[] = []): Promise<PgStoreBenchReport> {
  const { values } = parseArgs({ args, options: { rounds: { type: "string", default: "3" } } });
  const rounds = Math.max(1, Number(values.rounds));
  const cluster = await pgCluster();
  const dir = await Deno.makeTempDir({ prefix: "mcphub_pg_bench_" });
  const db = openStore(`${dir}/mcphub.db`, { migrations: spoolMigrations });
  const pg = new PgStore(await cluster.database(), { migrations: pgStoreMigrations });
  try {
    await pg.ready();
    const sqlite = new Spool(db);
    const shared = new PgSpool(pg);
    const meta = { server: "bench", tool: "dump", namespaced: "bench__dump" };
    const big = payload(100 * MB);
    const puts = { sqlite: [] as number[], postgres: [] as number[] };
    let ids = { sqlite: "", postgres: "" };
    for (let r = 0; r < rounds; r++) {
      let t = performance.now();
      ids.sqlite = sqlite.put(big, meta).callId;
      puts.sqlite.push(performance.now() - t);
      t = performance.now();
      ids.postgres = (await shared.put(big, meta)).callId;
      puts.postgres.push(performance.now() - t);
    }
    ids = { ...ids };
    const total = new TextEncoder().encode(big).length;
    const pageReadMs = {
      sqlite: await pageReads(sqlite, ids.sqlite, total, 200),
      postgres: await pageReads(shared, ids.postgres, total, 200),
    };

    // Recording on PostgreSQL: the same gateway and calls with record on and off, interleaved.
    const memory = `${dir}/memory.jsonl`;
    const yaml = (record: boolean) =>
      `record: ${record}\nservers:\n  memory:\n    command: node\n    args: [${q(REAL.memory)}]\n` +
      `    env: { MEMORY_FILE_PATH: ${q(memory)} }\n`;
    const on = await writeConfig(dir, yaml(true), "on.yaml");
    const off = await writeConfig(dir, yaml(false), "off.yaml");
    const url = await cluster.database();
    const rates = {
      on: [] as number[],
      off: [] as number[],
      fileOn: [] as number[],
      fileOff: [] as number[],
    };
    const file = `${dir}/calls.db`;
    for (let r = 0; r < rounds; r++) {
      rates.off.push(await callsPerSecond(off, url, 1000));
      rates.on.push(await callsPerSecond(on, url, 1000));
      rates.fileOff.push(await callsPerSecond(off, file, 1000));
      rates.fileOn.push(await callsPerSecond(on, file, 1000));
    }
    const report: PgStoreBenchReport = {
      pageReadMs,
      putMs: { sqlite: median(puts.sqlite), postgres: median(puts.postgres) },
      recording: {
        onCallsPerS: median(rates.on),
        offCallsPerS: median(rates.off),
        ratio: median(rates.on) / median(rates.off),
        sqliteRatio: median(rates.fileOn) / median(rates.fileOff),
      },
    };
    const ms = (x: number) => `${x.toFixed(2)} ms`;
    const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`;
    console.log(`PostgreSQL store vs SQLite (100 MB result, ${rounds} rounds, 8 KiB pages, medians)`);
    for (const where of ["start", "middle", "end"] as const) {
      console.log(
        `  page read at ${where.padEnd(6)}  sqlite ${ms(pageReadMs.sqlite[where])}  postgres ${
          ms(pageReadMs.postgres[where])
        }  (${ratio(pageReadMs.postgres[where], pageReadMs.sqlite[where])})`,
      );
    }
    console.log(
      `  put 100 MB           sqlite ${ms(report.putMs.sqlite)}  postgres ${ms(report.putMs.postgres)}  (${
        ratio(report.putMs.postgres, report.putMs.sqlite)
      })`,
    );
    console.log(
      `  recording on PostgreSQL: record on ${report.recording.onCallsPerS.toFixed(0)} calls/s, off ${
        report.recording.offCallsPerS.toFixed(0)
      } calls/s (on ÷ off ${report.recording.ratio.toFixed(2)}×; the same on SQLite ${
        report.recording.sqliteRatio.toFixed(2)
      }×)`,
    );
    return report;
  } finally {
    await pg.close();
    db.close();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) await main(Deno.args);
