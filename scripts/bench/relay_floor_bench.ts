/**
 * The floor under the gateway's proxy overhead: `echo` calls to server-everything straight, through
 * `_relay.ts` (the gateway's pipes and reads and writes, no logic: chunks passed on as they came, or
 * each line parsed and serialized again) and through `mcphub mcp serve` (recording on, the default), one
 * at a time and 8 in flight, interleaved as in gateway_bench.ts; then the CPU time each process in
 * between takes per call (from /proc, over 2,000 calls each). What a relay that does nothing costs on
 * this machine bounds what the gateway can reach: the goal of issue #16 (0.8× direct with 8 in flight)
 * is about what a naive JSON relay gets.
 *
 * Usage: deno run -A scripts/bench/relay_floor_bench.ts [--rounds N] (default 6: every order of the
 * four targets would take 24)
 *
 * @module
 */
import { parseArgs } from "node:util";
import type { Client } from "@modelcontextprotocol/sdk/client";
import {
  connectDirect,
  connectGateway,
  DENO,
  descendants,
  q,
  REAL,
  ROOT,
  tempDir,
  writeConfig,
} from "../../tests/helpers.ts";
import { drive, echo, throughput } from "./gateway_bench.ts";
import { gatewayPid, listServers, reap, waitConnected } from "./_gateway_process.ts";

const CPU_CALLS = 2_000;
const IN_FLIGHT = 8;
const RELAY = `${ROOT}scripts/bench/_relay.ts`;

/** One target: a client, and the pid of the process between it and the server (none when direct). */
interface Target {
  name: string;
  client: Client;
  pid?: number;
}

/** What one run measured, per target: calls/s, ratio to direct, and µs of CPU per call in between. */
export interface RelayFloorReport {
  sequential: Record<string, { callsPerSecond: number; ratio: number }>;
  inFlight8: Record<string, { callsPerSecond: number; ratio: number }>;
  cpuMicrosPerCall: Record<string, { sequential: number; inFlight8: number }>;
}

function cpuTicks(pid: number): number {
  const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[11]) + Number(fields[12]);
}

/** µs of CPU the process between takes per call, over {@linkcode CPU_CALLS} calls (10 ms ticks). */
async function cpuPerCall(target: Target, concurrency: number): Promise<number> {
  const t0 = cpuTicks(target.pid!);
  await drive(
    echo(target.client, target.name === "mcphub" ? "everything__echo" : "echo"),
    CPU_CALLS,
    concurrency,
  );
  return (cpuTicks(target.pid!) - t0) * 10_000 / CPU_CALLS;
}

/**
 * Runs the bench; prints and returns the figures. `cpu: false` skips the CPU part (goals_bench.ts runs the
 * calls/s part in each of its rounds): `cpuMicrosPerCall` is then empty.
 */
export async function main(
  { rounds = 6, cpu = true }: { rounds?: number; cpu?: boolean } = {},
): Promise<RelayFloorReport> {
  const before = new Set(descendants(Deno.pid));
  await using dir = await tempDir("mcphub_relay_floor_");
  const config = await writeConfig(
    dir.path,
    `servers:\n  everything:\n    command: node\n    args: [${q(REAL.everything)}, stdio]\n`,
  );
  const opened: { close(): Promise<void> }[] = [];
  try {
    const relay = async (mode: string): Promise<Target> => {
      const client = await connectDirect(DENO, [
        "run",
        "-A",
        RELAY,
        "--mode",
        mode,
        "--",
        "node",
        REAL.everything,
        "stdio",
      ]);
      opened.push(client);
      const pid = descendants(Deno.pid).find((p) =>
        !before.has(p) && commandOf(p).includes(RELAY) && commandOf(p).includes(mode)
      );
      return { name: `relay ${mode}`, client, pid };
    };
    const direct = await connectDirect("node", [REAL.everything, "stdio"]);
    opened.push(direct);
    const raw = await relay("raw");
    const json = await relay("json");
    const gw = await connectGateway(config);
    opened.push(gw);
    await waitConnected(() => listServers(gw.client));
    const targets: Target[] = [
      { name: "direct", client: direct },
      raw,
      json,
      { name: "mcphub", client: gw.client, pid: gatewayPid(gw.transport.pid!) },
    ];
    const calls = targets.map((t) => echo(t.client, t.name === "mcphub" ? "everything__echo" : "echo"));
    const report: RelayFloorReport = { sequential: {}, inFlight8: {}, cpuMicrosPerCall: {} };
    for (const [mode, concurrency] of [["sequential", 1], ["inFlight8", IN_FLIGHT]] as const) {
      const rates = await throughput(calls, concurrency, { rounds });
      targets.forEach((t, i) => {
        report[mode][t.name] = { callsPerSecond: rates[i]!, ratio: rates[i]! / rates[0]! };
      });
    }
    for (const t of cpu ? targets.slice(1) : []) {
      report.cpuMicrosPerCall[t.name] = {
        sequential: await cpuPerCall(t, 1),
        inFlight8: await cpuPerCall(t, IN_FLIGHT),
      };
    }
    for (const mode of ["sequential", "inFlight8"] as const) {
      console.log(
        `${mode === "sequential" ? "sequential" : "8 in flight"}: ${
          targets.map((t) => {
            const f = report[mode][t.name]!;
            const micros = report.cpuMicrosPerCall[t.name]?.[mode];
            return `${t.name} ${f.callsPerSecond.toFixed(0)}/s` +
              (t.name === "direct"
                ? ""
                : ` (${f.ratio.toFixed(2)}×${
                  micros === undefined ? "" : `, ${micros.toFixed(0)} µs CPU/call`
                })`);
          }).join(", ")
        }`,
      );
    }
    return report;
  } finally {
    const pids = descendants(Deno.pid).filter((pid) => !before.has(pid));
    await Promise.all(opened.map((c) => c.close().catch(() => {})));
    const left = await reap(pids);
    if (left) console.error(`warning: ${left} process(es) had to be killed after the relay floor bench`);
  }
}

function commandOf(pid: number): string {
  try {
    return Deno.readTextFileSync(`/proc/${pid}/cmdline`).replaceAll("\0", " ");
  } catch {
    return "";
  }
}

if (import.meta.main) {
  const { values } = parseArgs({ args: Deno.args, options: { rounds: { type: "string", default: "6" } } });
  await main({ rounds: Number(values.rounds) });
}
