import assert from "node:assert/strict";
import { buildCatalog } from "../../src/catalog/mod.ts";
import { buildIndex, search } from "../../src/resolver/mod.ts";
import { catalogFromJson } from "../../scripts/eval_resolver.ts";

const DATA = new URL("../../scripts/bench/data/", import.meta.url);

/** Six blind catalogs in one (Plane, Linear, Shortcut, monday.com, Atlassian, Google Calendar…; 468 tools). */
async function sixCatalogs() {
  const servers = [];
  for (const n of [5, 6, 7, 8, 9, 10]) {
    servers.push(...JSON.parse(await Deno.readTextFile(new URL(`blind${n}_catalog.json`, DATA))).servers);
  }
  return buildIndex(catalogFromJson({ servers }));
}

Deno.test("a server the request names ranks its tools before other servers' surface matches (issue #42)", async () => {
  const index = await sixCatalogs();
  const first = (q: string) => search(index, q, { maxHits: 1 })[0]?.tool.namespaced;
  // Linear's `create_issue` says "new issue"; the request names Plane.
  assert.equal(
    first("please to make new issue in plane for the invoice pdf what is broken"),
    "plane__create_issue",
  );
  // monday.com's `read_docs` says "documents"; the request names Shortcut.
  assert.equal(first("where's that rate limiting spec doc in shortcut"), "shortcut__documents-search");
  // "on Monday" is a day, not monday.com.
  assert.equal(
    first("decline the all-hands invite on Monday, I'm on leave that day"),
    "google-calendar__respond-to-event",
  );
});

const tool = (name: string, description: string) => ({ name, description, inputSchema: { type: "object" } });
const server = (name: string, tools: ReturnType<typeof tool>[]) => ({ name, tags: [], useWhen: [], tools });

Deno.test("which words of a server's name name it (issue #42)", () => {
  const index = buildIndex(buildCatalog([
    server("time", [tool("get_current_time", "Get the current time in a time zone")]),
    server("calendar", [
      tool("list_events", "List events in a time range"),
      tool("create_event", "Create an event at a time"),
    ]),
    server("mcp-simple-arxiv", [tool("get_paper_data", "Get a paper's abstract and authors")]),
    server("pdf-reader-mcp", [tool("read_pdf", "Read a PDF")]),
    server("docs", [tool("pdf_to_text", "Convert a PDF to text"), tool("merge_pdf", "Merge PDF files")]),
    server("google-maps", [tool("geocode", "Geocode an address")]),
  ]));
  // The servers a word names on its own (no other word of the name to follow it).
  const named = (word: string) =>
    (index.serverWords.get(word) ?? []).filter((w) => w.rest.length === 0).map((w) =>
      index.servers[w.server]
    );
  // A one-word name that other tools say more often ("time") names nothing; one the server owns does.
  assert.deepEqual(named("time"), []);
  assert.deepEqual(named("calendar"), ["calendar"]);
  // A word of a longer name alone: only when no English word and mostly the server's ("arxiv", not "pdf").
  assert.deepEqual(named("arxiv"), ["mcp-simple-arxiv"]);
  assert.deepEqual(named("pdf"), []);
  // The first word of a longer name, with the rest to follow.
  assert.deepEqual(index.serverWords.get("google")?.map((w) => w.rest), [["maps"]]);
});

Deno.test("a product a server's tools are named after names the server ('in jira') (issue #42)", async () => {
  const servers = [];
  for (const f of ["blind10_catalog.json", "heldout2_catalog.json", "blind7_catalog.json"]) {
    servers.push(...JSON.parse(await Deno.readTextFile(new URL(f, DATA))).servers);
  }
  const index = buildIndex(catalogFromJson({ servers }));
  const first = (q: string) => search(index, q, { maxHits: 1 })[0]?.tool.namespaced;
  // `git_status` and `git_log` are named by the request's words; Atlassian's tools by "jira".
  assert.equal(first("whats the status of PAY-481 in jira"), "atlassian__read_jira_issue");
  assert.equal(
    first("how many hours did Ravi log last week? it's in jira"),
    "atlassian__get_user_time_tracking",
  );
  // A word of one server's tool names is no product when it is an English word or in fewer than three.
  const named = (word: string) =>
    (index.serverWords.get(word) ?? []).filter((w) => !w.described).map((w) => index.servers[w.server]);
  assert.deepEqual(named("jira"), ["atlassian"]);
  assert.deepEqual(named("confluence"), []);
});

Deno.test("a service named by what its description says it is ('on confluence', 'in our CRM') (issue #42)", async () => {
  const servers = [];
  for (const f of ["blind10_catalog.json", "heldout_catalog.json", "blind11_catalog.json"]) {
    servers.push(...JSON.parse(await Deno.readTextFile(new URL(f, DATA))).servers);
  }
  const index = buildIndex(catalogFromJson({ servers }));
  const first = (q: string) => search(index, q, { maxHits: 1 })[0]?.tool.namespaced;
  // Atlassian's description says "Confluence and Jira"; monday.com's `create_doc` says "doc".
  assert.equal(
    first("attach architecture.pdf to the design doc page on confluence"),
    "atlassian__upload_confluence_attachment",
  );
  // A description's word names its server only if its own tools say it and no other server's tool does.
  const described = (word: string) =>
    (index.serverWords.get(word) ?? []).filter((w) => w.described).map((w) => index.servers[w.server]);
  assert.deepEqual(described("confluence"), ["atlassian"]);
  assert.deepEqual(described("crm"), ["attio"]);
  assert.deepEqual(described("integration"), []);
  // A description's word before a noun the catalog has is its modifier, not the service: brave-search's
  // description says "local search"; the request's "local" is the repository's.
  const heldout = buildIndex(
    catalogFromJson(JSON.parse(await Deno.readTextFile(new URL("heldout_catalog.json", DATA)))),
  );
  const five = search(heldout, "show the last 5 commits of the local repository history", { maxHits: 5 });
  assert.equal(five[0]?.tool.server, "git");
  assert.ok(five.every((h) => h.tool.server !== "brave-search"));
});
