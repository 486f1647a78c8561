/**
 * The figures issue #16 closes on, each the median of {@linkcode ROUNDS} rounds and printed against its
 * goal (what `deno task bench` runs):
 *
 * - gateway/direct, `echo` calls to server-everything, sequential and 8 in flight (goals ≥ 0.5× and
 *   ≥ 0.8×), and mcphub/peer (supergateway bridging the same server; mcphub should be the faster), from
 *   one interleaved run per round with the same SDK client (peer_bench.ts's calls/s part, inside
 *   `unshare -n`; where no network namespace can be made, direct and mcphub alone, peer skipped);
 * - the gateway's peak RSS for a 100 MB result, spooled and passed through, as a multiple of the payload
 *   (goal ≤ 2×), and the delay of a concurrent `echo` while the 100 MB result is read and spooled (goal
 *   ≤ ~50 ms), from spool_e2e_bench.ts;
 * - cold start, spawn to the `initialize` answer, gateway with 3 servers ÷ a minimal Deno SDK server
 *   (goal ≤ 1.3×), {@linkcode STARTUP_RUNS} alternated spawns of each per round (gateway_bench.ts);
 * - for context (no goal), the floor under any hop on this machine: a relay with no logic at all
 *   (relay_floor_bench.ts: chunks passed on as they came, or each line parsed and serialized again) as a
 *   multiple of direct, and the gateway as a multiple of the JSON relay, sequential and 8 in flight, from
 *   one interleaved run of the four targets per round.
 *
 * Each round runs every part once, so a noisy spell hits one round, not one figure. Prints each round's
 * figures as they come, then one line per figure: the median, the rounds, the goal and whether it is met.
 *
 * Usage: deno run -A scripts/bench/goals_bench.ts [--rounds N]   (default 3)
 *
 * @module
 */
import { parseArgs } from "node:util";
import {
  connectDirect,
  connectGateway,
  descendants,
  q,
  REAL,
  tempDir,
  writeConfig,
} from "../../tests/helpers.ts";
import { reap } from "./_gateway_process.ts";
import { echo, startupBench, throughput } from "./gateway_bench.ts";
import { peerRates } from "./peer_bench.ts";
import { main as relayFloor } from "./relay_floor_bench.ts";
import { main as spoolE2e } from "./spool_e2e_bench.ts";

/** Rounds per figure. */
export const ROUNDS = 3;
/** Alternated spawns of the gateway and of the minimal server per round. */
const STARTUP_RUNS = 5;
/** `echo` calls per target and mode when there is no peer (as peer_bench.ts: 1,000 in 5 rounds). */
const CALLS = 1_000;
const CALL_ROUNDS = 5;
const IN_FLIGHT = 8;

/** Interleaved rounds of the relay floor's four targets per goals round. */
const FLOOR_ROUNDS = 6;

