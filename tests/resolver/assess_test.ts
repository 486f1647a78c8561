import assert from "node:assert/strict";
import { assess, buildIndex, HINTS, rankQuery } from "../../src/resolver/mod.ts";
import { catalogFromJson, parseQueries } from "../../scripts/eval_resolver.ts";
import { fixtureCatalog } from "./_fixture.ts";

const index = buildIndex(fixtureCatalog());

function route(query: string) {
  return assess(rankQuery(index, query, { maxHits: 5 }));
}

Deno.test("assess() is confident when the tool is named and the lead is clear", () => {
  const r = route("list directory");
  assert.equal(r.status, "confident");
  assert.equal(r.confidence, "high");
  assert.ok(r.reasonCodes.includes("exact_name_match"));
  assert.ok(r.reasonCodes.includes("full_term_coverage"));
  assert.equal(r.matchedFraction, 1);
  assert.ok(r.scoreGap > 0.25);
  assert.equal(r.hint, HINTS.confident);
});

Deno.test("assess() is confident for a plain request that covers a tool", () => {
  const r = route("read the contents of a text file");
  assert.equal(r.status, "confident");
  assert.notEqual(r.confidence, "none");
});

Deno.test("assess() ignores an unknown place name when judging coverage", () => {
  const r = route("current time in Reykjavik");
  assert.equal(r.status, "confident");
  assert.equal(r.matchedFraction, 1);
});

Deno.test("assess() stays ambiguous on partial coverage", () => {
  const r = route("read the file and also translate it to french");
  assert.equal(r.status, "ambiguous");
  assert.ok(
    r.reasonCodes.some((c) => c === "low_term_coverage" || c === "multi_step_query"),
    r.reasonCodes.join(),
  );
  assert.ok(r.matchedFraction < 0.6);
  assert.equal(r.hint, HINTS.ambiguous);
});

Deno.test("assess() stays ambiguous when the top two are close", () => {
  const r = route("file");
  assert.equal(r.status, "ambiguous");
  assert.ok(r.reasonCodes.includes("close_scores"), r.reasonCodes.join());
});

Deno.test("assess() answers no_match when nothing matches", () => {
  const r = route("order a pepperoni pizza");
  assert.equal(r.status, "no_match");
  assert.equal(r.confidence, "none");
  assert.match(r.hint, /use_when/);
  assert.match(r.hint, /search_tools/);
  const none = route("zzzqqq");
  assert.deepEqual(none.reasonCodes, ["no_terms_matched"]);
  assert.equal(none.scoreGap, 0);
});

Deno.test("assess() answers no_match for an empty query", () => {
  assert.deepEqual(route("   ").reasonCodes, ["empty_query"]);
  assert.deepEqual(route("the of").reasonCodes, ["empty_query"]);
});

Deno.test("assess() answers no_match when the top hit explains too little of the request", () => {
  const r = route("turn off the living room lights and water the garden");
  assert.equal(r.status, "no_match");
});

const DATA = new URL("../../scripts/bench/data/", import.meta.url);

Deno.test("assess(): no wrong confident answer on any held-out or plain set (a close partial name, a generic verb)", async () => {
  const sets: [string, string[]][] = [
    ["heldout_catalog.json", ["heldout_queries", "heldout_translated"]],
    ["heldout2_catalog.json", [
      "heldout2_queries",
      "heldout2_translated",
      "heldout2_chinese",
      "heldout3_queries",
      "heldout3_translated",
      "heldout3_chinese",
      "heldout_ids_queries",
      "heldout_dirs_queries",
      "heldout_routes_queries",
      "heldout_hosts_queries",
      "heldout_shopping_queries",
      "heldout_dates_queries",
    ]],
    ["plain_catalog.json", ["plain_queries"]],
  ];
  const wrong: string[] = [];
  let confident = 0;
  for (const [catalog, files] of sets) {
    const tools = catalogFromJson(JSON.parse(await Deno.readTextFile(new URL(catalog, DATA))));
    const idx = buildIndex(tools);
    for (const file of files) {
      for (const q of parseQueries(await Deno.readTextFile(new URL(`${file}.jsonl`, DATA)))) {
        const ranked = rankQuery(idx, q.query, { maxHits: 5 });
        if (assess(ranked).status !== "confident") continue;
        confident++;
        const top = ranked.hits[0]!.tool;
        if (!q.gold.some((g) => g === top.namespaced || g === top.tool)) {
          wrong.push(`${q.id} "${q.query}" -> ${top.namespaced}`);
        }
      }
    }
  }
  // Among them "what tables are in the database" (create_table, a close partial name) and "show the last
  // commit on this branch" (git__show: the name "show" says nothing of what is shown).
  assert.deepEqual(wrong, []);
  assert.ok(confident > 60, String(confident));
});

Deno.test("assess() is not confident when the request's object is another close tool's", () => {
  const todo = buildIndex(catalogFromJson({
    servers: [{
      name: "todoist",
      description: "Task management with Todoist.",
      tools: [
        {
          name: "todoist_create_task",
          description: "Create a new task in Todoist with optional description, due date, and priority",
          inputSchema: {
            type: "object",
            properties: {
              content: { type: "string", description: "The content of the task" },
              project_id: { type: "string", description: "ID of the project to add the task to" },
            },
          },
        },
        { name: "todoist_get_tasks", description: "Get a list of tasks from Todoist", inputSchema: {} },
        { name: "todoist_get_projects", description: "Get a list of projects from Todoist", inputSchema: {} },
        { name: "todoist_delete_task", description: "Delete a task from Todoist", inputSchema: {} },
      ],
    }],
  }));
  const at = (q: string) => rankQuery(todo, q, { maxHits: 5 });
  // `create_task` takes a project only as a parameter; `get_projects` is about projects.
  const project = at("create a new project in Todoist");
  assert.equal(project.hits[0]?.tool.tool, "todoist_create_task");
  assert.equal(project.hits[0]?.missedObject, true);
  assert.notEqual(assess(project).status, "confident");
  // A complement after a preposition is no object: "a task in the Work project" is still a task.
  const task = at("create a new task in the Work project");
  assert.equal(task.hits[0]?.tool.tool, "todoist_create_task");
  assert.equal(task.hits[0]?.missedObject, false);
  assert.equal(assess(task).status, "confident");
});

