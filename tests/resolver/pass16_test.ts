/**
 * The sixteenth ranking pass (issue #42, change 481): a thing named by its identifier is one thing, and the
 * tool listing its kind answers something else. (480, routing hints read as no deprecation, was reverted.)
 */
import assert from "node:assert/strict";
import { buildCatalog } from "../../src/catalog/mod.ts";
import { buildIndex, rankQuery, type ResolverIndex } from "../../src/resolver/mod.ts";
import { benchIndex } from "./_bench_catalog.ts";

function tool(name: string, description: string, properties: string[] = []) {
  const props = Object.fromEntries(properties.map((p) => [p, { type: "string" }]));
  return { name, description, inputSchema: { type: "object", properties: props } };
}

function index(name: string, tools: ReturnType<typeof tool>[]): ResolverIndex {
  return buildIndex(buildCatalog([{ name, description: "", tags: [], useWhen: [], tools }]));
}

const first = (i: ResolverIndex, request: string, n = 1) =>
  rankQuery(i, request, { maxHits: n }).hits.map((h) => h.tool.short);

Deno.test("481: a thing named by its identifier is one: the tool listing its kind is not first (#42)", async () => {
  const notes = index("notes", [
    tool(
      "list-pages",
      "Retrieve a list of page objects. Lists all pages across every notebook and section, newest first; " +
        "supports $filter on the page title and $select of page fields.",
      ["top", "filter", "select"],
    ),
    tool("get-page-content", "The page's HTML content.", ["pageId"]),
    tool("delete-page", "Delete a page.", ["pageId"]),
  ]);
  assert.equal(first(notes, "read me back what's on page 1-a1b2c3d4!1-e5f6a7b8")[0], "get-page-content");
  // A list asked for, or no page named, still lists.
  assert.equal(first(notes, "list the pages, newest first")[0], "list-pages");
  // blind20's OneNote tools, as recorded.
  const blind20 = await benchIndex("blind20_catalog.json");
  assert.equal(
    first(blind20, "read me back what's on onenote page 1-a1b2c3d4!1-e5f6a7b8")[0],
    "get-onenote-page-content",
  );
});
