import assert from "node:assert/strict";
import { buildCatalog } from "../../src/catalog/mod.ts";
import { buildIndex, resolveResponse, search } from "../../src/resolver/mod.ts";
import { nounModifiers, parseQuery } from "../../src/resolver/query.ts";

const tool = (name: string, description: string) => ({ name, description, inputSchema: { type: "object" } });

Deno.test("nounModifiers() reads each noun phrase's head as its last word (issue #42)", () => {
  assert.deepEqual([...nounModifiers("add a column to the Tasks table")], [["tasks", "table"]]);
  assert.deepEqual([...nounModifiers("show me the new pull requests")], [["new", "requests"], [
    "pull",
    "requests",
  ]]);
  // A name after a common noun is its apposition, not its head.
  assert.deepEqual([...nounModifiers("rename the table Tasks")], []);
  // The first word is the verb, a number or identifier ends a phrase, a sentence's end too.
  assert.deepEqual([...nounModifiers("bill customer cus_9")], []);
  assert.deepEqual([...nounModifiers("delete the pod stuck-job-xyz in default")], []);
  assert.deepEqual([...nounModifiers("list invoices. customer emails")], []);
  // A word that heads one phrase is no modifier of another.
  assert.deepEqual([...nounModifiers("copy the table rows into the table")], []);
});

Deno.test("parseQuery() reads noun phrases only in a short request of one step", () => {
  assert.deepEqual(parseQuery("add a column to the Tasks table").headOf, [-1, -1, 3, -1]);
  assert.equal(parseQuery("add a column to the Tasks table", undefined, true).headOf, undefined);
  assert.equal(
    parseQuery(
      "find the sales table of last quarter, then chart the monthly revenue totals by product region",
    ).headOf,
    undefined,
  );
});

Deno.test("a modifier naming other tools than its head weighs less: the head picks the tool (issue #42)", () => {
  const servers = [
    {
      name: "todo",
      tags: [],
      useWhen: [],
      tools: [tool("update_task", "Update a task: its title, due date or priority")],
    },
    {
      name: "base",
      tags: [],
      useWhen: [],
      tools: [
        tool("update_table", "Update a table's name or description"),
        tool("list_records", "List the records of a base"),
      ],
    },
  ];
  const index = buildIndex(buildCatalog(servers));
  const first = (q: string) => search(index, q, { maxHits: 1 })[0]?.tool.short;
  assert.equal(first("rename the Tasks table"), "update_table");
  // A modifier found with its head in one tool keeps its weight ("task title" in `update_task`).
  assert.equal(first("change the task title"), "update_task");
});

Deno.test("a stated value's words are given to the tool: not missed by a tool doing the action (issue #42)", () => {
  assert.deepEqual(parseQuery("make a table called orders with an id and a total column").stated, [
    false,
    false,
    true,
    true,
    true,
    true,
    true,
  ]);
  assert.equal(parseQuery("make a table").stated, undefined);
  const servers = [{
    name: "db",
    tags: [],
    useWhen: [],
    tools: [
      tool("create_table", "Create a new table in the database"),
      tool("read_query", "Run a SELECT query on the database"),
    ],
  }];
  const index = buildIndex(buildCatalog(servers));
  const context = { contractVersion: "test", catalogRevision: "r1" };
  const made = resolveResponse(
    index,
    { query: "add a table called orders with an id and a total column" },
    context,
  );
  assert.equal(made.status, "ambiguous");
  assert.equal(made.recommendation?.tool, "create_table");
  // Without a verb the tool performs, a stated value still counts: nothing here answers the request.
  const texted = resolveResponse(index, { query: "text my mom that I will be late for dinner" }, context);
  assert.equal(texted.status, "no_match");
});

