/**
 * The fifteenth ranking pass, the lead's changes (issue #42, 400–419): requests as an agent types them into a
 * tool search ("find a tool that reads file contents"), not as its user says them.
 */
import assert from "node:assert/strict";
import { withoutToolFrame } from "../../src/resolver/actions.ts";
import { rankQuery } from "../../src/resolver/mod.ts";
import { benchIndex } from "./_bench_catalog.ts";

/** The first `n` tools' short names for a request. */
async function first(file: string, request: string, n = 1): Promise<string[]> {
  const index = await benchIndex(file);
  return rankQuery(index, request, { maxHits: 5 }).hits.slice(0, n).map((h) => h.tool.short);
}

Deno.test("400: a tool sought by what it should do is ranked by that task, not by the seeking (#42)", async () => {
  // "find" seeks the tool; the task is reading. Before 400, `search_files` came first.
  assert.notEqual(
    (await first("plain_catalog.json", "find a tool that reads file contents"))[0],
    "search_files",
  );
  assert.match((await first("plain_catalog.json", "find a tool that reads file contents"))[0]!, /^read_/);
  // "search tools:" is the search's; the task is deleting a relation. Before 400, `search_nodes` came first.
  assert.deepEqual(await first("plain_catalog.json", "search tools: memory graph delete relation"), [
    "delete_relations",
  ]);
  // "which can show me how big …": the sizes of a folder's files. Before 400, `list_directory` came first.
  assert.deepEqual(
    await first("plain_catalog.json", "I need a tool which can show me how big files are in /var/log"),
    ["list_directory_with_sizes"],
  );
  // An agent passing on its user's wish: the wish is the task.
  assert.equal(
    withoutToolFrame("The user wants to remember that Ana works at Acme."),
    "remember that Ana works at Acme.",
  );
});

Deno.test("400: a tool named without a task after it stays a word of the request (#42)", () => {
  for (
    const text of [
      "list tools",
      "is our BI tool plugged into Metabase?",
      "where is the function parseDuration",
    ]
  ) {
    assert.equal(withoutToolFrame(text), text);
  }
  assert.equal(withoutToolFrame("Tool to list a directory"), "list a directory");
  assert.equal(withoutToolFrame("is there a function for zipping a file"), "zipping a file");
});
