/**
 * What hostile tool metadata costs the gateway's event loop. On a synthetic catalog (default 100,000
 * tools) plus one tool whose description is 256 KiB of capital "D"s: the longest time the event loop
 * was held while the resolver index is built in slices (what the hub does) against the synchronous
 * build of the same index in the same run (the baseline: it holds the loop for the whole build); and
 * did-you-mean for a 3,000-character unknown name.
 *
 * ```sh
 * deno run -A scripts/bench/hostile_bench.ts [--tools 100000]
 * ```
 *
 * @module
 */
import { parseArgs } from "node:util";
import { buildCatalog, CatalogIndex } from "../../src/catalog/mod.ts";
import { buildIndex, buildIndexAsync, catalogRevisionAsync } from "../../src/resolver/mod.ts";
import { syntheticCatalog } from "./resolver_bench.ts";

/** Runs `work` while a 1 ms ticker measures the longest gap between its ticks. */
async function longestBlock(work: () => Promise<unknown>): Promise<{ ms: number; maxGap: number }> {
  let last = performance.now();
  let maxGap = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    maxGap = Math.max(maxGap, now - last);
    last = now;
  }, 1);
  const t0 = performance.now();
  await work();
  const ms = performance.now() - t0;
  // One more tick, so a block at the very end is counted.
  await new Promise((resolve) => setTimeout(resolve, 5));
  clearInterval(ticker);
  return { ms, maxGap: Math.max(maxGap, performance.now() - last) };
}

export async function main(args: readonly string[] = Deno.args): Promise<void> {
  const { values } = parseArgs({
    args: [...args],
    options: { tools: { type: "string", default: "100000" } },
  });
  const { servers } = syntheticCatalog(Number(values.tools), 1);
  servers.push({
    name: "hostile",
    description: "",
    tags: [],
    useWhen: [],
    toolUseWhen: {},
    tools: [{
      name: "SHOUT".repeat(600),
      description: "D".repeat(256 * 1024),
      inputSchema: { type: "object" },
    }],
  });
  const tools = buildCatalog(servers);
  console.log(`${tools.length.toLocaleString("en")} tools, one with a 256 KiB run of capitals`);

  const sync = await longestBlock(() => Promise.resolve(buildIndex(tools)));
  const sliced = await longestBlock(() => Promise.all([buildIndexAsync(tools), catalogRevisionAsync(tools)]));
  console.log(
    `index build, synchronous (baseline): ${sync.ms.toFixed(0)} ms, event loop held ${
      sync.maxGap.toFixed(0)
    } ms`,
  );
  console.log(
    `index build in slices (the hub):     ${sliced.ms.toFixed(0)} ms, event loop held at most ${
      sliced.maxGap.toFixed(0)
    } ms (${(sliced.maxGap / sync.maxGap).toFixed(3)}x the baseline's hold; ${
      (sliced.ms / sync.ms).toFixed(2)
    }x its time)`,
  );
  const index = new CatalogIndex(tools);
  const t0 = performance.now();
  index.closest("Q".repeat(3000));
  const short = performance.now();
  index.closest("github__craete_issue");
  const t1 = performance.now();
  console.log(
    `did-you-mean: a 3,000-character unknown name ${(short - t0).toFixed(0)} ms, a 20-character one ${
      (t1 - short).toFixed(0)
    } ms`,
  );
}

if (import.meta.main) await main();
