/**
 * The timing bounds the tests used to assert in wall-clock time (issue 47), each as a ratio against a
 * baseline measured in the same run, so a loaded machine slows both sides alike. Linearity is a doubling
 * ratio: the time on an input of twice the size ÷ the time on the input itself (linear: about 2, quadratic:
 * about 4; goal ≤ 3):
 *
 * - `json` (was tests/json/safe_json_test.ts, 2 s): `hasEscapedKey` + `parseJson` on each MiB of
 *   backslashes, quotes and escaped keys ÷ the same on half a MiB;
 * - `resolver` (was tests/resolver/hostile_text_test.ts, 2 s): each resolver text function, its worst
 *   adversarial input of 1 MiB ÷ the same input of half a MiB; `buildIndex` with a tool of a MiB of "D"s ÷
 *   with half a MiB;
 * - `suggest` (was tests/config/suggest_test.ts, 5 s): `nearest()` of a 3,000-character name and of a
 *   255-character near miss against 200,000 names ÷ against 100,000;
 * - `markers` (was tests/hub/hostile_test.ts, 1 s): `injectionMarkers()` on "read " × 200,000 ÷ × 100,000.
 *
 * And two against a baseline without the load (goal ≤ 25×):
 *
 * - `spill` (was tests/hub/spill_test.ts, 250 ms): the event loop's longest hold (a 1 ms ticker's
 *   longest gap) while a 25 MiB line is split and spilled in 64 KiB chunks ÷ the longest gap of the same
 *   ticker over a loop that only yields, as many times;
 * - `healthy` (was tests/hub/hostile_test.ts, 2 s × 9 and 10 s, and tests/hub/hostile_e2e_test.ts,
 *   5 s): the slowest of 20 `echo` calls to a healthy server through a hub that also started a
 *   1,000,000-deep tool, a 2 MB description and a storm of 20,000 list_changed ÷ the same through a hub
 *   with the healthy server alone. The pin check's bound (was tests/trust/pin_slices_test.ts, 1 s) is
 *   `pin_bench.ts`'s sliced/whole hold.
 *
 * Each figure is the median of `--rounds` (default 3) alternated rounds of case and baseline. It prints one
 * line per figure, with "over" where a ratio passes its goal; like the other benchmarks it does not fail.
 *
 * ```sh
 * deno run -A scripts/bench/bounds_bench.ts [--only json,resolver,suggest,markers,spill,healthy] [--rounds 3]
 * ```
 *
 * @module
 */
import { parseArgs } from "node:util";
import { hasEscapedKey, parseJson } from "../../src/json/mod.ts";
import { LineSplitter } from "../../src/json/lines.ts";
import { nearest } from "../../src/config/suggest.ts";
import { injectionMarkers } from "../../src/trust/injection.ts";
import { buildCatalog } from "../../src/catalog/mod.ts";
import { buildIndex } from "../../src/resolver/mod.ts";
import { parseConfig } from "../../src/config/mod.ts";
import { Hub } from "../../src/hub/mod.ts";
import { mibInputs } from "../../tests/json/_mib_inputs.ts";
import { adversarial, MIB, textFunctions } from "../../tests/resolver/_adversarial.ts";
import { fixtureServers } from "../../tests/resolver/_fixture.ts";
import { tempStore } from "../../tests/spool/_helpers.ts";
import { DENO, FIXTURE, HOSTILE } from "../../tests/helpers.ts";
import { gapTicker, median } from "./_child.ts";

/** A doubling ratio's goal: linear is about 2, quadratic about 4. */
export const GOAL_DOUBLING = 3;

/** The goal of a ratio against an unloaded baseline. */
export const GOAL_RATIO = 25;

/** One figure: a case's time against its baseline's. */
export interface Figure {
  name: string;
  caseMs: number;
  baseMs: number;
  ratio: number;
  goal: number;
}

/** Median times of `f` and `base` over `rounds` alternated rounds, as a figure (the baseline at least 0.05 ms). */
export async function compare(
  name: string,
  f: () => unknown | Promise<unknown>,
  base: () => unknown | Promise<unknown>,
  rounds: number,
  goal = GOAL_DOUBLING,
): Promise<Figure> {
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < rounds; i++) {
    let t0 = performance.now();
    await base();
    b.push(performance.now() - t0);
    t0 = performance.now();
    await f();
    a.push(performance.now() - t0);
  }
  const caseMs = median(a);
  const baseMs = Math.max(median(b), 0.05);
  return { name, caseMs, baseMs, ratio: caseMs / baseMs, goal };
}

