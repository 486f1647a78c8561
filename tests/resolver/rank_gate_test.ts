import assert from "node:assert/strict";
import { parseRanking, splitNoise } from "../../scripts/bench/rank_gate.ts";

Deno.test("rank_gate --ranking reads a JSON object of ranking options", () => {
  assert.deepEqual(parseRanking('{"nameBonus":0.9,"weights":{"name":2}}'), {
    nameBonus: 0.9,
    weights: { name: 2 },
  });
});

Deno.test("rank_gate --ranking refuses what is not a JSON object", () => {
  assert.throws(() => parseRanking("{nameBonus:1}"), {
    name: "SyntaxError",
    message: "Cannot use --ranking: not JSON: {nameBonus:1}",
  });
  for (const json of ["[1]", "null", "3"]) {
    assert.throws(() => parseRanking(json), {
      name: "TypeError",
      message: `Cannot use --ranking: expected a JSON object of ranking options: ${json}`,
    });
  }
});

Deno.test("rank_gate's splitNoise: the gaps of random halves, repeatable", () => {
  const flat = splitNoise([0.5, 0.5, 0.5, 0.5], 100);
  assert.equal(flat.median, 0);
  assert.equal(flat.within(0), 1);
  // [0, 0, 1, 1] in halves of two: 2 of the 6 splits put both ones together (gap 1), the rest gap 0.
  const two = splitNoise([0, 0, 1, 1], 30_000);
  assert.ok(Math.abs(two.within(0) - 2 / 3) < 0.02, String(two.within(0)));
  assert.equal(two.within(0.99), two.within(0));
  assert.equal(two.within(1), 1);
  assert.equal(two.p90, 1);
  // Odd counts: the first half is the larger one.
  assert.equal(splitNoise([1, 1, 1], 10).within(0), 1);
  const seeded = (seed: number) => splitNoise([0, 1, 0, 1, 1, 0, 0.5], 500, seed).within(0.2);
  assert.equal(seeded(7), seeded(7));
});
