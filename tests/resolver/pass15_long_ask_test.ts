/**
 * The fifteenth ranking pass, part A (issue #42, changes 340–359): long and conversational requests, a story
 * first and the ask after it. What a user relies on: the tool that does what the asking clause says comes
 * first, and an off-topic story stays declined.
 */
import assert from "node:assert/strict";
import { assess, rankQuery, type ResolverIndex } from "../../src/resolver/mod.ts";
import { benchIndex, serverIndex, tool } from "./_bench_catalog.ts";

/** `resolve_tool`'s status and first tool for a request. */
function route(index: ResolverIndex, request: string): [string, string | undefined] {
  const ranked = rankQuery(index, request, { maxHits: 5 });
  return [assess(ranked).status, ranked.hits[0]?.tool.short];
}

/** An excerpt of a recipe server whose tools are named after the server: `recipe_get` is `get`. */
const recipes = () =>
  serverIndex("recipe", "Recipes from many sources, cook mode and pantry tracking", [
    tool("recipe_get", "Get full recipe details by ID or URL. Returns title, author, ingredients and steps."),
    tool("recipe_search", "Search for recipes across all configured sources."),
    tool("recipe_log", "Log a recipe as cooked. Track what you make and when."),
    tool("recipe_tag", "Add custom tags to a saved favorite, like weeknight or date-night."),
  ]);

Deno.test("340: a tool named by one generic verb, met by that verb alone, is no field match (#42)", () => {
  // "get" here is what the user got, not a thing to fetch: the recipe tool named `get` does not answer it.
  assert.equal(route(recipes(), "how much sleep did I get")[0], "no_match");
  assert.equal(route(recipes(), "did I get enough sleep")[0], "no_match");
  // Its own object named with the verb still answers: "get" and "recipe".
  assert.deepEqual(route(recipes(), "get the recipe 52772")[1], "get");
});

Deno.test('342: "I\'d like you to X", "we want you to X" ask for X, as "I\'d like to X" does (#42)', async () => {
  const reference = await benchIndex("plain_catalog.json");
  assert.equal(route(reference, "I'd like you to connect Giulia and Smile Studio")[1], "create_relations");
  assert.ok(
    ["add_observations", "create_entities"].includes(
      route(reference, "we want you to remember Ana's birthday")[1]!,
    ),
  );
  assert.ok(route(reference, "I'd like you to forget Kevin Marsh")[1]!.startsWith("delete_"));
});