Deno.test("assess() counts the action a tool performs as met: an answerable request is no no_match", () => {
  const base = buildIndex(catalogFromJson({
    servers: [{
      name: "airtable",
      description: "Read and write access to Airtable databases.",
      tools: [
        {
          name: "list_records",
          description: "Lists records from a specified Airtable table",
          inputSchema: {},
        },
        { name: "delete_records", description: "Deletes one or more records from a table", inputSchema: {} },
        { name: "create_record", description: "Creates a new record in a table", inputSchema: {} },
        { name: "list_tables", description: "Lists all tables in a specific base", inputSchema: {} },
      ],
    }],
  }));
  const remove = rankQuery(base, "remove the row for ACME from the Customers table", { maxHits: 5 });
  assert.equal(remove.hits[0]?.tool.tool, "delete_records");
  assert.equal(remove.hits[0]?.actionAgrees, true);
  assert.equal(assess(remove).status, "ambiguous");
  // The verb alone is no answer: a request about nothing the catalog has is still declined.
  assert.equal(
    assess(rankQuery(base, "remove the red eye from my photo", { maxHits: 5 })).status,
    "no_match",
  );
});

Deno.test("assess() is not confident when the tool does another action than the request asks", () => {
  const weather = buildIndex(catalogFromJson({
    servers: [{
      name: "weather",
      description: "Weather data.",
      tools: [
        {
          name: "get_forecast",
          description: "Get the weather forecast for a city",
          inputSchema: { type: "object", properties: { city: { type: "string" } } },
        },
        { name: "list_alerts", description: "List active weather alerts for a state", inputSchema: {} },
        { name: "get_air_quality", description: "Get the air quality index for a city", inputSchema: {} },
      ],
    }],
  }));
  const get = rankQuery(weather, "get the weather forecast for Paris", { maxHits: 5 });
  assert.equal(get.hits[0]?.tool.tool, "get_forecast");
  assert.equal(assess(get).status, "confident");
  // The same object, an action no tool performs: the reading tool is offered, not confidently.
  const del = rankQuery(weather, "delete the weather forecast for Paris", { maxHits: 5 });
  assert.equal(del.hits[0]?.tool.tool, "get_forecast");
  assert.equal(del.hits[0]?.actionConflict, true);
  assert.equal(assess(del).status, "ambiguous");
  const [top, ...rest] = del.hits;
  assert.equal(assess({ ...del, hits: [{ ...top!, actionConflict: false }, ...rest] }).status, "confident");
});

Deno.test("assess() is not confident in a tool scoped to the caller when the request names someone else", () => {
  const tasks = buildIndex(catalogFromJson({
    servers: [{
      name: "tasks",
      description: "Task tracker.",
      tools: [
        {
          name: "get_my_tasks",
          description: "Get the tasks assigned to the authenticated user, due this week or later",
          inputSchema: { type: "object", properties: { workspace: { type: "string" } } },
        },
        {
          name: "get_user_issues",
          description: "Get the issues assigned to a specific user or the authenticated user",
          inputSchema: { type: "object", properties: { user: { type: "string" } } },
        },
        { name: "search_tasks", description: "Search tasks by text, project or assignee", inputSchema: {} },
        { name: "create_task", description: "Create a new task in a project", inputSchema: {} },
      ],
    }],
  }));
  const other = rankQuery(tasks, "get the tasks assigned to Priya due this week", { maxHits: 5 });
  assert.equal(other.hits[0]?.tool.tool, "get_my_tasks");
  assert.equal(other.hits[0]?.otherParty, true);
  const r = assess(other);
  assert.equal(r.status, "ambiguous");
  assert.ok(r.reasonCodes.includes("weak_tool_evidence"), r.reasonCodes.join());
  const [top, ...rest] = other.hits;
  assert.equal(assess({ ...other, hits: [{ ...top!, otherParty: false }, ...rest] }).status, "confident");
  // A possessive name or a third person names someone else too.
  for (const q of ["get Priya's tasks due this week", "get the tasks assigned to her due this week"]) {
    const h = rankQuery(tasks, q, { maxHits: 5 }).hits[0];
    assert.equal(h?.tool.tool, "get_my_tasks", q);
    assert.equal(h?.otherParty, true, q);
  }
  // The first person keeps the caller in the request; a day's name is no person.
  for (const q of ["get my tasks assigned by Priya", "get the tasks assigned to me due by Friday"]) {
    const h = rankQuery(tasks, q, { maxHits: 5 }).hits[0];
    assert.equal(h?.tool.tool, "get_my_tasks", q);
    assert.equal(h?.otherParty, false, q);
  }
  // A tool that takes anyone's is not scoped to the caller.
  const issues = rankQuery(tasks, "get the issues assigned to Priya", { maxHits: 5 });
  assert.equal(issues.hits[0]?.tool.tool, "get_user_issues");
  assert.equal(issues.hits[0]?.otherParty, false);
});
