import assert from "node:assert/strict";
import { buildCatalog } from "../../src/catalog/mod.ts";
import { buildIndex, rankQuery } from "../../src/resolver/mod.ts";
import { parseQuery, SHOPPING, SHOPPING_TERMS, SHOPPING_WEIGHT } from "../../src/resolver/query.ts";
import { stem } from "../../src/resolver/tokenize.ts";

Deno.test("SHOPPING matches requests to buy something, not words that merely contain its verbs", () => {
  for (
    const text of [
      "I want to buy a standing desk",
      "where can I purchase a battery",
      "the best selling robot vacuums",
      "best-selling novels of 2024",
      "is the Kindle on sale this week",
      "help me shop for a gift",
    ]
  ) {
    assert.ok(SHOPPING.test(text), text);
  }
  for (
    const text of ["open it in Photoshop", "the buyer's address", "a workshop on Rust", "sell my old bike"]
  ) {
    assert.equal(SHOPPING.test(text), false, text);
  }
});

Deno.test("parseQuery() implies the web for a request to buy something, credited to its verb", () => {
  const q = parseQuery("I want to buy a standing desk with links");
  const buy = q.stems.indexOf(stem("buy"));
  assert.ok(buy >= 0);
  assert.deepEqual(SHOPPING_TERMS, [stem("web"), stem("browser")]);
  for (const term of SHOPPING_TERMS) {
    assert.deepEqual(q.terms.find((t) => t.term === term), {
      term,
      weight: SHOPPING_WEIGHT,
      origins: [buy],
      expansion: true,
    });
  }
  assert.equal(parseQuery("get the price of AAPL").terms.some((t) => t.term === stem("browser")), false);
});

Deno.test("rankQuery() brings web search up for a request to buy something", () => {
  const tools = buildCatalog([{
    name: "hub",
    tags: [],
    useWhen: [],
    tools: [
      { name: "web_search", description: "Performs a web search for general queries, news and articles." },
      { name: "get_stock_price", description: "Current price of a stock ticker." },
    ],
  }]);
  const index = buildIndex(tools);
  const order = (q: string) => rankQuery(index, q, { maxHits: 3 }).hits.map((h) => h.tool.tool);
  assert.equal(order("where can I buy a standing desk?")[0], "web_search");
  assert.equal(order("what is the price of AAPL stock")[0], "get_stock_price");
});
