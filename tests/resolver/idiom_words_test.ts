import assert from "node:assert/strict";
import { buildCatalog } from "../../src/catalog/mod.ts";
import { buildIndex, search } from "../../src/resolver/mod.ts";
import { idiomWords } from "../../src/resolver/actions.ts";
import { parseQuery } from "../../src/resolver/query.ts";

const tool = (name: string, description: string) => ({ name, description, inputSchema: { type: "object" } });
const server = (name: string, tools: ReturnType<typeof tool>[]) => ({ name, tags: [], useWhen: [], tools });

Deno.test("idiomWords() finds the words of an idiom whose action is not its verb's (issue #42)", () => {
  assert.deepEqual(idiomWords("keep that in mind for later"), {
    verbs: new Set(["keep"]),
    others: new Set(["mind"]),
  });
  assert.deepEqual(idiomWords("pull up the entries for Alice"), {
    verbs: new Set(["pull"]),
    others: new Set(),
  });
  assert.deepEqual(idiomWords("keep track of the fact that Alice manages Bob"), {
    verbs: new Set(["keep"]),
    others: new Set(["track"]),
  });
  // "search for" searches as "search" does: no idiom.
  assert.deepEqual(idiomWords("search for the invoice"), { verbs: new Set(), others: new Set() });
});

Deno.test("an idiom's words name its action, not an object: no mind map, no pull request (issue #42)", () => {
  // "pull" is no spelling of a pull request in "pull up".
  assert.ok(!parseQuery("pull up the entries for Alice and Bob").terms.some((t) => t.term === "pr"));
  assert.ok(parseQuery("review the pull request").terms.some((t) => t.term === "pr"));
  const index = buildIndex(buildCatalog([
    server("chart", [
      tool(
        "generate_mind_map",
        "Generate a mind map chart to organize information in a hierarchical structure",
      ),
      tool("generate_bar_chart", "Generate a bar chart"),
    ]),
    server("memory", [
      tool("create_entities", "Create multiple new entities in the knowledge graph"),
      tool("add_observations", "Add new observations to existing entities in the knowledge graph"),
    ]),
  ]));
  const first = (q: string) => search(index, q, { maxHits: 1 })[0]?.tool.namespaced;
  assert.equal(
    first("fyi Carlos works at Globex now, keep that in mind for later"),
    "memory__add_observations",
  );
  assert.equal(first("draw a mind map of the project plan"), "chart__generate_mind_map");
});
