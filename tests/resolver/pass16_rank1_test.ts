/**
 * The sixteenth ranking pass, part A (issue #42, changes 500–519): where the re-ranking pushes out of the first
 * five a tool its BM25F core had there. Each test is a class of such pushes, written with made-up tools.
 */
import assert from "node:assert/strict";
import { buildCatalog } from "../../src/catalog/mod.ts";
import { buildIndex, rankQuery, type ResolverIndex } from "../../src/resolver/mod.ts";

function tool(name: string, description: string, properties: string[] = [], required: string[] = []) {
  const props = Object.fromEntries(properties.map((p) => [p, { type: "string" }]));
  return { name, description, inputSchema: { type: "object", properties: props, required } };
}

type Tool = ReturnType<typeof tool>;

function index(servers: [string, Tool[]][]): ResolverIndex {
  return buildIndex(
    buildCatalog(servers.map(([name, tools]) => ({ name, description: "", tags: [], useWhen: [], tools }))),
  );
}

const ranked = (i: ResolverIndex, request: string, n = 10) =>
  rankQuery(i, request, { maxHits: n }).hits.map((h) => h.tool.short);

Deno.test("500: a sibling only named in a tool's text is lifted only when the request meets it (#42)", () => {
  const i = index([
    ["weather", [
      tool(
        "get_historical_weather",
        "Get historical weather data for past dates, such as last week. Do NOT use for current conditions - " +
          "use get_current_conditions instead. If this tool fails, consider using check_service_status.",
        ["start_date", "end_date"],
        ["start_date", "end_date"],
      ),
      tool("get_current_conditions", "Current temperature, wind and humidity at a location right now."),
      tool("check_service_status", "Whether the upstream APIs are reachable."),
      tool("get_marine_conditions", "Wave height and tides for a coast."),
      tool("list_saved_locations", "Places the user saved."),
    ]],
    ["web", [
      tool("search", "Search the web for news articles and pages published recently.", ["query"], ["query"]),
      tool("scrape", "Fetch one page as markdown.", ["url"], ["url"]),
    ]],
  ]);
  const top = ranked(i, "news articles published recently about historical weather", 3);
  assert.deepEqual(top.slice(0, 2), ["get_historical_weather", "search"], top.join());
  // The alternatives the description names meet nothing of the request: not lifted next to the tools that do.
  assert.ok(!top.includes("get_current_conditions") && !top.includes("check_service_status"), top.join());
});

Deno.test("500: a sibling that provides a handle the tool needs is still lifted (#42)", () => {
  const i = index([
    ["maps", [
      tool("find_nearby_places", "Find places near a point.", ["latitude", "longitude"], [
        "latitude",
        "longitude",
      ]),
      tool("geocode_address", "Turn an address into latitude and longitude."),
      tool("get_elevation", "Elevation of a point."),
    ]],
  ]);
  assert.deepEqual(ranked(i, "find nearby places", 2), ["find_nearby_places", "geocode_address"]);
});

Deno.test("501: a server with no searching tool searches by listing: its list tool stays among the finds (#42)", () => {
  const servers: [string, Tool[]][] = [
    ["tracker", [
      tool("list-items", "List error items that mention a text, filtered by status.", ["status", "query"]),
      tool("get-item-details", "Get the details of one open error item.", ["id"], ["id"]),
      tool("get-deployments", "Get the deployments and the open errors they introduced.", ["project"]),
      tool("get-replay", "Get the session replay of an open error.", ["id"], ["id"]),
      tool("get-version", "Get a version and the open errors first seen in it.", ["version"]),
    ]],
    ["ci", [tool("run-pipeline", "Run a pipeline.", ["branch"])]],
  ];
  const request = "find open tracker errors that mention 'stripe webhook signature'";
  const top = ranked(index(servers), request, 5);
  assert.equal(top[0], "list-items", top.join());
  // With a searching sibling, listing is no way to search: the searching tool comes first.
  servers[0]![1].push(tool("search-items", "Search error items that mention a text.", ["query"], ["query"]));
  const withSearch = ranked(index(servers), request, 10);
  assert.ok(withSearch.indexOf("search-items") < withSearch.indexOf("list-items"), withSearch.join());
});

Deno.test("503: a sibling named as the way to get what a tool needs is its prerequisite, lifted (#42)", () => {
  const i = index([
    ["tracker", [
      tool(
        "add_issue_comment",
        "Add a comment to a specific issue. This requests project_id and issue_id as uuid parameters. If you have " +
          "a readable identifier, you can use the get_issue_using_readable_identifier tool to get the issue_id " +
          "and project_id",
        ["project_id", "issue_id", "comment_html"],
        ["project_id", "issue_id", "comment_html"],
      ),
      tool(
        "get_issue_using_readable_identifier",
        "Get all issue details using readable identifier",
        ["project_identifier", "issue_identifier"],
        ["project_identifier", "issue_identifier"],
      ),
      tool("add_issue_attachment", "Attach a file to an issue.", ["issue_id", "file"], ["issue_id", "file"]),
      tool("update_issue", "Update an issue's title, state or priority.", ["issue_id"], ["issue_id"]),
      tool("add_project_comment", "Add a comment to a project's discussion.", ["project_id"], ["project_id"]),
      tool("add_cycle_comment", "Add a comment to a cycle.", ["cycle_id"], ["cycle_id"]),
      tool("add_module_comment", "Add a comment to a module.", ["module_id"], ["module_id"]),
    ]],
  ]);
  const top = ranked(
    i,
    'add this to MOB-88 as a comment pls: "crash happens right after the permissions dialog"',
    5,
  );
  assert.equal(top[0], "add_issue_comment", top.join(" "));
  assert.ok(top.includes("get_issue_using_readable_identifier"), top.join(" "));
});
