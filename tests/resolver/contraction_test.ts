import assert from "node:assert/strict";
import { buildIndex, rankQuery } from "../../src/resolver/mod.ts";
import { parseQuery } from "../../src/resolver/query.ts";
import { catalogFromJson } from "../../scripts/eval_resolver.ts";

const DATA = new URL("../../scripts/bench/data/", import.meta.url);

Deno.test("a contraction typed without its apostrophe is a stop word, as it is with one (234)", () => {
  const typed = (q: string) => parseQuery(q).terms.filter((t) => !t.expansion).map((t) => t.term);
  assert.deepEqual(typed("whats the status? im sure it cant wait, dont need it"), ["status", "wait"]);
  assert.deepEqual(typed("what's the status?"), typed("whats the status?"));
});

Deno.test("'whats their shipping address' asks for the address, not for 'whats' (234)", async () => {
  // Xero, Paddle, Attio, Shopify and Chatwork as recorded from their live `tools/list` (89 tools).
  const index = buildIndex(
    catalogFromJson(JSON.parse(await Deno.readTextFile(new URL("blind11_catalog.json", DATA)))),
  );
  assert.equal(
    rankQuery(index, "store customer 7739120455 — whats their shipping address and recent orders?").hits[0]
      ?.tool
      .namespaced,
    "shopify__get_customer",
  );
});
