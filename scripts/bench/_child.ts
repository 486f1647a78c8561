/**
 * What the benchmarks that measure one way per fresh process share: running this same script as a child
 * and reading its one JSON line, the median of the rounds, and the config of one server listing many tools.
 *
 * @module
 */
// The one-server, many-tools config is the tests' own (re-exported for the benches).
export { manyToolsConfig } from "../../tests/helpers.ts";

/** Runs `file` (a benchmark script) again with `args` in a fresh Deno process; parses its stdout as JSON. */
export async function runChild<T>(file: string, args: string[], what: string): Promise<T> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", file, ...args],
    stderr: "inherit",
  }).output();
  if (!out.success) throw new Error(`the ${what} run failed (exit ${out.code})`);
  return JSON.parse(new TextDecoder().decode(out.stdout)) as T;
}

/** The median of `values` (the upper one of an even count). */
export function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/**
 * A 1 ms interval that records every gap between its ticks as `[start, end]` (the event loop's holds);
 * `restart()` forgets the gaps so far and starts the next one now (the time it returns).
 */
export function gapTicker(): { gaps: [number, number][]; restart(): number; stop(): void } {
  const gaps: [number, number][] = [];
  let last = performance.now();
  const ticker = setInterval(() => {
    const now = performance.now();
    gaps.push([last, now]);
    last = now;
  }, 1);
  return {
    gaps,
    restart() {
      last = performance.now();
      gaps.length = 0;
      return last;
    },
    stop: () => clearInterval(ticker),
  };
}
