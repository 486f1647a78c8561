import assert from "node:assert/strict";
import { buildIndex, search } from "../../src/resolver/mod.ts";
import { ACTION, requestAction } from "../../src/resolver/actions.ts";
import { catalogFromJson } from "../../scripts/eval_resolver.ts";

const DATA = new URL("../../scripts/bench/data/", import.meta.url);

Deno.test("a one-word tool name used in passing ('the checkout service') no longer puts it first (issue #42)", async () => {
  // blind7 (Datadog, Supabase, …) with heldout2's twenty servers (git's `checkout`, `log`, `show`…).
  const servers = [];
  for (const f of ["blind7_catalog.json", "heldout2_catalog.json"]) {
    servers.push(...JSON.parse(await Deno.readTextFile(new URL(f, DATA))).servers);
  }
  const index = buildIndex(catalogFromJson({ servers }));
  const top = (q: string, n = 1) => search(index, q, { maxHits: n }).map((h) => h.tool.namespaced);
  const latency = top("p99 latency of the checkout service over the last hour, the timeseries please", 3);
  assert.notEqual(latency[0], "git__checkout");
  assert.ok(latency.includes("datadog__query_metrics"));
  // Asked for by its word, the one-word tool is still first.
  assert.deepEqual(top("checkout the main branch"), ["git__checkout"]);
  assert.deepEqual(top("show the git log"), ["git__log"]);
});

Deno.test("returning a thing to someone or somewhere gives it back: no read (issue #42)", () => {
  assert.equal(requestAction("return a package to the post office"), 0);
  assert.equal(requestAction("return the library books to the library"), 0);
  assert.equal(requestAction("return the list of open issues"), ACTION.read);
});
