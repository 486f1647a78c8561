import assert from "node:assert/strict";
import { buildCatalog } from "../../src/catalog/mod.ts";
import { buildIndex, rankQuery } from "../../src/resolver/mod.ts";
import { hasPastedIdentifier, IDENTIFIER_WEIGHT } from "../../src/resolver/locators.ts";
import { parseQuery } from "../../src/resolver/query.ts";
import { stem } from "../../src/resolver/tokenize.ts";

Deno.test("hasPastedIdentifier() finds ids with a run of five digits, not years, prices or hashes", () => {
  for (
    const text of [
      "the article on arxiv 2203.12277",
      "summarize NCT04280705",
      "story 44490510",
      "key session:84920155",
    ]
  ) {
    assert.equal(hasPastedIdentifier(text), true, text);
  }
  for (
    const text of ["sales in 2024", "under 1500 dollars", "commit 4f9a2c81b7", "a 300km range", "v1.2.3-beta"]
  ) {
    assert.equal(hasPastedIdentifier(text), false, text);
  }
});

Deno.test("hasPastedIdentifier() stays linear on long runs of dots and digits", () => {
  // Each case would cost quadratic time if a match could start inside a token.
  for (const text of ["1.".repeat(8000) + "/", "1-".repeat(8000), "ab.".repeat(5000) + "x/"]) {
    assert.equal(hasPastedIdentifier(text), false);
  }
});

Deno.test("parseQuery() implies the id term for a pasted identifier, outside paths", () => {
  const id = (text: string) => parseQuery(text).terms.find((t) => t.term === stem("id"));
  assert.deepEqual(id("introduce me to arxiv 2203.12277"), {
    term: stem("id"),
    weight: IDENTIFIER_WEIGHT,
    origins: [],
    expansion: true,
  });
  assert.equal(id("save it to /root/markdown/NCT04280705.md"), undefined);
  assert.equal(id("find papers about web agents"), undefined);
});

Deno.test("rankQuery() lifts the tool that takes an id, not the search, for a pasted identifier", () => {
  const schema = (name: string, description: string) => ({
    type: "object",
    properties: { [name]: { type: "string", description } },
  });
  const tools = buildCatalog([{
    name: "papers",
    tags: [],
    useWhen: [],
    tools: [
      {
        name: "search_papers",
        description: "Find papers by keywords and return their titles.",
        inputSchema: schema("query", "Keywords to search for in the papers"),
      },
      {
        name: "get_paper",
        description: "Get the title, authors and abstract of a paper.",
        inputSchema: schema("paper_id", "The paper's id"),
      },
    ],
  }]);
  const index = buildIndex(tools);
  const scores = (q: string) =>
    Object.fromEntries(rankQuery(index, q, { maxHits: 2 }).hits.map((h) => [h.tool.tool, h.score]));
  const plain = scores("find the paper"), pasted = scores("find the paper 2203.12277");
  assert.equal(pasted.search_papers, plain.search_papers);
  assert.ok(pasted.get_paper! > plain.get_paper! * 1.3, `${pasted.get_paper} vs ${plain.get_paper}`);
});
