import assert from "node:assert/strict";
import { buildIndex, rankQuery, stem } from "../../src/resolver/mod.ts";
import { parseQuery } from "../../src/resolver/query.ts";
import { catalogFromJson } from "../../scripts/eval_resolver.ts";

const DATA = new URL("../../scripts/bench/data/", import.meta.url);

Deno.test("what one wrote somewhere and cannot place is searched for (236)", () => {
  const implies = (q: string) => parseQuery(q).terms.some((t) => t.term === stem("search"));
  assert.ok(implies("where in my notes did I write about kubernetes ingress?"));
  assert.ok(implies("i can't remember which file has the budget"));
  assert.ok(implies("I don't recall where I saw the onboarding checklist"));
  assert.equal(implies("write a note about kubernetes ingress"), false);
});

Deno.test("'where in my notes did I write about …' finds the vault search (236)", async () => {
  // Railway, Render, Firebase, Obsidian and Terraform as recorded from their live `tools/list` (79 tools).
  const index = buildIndex(
    catalogFromJson(JSON.parse(await Deno.readTextFile(new URL("blind12_catalog.json", DATA)))),
  );
  assert.equal(
    rankQuery(index, "where in my notes did I write about kubernetes ingress? i cant remember which file")
      .hits[0]
      ?.tool.namespaced,
    "obsidian__search-vault",
  );
});
