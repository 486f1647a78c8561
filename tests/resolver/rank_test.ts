import assert from "node:assert/strict";
import { buildCatalog } from "../../src/catalog/mod.ts";
import { assess, buildIndex, type RankingOptions, rankQuery, search } from "../../src/resolver/mod.ts";
import { fixtureCatalog, fixtureServers } from "./_fixture.ts";
import { catalogFromJson } from "../../scripts/eval_resolver.ts";

const tools = fixtureCatalog();
const index = buildIndex(tools);

function names(query: string, maxHits = 5): string[] {
  return search(index, query, { maxHits }).map((h) => h.tool.namespaced);
}

Deno.test("search() ranks read_text_file first for reading the contents of a text file", () => {
  const top = names("read the contents of a text file");
  assert.equal(top[0], "filesystem__read_text_file");
  assert.notEqual(top[0], "filesystem__read_media_file");
});

Deno.test("search() finds tools by intent words", async (t) => {
  const cases: [string, string][] = [
    ["what is the current time in Tokyo", "time__get_current_time"],
    ["download a webpage", "fetch__fetch"],
    ["open a new issue on the repo", "github__create_issue"],
    ["list the files in a folder", "filesystem__list_directory"],
    ["rename a file", "filesystem__move_file"],
    ["commit history of a branch", "github__list_commits"],
  ];
  for (const [query, expected] of cases) {
    await t.step(query, () => assert.equal(names(query)[0], expected));
  }
});

Deno.test("search() matches pasted tool names exactly", () => {
  assert.equal(names("get_file_info")[0], "filesystem__get_file_info");
  assert.equal(names("listDirectory")[0], "filesystem__list_directory");
  const hit = search(index, "get_file_info")[0]!;
  assert.equal(hit.exactName, true);
});

Deno.test("search() reports matched query words and coverage", () => {
  const hit = search(index, "read the contents of a text file")[0]!;
  assert.deepEqual(hit.matchedTerms, ["read", "contents", "text", "file"]);
  assert.equal(hit.coverage, 1);
  assert.equal(hit.strongField, true);
});

Deno.test("search() returns nothing for a query with no known words", () => {
  assert.deepEqual(search(index, "zzzqqq xxyyzz"), []);
  assert.deepEqual(search(index, "the of and"), []);
});

Deno.test("search() bounds hits and counts every match", () => {
  const ranked = rankQuery(index, "file", { maxHits: 2 });
  assert.equal(ranked.hits.length, 2);
  assert.ok(ranked.count > 2);
  assert.ok(ranked.runnerUpScore !== undefined);
});

Deno.test("search() is deterministic and independent of server order", () => {
  const reversed = buildIndex(buildCatalog([...fixtureServers()].reverse()));
  for (const q of ["file", "read a file", "time", "repository"]) {
    assert.deepEqual(
      search(reversed, q, { maxHits: 10 }).map((h) => [h.tool.namespaced, h.score]),
      search(index, q, { maxHits: 10 }).map((h) => [h.tool.namespaced, h.score]),
    );
  }
});

Deno.test("search() does not change the index", () => {
  const before = index.postings.size;
  search(index, "brand new words nobody indexed");
  assert.equal(index.postings.size, before);
});

Deno.test("search() lifts a prerequisite sibling of the top hit", () => {
  // find_nearby_places requires latitude/longitude; geocode_address provides them.
  const place = tools.findIndex((t) => t.namespaced === "maps__find_nearby_places");
  const geocode = tools.findIndex((t) => t.namespaced === "maps__geocode_address");
  assert.deepEqual(index.companions[place], [geocode]);
  assert.deepEqual(names("find nearby places", 3).slice(0, 2), [
    "maps__find_nearby_places",
    "maps__geocode_address",
  ]);
  const off = buildIndex(tools, { companionWeight: 0 });
  assert.ok(
    !search(off, "points of interest", { maxHits: 2 }).some((h) => h.tool.short === "geocode_address"),
  );
});

