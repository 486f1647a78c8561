import assert from "node:assert/strict";
import { buildIndex, search } from "../../src/resolver/mod.ts";
import { catalogFromJson } from "../../scripts/eval_resolver.ts";

const DATA = new URL("../../scripts/bench/data/", import.meta.url);

/** blind8's catalog: MongoDB's 25 tools nearly all name `connect` and `list-connections` as their first step. */
async function blind8() {
  return buildIndex(
    catalogFromJson(JSON.parse(await Deno.readTextFile(new URL("blind8_catalog.json", DATA)))),
  );
}

Deno.test("a step before nearly anything (`connect`) fills no place of a short request's first three (issue #42)", async () => {
  const index = await blind8();
  const top = (q: string, n = 3) => search(index, q, { maxHits: n }).map((h) => h.tool.namespaced);
  assert.deepEqual(top("drop the temp_import collection"), [
    "mongodb__drop-collection",
    "mongodb__drop-index",
    "mongodb__drop-database",
  ]);
  for (
    const q of ["which indexes exist on the orders collection?", "rename collection clients to customers"]
  ) {
    const first = top(q);
    assert.ok(!first.includes("mongodb__connect") && !first.includes("mongodb__list-connections"), q);
  }
  // Asked for, it is first.
  assert.equal(top("connect to mongodb://localhost:27017", 1)[0], "mongodb__connect");
});
