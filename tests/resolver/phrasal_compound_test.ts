import assert from "node:assert/strict";
import { serverIndex, tool } from "./_bench_catalog.ts";
import { rankQuery, stem } from "../../src/resolver/mod.ts";
import { parseQuery } from "../../src/resolver/query.ts";

// Excerpt of a shop's live `tools/list` (blind11's Shopify).
const index = serverIndex("shopify", "MCP server for Shopify Admin GraphQL API", [
  tool(
    "get_shop",
    "Get information about the shop including name, domain, plan, currency, timezone, and billing address.",
  ),
  tool("get_segments", "List all customer segments defined in the store."),
  tool(
    "get_orders",
    "List orders with optional filtering and pagination. Returns order details including status, totals, " +
      "line items, customer info, and shipping address.",
  ),
  tool(
    "get_abandoned_checkouts",
    "List abandoned checkouts with optional filtering. Returns checkout details including items, customer, " +
      "and recovery URL.",
  ),
  tool(
    "get_code_discounts",
    "List only code-based discounts (requires customer to enter a code at checkout).",
  ),
]);

Deno.test("a phrasal verb also stands for its one-word noun (232)", () => {
  const terms = (q: string) => parseQuery(q).terms.map((t) => t.term);
  assert.ok(terms("carts that never checked out").includes(stem("checkout")));
  assert.ok(terms("set up a new project").includes(stem("setup")));
  assert.ok(terms("when did she last log in").includes(stem("login")));
});

Deno.test("carts people never checked out find the abandoned checkouts (232)", () => {
  const hits = rankQuery(index, "show me the carts ppl filled up on the shop this week but never checked out")
    .hits
    .map((h) => h.tool.tool);
  assert.ok(hits.slice(0, 2).includes("get_abandoned_checkouts"), hits.join(" "));
});