Deno.test("search() gives every step of a multi-step request a top hit", () => {
  const top = names("get the current time in Berlin, then save it to /tmp/time.txt", 3);
  assert.ok(top.includes("time__get_current_time"), top.join());
  assert.ok(top.includes("filesystem__write_file"), top.join());
});

Deno.test("search() demotes a second tool with the same short name", () => {
  const servers = [
    { name: "a", tools: [{ name: "read_file", description: "Read a file" }] },
    { name: "b", tools: [{ name: "read_file", description: "Read a file" }] },
    { name: "c", tools: [{ name: "read_notes", description: "Read a file of notes" }] },
  ];
  const idx = buildIndex(buildCatalog(servers));
  const plain = buildIndex(buildCatalog(servers), { duplicatePenalty: 0 });
  const hits = search(idx, "read file");
  assert.equal(hits[0]!.tool.namespaced, "a__read_file");
  assert.ok(hits[1]!.score < search(plain, "read file")[1]!.score);
});

Deno.test("search() lets a use_when hint route a request the description does not cover", () => {
  const servers = fixtureServers();
  const plain = buildIndex(buildCatalog(servers));
  assert.notEqual(search(plain, "show my invoices", { maxHits: 1 })[0]?.tool.short, "search_files");
  servers[0]!.toolUseWhen = { search_files: ["finding invoices and receipts in the accounts folder"] };
  const hinted = buildIndex(buildCatalog(servers));
  const hit = search(hinted, "show my invoices", { maxHits: 1 })[0]!;
  assert.equal(hit.tool.namespaced, "filesystem__search_files");
  assert.equal(hit.strongField, true);
});

Deno.test("search() gives an enumeration's items no places of their own", () => {
  const tool = (name: string, description: string) => ({
    name,
    description,
    inputSchema: { type: "object" },
  });
  const servers = [{
    name: "docs",
    tools: [
      tool("format_table", "Format a table of a document: borders, shading, table style"),
      tool("format_table_cells", "Format the cells of a table in a document"),
      tool("format_heading", "Format a heading of a document"),
      tool("format_document", "Format a whole document: fonts, margins, footnotes, styles"),
      tool("format_text", "Format text in a document: body, headings, tables and footnotes"),
      tool("format_table_borders", "Format the borders of a table in a document"),
      tool("format_heading_numbering", "Format the numbering of the headings of a document"),
      tool("list_document_tables", "List the tables of a document with their formatting"),
      tool("list_document_headings", "List the headings of a document with their formatting"),
      tool("add_table", "Add a table to a document"),
      tool("add_heading", "Add a heading to a document"),
      tool("add_footnote", "Add a note at the bottom of a page"),
    ],
  }];
  const catalog = buildCatalog(servers.map((s) => ({ ...s, tags: [], useWhen: [] })));
  const query = "format the document with tables, headings, footnotes";
  const top = (clauseDiversity: number) =>
    search(buildIndex(catalog, { clauseDiversity }), query, { maxHits: 3 }).map((h) => h.tool.short);
  // An attribute list names what the document has, not a tool per item (issue #42: such winners were right 0
  // times of 60 on a hidden benchmark); the ranking is the whole request's.
  assert.deepEqual(top(3), top(0));
  assert.ok(!top(3).includes("add_footnote"), top(3).join());
});

Deno.test("a synonym finds a tool but earns no name bonus (issue #42)", () => {
  const catalog = buildCatalog([{
    name: "tracker",
    tags: [],
    useWhen: [],
    tools: [{ name: "ticket", description: "Opens a ticket", inputSchema: { type: "object" } }],
  }]);
  const hit = search(buildIndex(catalog), "report an issue", { maxHits: 1 })[0]!;
  assert.equal(hit.tool.short, "ticket");
  assert.deepEqual(hit.matchedTerms, ["issue"]);
  assert.equal(hit.nameCoverage, 0);
  const typed = search(buildIndex(catalog), "report a ticket", { maxHits: 1 })[0]!;
  assert.equal(typed.nameCoverage, 1);
});

