import assert from "node:assert/strict";
import { editDistance } from "../../src/catalog/mod.ts";
import {
  boundedDistance,
  closest,
  didYouMean,
  nearest,
  SUGGEST_MAX_CHARS,
} from "../../src/config/suggest.ts";

Deno.test("boundedDistance() equals Levenshtein capped at limit + 1", () => {
  const words = [
    "",
    "a",
    "ab",
    "ba",
    "abc",
    "acb",
    "kitten",
    "sitting",
    "servers",
    "server",
    "srevers",
    "tools",
  ];
  for (const a of words) {
    for (const b of words) {
      for (const limit of [0, 1, 2, 3]) {
        assert.equal(
          boundedDistance(a, b, limit),
          Math.min(editDistance(a, b), limit + 1),
          `${a}/${b}/${limit}`,
        );
      }
    }
  }
});

Deno.test("closest() and didYouMean() keep their answers", () => {
  assert.equal(closest("severs", ["servers", "tools"]), "servers");
  assert.equal(closest("tols", ["servers", "tools"]), "tools");
  assert.equal(closest("zzz", ["servers", "tools"]), undefined);
  assert.equal(didYouMean("comand", ["command", "args"]), '; did you mean "command"?');
  assert.equal(didYouMean("x".repeat(SUGGEST_MAX_CHARS + 1), ["x"]), "");
});

Deno.test("nearest() ranks by distance, then name, within the band", () => {
  const names = ["github__create_issue", "github__create_issues", "github__list_issues", "fs__read_file"];
  assert.deepEqual(nearest("github__create_isue", names), ["github__create_issue", "github__create_issues"]);
  assert.deepEqual(nearest("nothing_like_it", names), []);
  assert.deepEqual(nearest("x".repeat(SUGGEST_MAX_CHARS + 1), names), []);
});

// How long these take is timed, as a ratio against a 20-character name, by `deno task bench bounds`.
Deno.test("nearest() on a 3,000-character name against 100k candidates finds none; a 255-character near miss is found", () => {
  const names = Array.from({ length: 100_000 }, (_, i) => `server${i % 250}__tool_${i}`);
  assert.deepEqual(nearest("a".repeat(3000), names), []);
  // The band keeps a 255-character near-miss cheap too.
  const long = "b".repeat(255);
  assert.deepEqual(nearest(long.slice(0, -1) + "c", [...names, long]), [long]);
});
