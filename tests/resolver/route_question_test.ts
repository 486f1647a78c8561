import assert from "node:assert/strict";
import { buildCatalog } from "../../src/catalog/mod.ts";
import { buildIndex, rankQuery } from "../../src/resolver/mod.ts";
import { parseQuery, ROUTE_QUESTION, ROUTE_TERMS, ROUTE_WEIGHT } from "../../src/resolver/query.ts";
import { stem } from "../../src/resolver/tokenize.ts";

Deno.test("ROUTE_QUESTION matches questions of how to reach a place, not other how-to questions", () => {
  for (
    const text of [
      "how do I get to the Louvre",
      "tell me how to get there",
      "How can we get from Shibuya to Asakusa?",
      "how should we travel from Oakland",
      "how to walk to the station",
    ]
  ) {
    assert.ok(ROUTE_QUESTION.test(text), text);
  }
  for (
    const text of [
      "how do I get the logs of run 42",
      "how to get the current time in Tokyo",
      "how long does it take to drive from Lyon to Geneva",
      "get directions to the Louvre",
    ]
  ) {
    assert.equal(ROUTE_QUESTION.test(text), false, text);
  }
});

Deno.test("parseQuery() implies directions for a route question, credited to its verb", () => {
  const q = parseQuery("I am at the museum, tell me how to get there");
  const get = q.stems.indexOf(stem("get"));
  assert.ok(get >= 0);
  for (const term of ROUTE_TERMS) {
    assert.deepEqual(q.terms.find((t) => t.term === term), {
      term,
      weight: ROUTE_WEIGHT,
      origins: [get],
      expansion: true,
    });
  }
  const plain = parseQuery("how do I get the logs of run 42");
  assert.equal(plain.terms.some((t) => ROUTE_TERMS.includes(t.term)), false);
});

Deno.test("rankQuery() ranks the directions tool first for a route question", () => {
  const schema = (name: string, description: string) => ({
    type: "object",
    properties: { [name]: { type: "string", description } },
  });
  const tools = buildCatalog([{
    name: "maps",
    tags: [],
    useWhen: [],
    tools: [
      {
        name: "search_places",
        description: "Search for places such as restaurants or shops near a location.",
        inputSchema: schema("query", "What to look for, and where"),
      },
      {
        name: "get_directions",
        description: "Directions between two points, by car, on foot or by public transport.",
        inputSchema: schema("origin", "Starting point"),
      },
      {
        name: "get_place_details",
        description: "Get the opening hours, rating and address of a place.",
        inputSchema: schema("place_id", "The place's id"),
      },
    ],
  }]);
  const index = buildIndex(tools);
  const top = (q: string) => rankQuery(index, q, { maxHits: 3 }).hits.map((h) => h.tool.tool);
  assert.equal(top("how do I get to the Louvre from Gare du Nord")[0], "get_directions");
  assert.notEqual(top("I get to the Louvre at noon, what is there to see")[0], "get_directions");
});