Deno.test("an abbreviation earns the name bonus like the word; a related term does not", () => {
  const catalog = buildCatalog([{
    name: "code",
    tags: [],
    useWhen: [],
    tools: [
      { name: "list_repositories", description: "Lists your repositories", inputSchema: { type: "object" } },
      { name: "list_tickets", description: "Lists the tickets", inputSchema: { type: "object" } },
    ],
  }]);
  const index = buildIndex(catalog);
  const hit = (q: string) => search(index, q, { maxHits: 1 })[0]!;
  assert.equal(hit("list my repos").tool.short, "list_repositories");
  // Credited at the spelling's weight (0.85) like a typed word; a related term not at all.
  assert.ok(hit("list my repos").nameCoverage > 0.8, `${hit("list my repos").nameCoverage}`);
  assert.equal(hit("list the bugs").tool.short, "list_tickets");
  assert.ok(hit("list the bugs").nameCoverage < 0.5, `${hit("list the bugs").nameCoverage}`);
});

Deno.test("search() finds an echo tool for 'repeat what I say' (to echo is to repeat back)", () => {
  const idx = buildIndex(buildCatalog([{
    name: "everything",
    tools: [
      {
        name: "echo",
        description: "Echoes back the input string",
        inputSchema: { properties: { message: {} } },
      },
      { name: "get-sum", description: "Returns the sum of two numbers" },
      { name: "get-env", description: "Returns all environment variables" },
    ],
  }]));
  assert.equal(search(idx, "repeat what I say: ping", { maxHits: 5 })[0]?.tool.short, "echo");
});

Deno.test("search() reads a report at a file path as a file to write", () => {
  const top = names(
    "give me a markdown report on /root/markdown/example.md about the page https://example.com",
    2,
  );
  assert.ok(top.includes("filesystem__write_file"), top.join());
  assert.ok(top.includes("fetch__fetch"), top.join());
});

Deno.test("search(): 'everything', 'anything', 'someone' name no topic (a server named everything is not meant)", async () => {
  // The reference servers' live tool lists (scripts/bench/data/plain_catalog.json): one server is named
  // `everything`.
  const data = new URL("../../scripts/bench/data/plain_catalog.json", import.meta.url);
  const idx = buildIndex(catalogFromJson(JSON.parse(await Deno.readTextFile(data))));
  assert.equal(
    search(idx, "show me everything in memory", { maxHits: 5 })[0]?.tool.namespaced,
    "memory__read_graph",
  );
});

Deno.test("search(): 'when was config.yaml last modified?' asks for a time, and edits nothing", async () => {
  const data = new URL("../../scripts/bench/data/plain_catalog.json", import.meta.url);
  const idx = buildIndex(catalogFromJson(JSON.parse(await Deno.readTextFile(data))));
  const top = search(idx, "when was config.yaml last modified?", { maxHits: 5 }).map((h) => h.tool.short);
  assert.equal(top[0], "get_file_info", top.join());
  // An imperative still edits: "modify config.yaml".
  assert.equal(search(idx, "modify config.yaml", { maxHits: 5 })[0]?.tool.short, "edit_file");
});

Deno.test("among the best tool's close siblings, those doing another action than asked move behind", () => {
  const kube = catalogFromJson({
    servers: [{
      name: "kubernetes",
      description: "Manage a Kubernetes cluster.",
      tools: [
        {
          name: "exec_in_pod",
          description: "Execute a command in a Kubernetes pod or container and return the output",
          inputSchema: { type: "object", properties: { name: { type: "string", description: "Pod name" } } },
        },
        {
          name: "kubectl_delete",
          description: "Delete Kubernetes resources by resource type, name, labels, or from a manifest file",
          inputSchema: {},
        },
        {
          name: "kubectl_logs",
          description: "Get logs from Kubernetes resources like pods, deployments, or jobs",
          inputSchema: {},
        },
        { name: "kubectl_scale", description: "Scale a Kubernetes deployment", inputSchema: {} },
      ],
    }],
  });
  const order = (ranking?: RankingOptions) =>
    search(buildIndex(kube, ranking), "get rid of the failing pods", { maxHits: 3 }).map((h) => h.tool.tool);
  assert.deepEqual(order(), ["kubectl_delete", "kubectl_logs", "exec_in_pod"]);
  // Without it the object's word decides, in tools that read or run.
  assert.deepEqual(order({ actionBand: 0 }), ["kubectl_logs", "exec_in_pod", "kubectl_delete"]);
});

