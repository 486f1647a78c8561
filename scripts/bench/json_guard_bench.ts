/**
 * The cost of the JSON guard (src/json/guard.ts) against V8's own JSON.parse, on tool-call answers of
 * 1 KB, 100 KB and 10 MB: plain text (no backslash), text full of escapes (JSON written inside a text:
 * `\"` and `\n` everywhere, the common case that takes the scan), and one escaped key (mcphub's own
 * parser). Native and guarded are timed interleaved, in rounds; the medians and their ratio are printed.
 *
 * Usage: flock /tmp/mcphub-bench.lock deno run -A scripts/bench/json_guard_bench.ts [--rounds N]
 *
 * @module
 */
import { parseArgs } from "node:util";
import { guardedJsonParse } from "../../src/json/mod.ts";
import { nativeParse } from "../../src/json/safe_json.ts";

const { values } = parseArgs({ args: Deno.args, options: { rounds: { type: "string", default: "7" } } });
const ROUNDS = Number(values.rounds);

/** A tools/call answer whose text is about `bytes` long. */
function answer(bytes: number, kind: "plain" | "escapes" | "escaped key"): string {
  const unit = kind === "plain"
    ? "The quick brown fox jumps over the lazy dog, 0123456789. "
    : JSON.stringify({ name: "row", value: 'a "quoted" word', note: "line\nbreak" }) + "\n";
  const text = unit.repeat(Math.max(1, Math.round(bytes / unit.length)));
  const meta = kind === "escaped key" ? String.raw`,"_meta":{"caf\u00e9":1}` : "";
  return `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":${
    JSON.stringify(text)
  }}]${meta}}}`;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** Microseconds per parse of `text` by `parse`, over enough repetitions to last ~50 ms. */
function time(parse: (text: string) => unknown, text: string, reps: number): number {
  const start = performance.now();
  for (let i = 0; i < reps; i++) parse(text);
  return (performance.now() - start) * 1000 / reps;
}

console.log("size     kind          native µs   guarded µs   guarded/native");
for (const bytes of [1_000, 100_000, 10_000_000]) {
  for (const kind of ["plain", "escapes", "escaped key"] as const) {
    const text = answer(bytes, kind);
    const once = time(nativeParse, text, 1);
    const reps = Math.max(1, Math.min(20_000, Math.round(50_000 / Math.max(once, 1))));
    for (let i = 0; i < 3; i++) {
      time(guardedJsonParse, text, reps);
      time(nativeParse, text, reps);
    }
    const native: number[] = [];
    const guarded: number[] = [];
    const ratios: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // Alternating which goes first, so that a slowdown of the machine hits both alike.
      const first = round % 2 ? nativeParse : guardedJsonParse;
      const a = time(first, text, reps);
      const b = time(first === nativeParse ? guardedJsonParse : nativeParse, text, reps);
      const [n, g] = first === nativeParse ? [a, b] : [b, a];
      native.push(n);
      guarded.push(g);
      ratios.push(g / n);
    }
    console.log(
      `${String(bytes).padEnd(9)}${kind.padEnd(14)}${median(native).toFixed(1).padStart(10)}${
        median(guarded).toFixed(1).padStart(13)
      }${median(ratios).toFixed(2).padStart(17)}`,
    );
  }
}