function tryParse(text: string): unknown {
  try {
    return parseJson(text);
  } catch (error) {
    return error;
  }
}

async function jsonCase(rounds: number): Promise<Figure[]> {
  const out: Figure[] = [];
  const halves = mibInputs(MIB / 2);
  for (const [i, [label, text]] of mibInputs(MIB).entries()) {
    const half = halves[i]![1];
    out.push(
      await compare(`json: ${label}`, () => (hasEscapedKey(text), tryParse(text)), () => {
        hasEscapedKey(half);
        tryParse(half);
      }, rounds),
    );
  }
  return out;
}

async function resolverCase(rounds: number): Promise<Figure[]> {
  const functions = textFunctions();
  const inputs = adversarial([MIB], MIB);
  const halves = adversarial([MIB / 2], MIB / 2);
  const out: Figure[] = [];
  for (const [label, f] of functions) {
    // The input whose doubling costs most.
    let worst: Figure | undefined;
    for (const [i, [name, input]] of inputs.entries()) {
      const half = halves[i]![1];
      const figure = await compare(`resolver: ${label}(${name})`, () => f(input), () => f(half), rounds);
      if (!worst || figure.ratio > worst.ratio) worst = figure;
    }
    out.push(worst!);
  }
  const evil = (size: number) =>
    buildCatalog([...fixtureServers(), {
      name: "evil",
      description: "E".repeat(size),
      tags: [],
      useWhen: [],
      tools: [{
        name: "hostile",
        description: "D".repeat(size),
        inputSchema: {
          type: "object",
          properties: { ["D".repeat(size)]: { type: "string", description: "aB".repeat(size / 2) } },
        },
      }],
    }]);
  const [whole, half] = [evil(MIB), evil(MIB / 2)];
  out.push(
    await compare(
      "resolver: buildIndex (a MiB of D)",
      () => buildIndex(whole),
      () => buildIndex(half),
      rounds,
    ),
  );
  return out;
}

async function suggestCase(rounds: number): Promise<Figure[]> {
  const names = (n: number) => Array.from({ length: n }, (_, i) => `server${i % 250}__tool_${i}`);
  const long = "b".repeat(255);
  const [many, half] = [[...names(200_000), long], [...names(100_000), long]];
  const miss = long.slice(0, -1) + "c";
  const name = "a".repeat(3000);
  return [
    await compare(
      "suggest: nearest(3,000 chars)",
      () => nearest(name, many),
      () => nearest(name, half),
      rounds,
    ),
    await compare(
      "suggest: nearest(255-char near miss)",
      () => nearest(miss, many),
      () => nearest(miss, half),
      rounds,
    ),
  ];
}

async function markersCase(rounds: number): Promise<Figure[]> {
  const [text, half] = ["read ".repeat(200_000), "read ".repeat(100_000)];
  return [
    await compare(
      "markers: injectionMarkers(read × 200,000)",
      () => injectionMarkers(text),
      () => injectionMarkers(half),
      rounds,
    ),
  ];
}

/** The longest gap of a 1 ms ticker while `run` runs. */
async function longestHold(run: () => Promise<void>): Promise<number> {
  const ticker = gapTicker();
  ticker.restart();
  try {
    await run();
  } finally {
    ticker.stop();
  }
  return Math.max(0, ...ticker.gaps.map(([a, b]) => b - a));
}

async function spillCase(rounds: number): Promise<Figure[]> {
  const enc = new TextEncoder();
  const spill = async () => {
    using store = tempStore();
    const spool = store.spool({ sliceBytes: 128 * 1024 });
    const splitter = new LineSplitter();
    splitter.scanPath = ["result", "content", "*"];
    splitter.spill = { threshold: () => 0, open: () => spool.writer() };
    splitter.pushRaw(enc.encode('{"result":{"content":[{"type":"text","text":"'));
    for (let i = 0; i < 400; i++) {
      splitter.pushRaw(splitter.alloc(64 * 1024).fill(0x61));
      await splitter.settle();
    }
    splitter.pushRaw(enc.encode('"}]},"jsonrpc":"2.0","id":"mcphub-1"}\n'));
  };
  const idle = async () => {
    for (let i = 0; i < 400; i++) await new Promise((r) => setTimeout(r, 0));
  };
  const holds: number[] = [];
  const bases: number[] = [];
  for (let i = 0; i < rounds; i++) {
    bases.push(await longestHold(idle));
    holds.push(await longestHold(spill));
  }
  const caseMs = median(holds);
  const baseMs = Math.max(median(bases), 1);
  return [{
    name: "spill: longest hold, 25 MiB spilled",
    caseMs,
    baseMs,
    ratio: caseMs / baseMs,
    goal: GOAL_RATIO,
  }];
}

