/**
 * Soak benchmark: the memory (VmRSS) and open file descriptors (/proc/PID/fd) of one `mcphub mcp serve`
 * process in front of 25 fixture servers, before and after each phase:
 *
 * - 10,000 `echo` calls, 8 in flight, spread over the servers;
 * - 1,000 detached calls (`call_tool {tool: "…__wait", arguments: {ms: 1}, detach: true}`), each polled
 *   with `poll_result` until it is done, 8 in flight (the most the gateway runs; it refuses a 9th);
 * - 100 forced reconnects: `exit_mid_call` makes a server exit during a call ("Outcome unknown"), and
 *   the gateway restarts it. A server that failed again within 60 s of its last failure is restarted
 *   with exponential backoff (0.5–1 s, 1–2 s, 2–4 s …) and given up after 8 failures in a row, so the
 *   100 are 4 rounds over the 25 servers at once; a round ends when `list_servers` shows all 25
 *   `connected` again;
 * - 10,000 `echo` calls again: V8 grows its heap during the first phases, so growth that goes on here is a
 *   leak and growth that stops was the heap settling.
 *
 * Growth that stays is a leak, except for what the bounded registries hold (at most 128 finished detached
 * calls). Recording is on (the default). Every process and temp dir is gone when `main()` returns.
 *
 * Usage: deno run -A scripts/bench/soak_bench.ts
 *
 * @module
 */
import type { Client } from "@modelcontextprotocol/sdk/client";
import { DEFAULT_RESTART_POLICY } from "../../src/downstream/mod.ts";
import { MAX_FINISHED, MAX_RUNNING } from "../../src/gateway/mod.ts";
import {
  connectGateway,
  DENO,
  descendants,
  FIXTURE,
  q,
  structured,
  tempDir,
  writeConfig,
} from "../../tests/helpers.ts";
import {
  gatewayPid,
  listServers,
  mb,
  mbDelta,
  type ProcessSample,
  reap,
  sampleProcess,
  waitConnected,
} from "./_gateway_process.ts";

const SERVERS = 25;
const ECHO_CALLS = 10_000;
const DETACHED_CALLS = 1_000;
const RECONNECT_ROUNDS = 4;
const IN_FLIGHT = 8;
const WARMUP_CALLS = 500;
/** A pause before each sample, so that the pipes of a finished call are closed and counted. */
const SETTLE_MS = 500;

/** Before and after one phase. */
export interface PhaseFigures {
  name: string;
  ms: number;
  before: ProcessSample;
  after: ProcessSample;
}

/** What one run measured. */
export interface SoakBenchReport {
  echo: PhaseFigures & { callsPerSecond: number };
  detached: PhaseFigures & { polls: number; firstCallIdStatus: string; lastCallIdStatus: string };
  reconnects: PhaseFigures & { reconnects: number; roundMs: number[] };
  echoAgain: PhaseFigures & { callsPerSecond: number };
}

function serverName(i: number): string {
  return `fx${String(i % SERVERS + 1).padStart(2, "0")}`;
}

function config(): string {
  const servers = Array.from({ length: SERVERS }, (_, i) =>
    `  ${serverName(i)}:
    command: ${q(DENO)}
    args: [run, -A, ${q(FIXTURE)}, --name, ${serverName(i)}]`).join("\n");
  // 25 restarts at once on a small machine: more room than the 30 s default.
  return `connect_timeout: 60s\nservers:\n${servers}\n`;
}

function text(result: unknown): string {
  return (result as { content?: { text?: string }[] }).content?.[0]?.text ?? "";
}

