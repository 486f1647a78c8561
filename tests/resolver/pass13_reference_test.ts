/**
 * The thirteenth ranking pass, part A (issue #42, changes 200–229): classes read off the misses of requests
 * typed blind over the reference servers, each checked here on a catalog excerpt.
 */
import assert from "node:assert/strict";
import { buildCatalog } from "../../src/catalog/mod.ts";
import { assess, buildIndex, rankQuery, search } from "../../src/resolver/mod.ts";
import { benchIndex } from "./_bench_catalog.ts";
import { parseQuery, splitClauses } from "../../src/resolver/query.ts";
import { extractLocators } from "../../src/resolver/locators.ts";
import { ACTION, ARITHMETIC, requestAction } from "../../src/resolver/actions.ts";

const tool = (name: string, description: string) => ({ name, description, inputSchema: { type: "object" } });

/** The short name of the first hit for a request, over one server `name` with `tools`. */
function firstOver(name: string, tools: ReturnType<typeof tool>[]): (request: string) => string | undefined {
  const index = buildIndex(buildCatalog([{ name, tags: [], useWhen: [], tools }]));
  return (request) => search(index, request, { maxHits: 1 })[0]?.tool.short;
}

/** The memory server's tools, as `tools/list` describes them. */
const MEMORY = [
  tool("create_entities", "Create multiple new entities in the knowledge graph"),
  tool("create_relations", "Create multiple new relations between entities in the knowledge graph"),
  tool("add_observations", "Add new observations to existing entities in the knowledge graph"),
  tool("delete_entities", "Delete multiple entities and their associated relations from the knowledge graph"),
  tool("delete_observations", "Delete specific observations from entities in the knowledge graph"),
  tool("delete_relations", "Delete multiple relations from the knowledge graph"),
  tool("read_graph", "Read the entire knowledge graph"),
  tool("search_nodes", "Search for nodes in the knowledge graph based on a query"),
  tool("open_nodes", "Open specific nodes in the knowledge graph by their names"),
];

Deno.test("200: a link word's synonyms say the link the action looks for, no description's word (#42)", () => {
  const first = firstOver("memory", MEMORY);
  // "connection" ~ "associated": `delete_entities` ("… and their associated relations") came first.
  assert.equal(first("remove that connection"), "delete_relations");
  assert.equal(first("Priya doesnt report to Marco anymore, remove that connection"), "delete_relations");
  assert.equal(first("connect Ana and Acme"), "create_relations");
});

Deno.test("201: a relation said to have ended, then an imperative unlinking it, is one step (#42)", () => {
  const first = firstOver("memory", MEMORY);
  // Across a full stop, and with "doesnt" typed without its apostrophe.
  assert.equal(
    first("alice doesnt manage bob anymore. remove that connection but keep both of them"),
    "delete_relations",
  );
  assert.equal(
    first(
      "Tom doesn't manage Sara anymore, she moved teams. Remove that connection between them but keep both of them.",
    ),
    "delete_relations",
  );
  assert.deepEqual(splitClauses("alice doesnt manage bob anymore. remove that connection"), [
    "alice doesnt manage bob anymore, remove that connection",
  ]);
  // A statement and an imperative of their own across a full stop stay two steps.
  assert.equal(
    splitClauses("Accountant says 500 was booked to supplies. fix it with a journal entry").length,
    2,
  );
});

Deno.test("202: a named thing forgotten as a whole, its verb capitalized or with a bare 'about' (#42)", () => {
  const first = firstOver("memory", MEMORY);
  assert.equal(first("Forget everything about Marco, we're not in touch anymore."), "delete_entities");
  assert.equal(
    first("forget about Legacy-CRM entirely, it was decommissioned last month"),
    "delete_entities",
  );
  // A part of the thing is still a part.
  assert.equal(first("forget Bob's note about golf"), "delete_observations");
});

Deno.test("203: asking yes or no whether anything is kept about a thing searches what is known (#42)", () => {
  const first = firstOver("kb", [
    ...MEMORY,
    tool("search_files", "Recursively search for files and directories matching a pattern"),
  ]);
  assert.equal(first("do you have anything saved about kubernetes?"), "search_nodes");
  assert.equal(first("Do you have anything saved about my allergies?"), "search_nodes");
  assert.equal(requestAction("do we know anything about Acme?"), ACTION.search);
});

Deno.test("204: a relation stated after a discourse marker, or as a dependency, is one to keep (#42)", () => {
  const first = firstOver("kb", [
    ...MEMORY,
    tool("gzip-file-as-resource", "Compresses a single file using gzip compression. Depends on fetch"),
  ]);
  assert.equal(first("oh and Priya reports to Marco"), "create_relations");
  assert.equal(first("Orion depends on Atlas"), "create_relations");
  assert.equal(requestAction("btw Tom is Lena's brother"), ACTION.create | ACTION.link);
});

