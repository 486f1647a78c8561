/**
 * The fifteenth ranking pass, the lead's changes (issue #42, 400–419): requests as an agent types them into a
 * tool search ("find a tool that reads file contents"), not as its user says them.
 */
import assert from "node:assert/strict";
import {
  ACTION,
  actionMatch,
  instrumentLast,
  toolActions,
  withoutToolFrame,
} from "../../src/resolver/actions.ts";
import { assess, rankQuery } from "../../src/resolver/mod.ts";
import { benchIndex, serverIndex, tool } from "./_bench_catalog.ts";

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

Deno.test("401: an instrument named before the task is put after it, and the task's verb is the action (#42)", async () => {
  // Before 401, "use" opened the request and `search_issues` came first.
  assert.deepEqual(await first("blind6_catalog.json", "use github to open an issue about the login bug"), [
    "issue_write",
  ]);
  // Before 401, `conversations_replies` came first.
  assert.deepEqual(await first("blind6_catalog.json", "using slack, post 'deploy done' in #ops"), [
    "conversations_add_message",
  ]);
  assert.equal(
    instrumentLast("call the linear API to list my issues. Then stop."),
    "list my issues (the linear API). Then stop.",
  );
  // Naming a thing, a pronoun, or an instrument with no task after it: unchanged.
  for (const text of ["Call it 'Full Body B': deadlift 3x5", "use it to store notes", "use the calculator"]) {
    assert.equal(instrumentLast(text), text);
  }
});

Deno.test("402: a top-level directory of one segment is a path (#42)", async () => {
  // Before 402, "what's in /tmp" had no word left to rank: no tool at all.
  assert.deepEqual(await first("plain_catalog.json", "what's in /tmp"), ["list_directory"]);
  assert.deepEqual(await first("plain_catalog.json", "which files in /data take the most space"), [
    "list_directory_with_sizes",
  ]);
  // A route or a command after a slash is no directory.
  assert.notEqual((await first("plain_catalog.json", "open /login page"))[0], "list_directory");
});

Deno.test("403: a getter of many things lists them when a list is asked (#42)", async () => {
  // `get_transactions` ("Retrieve transactions, …") reads many: before 403, "list" counted against it as an
  // action it does not do, and `split_transaction` (an action the table does not know) came first.
  assert.deepEqual(await first("blind21_catalog.json", "list transactions"), ["get_transactions"]);
  assert.deepEqual(await first("blind21_catalog.json", "List all transactions for November 2026"), [
    "get_transactions",
  ]);
  // A plural after a qualifier is no object (`get_station_code_by_names` reads a code), and a question is no
  // list: reading one deployment still answers "is it ready?".
  const actions = toolActions("get station code by names", "", "Query a station's code by its names.");
  assert.equal(actionMatch(ACTION.list, actions), -1);
  assert.equal(actionMatch(ACTION.list, toolActions("get transactions", "", "Retrieve transactions.")), 1);
  const question = ACTION.read | ACTION.search | ACTION.list;
  assert.equal(
    actionMatch(question, toolActions("get deployment events", "", "Get deployment events.")),
    actionMatch(question, toolActions("get deployment", "", "Get a deployment.")),
  );
});

Deno.test("404: a verb making a new thing asks for a new one, however the request opens (#42)", async () => {
  // An agent's keyword request: before 404, `add_observations` (adds to existing entities) was a confident
  // answer to "add new entity"; the tool that makes entities is second. Now the route stays open.
  const index = await benchIndex("plain_catalog.json");
  const ranked = rankQuery(index, "knowledge graph add new entity", { maxHits: 5 });
  assert.notEqual(assess(ranked).status, "confident");
  assert.deepEqual(await first("plain_catalog.json", "add new entity Bob"), ["create_entities"]);
  // Something new added to an existing, named thing is an addition to it.
  assert.deepEqual(await first("plain_catalog.json", "add new observation to Bob"), ["add_observations"]);
});

Deno.test("405: a tool's name met only inside a name the request gives is no evidence for a confident route (#42)", async () => {
  // blind25's b25-24: "Stats 101" is the notebook's name. Before 405, `get_library_stats` was a confident
  // (and wrong) answer; the tool that sets the default notebook is 11th.
  const notebooks = await benchIndex("blind25_catalog.json");
  const ranked = rankQuery(notebooks, "From now on use my Stats 101 notebook (id stats-101) by default.", {
    maxHits: 5,
  });
  assert.equal(ranked.hits[0]!.tool.short, "get_library_stats");
  assert.ok(ranked.hits[0]!.ownNameCoverage < 0.5 && ranked.hits[0]!.nameCoverage >= 0.5);
  assert.equal(assess(ranked).status, "ambiguous");
  // A capitalized word naming the server or its product still names the tool ("Sentry error").
  const sentry = serverIndex("sentry", "Sentry error monitoring", [
    tool("get_sentry_issue", "Retrieve and analyze a Sentry issue by ID or URL."),
    tool("list_projects", "List the organization's projects."),
  ]);
  const issue = rankQuery(sentry, "look into Sentry error 9182736 for me", { maxHits: 5 }).hits[0]!;
  assert.equal(issue.ownNameCoverage, issue.nameCoverage);
});
