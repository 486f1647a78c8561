/**
 * Runs the benchmarks in `scripts/bench/`, one after the other, each under a header.
 *
 * Usage: deno run -A scripts/bench/mod.ts [name…] (or `deno task bench [name…]`), where a name is one of
 * `goals`, `gateway`, `http`, `peer`, `first_list`, `spool`, `spool_e2e`, `context`, `soak`, `resolver`,
 * `hostile`, `pin`, `list`, `livemcpbench`, `heldout`, `pg_store`, `shared_quota`, `relay_floor`, `code_mode`, `otel`, `bounds`, `era` (a file name such as `gateway_bench.ts`
 * also works), or `all` for every one of them. No name runs `goals`: issue #16's figures, each the median
 * of 3 rounds against its goal (see goals_bench.ts). A failing benchmark is reported and the others still
 * run; the exit code is then 1. An unknown name exits with 2.
 *
 * @module
 */
import { descendants } from "../../tests/helpers.ts";
import * as codeMode from "./code_mode_bench.ts";
import * as bounds from "./bounds_bench.ts";
import * as context from "./context_bench.ts";
import * as era from "./era_bench.ts";
import * as firstList from "./first_list_bench.ts";
import * as gateway from "./gateway_bench.ts";
import * as goals from "./goals_bench.ts";
import * as heldout from "./heldout.ts";
import * as hostile from "./hostile_bench.ts";
import * as http from "./http_bench.ts";
import * as list from "./list_bench.ts";
import * as otel from "./otel_bench.ts";
import * as livemcpbench from "./livemcpbench.ts";
import * as peer from "./peer_bench.ts";
import * as pgStore from "./pg_store_bench.ts";
import * as pin from "./pin_bench.ts";
import * as relayFloor from "./relay_floor_bench.ts";
import * as sharedQuota from "./shared_quota_bench.ts";
import * as resolver from "./resolver_bench.ts";
import * as soak from "./soak_bench.ts";
import * as spool from "./spool_bench.ts";
import * as spoolE2e from "./spool_e2e_bench.ts";

/** One benchmark module. */
export interface Benchmark {
  name: string;
  file: string;
  /** Runs it with default options (never with this runner's own arguments). */
  run(): unknown;
}

/** Every benchmark, in run order (static imports: STYLE forbids computed import specifiers). */
export const BENCHMARKS: readonly Benchmark[] = [
  { name: "goals", file: "goals_bench.ts", run: () => goals.main([]) },
  { name: "gateway", file: "gateway_bench.ts", run: () => gateway.main() },
  { name: "http", file: "http_bench.ts", run: () => http.main() },
  { name: "peer", file: "peer_bench.ts", run: () => peer.main() },
  { name: "first_list", file: "first_list_bench.ts", run: () => firstList.main([]) },
  { name: "spool", file: "spool_bench.ts", run: () => spool.main() },
  { name: "spool_e2e", file: "spool_e2e_bench.ts", run: () => spoolE2e.main() },
  { name: "context", file: "context_bench.ts", run: () => context.main() },
  { name: "soak", file: "soak_bench.ts", run: () => soak.main() },
  { name: "resolver", file: "resolver_bench.ts", run: () => resolver.main([]) },
  { name: "hostile", file: "hostile_bench.ts", run: () => hostile.main([]) },
  { name: "pin", file: "pin_bench.ts", run: () => pin.main([]) },
  { name: "list", file: "list_bench.ts", run: () => list.main([]) },
  { name: "livemcpbench", file: "livemcpbench.ts", run: () => livemcpbench.main([]) },
  { name: "heldout", file: "heldout.ts", run: () => heldout.main([]) },
  { name: "pg_store", file: "pg_store_bench.ts", run: () => pgStore.main([]) },
  { name: "shared_quota", file: "shared_quota_bench.ts", run: () => sharedQuota.main([]) },
  { name: "relay_floor", file: "relay_floor_bench.ts", run: () => relayFloor.main() },
  { name: "code_mode", file: "code_mode_bench.ts", run: () => codeMode.main() },
  { name: "otel", file: "otel_bench.ts", run: () => otel.main() },
  { name: "bounds", file: "bounds_bench.ts", run: () => bounds.main([]) },
  { name: "era", file: "era_bench.ts", run: () => era.main([]) },
];

/**
 * The benchmarks `names` select (`goals` when empty, every one for `all`); throws a `RangeError` on an
 * unknown name.
 */
export function select(names: readonly string[]): Benchmark[] {
  if (!names.length) names = ["goals"];
  if (names.includes("all")) return [...BENCHMARKS];
  return names.map((name) => {
    const bench = BENCHMARKS.find((b) =>
      b.name === name || b.file === name || b.file === `${name}.ts` || b.file === name.split("/").pop()
    );
    if (!bench) {
      throw new RangeError(
        `Unknown benchmark "${name}": choose from ${BENCHMARKS.map((b) => b.name).join(", ")}`,
      );
    }
    return bench;
  });
}

/** Kills processes a benchmark left behind (they are ours: children of this runner). */
async function reapLeftovers(name: string): Promise<void> {
  let left = descendants(Deno.pid);
  for (let i = 0; i < 100 && left.length; i++) {
    await new Promise((r) => setTimeout(r, 50));
    left = descendants(Deno.pid);
  }
  if (!left.length) return;
  console.error(`warning: ${name} left ${left.length} process(es) behind; killing them`);
  for (const pid of left) {
    try {
      Deno.kill(pid, "SIGKILL");
    } catch {
      // exited meanwhile
    }
  }
}

/** Runs the selected benchmarks; returns the names of those that failed. */
export async function main(names: readonly string[] = Deno.args): Promise<string[]> {
  const failed: string[] = [];
  for (const bench of select(names)) {
    console.log(`\n== ${bench.name} (scripts/bench/${bench.file}) ==`);
    const t0 = performance.now();
    try {
      await bench.run();
    } catch (error) {
      failed.push(bench.name);
      console.error(`${bench.name} failed: ${error instanceof Error ? error.stack ?? error.message : error}`);
    } finally {
      await reapLeftovers(bench.name);
    }
    console.log(`-- ${bench.name}: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }
  if (failed.length) console.error(`\nFailed: ${failed.join(", ")}`);
  return failed;
}

if (import.meta.main) {
  try {
    if ((await main()).length) Deno.exitCode = 1;
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    console.error(error.message);
    Deno.exitCode = 2;
  }
}
