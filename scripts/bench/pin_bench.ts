/**
 * What pinning one downstream server that lists 100,000 tools costs the gateway's event loop: a hub
 * with a SQLite pin store starts `tests/fixtures/hostile_server.ts --mode many` and builds its catalog;
 * a 1 ms ticker's longest gap is the longest hold. Two ways, each in a fresh process, on first sight (an
 * empty store) and on a later start (the same store):
 *
 * - `whole`: the pin check in one piece (`PinStore.check`, the hub before pin checks were sliced);
 * - `sliced`: what the hub does now (`PinStore.checkSteps`, taken in the catalog build's slices).
 *
 * Reported per way and start, medians of the rounds: the longest hold strictly inside the pin check (a
 * 1 ms ticker's gaps between its first and last slice; the whole check when whole) and its longest
 * single step, the longest hold from start to the catalog built (the tools/list parse and validation
 * and the rest of the catalog build included), and the pin check's wall time.
 *
 * ```sh
 * flock /tmp/mcphub-bench.lock deno run -A scripts/bench/pin_bench.ts [--tools 100000] [--rounds 3]
 * ```
 *
 * @module
 */
import { parseArgs } from "node:util";
import { Hub } from "../../src/hub/mod.ts";
import { type PinStore, toolPinMigrations, ToolPins } from "../../src/trust/mod.ts";
import { openStore } from "../../src/store/mod.ts";
import { gapTicker, manyToolsConfig, median, runChild } from "./_child.ts";

type Way = "whole" | "sliced";

interface Run {
  pinHoldMs: number;
  pieceMs: number;
  holdMs: number;
  pinMs: number;
}

async function child(way: Way, tools: number, db: string): Promise<Run> {
  const store = openStore(db, { migrations: toolPinMigrations });
  const inner = new ToolPins(store);
  let window: [number, number] | undefined;
  let start = 0;
  /** The longest synchronous piece of the pin check (all of it when whole). */
  let piece = 0;
  const pins: PinStore = way === "whole"
    ? {
      check(server, trust, list) {
        start = performance.now();
        try {
          return inner.check(server, trust, list);
        } finally {
          window = [start, performance.now()];
        }
      },
    }
    : {
      check: (server, trust, list) => inner.check(server, trust, list),
      *checkSteps(server, trust, list) {
        start = performance.now();
        try {
          const steps = inner.checkSteps(server, trust, list);
          for (;;) {
            const t = performance.now();
            const r = steps.next();
            piece = Math.max(piece, performance.now() - t);
            if (r.done) return r.value;
            yield;
          }
        } finally {
          window = [start, performance.now()];
        }
      },
    };
  const hub = new Hub({
    config: manyToolsConfig(tools),
    env: Deno.env.toObject(),
    version: "bench",
    log: () => {},
    pins,
  });
  const ticker = gapTicker();
  const gaps = ticker.gaps;
  try {
    await hub.start();
    // The catalog build (and the pin check in it) starts in a macrotask of its own, after the parse.
    await new Promise((resolve) => setTimeout(resolve, 50));
    await hub.catalogAsync();
    await new Promise((resolve) => setTimeout(resolve, 5));
  } finally {
    ticker.stop();
    await hub.close();
    store.close();
  }
  const [ps, pe] = window!;
  const hold = (g: [number, number]) => g[1] - g[0];
  return {
    // Inside the check: a whole check is one hold; a sliced one's holds are the gaps between its slices.
    pinHoldMs: way === "whole"
      ? pe - ps
      : Math.max(0, ...gaps.filter((g) => g[0] >= ps && g[1] <= pe).map(hold)),
    pieceMs: way === "whole" ? pe - ps : piece,
    holdMs: Math.max(...gaps.map(hold)),
    pinMs: pe - ps,
  };
}

function inChild(way: Way, tools: number, db: string): Promise<Run> {
  return runChild<Run>(import.meta.filename!, ["--child", way, "--tools", String(tools), "--db", db], way);
}

/** Runs the benchmark and prints one line per way and start. */
export async function main(argv: string[] = []): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      tools: { type: "string", default: "100000" },
      rounds: { type: "string", default: "3" },
      child: { type: "string" },
      db: { type: "string" },
    },
  });
  const tools = Number(values.tools);
  if (values.child) {
    console.log(JSON.stringify(await child(values.child as Way, tools, values.db!)));
    // Something of the closed hub may keep a timer; the measured run is over.
    Deno.exit(0);
  }
  const runs = new Map<string, Run[]>();
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const way of ["whole", "sliced"] as const) {
      const dir = await Deno.makeTempDir();
      try {
        for (const start of ["first sight", "later start"]) {
          const r = await inChild(way, tools, `${dir}/pins.db`);
          const key = `${way}, ${start}`;
          runs.set(key, [...runs.get(key) ?? [], r]);
        }
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    }
  }
  console.log(`${tools.toLocaleString("en")} tools on one server, medians of ${values.rounds} rounds`);
  for (const [key, rs] of runs) {
    const m = (f: (r: Run) => number) => median(rs.map(f)).toFixed(0).padStart(6);
    console.log(
      `${key.padEnd(22)} longest hold inside the pin check ${m((r) => r.pinHoldMs)} ms ` +
        `(longest step ${m((r) => r.pieceMs)} ms); ` +
        `start to catalog ${m((r) => r.holdMs)} ms; pin check took ${m((r) => r.pinMs)} ms`,
    );
  }
}

if (import.meta.main) await main(Deno.args);