function serverYaml(name: string, args: string[]): string {
  return `  ${name}:\n    command: ${DENO}\n    args: ${JSON.stringify(["run", "-A", ...args])}\n`;
}

/** The slowest of 20 `echo` calls to the healthy server, right after the hub started with `others`. */
async function slowestHealthy(others: string, stateDir: string): Promise<number> {
  const yaml = `servers:\n${serverYaml("good", [FIXTURE, "--name", "good"])}${
    others.replaceAll("STATE", stateDir)
  }`;
  const hub = new Hub({
    config: parseConfig(yaml, "/tmp/mcphub.yaml", { env: { get: () => undefined }, cwd: "/tmp" }),
    env: Deno.env.toObject(),
    version: "bench",
    log: () => {},
  });
  try {
    await hub.start();
    const entry = hub.catalog().find((t) => t.namespaced === "good__echo");
    if (!entry) throw new Error("the healthy server's echo is not mounted");
    let slowest = 0;
    for (let i = 0; i < 20; i++) {
      slowest = Math.max(slowest, await timeAsync(() => hub.call(entry, { text: "hi" }, { via: "mount" })));
    }
    return slowest;
  } finally {
    await hub.close();
  }
}

async function timeAsync(f: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await f();
  return performance.now() - t0;
}

async function healthyCase(rounds: number): Promise<Figure[]> {
  const hostile = serverYaml("deep", [HOSTILE, "--mode", "deep", "--depth", "1000000"]) +
    serverYaml("caps", [HOSTILE, "--mode", "capitals", "--bytes", "2000000"]) +
    serverYaml("storm", [HOSTILE, "--mode", "storm", "--state", "STATE"]);
  const dir = await Deno.makeTempDir({ prefix: "mcphub-bounds-" });
  try {
    const holds: number[] = [];
    const bases: number[] = [];
    for (let i = 0; i < rounds; i++) {
      bases.push(await slowestHealthy("", dir));
      holds.push(await slowestHealthy(hostile, dir));
    }
    const caseMs = median(holds);
    const baseMs = Math.max(median(bases), 0.05);
    return [{
      name: "healthy: slowest echo next to hostile servers",
      caseMs,
      baseMs,
      ratio: caseMs / baseMs,
      goal: GOAL_RATIO,
    }];
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const CASES: Record<string, (rounds: number) => Promise<Figure[]>> = {
  json: jsonCase,
  resolver: resolverCase,
  suggest: suggestCase,
  markers: markersCase,
  spill: spillCase,
  healthy: healthyCase,
};

/** Runs the cases (all, or `--only`), printing one line per figure; returns the figures. */
export async function main(argv: string[] = []): Promise<Figure[]> {
  const { values } = parseArgs({
    args: argv,
    options: { only: { type: "string" }, rounds: { type: "string", default: "3" } },
  });
  const rounds = Number(values.rounds);
  const names = values.only ? values.only.split(",") : Object.keys(CASES);
  const all: Figure[] = [];
  for (const name of names) {
    const run = CASES[name];
    if (!run) throw new RangeError(`Unknown case "${name}": choose from ${Object.keys(CASES).join(", ")}`);
    for (const f of await run(rounds)) {
      all.push(f);
      console.log(
        `${f.name}: ${f.caseMs.toFixed(1)} ms ÷ ${f.baseMs.toFixed(1)} ms baseline = ${
          f.ratio.toFixed(1)
        }× (goal ≤ ${f.goal}×)${f.ratio > f.goal ? "  over" : ""}`,
      );
    }
  }
  return all;
}

if (import.meta.main) await main(Deno.args);
