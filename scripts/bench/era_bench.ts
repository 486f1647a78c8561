/**
 * The first connection to a stdio server whose era is not known yet (a `server/discover` probe first,
 * docs/protocol.md "Downstream servers") against a connection to the same server the store knows as
 * legacy (the 2025 `initialize` first: what every stdio server of unknown era got before the probe):
 * `Downstream.connect()` from spawn to its tool list, the two taking turns in each of `--rounds` rounds
 * (default 9), medians and their ratio. Servers: server-everything and server-memory (answer the probe
 * -32601), the v1-SDK fixture, and `hostile_server.ts --mode strict` (exits on the probe: a second
 * process is started with the 2025 opening). Then, over raw pipes, the time from the probe's answer to the
 * `initialize`'s answer (at most what the probe adds to a server that answers it). Prints figures, asserts
 * nothing.
 *
 *     deno run -A scripts/bench/era_bench.ts [--rounds N] [--only NAME]
 *
 * @module
 */
import { parseArgs } from "node:util";
import { parseConfig } from "../../src/config/mod.ts";
import { Downstream } from "../../src/downstream/downstream.ts";
import { DENO, FIXTURE, HOSTILE, q, REAL } from "../../tests/helpers.ts";

const SERVERS: Record<string, string> = {
  everything: `command: node\n    args: [${q(REAL.everything)}, stdio]`,
  memory: `command: node\n    args: [${q(REAL.memory)}]`,
  "v1 fixture": `command: ${q(DENO)}\n    args: [run, -A, ${q(FIXTURE)}]`,
  "exits on probe": `command: ${q(DENO)}\n    args: [run, -A, ${q(HOSTILE)}, --mode, strict]`,
};

/** One `connect()` of a fresh Downstream, the era cache saying `era`: milliseconds to connected. */
async function connectOnce(entry: string, era: "legacy" | undefined, dir: string): Promise<number> {
  const config = parseConfig(`servers:\n  s:\n    ${entry}\n`, `${dir}/mcphub.yaml`, {
    env: { get: () => undefined },
    cwd: dir,
  }).servers[0]!;
  const d = new Downstream(config, {
    env: { ...Deno.env.toObject(), MEMORY_FILE_PATH: `${dir}/memory.jsonl` },
    clientName: "bench",
    clientVersion: "1",
    connectTimeoutMs: 30_000,
    log: () => {},
    restartPolicy: { baseMs: 500, maxMs: 500, maxFailures: 0, stableMs: 60_000 },
    eras: { load: () => era, save: () => {} },
  });
  const t0 = performance.now();
  await d.connect();
  const ms = performance.now() - t0;
  const state = d.state;
  await d.close();
  if (state !== "connected") throw new Error(`not connected: ${d.error}`);
  return ms;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * Over raw pipes: `server/discover` written at spawn, the 2025 `initialize` written on its answer; the
 * milliseconds from that answer to the `initialize`'s (what the probe adds at most: without it the
 * `initialize` waits in the pipe and is answered as the server is ready).
 */
async function probeGap(command: string, args: string[]): Promise<number> {
  const child = new Deno.Command(command, { args, stdin: "piped", stdout: "piped", stderr: "null" }).spawn();
  const writer = child.stdin.getWriter();
  const send = (m: unknown) => writer.write(new TextEncoder().encode(JSON.stringify(m) + "\n"));
  const initialize = {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "bench", version: "1" } },
  };
  await send({ jsonrpc: "2.0", id: "probe", method: "server/discover", params: { _meta: {} } });
  let buffered = "";
  let answered = 0;
  let gap = NaN;
  try {
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
      buffered += chunk;
      let at;
      while ((at = buffered.indexOf("\n")) >= 0) {
        const message = JSON.parse(buffered.slice(0, at));
        buffered = buffered.slice(at + 1);
        if (message.id === "probe") {
          answered = performance.now();
          await send(initialize);
        } else if (message.id === 1) gap = performance.now() - answered;
      }
      if (!Number.isNaN(gap)) break;
    }
  } finally {
    child.kill();
    await child.status;
  }
  return gap;
}

/** The servers that answer the probe, as raw commands. */
const RAW: Record<string, [string, string[]]> = {
  everything: ["node", [REAL.everything, "stdio"]],
  memory: ["node", [REAL.memory]],
  "v1 fixture": [DENO, ["run", "-A", FIXTURE]],
};

export async function main(argv: string[] = []): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      rounds: { type: "string", default: "9" },
      only: { type: "string" },
    },
  });
  const rounds = Number(values.rounds);
  const dir = await Deno.makeTempDir({ prefix: "mcphub-era-bench-" });
  try {
    console.log(
      `first connection, era unknown (probe first) vs known legacy (initialize first), ${rounds} rounds`,
    );
    for (const [name, entry] of Object.entries(SERVERS)) {
      if (values.only && name !== values.only) continue;
      // One warm-up each (the module cache, node's first start).
      await connectOnce(entry, "legacy", dir);
      await connectOnce(entry, undefined, dir);
      const probe: number[] = [];
      const legacy: number[] = [];
      for (let i = 0; i < rounds; i++) {
        // Alternate which goes first, so drift hits both alike.
        if (i % 2) {
          legacy.push(await connectOnce(entry, "legacy", dir));
          probe.push(await connectOnce(entry, undefined, dir));
        } else {
          probe.push(await connectOnce(entry, undefined, dir));
          legacy.push(await connectOnce(entry, "legacy", dir));
        }
      }
      const [p, l] = [median(probe), median(legacy)];
      console.log(
        `  ${name.padEnd(15)} known legacy ${l.toFixed(1).padStart(7)} ms   unknown (probe) ${
          p.toFixed(1).padStart(7)
        } ms   ratio ${(p / l).toFixed(2)}   (${p >= l ? "+" : ""}${(p - l).toFixed(1)} ms)`,
      );
    }
    console.log(`the probe's answer to the initialize's answer, raw pipes, median of ${rounds}`);
    for (const [name, [command, args]] of Object.entries(RAW)) {
      if (values.only && name !== values.only) continue;
      const gaps: number[] = [];
      for (let i = 0; i < rounds; i++) gaps.push(await probeGap(command, args));
      console.log(`  ${name.padEnd(15)} ${median(gaps).toFixed(1).padStart(7)} ms`);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) await main(Deno.args);
