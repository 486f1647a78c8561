/**
 * What the benchmarks that measure one way per fresh process share: running this same script as a child
 * and reading its one JSON line, and the median of the rounds.
 *
 * @module
 */

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
