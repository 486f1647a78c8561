/**
 * HTTP upstream benchmark (`mcp serve --listen`).
 *
 * - Throughput: `echo` calls to server-everything through the gateway served over Streamable HTTP,
 *   through the gateway over stdio (the upstream mcphub has always had), and to server-everything's own
 *   Streamable HTTP mode (no gateway: what HTTP itself costs), one at a time and 8 in flight, calls/s
 *   and the ratios HTTP gateway / stdio gateway and HTTP gateway / server-everything over HTTP. The
 *   three run interleaved, in rounds with a rotating order, so a noisy machine slows them alike.
 * - Sessions: 50 SDK clients, each its own session, 200 sequential calls each, all at once: p50 and p99
 *   latency per call, and the gateway's resident memory before and at its peak.
 *
 * Every process and temp dir is gone when `main()` returns.
 *
 * Usage: deno run -A scripts/bench/http_bench.ts
 *
 * @module
 */
import {
  connectGateway,
  descendants,
  q,
  REAL,
  startRemote,
  tempDir,
  writeConfig,
} from "../../tests/helpers.ts";
import { httpClient, startListener } from "../../tests/http/http_helpers.ts";
import { MB, reap, sampleProcess } from "./_gateway_process.ts";
import { echo, throughput } from "./gateway_bench.ts";

const CALLS = 1_000;
const ROUNDS = 5;
const IN_FLIGHT = 8;
const SESSIONS = 50;
const CALLS_PER_SESSION = 200;

/** Calls/s of each target. */
export interface HttpFigures {
  httpGateway: number;
  stdioGateway: number;
  everythingHttp: number;
  /** httpGateway / stdioGateway */
  vsStdio: number;
  /** httpGateway / everythingHttp */
  vsEverythingHttp: number;
}

/** What one run measured. */
export interface HttpBenchReport {
  sequential: HttpFigures;
  inFlight8: HttpFigures;
  sessions: {
    sessions: number;
    callsEach: number;
    p50Ms: number;
    p99Ms: number;
    rssBeforeMb: number;
    rssPeakMb: number;
  };
}

function figures([httpGateway, stdioGateway, everythingHttp]: number[]): HttpFigures {
  return {
    httpGateway,
    stdioGateway,
    everythingHttp,
    vsStdio: httpGateway / stdioGateway,
    vsEverythingHttp: httpGateway / everythingHttp,
  };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** Runs the benchmark and prints its figures. */
export async function main(): Promise<HttpBenchReport> {
  await using dir = await tempDir("mcphub-http-bench-");
  const config = await writeConfig(
    dir.path,
    `servers:\n  everything:\n    command: node\n    args: [${q(REAL.everything)}, stdio]\n`,
  );
  const before = new Set(descendants(Deno.pid));
  const opened: AsyncDisposable[] = [];
  try {
    const listener = await startListener(config);
    opened.push(listener);
    const stdio = await connectGateway(config, { db: `${dir.path}/stdio.db` });
    opened.push(stdio);
    const remote = await startRemote("streamableHttp");
    opened.push(remote);
    const http = await httpClient(listener.url);
    opened.push(http);
    const everything = await httpClient(`http://127.0.0.1:${remote.port}/mcp`);
    opened.push(everything);
    await stdio.client.listTools();
    await http.listTools();
    const targets = [
      echo(http, "everything__echo"),
      echo(stdio.client, "everything__echo"),
      echo(everything, "echo"),
    ];
    const sequential = figures(await throughput(targets, 1, { calls: CALLS, rounds: ROUNDS }));
    const inFlight8 = figures(await throughput(targets, IN_FLIGHT, { calls: CALLS, rounds: ROUNDS }));

    const rssBefore = sampleProcess(listener.child.pid).rssBytes;
    const clients = await Promise.all(Array.from({ length: SESSIONS }, () => httpClient(listener.url)));
    opened.push(...clients);
    const latencies: number[] = [];
    let peak = rssBefore;
    const sampler = setInterval(() => {
      peak = Math.max(peak, sampleProcess(listener.child.pid).rssBytes);
    }, 50);
    await Promise.all(clients.map(async (client) => {
      for (let i = 0; i < CALLS_PER_SESSION; i++) {
        const t0 = performance.now();
        await echo(client, "everything__echo")();
        latencies.push(performance.now() - t0);
      }
    }));
    clearInterval(sampler);
    peak = Math.max(peak, sampleProcess(listener.child.pid).rssBytes);
    latencies.sort((a, b) => a - b);
    const report: HttpBenchReport = {
      sequential,
      inFlight8,
      sessions: {
        sessions: SESSIONS,
        callsEach: CALLS_PER_SESSION,
        p50Ms: percentile(latencies, 50),
        p99Ms: percentile(latencies, 99),
        rssBeforeMb: rssBefore / MB,
        rssPeakMb: peak / MB,
      },
    };
    print(report);
    return report;
  } finally {
    const pids = descendants(Deno.pid).filter((pid) => !before.has(pid));
    for (const item of opened.reverse()) await Promise.resolve(item[Symbol.asyncDispose]()).catch(() => {});
    const left = await reap(pids);
    if (left) console.error(`warning: ${left} process(es) had to be killed after the HTTP bench`);
  }
}

function print(r: HttpBenchReport): void {
  const row = (label: string, f: HttpFigures) =>
    `${label.padEnd(12)} ${f.httpGateway.toFixed(0).padStart(8)} ${f.stdioGateway.toFixed(0).padStart(8)} ` +
    `${f.everythingHttp.toFixed(0).padStart(10)}   ${f.vsStdio.toFixed(2)}x   ${
      f.vsEverythingHttp.toFixed(2)
    }x`;
  console.log(`echo calls/s (${CALLS} calls each, ${ROUNDS} interleaved rounds)`);
  console.log("             mcphub    mcphub  everything   http/stdio  http/everything-http");
  console.log("              HTTP     stdio        HTTP");
  console.log(row("sequential", r.sequential));
  console.log(row(`${IN_FLIGHT} in flight`, r.inFlight8));
  const s = r.sessions;
  console.log(
    `${s.sessions} sessions x ${s.callsEach} calls at once: p50 ${s.p50Ms.toFixed(2)} ms, p99 ${
      s.p99Ms.toFixed(2)
    } ms; gateway RSS ${s.rssBeforeMb.toFixed(1)} MB before, ${s.rssPeakMb.toFixed(1)} MB peak`,
  );
}

if (import.meta.main) await main();
