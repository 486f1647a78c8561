import assert from "node:assert/strict";
import { parseRanking } from "../../scripts/bench/rank_gate.ts";

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
