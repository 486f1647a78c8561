/**
 * The hostile benchmark's `--trace-gc` attribution: V8's trace lines are parsed (also when two
 * isolates interleave) and each hold is named with the collections that overlap it.
 */
import assert from "node:assert/strict";
import { attribute, parseGcTrace, type WayReport } from "../../scripts/bench/hostile_bench.ts";

const TRACE = [
  "[7:0x55aa]      100 ms: Mark-Compact 5.2 (7.0) -> 4.1 (8.0) MB, pooled: 0.0 MB, 3.00 / 0.00 ms " +
  "(average mu = 1.000, current mu = 1.000) testing; GC in old space requested",
  "[7:0x55aa]     1200 ms: Scavenge (during sweeping) 67.2 (80.1) -> 41.6 (80.1) MB, pooled: 0.0 MB, " +
  "40.00 / 0.00 ms (average mu = 0.963, current mu = 0.963) allocation failure; ",
  "[7:0x55aa]     3000 ms: Incremental Mark-Compact (reduce) 253.9 (294.6) -> 191.1 (227.6) MB, pooled: " +
  "0.0 MB, 70.00 / 0.00 ms (+ 996.7 ms in 1357 steps since start of marking, biggest step 46.4 ms, " +
  "walltime since start of marking 1000 ms) (average mu = 0.963, current mu = 0.966) finalize incremental " +
  "marking via task; GC in old space requested",
  // The worker's line, broken by the main isolate's output, then a whole one.
  "[7:0x7fbb]       50 ms: Scav[7:0x7fbb]      500 ms: Scavenge 12.6 (17.6) -> 10.0 (17.6) MB, pooled: 0.0 MB, " +
  "80.00 / 0.00 ms (average mu = 1.000, current mu = 1.000) allocation failure; ",
].join("\n");

Deno.test("parseGcTrace() reads each collection's isolate, end, kind, pause and marking window", () => {
  const events = parseGcTrace(TRACE);
  assert.deepEqual(events.map((e) => [e.isolate, e.at, e.kind, e.ms]), [
    ["0x55aa", 100, "testing", 3],
    ["0x55aa", 1200, "Scavenge (during sweeping)", 40],
    ["0x55aa", 3000, "Incremental Mark-Compact (reduce)", 70],
    ["0x7fbb", 500, "Scavenge", 80],
  ]);
  assert.equal(events[2]!.biggestStep, 46.4);
  assert.equal(events[2]!.markingWall, 1000);
});

Deno.test("attribute() names the main pause, a marking window and the worker's pause under each hold", () => {
  // The calibrating gc() ended at performance.now() 90, i.e. V8's 100: main clock = now + 10.
  const report = {
    calibration: { gcEnd: 90, buildAt: 95, workerAt: 1000 },
    holds: [
      { step: "catalog", start: 1160, ms: 45, ranMs: 40, waitedMs: 3 },
      { step: "index", start: 2500, ms: 60 },
      { step: "index", start: 1450, ms: 60 },
      { step: "query", start: 5000, ms: 55 },
    ],
  } as unknown as WayReport;
  const lines = attribute(report, parseGcTrace(TRACE));
  assert.deepEqual(lines.slice(0, 4), [
    "catalog@1160+45 [ran 40 ms, waited for a CPU 3 ms, blocked 2 ms]: main Scavenge (during sweeping) 40 ms",
    "index@2500+60: main incremental marking (steps up to 46 ms)",
    "index@1450+60: worker Scavenge 80 ms",
    "query@5000+55: no GC",
  ]);
  assert.match(
    lines[4]!,
    /^main isolate from the build on: 1 Scavenge \(during sweeping\) \(longest 40 ms\), 1 Incremental Mark-Compact \(reduce\) \(longest 70 ms\)$/,
  );
  assert.equal(lines[5], "index worker: 1 Scavenge (longest 80 ms)");
  assert.equal(
    lines[6],
    "of the timed holds over 50 ms, this thread ran at most 40 ms in one, ran or was blocked at most 42 ms " +
      "(the rest of each it waited for a CPU)",
  );
});
