/**
 * The sixteenth ranking pass, part A (issue #42, changes 500–519): where the re-ranking pushes out of the first
 * five a tool its BM25F core had there. Each test is a class of such pushes, written with made-up tools.
 */
import assert from "node:assert/strict";
import {
  ranked,
  type SchemaTool as Tool,
  schemaTool as tool,
  serversIndex as index,
} from "./_bench_catalog.ts";

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