Deno.test("a request naming a server by its name asks for that server's tools (#42)", () => {
  const tool = (name: string, description: string) => ({
    name,
    description,
    inputSchema: { type: "object" },
  });
  const catalog = (servers: string[]) =>
    buildCatalog([{
      name: servers[0]!,
      tags: [],
      useWhen: [],
      tools: [
        tool("create_jira_issue", "Create a new Jira issue in a project, with a summary and a description"),
        tool("read_jira_issue", "Read an issue by its key"),
      ],
    }, {
      name: servers[1]!,
      tags: [],
      useWhen: [],
      tools: [
        tool("create_issue", "Create an issue in a project"),
        tool("list_cycles", "List the cycles of a project"),
      ],
    }]);
  const first = (servers: string[], q: string) => search(buildIndex(catalog(servers)), q, { maxHits: 1 })[0];
  const request = "please make a new issue in plane for the broken invoice pdf";
  assert.equal(first(["atlassian", "plane"], request)?.tool.namespaced, "plane__create_issue");
  // The same words where no server is named so: the word is an ordinary one and moves nothing.
  assert.equal(first(["atlassian", "tracker"], request)?.tool.namespaced, "atlassian__create_jira_issue");
  // A server named by an action verb ("fetch") is not asked for by a request using the verb.
  assert.equal(first(["fetch", "plane"], "fetch the issue WEB-4")?.tool.namespaced, "fetch__read_jira_issue");
});

Deno.test("a tool ahead for its server's name is no clearer a lead than before the name moved others (#42)", async () => {
  const data = new URL("../../scripts/bench/data/heldout_catalog.json", import.meta.url);
  const index = buildIndex(catalogFromJson(JSON.parse(await Deno.readTextFile(data))));
  // "Switch branch in the git repository": `git__branch` leads the git server's tools, but the request's
  // words fit other servers' as well as before it named git; `git_checkout` is the tool, sixth.
  const ranked = rankQuery(index, "cambiare ramo nel repository git", { maxHits: 5 });
  assert.equal(ranked.hits[0]?.tool.server, "git");
  assert.notEqual(assess(ranked).status, "confident");
});

Deno.test("a request about the caller ranks the tools acting for the caller higher (#42)", () => {
  const tool = (name: string, description: string) => ({
    name,
    description,
    inputSchema: { type: "object" },
  });
  const index = buildIndex(buildCatalog([{
    name: "tracker",
    tags: [],
    useWhen: [],
    tools: [
      tool("list_sprints", "List the sprints of a board: current, future and closed"),
      tool(
        "get_my_current_sprint_issues",
        "Get the issues assigned to the authenticated user in the open sprints",
      ),
      tool("search_issues", "Search issues with a query"),
    ],
  }]));
  const first = (q: string) => search(index, q, { maxHits: 1 })[0]?.tool.short;
  assert.equal(first("what am i supposed to be working on this sprint?"), "get_my_current_sprint_issues");
  const off = buildIndex(buildCatalog([{
    name: "tracker",
    tags: [],
    useWhen: [],
    tools: [
      tool("list_sprints", "List the sprints of a board: current, future and closed"),
      tool("get_current_sprint_issues", "Get the issues assigned to a user in the open sprints"),
      tool("search_issues", "Search issues with a query"),
    ],
  }]));
  // The same words without the caller's tool: the sprint list leads.
  assert.equal(
    search(off, "what am i supposed to be working on this sprint?", { maxHits: 1 })[0]?.tool.short,
    "list_sprints",
  );
});