Deno.test("205: a dotfile named is a file, its name's words a path's segments (#42)", () => {
  assert.deepEqual(extractLocators("when was .env.production last modified?"), {
    rest: "when was   last modified?",
    spans: [{
      path: true,
      directory: false,
      words: [],
      extras: [{ term: "fil", weight: 0.5 }, { term: "text", weight: 0.5 }, { term: "env", weight: 0.3 }, {
        term: "product",
        weight: 0.3,
      }],
    }],
  });
  // A type of files keeps its extension's reading.
  assert.equal(extractLocators("show all .log files").spans[0]!.words[0]!.word, "log");
  const first = firstOver("kb", [
    tool("get-env", "Returns all environment variables, helpful for debugging MCP server configuration"),
    tool(
      "get_file_info",
      "Retrieve detailed metadata about a file or directory. Returns comprehensive information including size, creation time, last modified time, permissions, and type.",
    ),
    tool(
      "list_directory_with_sizes",
      "Get a detailed listing of all files and directories in a specified path, including sizes.",
    ),
  ]);
  assert.equal(first("when was .env.production last modified? and whats its size"), "get_file_info");
});

Deno.test("206: a stated value's words weigh like quoted text: the value is given to the tool (#42)", async () => {
  const index = await benchIndex("plain_catalog.json");
  const first = (q: string) => search(index, q, { maxHits: 1 })[0]?.tool.short;
  // "moved" is the fact kept, not a file moved.
  assert.equal(first("add to what you know about Orion: deadline moved to March 14"), "add_observations");
});

Deno.test("207: a folder under the home directory is a path; eating all the space is a size (#42)", async () => {
  assert.equal(extractLocators("list ~/Downloads").spans[0]?.directory, true);
  const index = await benchIndex("plain_catalog.json");
  const first = (q: string) => search(index, q, { maxHits: 1 })[0]?.tool.short;
  assert.equal(
    first("what's eating all the space in ~/Downloads? biggest first"),
    "list_directory_with_sizes",
  );
});

Deno.test("208: a stated value's word earns a tool's name no more than its weight (#42)", async () => {
  const index = await benchIndex("plain_catalog.json");
  const hits = (q: string) => search(index, q, { maxHits: 5 }).map((h) => h.tool.short);
  const ranked = hits("note down that project Falcon is a payments service written in Go");
  assert.ok(ranked.indexOf("add_observations") < 2, ranked.join(" "));
  // "written" is the fact's word: write_file's name earns half of it, so its lead is slight.
  const [first, second] = search(index, "note down that project Falcon is a payments service written in Go", {
    maxHits: 2,
  });
  assert.ok(first!.score < 1.2 * second!.score, `${first!.score} ${second!.score}`);
});

Deno.test("209: asking what is in a directory asks to list it; the directory is the listing's path (#42)", () => {
  const parsed = parseQuery("what's inside src/components?");
  assert.ok(parsed.terms.some((t) => t.term === "list"), parsed.terms.map((t) => t.term).join(" "));
  assert.deepEqual(parsed.locators, { path: true, url: false });
  // A directory named otherwise is no path a tool is given by this rule.
  assert.deepEqual(parseQuery("create src/components").locators, { path: false, url: false });
});

Deno.test("210: a request that is all locator is answered by a tool doing what it asks on that path (#42)", async () => {
  const index = await benchIndex("plain_catalog.json");
  const answer = (q: string) => {
    const a = assess(rankQuery(index, q, { maxHits: 5 }));
    return a.status;
  };
  assert.equal(answer("what's in src/utils?"), "ambiguous");
  assert.equal(
    rankQuery(index, "what's in src/utils?", { maxHits: 1 }).hits[0]?.tool.short,
    "list_directory",
  );
  // A bare path asks for nothing.
  assert.equal(answer("src/utils"), "no_match");
});

Deno.test("211: what the user said before ('who did I say was on-call?') is recalled from what was kept (#42)", () => {
  const first = firstOver("memory", MEMORY);
  assert.equal(first("who did i say was on-call this week? check ur memory"), "search_nodes");
});

Deno.test("212: looking at a file named reads it (#42)", async () => {
  const index = await benchIndex("plain_catalog.json");
  const first = (q: string) => search(index, q, { maxHits: 1 })[0]?.tool.short;
  // `get-tiny-image` ("Returns a tiny MCP logo image") came first by "png".
  assert.equal(first("take a look at docs/img/login-bug.png"), "read_media_file");
});

Deno.test("213: arithmetic with its numbers in words is a calculation (#42)", async () => {
  assert.ok(ARITHMETIC.test("what is seventeen plus twenty five"));
  assert.ok(ARITHMETIC.test("one hundred minus forty-two"));
  assert.ok(!ARITHMETIC.test("do it two times a day"));
  const index = await benchIndex("plain_catalog.json");
  assert.equal(search(index, "what is seventeen plus twenty five", { maxHits: 1 })[0]?.tool.short, "get-sum");
});

Deno.test("214: starting to do something to a new or named thing makes it; a bare activity still switches (#42)", () => {
  assert.equal(requestAction("start tracking a new project called Orion in memory"), ACTION.create);
  assert.equal(requestAction("start sending updates"), ACTION.toggle);
  const first = firstOver("memory", MEMORY);
  assert.equal(
    first("start tracking a new project called Orion in memory, kicked off Q3 2024"),
    "create_entities",
  );
});

Deno.test("215: a fact, then 'don't forget it', asks to keep the fact (#42)", () => {
  assert.equal(
    requestAction("My landlord is Mr. Petrov, his number is 0176 5550199. Don't forget it."),
    ACTION.create,
  );
  // A negated action of its own still calls it off.
  assert.equal(requestAction("that email I scheduled, dont send it after all"), ACTION.delete);
});
