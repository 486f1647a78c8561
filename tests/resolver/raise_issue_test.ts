import assert from "node:assert/strict";
import { benchIndex } from "./_bench_catalog.ts";
import { rankQuery } from "../../src/resolver/mod.ts";
import { ACTION, requestAction } from "../../src/resolver/actions.ts";

Deno.test("raising or issuing a document, putting one together or drawing one up creates it (235)", () => {
  for (
    const q of [
      "raise an invoice in xero for Brightwater Ltd",
      "raise a ticket for the broken login",
      "issue them the credit in xero",
      "issue a refund for order 1043",
      "can you put together an estimate for Kestrel Farms",
      "draw up a contract for the new hire",
    ]
  ) assert.equal(requestAction(q), ACTION.create, q);
  // Raising "the" limit changes a value: no new thing.
  assert.notEqual(requestAction("raise the rate limit to 500"), ACTION.create);
});

Deno.test("'raise an invoice' and 'issue them the credit' find the creating tools (235)", async () => {
  // Xero, Paddle, Attio, Shopify and Chatwork as recorded from their live `tools/list` (89 tools).
  const index = await benchIndex("blind11_catalog.json");
  const first = (q: string) => rankQuery(index, q).hits[0]?.tool.namespaced;
  assert.equal(
    first("raise an invoice in xero for Brightwater Ltd - 3 days consulting at 650 a day"),
    "xero__create-invoice",
  );
  assert.equal(
    first(
      "Lumen Studio complained, we agreed to knock 80 quid off their last bill. issue them the credit in xero",
    ),
    "xero__create-credit-note",
  );
});