Deno.test("the object's head noun picks the server when a shared verb put another first (issue #42)", () => {
  const servers = [
    {
      name: "todo",
      tags: [],
      useWhen: [],
      tools: [tool("delete_task", "Delete a task by name"), tool("create_task", "Create a task")],
    },
    {
      name: "kube",
      tags: [],
      useWhen: [],
      tools: [
        tool("kubectl_delete", "Delete Kubernetes resources by type and name"),
        tool("exec_in_pod", "Execute a command inside a pod"),
        tool("kubectl_logs", "Get the logs of a pod"),
        tool("port_forward", "Forward a local port to a pod"),
      ],
    },
  ];
  const index = buildIndex(buildCatalog(servers));
  const first = (q: string) => search(index, q, { maxHits: 1 })[0]?.tool.short;
  // `delete_task` does the action and names none of the object; the server with pods has a tool doing it.
  assert.equal(first("delete the pod stuck-job-xyz in default"), "kubectl_delete");
  // The object of the first tool's own server keeps it first.
  assert.equal(first("delete the task buy milk"), "delete_task");
  // A first tool doing another action than the one asked is left to the ranking.
  assert.equal(first("run the pod"), "exec_in_pod");
});

Deno.test("another language's stop word is a word of an English request (issue #42)", () => {
  // "pod" is Polish and Czech for "under": in an English request it is the thing acted on.
  assert.ok(parseQuery("delete the pod stuck-job-xyz in default").stems.includes("pod"));
  // Without an English function word the request may be in another language: its stop words stay out.
  assert.ok(!parseQuery("pod mostem").stems.includes("pod"));
});

Deno.test("a tool doing the asked action on the named file answers the request: ambiguous, not no_match (#42)", () => {
  const servers = [{
    name: "fs",
    tags: [],
    useWhen: [],
    tools: [
      {
        name: "edit_file",
        description: "Make line-based edits to a text file",
        inputSchema: { type: "object", properties: { path: { type: "string" }, edits: { type: "array" } } },
      },
      {
        name: "list_directory",
        description: "List the entries of a directory",
        inputSchema: { type: "object", properties: { path: { type: "string" } } },
      },
    ],
  }];
  const index = buildIndex(buildCatalog(servers));
  const context = { contractVersion: "test", catalogRevision: "r1" };
  const fixed = resolveResponse(index, { query: "fix the typo recieve in README.md" }, context);
  assert.equal(fixed.status, "ambiguous");
  assert.equal(fixed.recommendation?.tool, "edit_file");
  // No file named: nothing says the tool's argument is there.
  assert.equal(
    resolveResponse(index, { query: "fix the typo recieve in the intro" }, context).status,
    "no_match",
  );
});

Deno.test("a statement's words are the value an imperative after it acts on: not missed (#42)", () => {
  const q = parseQuery("Dana now works for Initech, add that link");
  assert.deepEqual(q.words.filter((_, i) => q.stated?.[i]), ["dana", "works", "initech"]);
  assert.equal(q.words[q.verbAt!], "add");
});

Deno.test("confident needs each noun phrase's head the catalog knows in the tool (issue #42)", () => {
  // A participle naming the thing ends its phrase; a number's label is part of the identifier.
  assert.deepEqual([...nounModifiers("make a new gmail label called Taxes")], [["new", "label"], [
    "gmail",
    "label",
  ]]);
  assert.deepEqual([...nounModifiers("fetch text resource number 7")], [["text", "resource"]]);
  const servers = [
    {
      name: "todo",
      tags: [],
      useWhen: [],
      tools: [tool("create_task", "Create a new task with a title and a due date")],
    },
    {
      name: "base",
      tags: [],
      useWhen: [],
      tools: [tool("create_field", "Creates a new field in a table"), tool("list_records", "List records")],
    },
  ];
  const index = buildIndex(buildCatalog(servers));
  const context = { contractVersion: "test", catalogRevision: "r1" };
  const added = resolveResponse(index, { query: "add a due date to the Tasks table" }, context);
  assert.notEqual(added.status, "confident");
  assert.equal(resolveResponse(index, { query: "create a new task" }, context).status, "confident");
});

Deno.test("the imperative after a statement is the request's verb: a tool doing its action answers (#42)", () => {
  const servers = [{
    name: "kb",
    tags: [],
    useWhen: [],
    tools: [
      tool("add_observations", "Add new observations to existing entities in the knowledge graph"),
      tool("read_graph", "Read the entire knowledge graph"),
    ],
  }];
  const index = buildIndex(buildCatalog(servers));
  const context = { contractVersion: "test", catalogRevision: "r1" };
  const kept = resolveResponse(index, {
    query: "fyi Carlos works at Globex now, keep that in mind for later",
  }, context);
  assert.equal(kept.status, "ambiguous");
  assert.equal(kept.recommendation?.tool, "add_observations");
});
