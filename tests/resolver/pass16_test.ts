/**
 * The sixteenth ranking pass (issue #42, changes 480–): what the re-ranking layer costs against its own BM25F
 * core. Each change here is a place where a re-ranking rule fired on text that does not say what the rule reads.
 */
import assert from "node:assert/strict";
import { buildCatalog } from "../../src/catalog/mod.ts";
import { saysDeprecated } from "../../src/resolver/actions.ts";
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

Deno.test("480: a description says a tool is deprecated only of the tool itself (#42)", () => {
  for (
    const said of [
      "Read the complete contents of a file as text. DEPRECATED: Use read_text_file instead.",
      "**DEPRECATED - use get_keyword_full_top instead.** GET Google top-100 positions for keyword.",
      "[Deprecated: Use web_search_advanced_exa instead] Research any company.",
      "Deprecated compatibility wrapper for full-text document search.",
      "Get app logs. Superseded by `logs` (resource=application).",
      "Lists users. This endpoint is deprecated and will be removed in v3.",
      "Fetch a page (deprecated).",
      "Old search. Deprecated in favour of search_v2.",
      "Returns the list of boards.\nUse list_boards_v2 instead.",
    ]
  ) assert.ok(saysDeprecated(said), said);
  for (
    const hint of [
      "Add a public reply to a ticket. For internal notes use add_freshdesk_note instead.",
      "If you need to create multiple items in one call, use create_items instead of calling this tool in a loop.",
      "Using markdown format when extracting specific data points (use JSON instead).",
      "Get all tasks in a project. Use this instead of search_tasks when you need to list tasks.",
      "For specific past dates or date ranges, use get_historical_weather instead.",
      "verbose: objects with formatted values, backward compatible with legacy format. Common Use Cases: …",
      "Check if packages are deprecated.",
      "Update a user. The `nickname` field is deprecated.",
    ]
  ) assert.ok(!saysDeprecated(hint), hint);
});

Deno.test("480: a tool routing some requests to a sibling is not demoted as deprecated (#42)", async () => {
  // blind17's weather server: `get_alerts` says "For forecast data, use get_forecast instead".
  const blind17 = await benchIndex("blind17_catalog.json");
  assert.equal(first(blind17, "any severe weather alerts for Denver right now")[0], "get_alerts");
  const helpdesk = index("helpdesk", [
    tool(
      "reply_to_ticket",
      "Add a public reply to a ticket. The reply is visible to the customer. For internal notes use add_note instead.",
      ["ticket_id", "body"],
    ),
    tool(
      "get_ticket",
      "Get a single ticket by ID with its conversation thread (the customer's messages, replies and notes).",
      ["ticket_id"],
    ),
    tool("add_note", "Add a private note to a ticket, visible to agents only.", ["ticket_id", "body"]),
  ]);
  assert.equal(first(helpdesk, "reply to the customer on ticket 51877")[0], "reply_to_ticket");
});

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
