import assert from "node:assert/strict";
import { assess, buildIndex, HINTS, rankQuery } from "../../src/resolver/mod.ts";
import { fixtureCatalog } from "./_fixture.ts";

const index = buildIndex(fixtureCatalog());

function route(query: string) {
  return assess(rankQuery(index, query, { maxHits: 5 }));
}

Deno.test("assess() is confident when the tool is named and the lead is clear", () => {
  const r = route("list directory");
  assert.equal(r.status, "confident");
  assert.equal(r.confidence, "high");
  assert.ok(r.reasonCodes.includes("exact_name_match"));
  assert.ok(r.reasonCodes.includes("full_term_coverage"));
  assert.equal(r.matchedFraction, 1);
  assert.ok(r.scoreGap > 0.25);
  assert.equal(r.hint, HINTS.confident);
});

Deno.test("assess() is confident for a plain request that covers a tool", () => {
  const r = route("read the contents of a text file");
  assert.equal(r.status, "confident");
  assert.notEqual(r.confidence, "none");
});

Deno.test("assess() ignores an unknown place name when judging coverage", () => {
  const r = route("current time in Reykjavik");
  assert.equal(r.status, "confident");
  assert.equal(r.matchedFraction, 1);
});

Deno.test("assess() stays ambiguous on partial coverage", () => {
  const r = route("read the file and also translate it to french");
  assert.equal(r.status, "ambiguous");
  assert.ok(
    r.reasonCodes.some((c) => c === "low_term_coverage" || c === "multi_step_query"),
    r.reasonCodes.join(),
  );
  assert.ok(r.matchedFraction < 0.6);
  assert.equal(r.hint, HINTS.ambiguous);
});

Deno.test("assess() stays ambiguous when the top two are close", () => {
  const r = route("file");
  assert.equal(r.status, "ambiguous");
  assert.ok(r.reasonCodes.includes("close_scores"), r.reasonCodes.join());
});

Deno.test("assess() answers no_match when nothing matches", () => {
  const r = route("order a pepperoni pizza");
  assert.equal(r.status, "no_match");
  assert.equal(r.confidence, "none");
  assert.match(r.hint, /use_when/);
  assert.match(r.hint, /search_tools/);
  const none = route("zzzqqq");
  assert.deepEqual(none.reasonCodes, ["no_terms_matched"]);
  assert.equal(none.scoreGap, 0);
});

Deno.test("assess() answers no_match for an empty query", () => {
  assert.deepEqual(route("   ").reasonCodes, ["empty_query"]);
  assert.deepEqual(route("the of").reasonCodes, ["empty_query"]);
});

Deno.test("assess() answers no_match when the top hit explains too little of the request", () => {
  const r = route("turn off the living room lights and water the garden");
  assert.equal(r.status, "no_match");
});
