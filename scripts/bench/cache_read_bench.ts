/**
 * The start's read of a warm tool-list cache, alone: a store holding one server's 100,000-tool list
 * (~30 MB of JSON), read with `StoreToolCache.loadAsync` while a 1 ms ticker runs. Prints one JSON line:
 * the read's wall time and the ticker's longest gap during it (the longest hold).
 *
 * ```sh
 * # this checkout against a baseline checkout (this script copied into its scripts/bench/), alternating:
 * for i in 1 2 3; do for r in BASE .; do (cd $r && flock /tmp/bench.lock \
 *   deno run -A scripts/bench/cache_read_bench.ts); done; done
 * ```
 *
 * @module
 */
import { StoreToolCache, toolCacheMigrations } from "../../src/catalog/tool_cache.ts";
import { openStore } from "../../src/store/mod.ts";
import { gapTicker } from "./_child.ts";

const dir = Deno.makeTempDirSync();
const db = openStore(`${dir}/s.db`, { migrations: toolCacheMigrations });
try {
  const tools = Array.from({ length: 100_000 }, (_, i) => ({
    name: `tool_${i}`,
    description: `Does thing number ${i} with care; see the manual section ${i % 97}. `.repeat(2),
    inputSchema: {
      type: "object",
      properties: { a: { type: "string", description: `arg ${i}` }, b: { type: "number" } },
      required: ["a"],
    },
  }));
  await new StoreToolCache(db).save("s", "f", tools);
  const ticker = gapTicker();
  await new Promise((r) => setTimeout(r, 50));
  const t0 = ticker.restart();
  const list = await new StoreToolCache(db).loadAsync("s", "f");
  const t1 = performance.now();
  ticker.stop();
  if (list?.length !== tools.length) throw new Error("The cached list was not read whole");
  const hold = Math.max(...ticker.gaps.filter((g) => g[0] >= t0).map((g) => g[1] - g[0]));
  console.log(JSON.stringify({ readMs: Math.round(t1 - t0), holdMs: Math.round(hold) }));
} finally {
  db.close();
  Deno.removeSync(dir, { recursive: true });
}
