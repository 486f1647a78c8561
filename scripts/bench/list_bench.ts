/**
 * What validating the `tools/list` answer of one downstream server that lists 100,000 tools costs the
 * gateway's event loop: a hub (no pin store) starts `tests/fixtures/hostile_server.ts --mode many` and
 * builds its catalog while a 1 ms ticker runs; its longest gap is the longest hold. Two ways, each in a
 * fresh process:
 *
 * - `whole`: the page validated in one piece (`ListToolsResultSchema`, as `Client.listTools` does);
 * - `sliced`: what the hub does now (`listToolsPage`: tool by tool, in slices, for pages over 1,000 tools).
 *
 * Reported per way, medians of the rounds: the longest hold from start to the catalog built, the longest
 * hold while the page was being validated (the ticker's gaps between the answer's arrival and the end of
 * its validation; the whole validation when whole), and that validation's wall time.
 *
 * ```sh
 * flock /tmp/mcphub-bench.lock deno run -A scripts/bench/list_bench.ts [--tools 100000] [--rounds 3]
 * ```
 *
 * @module
 */
import { parseArgs } from "node:util";
import { Hub } from "../../src/hub/mod.ts";
import { Client } from "../../src/hub/sdk.ts";
import { listSlicing } from "../../src/hub/list_tools.ts";
import { manyToolsConfig, median, runChild } from "./_child.ts";

type Way = "whole" | "sliced";

interface Run {
  listHoldMs: number;
  holdMs: number;
  listMs: number;
}

async function child(way: Way, tools: number): Promise<Run> {
  if (way === "whole") listSlicing.minTools = Infinity;
  // The validation window: from the answer's arrival (the request's promise settles) to the page's end.
  let window: [number, number] | undefined;
  const proto = Client.prototype as unknown as {
    request(...a: unknown[]): Promise<unknown>;
    cacheToolMetadata(t: unknown): void;
  };
  const request = proto.request;
  proto.request = async function (this: unknown, ...a: unknown[]) {
    const r = await request.apply(this, a);
    if ((a[0] as { method?: string }).method === "tools/list") window = [performance.now(), 0];
    return r;
  };
  const cache = proto.cacheToolMetadata;
  proto.cacheToolMetadata = function (this: unknown, t: unknown) {
    if (window) window[1] = performance.now();
    return cache.call(this, t);
  };
  const hub = new Hub({
    config: manyToolsConfig(tools),
    env: Deno.env.toObject(),
    version: "bench",
    log: () => {},
  });
  const gaps: [number, number][] = [];
  let last = performance.now();
  const ticker = setInterval(() => {
    const now = performance.now();
    gaps.push([last, now]);
    last = now;
  }, 1);
  try {
    await hub.start();
    await new Promise((resolve) => setTimeout(resolve, 50));
    await hub.catalogAsync();
    await new Promise((resolve) => setTimeout(resolve, 5));
  } finally {
    clearInterval(ticker);
    await hub.close();
  }
  const [ls, le] = window!;
  const hold = (g: [number, number]) => g[1] - g[0];
  return {
    listHoldMs: way === "whole"
      ? le - ls
      : Math.max(0, ...gaps.filter((g) => g[0] >= ls && g[1] <= le).map(hold)),
    holdMs: Math.max(...gaps.map(hold)),
    listMs: le - ls,
  };
}

function inChild(way: Way, tools: number): Promise<Run> {
  return runChild<Run>(import.meta.filename!, ["--child", way, "--tools", String(tools)], way);
}

/** Runs the benchmark and prints one line per way. */
export async function main(argv: string[] = []): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      tools: { type: "string", default: "100000" },
      rounds: { type: "string", default: "3" },
      child: { type: "string" },
    },
  });
  const tools = Number(values.tools);
  if (values.child) {
    console.log(JSON.stringify(await child(values.child as Way, tools)));
    Deno.exit(0);
  }
  const runs = new Map<Way, Run[]>();
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const way of ["whole", "sliced"] as const) {
      runs.set(way, [...runs.get(way) ?? [], await inChild(way, tools)]);
    }
  }
  console.log(`${tools.toLocaleString("en")} tools on one server, medians of ${values.rounds} rounds`);
  for (const [way, rs] of runs) {
    const m = (f: (r: Run) => number) => median(rs.map(f)).toFixed(0).padStart(6);
    console.log(
      `${way.padEnd(7)} longest hold validating tools/list ${m((r) => r.listHoldMs)} ms; ` +
        `validation took ${m((r) => r.listMs)} ms; start to catalog, longest hold ${m((r) => r.holdMs)} ms`,
    );
  }
}

if (import.meta.main) await main(Deno.args);