/** One figure: its rounds' values, how to print one, and its goal (none: printed for context). */
interface Figure {
  name: string;
  values: number[];
  unit: "x" | "ms";
  goal?: string;
  met?: (median: number) => boolean;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function show(value: number, unit: Figure["unit"]): string {
  return unit === "x" ? `${value.toFixed(2)}x` : `${value.toFixed(0)} ms`;
}

/** Calls/s of direct and mcphub stdio alone (no network namespace for the peer). */
async function directRates(): Promise<{ sequential: number[]; inFlight: number[] }> {
  const before = new Set(descendants(Deno.pid));
  await using dir = await tempDir("mcphub_goals_bench_");
  const config = await writeConfig(
    dir.path,
    `servers:\n  everything:\n    command: node\n    args: [${q(REAL.everything)}, stdio]\n`,
  );
  const direct = await connectDirect("node", [REAL.everything, "stdio"]);
  try {
    await using gw = await connectGateway(config, { db: `${dir.path}/goals.db` });
    await gw.client.listTools();
    const targets = [echo(direct, "echo"), echo(gw.client, "everything__echo")];
    const sequential = await throughput(targets, 1, { calls: CALLS, rounds: CALL_ROUNDS });
    const inFlight = await throughput(targets, IN_FLIGHT, { calls: CALLS, rounds: CALL_ROUNDS });
    return { sequential, inFlight };
  } finally {
    await direct.close().catch(() => {});
    await reap(descendants(Deno.pid).filter((pid) => !before.has(pid)));
  }
}

/** Runs the rounds, prints every figure against its goal, and returns the figures. */
export async function main(args: readonly string[] = []): Promise<Figure[]> {
  const { values } = parseArgs({ args: [...args], options: { rounds: { type: "string" } } });
  const rounds = values.rounds === undefined ? ROUNDS : Number(values.rounds);
  if (!Number.isSafeInteger(rounds) || rounds < 1) {
    throw new RangeError(`--rounds must be a positive integer`);
  }
  const seq: number[] = [];
  const fly: number[] = [];
  const peerSeq: number[] = [];
  const peerFly: number[] = [];
  const spooled: number[] = [];
  const passed: number[] = [];
  const delay: number[] = [];
  const cold: number[] = [];
  const floor = {
    raw: [] as number[],
    json: [] as number[],
    rawFly: [] as number[],
    jsonFly: [] as number[],
  };
  const overJson = { seq: [] as number[], fly: [] as number[] };
  let peerSkipped: string | undefined;
  for (let round = 1; round <= rounds; round++) {
    const t0 = performance.now();
    let rates = peerSkipped ? peerSkipped : await peerRates();
    if (typeof rates === "string") {
      peerSkipped = rates;
      rates = await directRates();
    } else {
      // [direct, mcphub stdio, mcphub HTTP, supergateway HTTP]
      peerSeq.push(rates.sequential[1]! / rates.sequential[3]!);
      peerFly.push(rates.inFlight[1]! / rates.inFlight[3]!);
    }
    seq.push(rates.sequential[1]! / rates.sequential[0]!);
    fly.push(rates.inFlight[1]! / rates.inFlight[0]!);
    const spool = await spoolE2e({ paging: false, print: false });
    const payload = 100 * 1024 * 1024;
    spooled.push(spool.spooled.after.hwmBytes / payload);
    passed.push(spool.verbatim.after.hwmBytes / payload);
    delay.push(spool.spooled.echo.maxMs - spool.spooled.echo.restMs);
    {
      await using dir = await tempDir("mcphub_goals_startup_");
      cold.push((await startupBench(dir.path, STARTUP_RUNS)).ratio);
    }
    const relays = await relayFloor({ rounds: FLOOR_ROUNDS, cpu: false });
    floor.raw.push(relays.sequential["relay raw"]!.ratio);
    floor.json.push(relays.sequential["relay json"]!.ratio);
    floor.rawFly.push(relays.inFlight8["relay raw"]!.ratio);
    floor.jsonFly.push(relays.inFlight8["relay json"]!.ratio);
    overJson.seq.push(relays.sequential.mcphub!.ratio / floor.json.at(-1)!);
    overJson.fly.push(relays.inFlight8.mcphub!.ratio / floor.jsonFly.at(-1)!);
    console.log(
      `round ${round}/${rounds} (${((performance.now() - t0) / 1000).toFixed(0)} s): gateway/direct ` +
        `${show(seq.at(-1)!, "x")} sequential, ${show(fly.at(-1)!, "x")} ${IN_FLIGHT} in flight; ` +
        (peerSkipped
          ? ""
          : `mcphub/supergateway ${show(peerSeq.at(-1)!, "x")}, ${show(peerFly.at(-1)!, "x")}; `) +
        `100 MB peak ${show(spooled.at(-1)!, "x")} spooled, ${show(passed.at(-1)!, "x")} passed; ` +
        `echo delay ${show(delay.at(-1)!, "ms")}; cold start ${show(cold.at(-1)!, "x")}; ` +
        `relays/direct ${show(floor.raw.at(-1)!, "x")} raw, ${
          show(floor.json.at(-1)!, "x")
        } JSON sequential, ` +
        `${show(floor.rawFly.at(-1)!, "x")}, ${show(floor.jsonFly.at(-1)!, "x")} ${IN_FLIGHT} in flight`,
    );
  }
  const figures: Figure[] = [
    { name: "gateway/direct, sequential", values: seq, unit: "x", goal: ">= 0.5x", met: (m) => m >= 0.5 },
    {
      name: `gateway/direct, ${IN_FLIGHT} in flight`,
      values: fly,
      unit: "x",
      goal: ">= 0.8x",
      met: (m) => m >= 0.8,
    },
  ];
  if (!peerSkipped) {
    figures.push(
      {
        name: "mcphub/supergateway, sequential",
        values: peerSeq,
        unit: "x",
        goal: "> 1x (faster than the peer)",
        met: (m) => m > 1,
      },
      {
        name: `mcphub/supergateway, ${IN_FLIGHT} in flight`,
        values: peerFly,
        unit: "x",
        goal: "> 1x (faster than the peer)",
        met: (m) => m > 1,
      },
    );
  }
  figures.push(
    {
      name: "peak RSS, 100 MB result spooled",
      values: spooled,
      unit: "x",
      goal: "<= 2x the payload",
      met: (m) => m <= 2,
    },
    {
      name: "peak RSS, 100 MB result passed",
      values: passed,
      unit: "x",
      goal: "<= 2x the payload",
      met: (m) => m <= 2,
    },
    {
      name: "cold start vs minimal SDK server",
      values: cold,
      unit: "x",
      goal: "<= 1.3x",
      met: (m) => m <= 1.3,
    },
    {
      name: "echo delay during a 100 MB spool",
      values: delay,
      unit: "ms",
      goal: "<= ~50 ms",
      met: (m) => m <= 50,
    },
  );
  figures.push(
    { name: "floor: raw relay/direct, sequential", values: floor.raw, unit: "x" },
    { name: "floor: JSON relay/direct, sequential", values: floor.json, unit: "x" },
    { name: `floor: raw relay/direct, ${IN_FLIGHT} in flight`, values: floor.rawFly, unit: "x" },
    { name: `floor: JSON relay/direct, ${IN_FLIGHT} in flight`, values: floor.jsonFly, unit: "x" },
    { name: "gateway/JSON relay, sequential", values: overJson.seq, unit: "x" },
    { name: `gateway/JSON relay, ${IN_FLIGHT} in flight`, values: overJson.fly, unit: "x" },
  );
  console.log(`\n#16 goals, median of ${rounds} round${rounds === 1 ? "" : "s"} (the rounds in brackets):`);
  for (const f of figures) {
    const m = median(f.values);
    console.log(
      `${f.name.padEnd(40)} ${show(m, f.unit).padStart(7)}  [${
        f.values.map((v) => show(v, f.unit)).join(", ")
      }]` +
        (f.goal ? `  goal ${f.goal}: ${f.met!(m) ? "met" : "NOT met"}` : "  (context: no goal)"),
    );
  }
  if (peerSkipped) console.log(`mcphub/peer: skipped (${peerSkipped})`);
  return figures;
}

if (import.meta.main) await main(Deno.args);
