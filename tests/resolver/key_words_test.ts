import assert from "node:assert/strict";
import { buildIndex, search } from "../../src/resolver/mod.ts";
import { parseQuery } from "../../src/resolver/query.ts";
import { catalogFromJson } from "../../scripts/eval_resolver.ts";

const tool = (name: string, description: string) => ({ name, description, inputSchema: { type: "object" } });
const server = (name: string, tools: ReturnType<typeof tool>[]) => ({ name, tags: [], useWhen: [], tools });

Deno.test("the name in a key ('PAY-481', 'redis-0') or a channel ('#random') weighs as quoted text (issue #42)", () => {
  const weight = (q: string, term: string) => parseQuery(q).terms.find((t) => t.term === term)?.weight;
  assert.equal(weight("whats the status of PAY-481 in jira", "pay"), 0.5);
  assert.equal(weight("run env inside the redis-0 pod", "redis"), 0.5);
  assert.equal(weight("give the announcement in #random a tada reaction", "random"), 0.5);
  // Used outside the key too, the word is the request's own.
  assert.ok(weight("restart the redis pod redis-0", "redis")! > 0.5);
  assert.equal(weight("pick a random number", "random"), 1);
});

Deno.test("a channel's name does not pick a tool by its word (issue #42)", async () => {
  const blind6 = JSON.parse(
    await Deno.readTextFile(new URL("../../scripts/bench/data/blind6_catalog.json", import.meta.url)),
  );
  const random = server("random-number", [
    tool("random_int", "Generate a random integer between low and high (inclusive)."),
    tool("random_float", "Generate a random float between low and high."),
    tool("random_shuffle", "Return a new list with items in random order."),
    tool("secure_random_int", "Generate a secure random integer below upper_bound."),
  ]);
  const index = buildIndex(catalogFromJson({ servers: [...blind6.servers, random] }));
  const first = (q: string) => search(index, q, { maxHits: 1 })[0]?.tool.namespaced;
  assert.equal(first("give the announcement in #random a tada reaction"), "slack__reactions_add");
  assert.equal(first("give me a random integer between 1 and 6"), "random-number__random_int");
});