/** Runs `calls` calls of `call(i)` with `concurrency` workers. */
async function drive(calls: number, concurrency: number, call: (i: number) => Promise<void>): Promise<void> {
  let started = 0;
  const worker = async () => {
    while (started < calls) await call(started++);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

async function echo(client: Client, i: number): Promise<void> {
  const want = `soak ${i}`;
  const result = await client.callTool({ name: `${serverName(i)}__echo`, arguments: { text: want } });
  if (result.isError || text(result) !== want) throw new Error(`echo ${i} failed: ${JSON.stringify(result)}`);
}

async function pollStatus(client: Client, callId: string): Promise<string> {
  const result = await client.callTool({ name: "poll_result", arguments: { callId } });
  const status = structured<{ status?: string } | undefined>(result)?.status;
  return status ?? (text(result) === "waited 1ms" ? "done" : `unexpected ${JSON.stringify(result)}`);
}

/** One detached call, polled to completion; returns its callId and the number of polls. */
async function detached(client: Client, i: number): Promise<{ callId: string; polls: number }> {
  const accepted = structured<{ status: string; callId: string }>(
    await client.callTool({
      name: "call_tool",
      arguments: { tool: `${serverName(i)}__wait`, arguments: { ms: 1 }, detach: true },
    }),
  );
  if (accepted?.status !== "accepted") throw new Error(`detach ${i} refused: ${JSON.stringify(accepted)}`);
  for (let polls = 1;; polls++) {
    const status = await pollStatus(client, accepted.callId);
    if (status === "done") return { callId: accepted.callId, polls };
    if (status !== "pending") throw new Error(`detached call ${i}: ${status}`);
    await new Promise((r) => setTimeout(r, 1));
  }
}

/** One round: every server exits during a call, then the gateway restarts them all. */
async function reconnectRound(client: Client): Promise<void> {
  await Promise.all(Array.from({ length: SERVERS }, async (_, i) => {
    const result = await client.callTool({ name: `${serverName(i)}__exit_mid_call`, arguments: {} });
    if (!result.isError || !text(result).startsWith("Outcome unknown")) {
      throw new Error(`exit_mid_call on ${serverName(i)}: ${JSON.stringify(result)}`);
    }
  }));
  await waitConnected(() => listServers(client), 120_000);
}

async function settledSample(pid: number): Promise<ProcessSample> {
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  return sampleProcess(pid);
}

async function phase<T>(
  name: string,
  pid: number,
  run: () => Promise<T>,
): Promise<PhaseFigures & { value: T }> {
  const before = await settledSample(pid);
  const t0 = performance.now();
  const value = await run();
  const ms = performance.now() - t0;
  return { name, ms, before, after: await settledSample(pid), value };
}

function change(label: string, before: number, after: number, format: (n: number) => string): string {
  const d = after - before;
  return `${label} ${format(before)} -> ${format(after)} (${d >= 0 ? "+" : ""}${d})`;
}

function growth(f: PhaseFigures): string {
  return `RSS ${mb(f.before.rssBytes)} -> ${mb(f.after.rssBytes)} (${
    mbDelta(f.after.rssBytes - f.before.rssBytes)
  }), ${change("fds", f.before.fds, f.after.fds, String)}, ${
    change("servers", f.before.children, f.after.children, String)
  }`;
}

/** Runs the benchmark, prints the figures and returns them. */
export async function main(): Promise<SoakBenchReport> {
  if (RECONNECT_ROUNDS >= DEFAULT_RESTART_POLICY.maxFailures) {
    throw new RangeError(`${RECONNECT_ROUNDS} reconnect rounds would reach the crash-loop limit`);
  }
  const before = new Set(descendants(Deno.pid));
  await using dir = await tempDir("mcphub_soak_bench_");
  const path = await writeConfig(dir.path, config());
  const gw = await connectGateway(path, { db: `${dir.path}/mcphub.db` });
  try {
    const pid = gatewayPid(gw.transport.pid!);
    const { client } = gw;
    await waitConnected(() => listServers(client), 120_000);
    await drive(WARMUP_CALLS, IN_FLIGHT, (i) => echo(client, i));
    await drive(IN_FLIGHT * 4, IN_FLIGHT, async (i) => void await detached(client, i));
    const start = await settledSample(pid);

    const e = await phase("echo", pid, () => drive(ECHO_CALLS, IN_FLIGHT, (i) => echo(client, i)));
    const callsPerSecond = ECHO_CALLS / (e.ms / 1000);
    console.log(
      `${ECHO_CALLS} echo calls, ${IN_FLIGHT} in flight: ${callsPerSecond.toFixed(0)} calls/s; ${growth(e)}`,
    );

    const callIds: string[] = [];
    let polls = 0;
    const d = await phase("detached", pid, () =>
      drive(DETACHED_CALLS, IN_FLIGHT, async (i) => {
        const done = await detached(client, i);
        callIds.push(done.callId);
        polls += done.polls;
      }));
    const firstCallIdStatus = await pollStatus(client, callIds[0]);
    const lastCallIdStatus = await pollStatus(client, callIds[callIds.length - 1]);
    console.log(
      `${DETACHED_CALLS} detached calls, ${MAX_RUNNING} in flight, ${polls} polls: ${
        (DETACHED_CALLS / (d.ms / 1000)).toFixed(0)
      } calls/s; ${
        growth(d)
      }; registry (keeps ${MAX_FINISHED} finished): first callId ${firstCallIdStatus}, last ${lastCallIdStatus}`,
    );

    const roundMs: number[] = [];
    const r = await phase("reconnects", pid, async () => {
      for (let round = 0; round < RECONNECT_ROUNDS; round++) {
        const t0 = performance.now();
        await reconnectRound(client);
        roundMs.push(performance.now() - t0);
      }
    });
    const reconnects = RECONNECT_ROUNDS * SERVERS;
    console.log(
      `${reconnects} forced reconnects (${RECONNECT_ROUNDS} rounds x ${SERVERS} servers, rounds ${
        roundMs.map((ms) => (ms / 1000).toFixed(1)).join(", ")
      } s): ${growth(r)}; ${((r.after.fds - r.before.fds) / reconnects).toFixed(2)} fd per reconnect`,
    );

    const a = await phase("echo again", pid, () => drive(ECHO_CALLS, IN_FLIGHT, (i) => echo(client, i)));
    const againPerSecond = ECHO_CALLS / (a.ms / 1000);
    console.log(
      `${ECHO_CALLS} echo calls again: ${againPerSecond.toFixed(0)} calls/s; ${growth(a)}`,
    );

    const end = a.after;
    console.log(
      `overall: ${growth({ name: "overall", ms: 0, before: start, after: end })}; peak RSS (VmHWM) ${
        mb(end.hwmBytes)
      }`,
    );
    const strip = <T>({ value: _, ...figures }: PhaseFigures & { value: T }) => figures;
    return {
      echo: { ...strip(e), callsPerSecond },
      detached: { ...strip(d), polls, firstCallIdStatus, lastCallIdStatus },
      reconnects: { ...strip(r), reconnects, roundMs },
      echoAgain: { ...strip(a), callsPerSecond: againPerSecond },
    };
  } catch (error) {
    console.error(`gateway stderr (tail):\n${gw.stderr().slice(-2_000)}`);
    throw error;
  } finally {
    // Listed before closing: a gateway's servers would be orphaned, not ours, if it left them behind.
    const pids = descendants(Deno.pid).filter((pid) => !before.has(pid));
    await gw.close();
    const left = await reap(pids);
    if (left) console.error(`warning: ${left} process(es) of the soak bench had to be killed`);
  }
}

if (import.meta.main) await main();
