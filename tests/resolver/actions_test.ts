import assert from "node:assert/strict";
import { benchIndex } from "./_bench_catalog.ts";
import { buildCatalog } from "../../src/catalog/mod.ts";
import { assess, buildIndex, rankQuery, search } from "../../src/resolver/mod.ts";
import { catalogFromJson } from "../../scripts/eval_resolver.ts";
import {
  ACTION,
  actionMatch,
  ARITHMETIC,
  asksForNew,
  isActionParticiple,
  namesLink,
  requestAction,
  requestActions,
  toolActions,
} from "../../src/resolver/actions.ts";
import { parseQuery, splitClauses } from "../../src/resolver/query.ts";
import { stem } from "../../src/resolver/tokenize.ts";

Deno.test("requestAction() reads the action of a request's first word, with its particle", () => {
  assert.equal(requestAction("remember that Ana works at Acme"), ACTION.create);
  assert.equal(requestAction("please forget the entity Bob"), ACTION.delete);
  assert.equal(requestAction("can you link Ana to Acme"), ACTION.link | ACTION.create);
  assert.equal(requestAction("unlink Ana and Acme"), ACTION.link | ACTION.delete);
  assert.equal(requestAction("look up Acme in the graph"), ACTION.search);
  assert.equal(requestAction("get the list of open pull requests"), ACTION.read | ACTION.list);
  // Questions, arithmetic and long task descriptions name no single action.
  assert.equal(requestAction("what is 17 plus 25"), 0);
  assert.equal(requestAction("add 3 and 4"), 0);
  assert.equal(
    requestAction("write a quick start tutorial for the design system with examples of every component"),
    0,
  );
});

Deno.test("a question asks to read, search or list; a question how to do something asks nothing", () => {
  const reads = ACTION.read | ACTION.search | ACTION.list;
  assert.equal(requestAction("how big is backup.zip?"), reads);
  assert.equal(requestAction("who is Dana connected to in my knowledge graph?"), reads);
  assert.equal(requestAction("when was config.yaml last modified?"), reads);
  assert.equal(requestAction("how do I create a repository?"), 0);
  assert.equal(requestAction("what can I use to send an email?"), 0);
  assert.equal(requestAction("how to delete a branch"), 0);
  // A question's words look for no action's words: it says what it wants to know.
  assert.equal(requestActions("who is Dana connected to?").recall, 0);
});

Deno.test("arithmetic whose verb follows its operands, or a noun before them, is a calculation", () => {
  for (const q of ["what do 14 and 29 add up to?", "12 and 30 added together", "the sum of 3 and 4"]) {
    assert.ok(ARITHMETIC.test(q), q);
    assert.equal(requestAction(q), 0);
  }
  // Numbers that are not operands: a date, a count.
  assert.ok(!ARITHMETIC.test("add 2 files and 3 folders to the archive"));
  assert.ok(!ARITHMETIC.test("compare the 2020 and 2024 sales"));
});

Deno.test("a first-person statement asks for no action; a wish asks for the verb after it", () => {
  assert.equal(requestAction("I am writing a popular science article on Rome"), 0);
  assert.equal(requestAction("we have three offices in Berlin"), 0);
  assert.equal(requestAction("I want to save the report"), ACTION.create);
  assert.equal(requestAction("I'd like to delete the old branch"), ACTION.delete);
  assert.equal(requestAction("we need to find the invoice"), ACTION.search);
});

Deno.test("idioms, request-only verbs, repair verbs and adding a link name their action", () => {
  assert.equal(requestAction("keep in mind that Dana is allergic to peanuts"), ACTION.create);
  assert.equal(requestAction("bear in mind the deadline is Friday"), ACTION.create);
  assert.equal(requestAction("make a note that the door code changed"), ACTION.create);
  // "note" at the head of a request records; in a tool's text it is a noun.
  assert.equal(requestAction("note that Omar speaks Arabic"), ACTION.create);
  assert.equal(toolActions("note search", "Note titles matching a query"), ACTION.search);
  // "Make" creates what is new or named; otherwise it takes the next word's action, or none.
  assert.equal(requestAction("make a folder named backups"), ACTION.create);
  assert.equal(requestAction("make a new folder"), ACTION.create);
  assert.equal(requestAction("make a list of my open issues"), ACTION.list);
  assert.equal(requestAction("make a copy of someone else's repository"), 0);
  // Putting a thing somewhere writes it or moves it there.
  assert.equal(requestAction("put report.csv in the done folder"), ACTION.create | ACTION.update);
  assert.equal(toolActions("put object", "Put an object into a bucket"), 0);
  assert.equal(requestAction("fix the typo on line 12 of index.html"), ACTION.update);
  assert.equal(requestAction("correct the spelling in the title"), ACTION.update);
  // Adding or removing a link, relation or connection links or unlinks.
  assert.equal(requestAction("add that link"), ACTION.create | ACTION.link);
  assert.equal(requestAction("remove the relation between them"), ACTION.delete | ACTION.link);
  assert.equal(requestAction("add a comment to the issue"), ACTION.create);
});

Deno.test("generating, producing or composing something creates it", () => {
  assert.equal(requestAction("generate a presentation on the new phones"), ACTION.create);
  assert.equal(requestAction("compose a short poem"), ACTION.create);
  assert.equal(toolActions("generate_bar_chart", "Generate a bar chart from data."), ACTION.create);
});

Deno.test("toolActions() reads the verb a tool's name and lead sentence start with, not their nouns", () => {
  // Getting links is reading (many links: it lists when a list is asked, 403), not linking.
  assert.equal(
    toolActions("get resource links", "", "Returns up to ten resource links"),
    ACTION.read | ACTION.many,
  );
  // Creating a relation is linking.
  assert.equal(
    toolActions("create relations", "", "Create multiple new relations"),
    ACTION.create | ACTION.link,
  );
  assert.equal(toolActions("delete relations", "", "Delete relations"), ACTION.delete | ACTION.link);
  assert.equal(toolActions("echo", "", "Echoes back the input string"), 0);
  assert.equal(actionMatch(ACTION.link | ACTION.create, ACTION.create), 0.5);
  assert.equal(actionMatch(ACTION.delete, ACTION.read), -1);
  assert.equal(actionMatch(0, ACTION.read), 0);
});

const tool = (name: string, description: string) => ({ name, description, inputSchema: { type: "object" } });

/** The short name of the first hit for a request, over one server `name` with `tools`. */
function firstOver(name: string, tools: ReturnType<typeof tool>[]): (request: string) => string | undefined {
  const index = buildIndex(buildCatalog([{ name, tags: [], useWhen: [], tools }]));
  return (request) => search(index, request, { maxHits: 1 })[0]?.tool.short;
}

Deno.test("a tool doing the action asked for ranks above one that only names its words (issue #42)", () => {
  const catalog = buildCatalog([{
    name: "kb",
    tags: [],
    useWhen: [],
    tools: [
      tool("get_links", "Returns the links of a page"),
      tool("create_relations", "Create relations between entities"),
      tool("read_entities", "Read entities of the graph"),
      tool("delete_entities", "Delete entities from the graph"),
    ],
  }]);
  const index = buildIndex(catalog);
  const off = buildIndex(catalog, { actionBonus: 0, actionPenalty: 0, actionBand: 0 });
  const first = (i: typeof index, q: string) => search(i, q, { maxHits: 1 })[0]?.tool.short;
  assert.equal(first(index, "link Ana to Acme"), "create_relations");
  assert.equal(first(index, "forget the entities Ana and Bob"), "delete_entities");
  assert.equal(first(index, "read the entities Ana and Bob"), "read_entities");
  // Without the action match, the verb's own word finds the tool that names links.
  assert.equal(first(off, "link Ana to Acme"), "get_links");
});

Deno.test("a tool whose description says it is deprecated ranks below its replacement", () => {
  const catalog = buildCatalog([{
    name: "fs",
    tags: [],
    useWhen: [],
    tools: [
      tool("read_file", "Read a file as text. DEPRECATED: Use read_text_file instead."),
      tool("read_text_file", "Read a text file as text, with its encoding handled."),
    ],
  }]);
  const top = (options = {}) =>
    search(buildIndex(catalog, options), "read the file notes.txt").map((h) => h.tool.short);
  assert.deepEqual(top(), ["read_text_file", "read_file"]);
  assert.equal(top({ deprecatedPenalty: 0 })[0], "read_file");
});

Deno.test("a question modifies nothing; showing a file reads it, showing a directory lists it", () => {
  assert.equal(requestAction("when was config.yaml last modified?") & ACTION.update, 0);
  assert.equal(requestAction("modify config.yaml"), ACTION.update);
  const weight = (q: string, term: string) =>
    parseQuery(q).terms.find((t) => t.term === stem(term))?.weight ?? 0;
  assert.equal(weight("show me photo.png", "read"), 1);
  assert.ok(weight("show me photo.png", "list") < 0.5);
  assert.equal(weight("show /home/ana/docs", "list"), 1);
});

Deno.test("several files at once are multiple; how big asks for a size; overwriting writes", () => {
  const has = (q: string, term: string) => parseQuery(q).terms.some((t) => t.term === stem(term));
  assert.ok(has("read a.txt and b.txt at once", "multiple"));
  assert.ok(has("open several files together", "multiple"));
  assert.ok(!has("open notes.txt", "multiple"));
  assert.ok(has("how big is backup.zip?", "size"));
  assert.equal(requestAction("overwrite config.json"), ACTION.create | ACTION.update);
});

Deno.test("a bare extension is a file pattern; 'what do you know about' searches knowledge", () => {
  const has = (q: string, term: string) => parseQuery(q).terms.some((t) => t.term === stem(term));
  assert.ok(has("find all .log files", "pattern") && has("find all *.md files", "text"));
  assert.ok(!has("done. It works", "pattern"));
  assert.ok(has("what do you know about Ana?", "knowledge") && has("what do you know about Ana?", "search"));
  // What is kept about someone is asked the same way.
  assert.ok(
    has("what do I have stored about Priya?", "knowledge") && has("what have we saved on Acme?", "search"),
  );
  assert.ok(!has("what do I have to do today?", "knowledge"));
  assert.ok(has("tell me everything about Lisa", "knowledge") && has("tell me about Acme", "search"));
});

Deno.test("a tool that reads and says it gives a list lists, in English or Chinese", () => {
  assert.equal(
    toolActions("get stations", "", "Get a list of the stations of a city"),
    ACTION.read | ACTION.list,
  );
  assert.equal(
    toolActions("get-stations-code-in-city", "", "查询该城市所有火车站，结果是一个列表。"),
    ACTION.read | ACTION.list,
  );
  // A tool that does something else and mentions a list does not list.
  assert.equal(toolActions("delete items", "", "Delete a list of items"), ACTION.delete);
  assert.equal(toolActions("get station", "", "Get the code of one station by its name"), ACTION.read);
  const first = firstOver("rail", [
    tool("get-station-code-by-names", "Get the station code of stations by their names."),
    tool("get-stations-in-city", "Get a list of every station of a city, with its code."),
  ]);
  assert.equal(first("list all the stations in Chengdu"), "get-stations-in-city");
});

Deno.test("wiping or discarding something deletes it", () => {
  assert.equal(requestAction("wipe Omar from the knowledge base"), ACTION.delete);
  assert.equal(requestAction("discard the draft"), ACTION.delete);
});

Deno.test("starting or stopping an ongoing activity switches it; starting a thing runs it", () => {
  assert.equal(requestAction("start sending resource update notifications"), ACTION.toggle);
  assert.equal(requestAction("stop logging every request"), ACTION.toggle);
  assert.equal(requestAction("start the build"), ACTION.run);
  const first = firstOver("srv", [
    tool("trigger-operation", "Start a long-running operation that sends progress notifications"),
    tool("toggle-updates", "Toggle sending resource update notifications"),
  ]);
  assert.equal(first("start sending update notifications"), "toggle-updates");
});

Deno.test("a state said to have ended removes the fact; between two named things, the relation", () => {
  assert.equal(requestAction("Omar no longer reports to Priya"), ACTION.delete | ACTION.link);
  assert.equal(requestAction("the printer is not shared anymore"), ACTION.delete);
  assert.equal(requestAction("a longer report on sales"), 0);
  const first = firstOver("kb", [
    tool("create_relations", "Create relations between entities"),
    tool("delete_relations", "Delete relations between entities"),
    tool("delete_entities", "Delete entities from the graph"),
  ]);
  assert.equal(first("Omar no longer reports to Priya"), "delete_relations");
});

Deno.test("room taken asks for a size: take up space, how much disk space, the largest files", () => {
  const has = (q: string, term: string) => parseQuery(q).terms.some((t) => t.term === stem(term));
  assert.ok(has("which files in this folder take up the most space", "size"));
  assert.ok(has("how much disk space does /var/log use?", "size"));
  assert.ok(has("show me the largest files here", "size"));
  assert.ok(!has("find photos of outer space", "size"));
});

Deno.test("a relative path to a file is a file path: saving to it writes a file", () => {
  const terms = (q: string) => parseQuery(q).terms.map((t) => t.term);
  const save = terms("save this text to notes/todo.md");
  assert.ok(save.includes(stem("write")) && save.includes(stem("file")));
  assert.ok(terms("open src/app.ts").includes(stem("read")));
  // Words joined by a slash are no path without a file name.
  assert.ok(!terms("explain TCP/IP and input/output").includes(stem("file")));
});

Deno.test("a new or named thing is created, not added to an existing one", () => {
  const first = firstOver("kb", [
    tool("add_observations", "Add new observations to existing entities"),
    tool("create_entities", "Create multiple new entities in the knowledge graph"),
  ]);
  assert.equal(first("save a new person called Carlos"), "create_entities");
  assert.equal(first("store a contact named Omar"), "create_entities");
  // Adding to what exists still finds the tool that does.
  assert.equal(first("add the observation that Ana likes tea"), "add_observations");
  // Replacing an existing thing is no adding to it: it creates, and overwriting updates (its "or" clause).
  assert.equal(
    toolActions("write_file", "", "Create a new file or overwrite an existing file"),
    ACTION.create | ACTION.update,
  );
});

Deno.test("acting on a named thing as a whole acts on the entity, not on a part of it", () => {
  const first = firstOver("kb", [
    tool("delete_relations", "Delete relations from the knowledge graph"),
    tool("delete_observations", "Delete observations from entities in the knowledge graph"),
    tool("delete_entities", "Delete entities and their relations from the knowledge graph"),
  ]);
  assert.equal(first("erase Carlos from the knowledge graph"), "delete_entities");
  assert.equal(first("remove everything about Initech from the graph"), "delete_entities");
  // Unlinking two named things removes their relation.
  assert.equal(first("unlink Ana and Acme"), "delete_relations");
  const has = (q: string) => parseQuery(q).terms.some((t) => t.term === stem("entity"));
  assert.ok(has("forget everything you know about Bob") && !has("delete the old logs"));
  assert.ok(!has("delete Bob's note about tea"));
});

Deno.test("putting a thing in a folder moves it there; putting text in a file writes it", () => {
  // More than the verb's WordNet synonym (0.3): the phrase's own weight.
  const has = (q: string, term: string) =>
    parseQuery(q).terms.some((t) => t.term === stem(term) && t.weight >= 0.5);
  assert.ok(has("put report.csv in the done folder", "move"));
  assert.ok(has("place the photos into my archive directory", "move"));
  assert.ok(!has("put this text in notes.txt", "move"));
});

Deno.test("more verbs and phrasal verbs of the action families; a phrasal verb keeps its own action", () => {
  assert.equal(requestAction("scrap the old drafts"), ACTION.delete);
  assert.equal(requestAction("get rid of Carlos from memory"), ACTION.delete);
  assert.equal(requestActions("get rid of Carlos").recall, ACTION.delete);
  assert.equal(requestAction("throw away the temp files"), ACTION.delete);
  assert.equal(requestAction("look for files named report"), ACTION.search);
  assert.equal(requestAction("look at notes.txt"), ACTION.read);
  assert.equal(requestAction("examine notes.txt"), ACTION.read);
  assert.equal(requestAction("set up a folder for photos"), ACTION.create);
  assert.equal(requestAction("keep a record of Ana's birthday"), ACTION.create);
  // "Get" before an action word still takes that word's action.
  assert.equal(requestAction("get the list of open pull requests"), ACTION.read | ACTION.list);
  const catalog = buildCatalog([{
    name: "kb",
    tags: [],
    useWhen: [],
    tools: [
      tool("add_observations", "Add new observations to existing entities"),
      tool("create_entities", "Create multiple new entities in the knowledge graph"),
    ],
  }]);
  // A new detail of a known person is added to it; only "a new X" or a named thing is made anew.
  const first = search(buildIndex(catalog), "keep track of Ana's new phone number", { maxHits: 1 })[0];
  assert.equal(first?.tool.short, "add_observations");
});

Deno.test("creating or making a path with no file name makes a directory, not a file", () => {
  const first = firstOver("fs", [
    tool("write_file", "Create a new file or overwrite an existing file with new content"),
    tool("create_directory", "Create a new directory or ensure a directory exists"),
  ]);
  assert.equal(first("create the directory /tmp/out"), "create_directory");
  assert.equal(first("make /home/ana/backups"), "create_directory");
  assert.equal(first("create /tmp/out/report.md"), "write_file");
  const weight = (q: string, term: string) =>
    parseQuery(q).terms.find((t) => t.term === stem(term))?.weight ?? 0;
  // "Make a copy of" a directory makes no directory.
  assert.ok(weight("make a copy of /home/ana/backups", "create") < 0.5);
});

Deno.test("a question for what a named file holds reads it", () => {
  const weight = (q: string, term: string) =>
    parseQuery(q).terms.find((t) => t.term === stem(term))?.weight ?? 0;
  assert.equal(weight("what's inside logs/app.log", "read"), 1);
  assert.equal(weight("what does app.log contain?", "read"), 1);
  assert.ok(weight("what's inside the box?", "read") < 0.5);
});

Deno.test("'related to', 'relating to', 'in relation to' mean about: they relate nothing", () => {
  assert.equal(requestAction("delete everything related to Bob"), ACTION.delete);
  assert.equal(requestAction("delete the relation between Ana and Bob"), ACTION.delete | ACTION.link);
  const has = (q: string, term: string) => parseQuery(q).terms.some((t) => t.term === stem(term));
  assert.ok(!has("look up anything related to Apollo", "relation"));
  assert.ok(has("show the related entities", "relation"));
});

Deno.test("appending adds to what is there: next to a file it edits the file", () => {
  assert.equal(requestAction("append a line to todo.txt"), ACTION.create | ACTION.update);
  const weight = (q: string, term: string) =>
    parseQuery(q).terms.find((t) => t.term === stem(term))?.weight ?? 0;
  assert.equal(weight("append a line to todo.txt", "edit"), 1);
});

Deno.test("an ended state asks for a removal only when no verb leads the request", () => {
  assert.equal(requestAction("list the packages that are no longer maintained"), ACTION.list);
  assert.equal(requestAction("which packages are no longer maintained?") & ACTION.delete, 0);
  assert.equal(requestAction("Bob doesn't live in Rome anymore"), ACTION.delete | ACTION.link);
});

Deno.test("a named thing added to an existing one is no new thing to create", () => {
  assert.equal(asksForNew("store a new contact named Omar"), true);
  assert.equal(asksForNew("add a label named bug to issue 5"), false);
  assert.equal(asksForNew("add a tag called urgent to the login task"), false);
  assert.equal(asksForNew("delete the file named old.txt"), false);
});

Deno.test("after a generic verb a plural is the thing acted on, and reading many things lists them", () => {
  // "records" names what is found, not a request to record.
  assert.equal(requestAction("find records mentioning Berlin"), ACTION.search);
  assert.equal(requestAction("find and record the results"), ACTION.search | ACTION.create);
  assert.equal(requestAction("show me all my invoices"), ACTION.read | ACTION.list);
  assert.equal(requestAction("get the pods"), ACTION.read | ACTION.list);
  assert.equal(requestAction("show me the invoice in_55"), ACTION.read);
  assert.equal(requestAction("get the list of open pull requests"), ACTION.read | ACTION.list);
  const catalog = buildCatalog([{
    name: "billing",
    tags: [],
    useWhen: [],
    tools: [
      tool("finalize_invoice", "This tool will finalize an invoice."),
      tool("list_invoices", "This tool will fetch a list of invoices."),
      tool("create_invoice", "This tool will create an invoice."),
    ],
  }]);
  assert.equal(search(buildIndex(catalog), "show me all my invoices")[0]?.tool.tool, "list_invoices");
});

Deno.test("opening or starting a new thing makes it, in requests and in tools", () => {
  assert.equal(toolActions("browser_tab_new", "", "Open a new tab"), ACTION.create);
  assert.equal(toolActions("browser_tab_list", "", "List browser tabs"), ACTION.list);
  assert.equal(requestAction("open a new browser tab"), ACTION.create);
  assert.equal(requestAction("start a new chat with Ana"), ACTION.create);
  assert.equal(requestAction("open notes.txt"), ACTION.read);
});

Deno.test("a tool name's first action word is its verb, after a server or product prefix", () => {
  assert.equal(toolActions("todoist create task", "", "Create a new task in Todoist"), ACTION.create);
  assert.equal(
    toolActions("brave web search", "", "Performs a web search using the Brave Search API"),
    ACTION.search,
  );
  assert.equal(toolActions("browser tab list", "", ""), ACTION.list);
  assert.equal(toolActions("get resource links", "", ""), ACTION.read | ACTION.many);
  assert.equal(toolActions("exec in pod", "", "Execute a command in a pod"), ACTION.run);
});

Deno.test("two verbs joined at the head of a tool's text are both its actions", () => {
  assert.equal(
    toolActions("kubectl get", "", "Get or list Kubernetes resources by resource type"),
    ACTION.read | ACTION.list,
  );
  assert.equal(toolActions("upsert file", "", "Create or update a file"), ACTION.create | ACTION.update);
  assert.equal(toolActions("get weather", "", "Get weather or forecast"), ACTION.read);
});

Deno.test("a pronoun object between a phrasal verb and its particle keeps the phrase's action (issue #42)", () => {
  assert.equal(requestAction("keep that in mind"), ACTION.create);
  assert.equal(requestAction("keep that in mind for later"), ACTION.create);
  assert.equal(requestAction("write it down"), ACTION.create);
  assert.equal(requestAction("look it up"), ACTION.search);
  assert.equal(requestAction("throw them away"), ACTION.delete);
  // A noun object is no pronoun: "keep the receipt in mind" is no idiom read this way.
  assert.equal(requestAction("keep the receipt in mind"), 0);
});

Deno.test("a statement, then an imperative about it: the imperative's action, one step (issue #42)", () => {
  assert.equal(requestAction("Ana moved to Lisbon last month, keep that in mind"), ACTION.create);
  assert.equal(requestAction("Dave's number is wrong, drop that fact"), ACTION.delete);
  assert.equal(
    requestAction("Apollo belongs to Marketing, please connect the two"),
    ACTION.link | ACTION.create,
  );
  // A later clause that does not point back is no imperative about the statement.
  assert.equal(requestAction("Ana moved to Lisbon, nice"), 0);
  assert.deepEqual(splitClauses("Ana moved to Lisbon last month, keep that in mind"), [
    "Ana moved to Lisbon last month, keep that in mind",
  ]);
  // A new sentence is a step of its own, and a clause with an action of its own is no statement.
  assert.equal(splitClauses("Ana moved to Lisbon last month. Keep that in mind").length, 2);
  assert.equal(splitClauses("find the latest report on sales, keep that in mind").length, 2);
  const first = firstOver("kb", [
    tool("move_file", "Move or rename files and directories"),
    tool("add_observations", "Add new observations to existing entities in the knowledge graph"),
    tool("read_graph", "Read the entire knowledge graph"),
  ]);
  assert.equal(first("Ana moved to Lisbon last month, keep that in mind"), "add_observations");
});

Deno.test("names right after the verb are its object's arguments: the request stays a short imperative (#42)", () => {
  const t = "add Maria Lopez and Tom Becker as new people in the knowledge base";
  assert.equal(requestAction(t), ACTION.create);
  assert.equal(asksForNew(t), true);
  // The same length of capability words is a task description.
  assert.equal(requestAction("add maria lopez and tom becker as new people in the knowledge base"), 0);
});

Deno.test("a place put first is skipped for the verb after it; swapping replaces (issue #42)", () => {
  assert.equal(requestAction("in src/app.ts swap 'localhost:3000' for 'localhost:8080'"), ACTION.update);
  assert.equal(requestAction("in config.yaml change the port from 8080 to 9090"), ACTION.update);
  // No action after the place: a statement, no request.
  assert.equal(requestAction("in the morning I run"), 0);
});

Deno.test("the verb after a place of several words is found (issue #42)", () => {
  assert.equal(requestAction("in the config file change the port to 9090"), ACTION.update);
});

Deno.test("phrasal verbs of showing, finding, spinning up and calling off", () => {
  assert.equal(requestAction("pull up the saved entries for Priya and Tomás"), ACTION.read);
  assert.equal(requestAction("bring up the notes on Acme"), ACTION.read);
  assert.equal(requestAction("dig up every file about the launch"), ACTION.search);
  assert.equal(requestAction("track down the config file"), ACTION.search);
  assert.equal(requestAction("spin up a dev branch"), ACTION.create);
  assert.equal(requestAction("call off the Friday meeting"), ACTION.delete);
  // The verb alone keeps its own action: "pull" is no read, "spin" no create.
  assert.notEqual(requestAction("pull the latest changes"), ACTION.read);
  assert.notEqual(requestAction("spin the wheel"), ACTION.create);
});

Deno.test("muting and silencing toggle; rescheduling and postponing update", () => {
  assert.equal(requestAction("silence web-03 for 2 hours"), ACTION.toggle);
  assert.equal(requestAction("mute the noisy monitor"), ACTION.toggle);
  assert.equal(requestAction("reschedule the standup to 10am"), ACTION.update);
  assert.equal(requestAction("postpone the release review"), ACTION.update);
  assert.equal(toolActions("mute_host", "", "Mute a host so it raises no alerts"), ACTION.toggle);
});

Deno.test("a participle of an action verb says what was done: the request reads, it does not store", () => {
  assert.ok(isActionParticiple("stored"));
  assert.ok(isActionParticiple("memorised"));
  assert.ok(isActionParticiple("written"));
  assert.equal(isActionParticiple("store"), false);
  assert.equal(isActionParticiple("need"), false);
  assert.equal(isActionParticiple("painted"), false, "no action verb");
  const asks = ACTION.read | ACTION.search | ACTION.list;
  assert.equal(requestAction("anything stored in memory about the kubernetes upgrade?"), asks);
  assert.equal(requestAction("do I have anything saved that mentions kubernetes?"), asks);
  assert.equal(requestAction("show me everything you've stored in memory so far"), ACTION.read);
  // The base form is an imperative as before.
  assert.equal(requestAction("store the kubernetes upgrade notes"), ACTION.create);
});

Deno.test("a thing whose place is unknown is searched for", () => {
  const searches = (q: string) =>
    parseQuery(q).terms.some((t) => t.term === stem("search") && t.weight >= 0.5);
  assert.ok(searches("where did I put that invoice pdf?? it's under ~/Documents"));
  assert.ok(searches("i can't find package.json anywhere"));
  assert.ok(searches("is there a file named invoice somewhere in my documents?"));
  assert.ok(!searches("put report.csv in the done folder"));
  assert.ok(!searches("where is the weather nicest in May"));
});

Deno.test("the link of a linking request is matched as the action, not as a word about web links", () => {
  const weight = (q: string, w: string) => parseQuery(q).terms.find((t) => t.term === stem(w))?.weight ?? 0;
  assert.ok(weight("remove the link between Ana and Marco", "link") <= 0.5);
  assert.ok(weight("the Mobile team owns the Apollo project, link them", "link") <= 0.5);
  // No linking asked: a link is a web link, a word like any other.
  assert.equal(weight("open the link in the report", "link"), 1);
  assert.ok(namesLink(stem("relationship")) && namesLink(stem("connect")) && !namesLink(stem("report")));
});

Deno.test("how far, how fast, how old, how tall ask for a distance, a speed, an age, a height", () => {
  const implies = (q: string, term: string) =>
    parseQuery(q).terms.some((t) => t.term === stem(term) && t.weight >= 0.5);
  assert.ok(implies("how far apart are Madrid and Lisbon as the crow flies", "distance"));
  assert.ok(implies("how fast is my connection", "speed"));
  assert.ok(implies("how old is the oldest pod", "age"));
  assert.ok(implies("how tall is Mont Blanc", "height"));
  assert.ok(!implies("how do I deploy the app", "distance"));
});

Deno.test("how many asks for a count, how much disk or storage for a size; neither alone answers a request", () => {
  const extra = (q: string, term: string) =>
    parseQuery(q).terms.find((t) => t.term === stem(term) && t.weight >= 0.5 && t.expansion);
  assert.ok(extra("how many docs in users have status active", "count"));
  assert.ok(extra("how much disk does the events collection take up", "size"));
  assert.ok(extra("how much storage is left on the volume", "size"));
  assert.ok(!extra("how much does the plan cost", "size"));
  assert.ok(!extra("list the many docs in users", "count"));
  // The implied count stands for no typed word: "how many calories are in a banana" is answered by no counter.
  assert.deepEqual(extra("how many calories are in a banana", "count")?.origins, []);
  const counter = buildIndex(catalogFromJson({
    servers: [{
      name: "db",
      description: "Document database.",
      tools: [
        {
          name: "count",
          description: "Count the documents in a collection matching a filter",
          inputSchema: {},
        },
        { name: "find", description: "Find documents in a collection", inputSchema: {} },
      ],
    }],
  }));
  assert.equal(
    assess(rankQuery(counter, "how many calories are in a banana", { maxHits: 5 })).status,
    "no_match",
  );
  assert.equal(
    rankQuery(counter, "how many docs in users have status active", { maxHits: 5 }).hits[0]?.tool.tool,
    "count",
  );
});

Deno.test("pushing, bumping or shifting a thing to a time reschedules it; pushing code does not", () => {
  assert.equal(requestAction("push the 1:1 with Priya to 4pm"), ACTION.update);
  assert.equal(requestAction("push the 'quarterly report' task to next Monday"), ACTION.update);
  assert.equal(requestAction("bump the standup back to 10:30"), ACTION.update);
  assert.equal(requestAction("push my changes to main"), 0);
  assert.equal(requestAction("bump the version to 2.0"), 0);
});

Deno.test("an action called off asks for the tool that cancels it, never the action itself (#42)", () => {
  assert.equal(requestAction("that email I scheduled for 9am - dont send it after all"), ACTION.delete);
  assert.equal(requestAction("never mind publishing the post"), ACTION.delete);
  assert.equal(requestAction("actually, do not run the nightly job"), ACTION.delete);
  assert.equal(requestActions("don't send the invite").negated, "send");
  // "Don't forget" asks to remember; a constraint after an imperative and a called-off removal undo nothing.
  assert.equal(requestAction("don't forget to send the report"), 0);
  assert.equal(requestAction("copy a.txt but don't overwrite b.txt"), 0);
  assert.equal(requestAction("do not delete the backup"), 0);
  // A tool's cancelling verb removes what was set going.
  assert.equal(
    toolActions("cancel-email", "", "Cancel a scheduled email that has not yet been sent."),
    ACTION.delete,
  );
  const tools = [
    tool("send-email", "Send a single email to one or more recipients immediately (or schedule it)."),
    tool("cancel-email", "Cancel a scheduled email that has not yet been sent."),
    tool("list-emails", "List recently sent emails with their status."),
  ];
  const mail = buildIndex(buildCatalog([{ name: "mail", tags: [], useWhen: [], tools }]));
  const ranked = rankQuery(mail, "that email I scheduled for tomorrow 9am - dont send it after all", {
    maxHits: 5,
  });
  assert.equal(ranked.hits[0]?.tool.short, "cancel-email");
  assert.equal(firstOver("mail", tools)("send the email to Ana"), "send-email");
});

Deno.test("a tool performing the action a request calls off is never a confident answer (#42)", () => {
  const backups = buildIndex(buildCatalog([{
    name: "backups",
    tags: [],
    useWhen: [],
    tools: [
      tool("delete_backup", "Delete a backup by its name"),
      tool("create_backup", "Create a backup of a database"),
      tool("list_backups", "List the backups of a database"),
    ],
  }]));
  const status = (q: string) => assess(rankQuery(backups, q, { maxHits: 5 })).status;
  assert.equal(status("delete the backup nightly-3"), "confident");
  assert.notEqual(status("do not delete the backup nightly-3"), "confident");
  assert.notEqual(status("never mind deleting the backup nightly-3"), "confident");
});

Deno.test("a light verb's word weighs less where its object names the action (#42)", async () => {
  // The reference servers' own tools: `edit_file` opens "Make line-based edits to a text file".
  const data = new URL("../../scripts/bench/data/plain_catalog.json", import.meta.url);
  const index = buildIndex(catalogFromJson(JSON.parse(await Deno.readTextFile(data))));
  const first = (q: string) => search(index, q, { maxHits: 1 })[0]?.tool.short;
  assert.equal(first("make a file called todo.txt with: buy milk, call mom, pay rent"), "write_file");
  assert.equal(first("make the edits to notes.txt that I listed"), "edit_file");
});

Deno.test("a message named by its medium is sent: email X, DM X, post in, reply to, announce (#42)", () => {
  assert.equal(requestAction("email sara@acme.io that the contract is signed"), ACTION.send);
  assert.equal(requestAction("DM @omar: the standup moved to 10"), ACTION.send);
  assert.equal(requestAction("post in #ops that the release is out"), ACTION.send | ACTION.create);
  assert.equal(requestAction("reply to Tom's email saying I'm in"), ACTION.send | ACTION.create);
  assert.equal(requestAction("announce the new opening hours to all subscribers"), ACTION.send);
  // A tool adding a message sends it; a tool pushing or broadcasting one sends it.
  assert.ok(
    toolActions("chat_add_message", "", "Add a message to a channel or a direct conversation") & ACTION.send,
  );
  assert.ok(toolActions("push_text", "", "Push a text message to one user") & ACTION.send);
  assert.ok(toolActions("broadcast_text", "", "Broadcast a text message to every follower") & ACTION.send);
  const mail = buildIndex(buildCatalog([{
    name: "mail",
    tags: [],
    useWhen: [],
    tools: [
      tool("search_emails", "Search emails in the mailbox with a query"),
      tool("read_email", "Read the content of an email by its id"),
      tool("send_email", "Send a new email to recipients"),
      tool("delete_email", "Delete an email by its id"),
    ],
  }, {
    name: "talk",
    tags: [],
    useWhen: [],
    tools: [
      tool("chat_history", "Get the messages of a channel or a direct conversation"),
      tool("chat_mark_read", "Mark a channel or a direct conversation as read"),
      tool("chat_add_message", "Add a message to a channel or a direct conversation"),
    ],
  }, {
    name: "line",
    tags: [],
    useWhen: [],
    tools: [
      tool("get_quota", "Get how many messages can still be sent this month"),
      tool("push_text", "Push a text message to one user"),
      tool("broadcast_text", "Broadcast a text message to every follower"),
    ],
  }]));
  const ranked = (q: string) => rankQuery(mail, q, { maxHits: 5 });
  assert.equal(ranked("email sara@acme.io that the contract is signed").hits[0]?.tool.short, "send_email");
  assert.equal(
    ranked("DM @omar in the chat: the standup moved to 10").hits[0]?.tool.short,
    "chat_add_message",
  );
  assert.equal(
    ranked("anounce to all followers that the shop closes early").hits[0]?.tool.short,
    "broadcast_text",
  );
});

Deno.test("leaving a comment or a note adds it; an identifier's parts are no words of the request (#42)", () => {
  assert.equal(requestAction("leave a comment on the checkout task: waiting for QA"), ACTION.create);
  assert.equal(requestAction("leave a note for Ana on the card"), ACTION.create);
  // "recA1B2" is one identifier, not three words: the request stays short enough for its verb to be read.
  assert.equal(requestAction("add a comment on record recA1B2 saying 'waiting for invoice'"), ACTION.create);
  assert.equal(
    requestAction("leave a comment on record recA1B2 saying 'waiting for invoice'"),
    ACTION.create,
  );
  const first = firstOver("base", [
    tool("list_comments", "List the comments on a record"),
    tool("create_comment", "Create a comment on a record"),
    tool("list_records", "List the records of a table"),
  ]);
  assert.equal(first("leave a comment on record recA1B2 saying 'waiting for invoice'"), "create_comment");
});

Deno.test("an email address or an @handle is a value, not words a tool must match (#42)", () => {
  assert.deepEqual(
    parseQuery("email sara@acme.io that the contract is signed").argumentLike,
    [false, true, true, true, false, false],
  );
  assert.deepEqual(parseQuery("DM @priya about the standup").argumentLike, [false, true, false]);
  const mail = buildIndex(buildCatalog([{
    name: "mail",
    tags: [],
    useWhen: [],
    tools: [
      tool("search_emails", "Search emails in the mailbox with a query"),
      tool("read_email", "Read the content of an email by its id"),
      tool("send_email", "Send a new email to recipients"),
    ],
  }]));
  const ranked = rankQuery(mail, "email sara@acme.io that the contract is signed", { maxHits: 5 });
  assert.equal(ranked.hits[0]?.tool.short, "send_email");
  assert.equal(assess(ranked).status, "ambiguous");
});

Deno.test("opening a ticket or an issue makes one; opening a file or the ticket reads it (#42)", () => {
  assert.equal(requestAction("open an issue in the infra project about flaky runners"), ACTION.create);
  assert.equal(requestAction("open a pull request from dark-mode into main"), ACTION.create);
  assert.equal(requestAction("open a file called notes.txt"), ACTION.read);
  assert.equal(requestAction("open the ticket ENG-4"), ACTION.read);
  const first = firstOver("tracker", [
    tool("read_issue", "Read an issue by its key: summary, status, comments"),
    tool("create_issue", "Create an issue in a project"),
    tool("add_issue_comment", "Add a comment to an issue"),
  ]);
  assert.equal(first("open an issue about flaky runners"), "create_issue");
  assert.equal(first("open the issue about flaky runners"), "read_issue");
});

Deno.test("a stated value's words do not make a request too long for its verb to be read (#42)", () => {
  assert.equal(
    requestAction("open a bug in the webapp repo on GitHub: login button does nothing on Safari"),
    ACTION.create,
  );
  assert.equal(requestAction("leave a comment on PR 77 in acme/webapp saying LGTM, ship it"), ACTION.create);
  // Without a stated value, a long task description still names no single action.
  assert.equal(
    requestAction("write a quick start tutorial for the design system with examples of every component"),
    0,
  );
});

Deno.test("destroying, nuking, terminating or tearing down a thing deletes it (#42)", () => {
  for (
    const q of ["nuke the whole staging_db database", "tear down project test-123", "destroy the old cluster"]
  ) {
    assert.equal(requestAction(q), ACTION.delete, q);
  }
  assert.ok(toolActions("terminate_instance", "", "Terminate a running instance") & ACTION.delete);
  const first = firstOver("db", [
    tool("list_databases", "List the databases of the connected cluster"),
    tool("aggregate", "Run an aggregation pipeline over a database collection"),
    tool("drop_database", "Drop a database and all of its collections"),
  ]);
  assert.equal(first("nuke the whole staging_db database"), "drop_database");
});

/**
 * A verb or phrase read as an action (changes 128–142): what `requestAction` reads of each request, then a
 * catalog and, for each request, the tool it finds first.
 */
const READINGS: [string, [string, number][], string, [string, string][], [string, string][]][] = [
  [
    "setting a value or marking a thing as something updates it; setting a timer does not",
    [
      ["set the status of 'Call supplier' to Done", ACTION.update],
      ["mark records rec123 and rec456 as shipped", ACTION.update],
      ["set up a new project", ACTION.create],
      ["set an alarm for 7am", 0],
      ["set a timer for 10 minutes", 0],
    ],
    "boards",
    [
      ["create_board", "Create a new board with columns"],
      ["get_board_items", "Get the items of a board, with their column values"],
      ["change_item_column_values", "Change the column values of an item on a board"],
    ],
    [["set status of 'Call supplier' to Done on the board", "change_item_column_values"]],
  ],
  [
    "logging a note or time on a thing records it; logging in records nothing",
    [
      ["log a note on the Initech account that they want a demo", ACTION.create],
      ["log 2 hours on WEB-12 for code review", ACTION.create],
      ["log in to the dashboard", 0],
      ["log out of every session", 0],
    ],
    "crm",
    [
      ["get_logs", "Get the audit logs of the account"],
      ["create_engagement", "Create an engagement (a note, a task, a call) on a record"],
      ["list_objects", "List objects of a type"],
    ],
    [["log a note on the Initech account that they want a demo", "create_engagement"]],
  ],
  ["a switch asked for in other words ('silence a host') also looks for mute tools", [], "monitoring", [
    ["list_hosts", "List the monitored hosts"],
    ["mute_host", "Mute a host so that its monitors send no alerts"],
    ["get_logs", "Search the logs of a service"],
  ], [["silence web-03 for 2 hours while we patch it", "mute_host"]]],
  [
    "switching a thing to a value updates it; switching to a place or switching off does not",
    [
      ["switch sub_777 to the annual price price_yr", ACTION.update],
      ["switch to the release branch", 0],
      ["switch off the lights", ACTION.toggle],
    ],
    "billing",
    [
      ["list_prices", "List the prices of a product"],
      ["create_price", "Create a price for a product"],
      ["update_subscription", "Update a subscription: its price, quantity or trial"],
    ],
    [["switch sub_777 to the annual price price_yr", "update_subscription"]],
  ],
  [
    "pinging someone sends them a notification",
    [
      ["ping Laura about the contract item, she has to sign today", ACTION.send],
    ],
    "boards",
    [
      ["get_board_activity", "Get the activity log of a board: who changed which item"],
      ["get_updates", "Get the updates (comments) of an item"],
      ["create_notification", "Send a notification to a user about an item"],
    ],
    [["ping Laura about the contract item, she has to sign today", "create_notification"]],
  ],
  ["asking what columns or fields a thing has asks for its schema", [], "db", [
    ["list_tables", "List the tables of a database"],
    ["create_field", "Create a column (field) in a table"],
    ["describe_table_schema", "Describe the schema of a table"],
    ["insert_rows", "Insert rows into a table"],
  ], [
    ["what columns does the orders table have and what types are they", "describe_table_schema"],
    ["what fields do the rows in the events table usually have", "describe_table_schema"],
  ]],
  ["asking what changed or happened asks for activity or history", [], "kanban", [
    ["get_lists", "Get the lists on a board"],
    ["archive_list", "Archive a list on the board"],
    ["get_recent_activity", "Get the recent activity of a board"],
  ], [
    ["what changed on the board recently?", "get_recent_activity"],
    ["what happened on the board this week", "get_recent_activity"],
  ]],
  ["how much money there is asks for a balance", [], "payments", [
    ["search_documentation", "Search the payment platform's documentation for how to use its API"],
    ["retrieve_balance", "Retrieve the balance of the account"],
    ["list_customers", "List the customers of the account"],
  ], [["how much money is in my account right now?", "retrieve_balance"]]],
  ["what people said or wrote are their messages", [], "chat", [
    ["get_forum_channels", "Get the forum channels of a server"],
    ["get_server_info", "Get information about a server: its channels and members"],
    ["read_messages", "Read the messages of a channel"],
  ], [["what have people been saying in channel 99887 lately", "read_messages"]]],
  ["a thing wanted in a format is exported or converted", [], "wiki", [
    ["create_page", "Create a page in a space"],
    ["read_page", "Read a page's content"],
    ["export_page", "Export a page to another format"],
  ], [["i need the runbook page as markdown so I can paste it elsewhere", "export_page"]]],
  ["changing or removing all or every one of many things is a batch", [], "docs", [
    ["drop-collection", "Remove a collection and its documents from the database"],
    ["delete-many", "Remove all documents matching a filter from a collection"],
    ["update-many", "Update all documents matching a filter in a collection"],
    ["find", "Find documents in a collection"],
  ], [
    ["remove all sessions older than 30 days from the sessions collection", "delete-many"],
    ["set verified=true on every user whose email ends with @acme.com", "update-many"],
  ]],
  [
    "taking a thing out of another removes it from there",
    [
      ["take issue 55 out of the current cycle, it slipped", ACTION.delete],
      ["kick bob out of the project", ACTION.delete],
    ],
    "planner",
    [
      ["add_cycle_issues", "Add issues to a cycle"],
      ["delete_cycle_issue", "Remove an issue from a cycle"],
      ["list_cycles", "List the cycles of a project"],
    ],
    [["take issue 55 out of the current cycle, it slipped", "delete_cycle_issue"]],
  ],
  [
    "a word between a determiner and a noun qualifies it; a question may open on did, do or does (300)",
    [
      ["show me the open disputes", ACTION.read | ACTION.list],
      ["get my unread emails", ACTION.read | ACTION.list],
      ["show me the list of invoices", ACTION.read | ACTION.list],
      ["did i get any mail from the lawyer today", ACTION.read | ACTION.search | ACTION.list],
      ["do we have any open invoices", ACTION.read | ACTION.search | ACTION.list],
      ["do a search for cats", ACTION.search],
    ],
    "mail",
    [
      ["get-received-email", "Retrieve a single received email by its id"],
      ["list-received-emails", "List received emails, newest first"],
      ["send-email", "Send an email"],
    ],
    [],
  ],
  ["doing many things in one go is a batch", [], "mailer", [
    ["list-emails", "List the emails sent"],
    ["send-email", "Send an email to one recipient"],
    ["send-batch-emails", "Send up to 100 emails in a single call"],
  ], [["40 new signups should each get their own welcome mail in one go", "send-batch-emails"]]],
];

for (const [name, actions, server, tools, requests] of READINGS) {
  Deno.test(`${name} (#42)`, () => {
    for (const [request, action] of actions) assert.equal(requestAction(request), action, request);
    const first = firstOver(server, tools.map(([n, d]) => tool(n, d)));
    for (const [request, expected] of requests) assert.equal(first(request), expected, request);
  });
}

Deno.test("putting a thing somewhere names no action by itself: an update tool does not meet it (issue #42)", async () => {
  // Attio's `update_record` updates; "put … on my google calendar" asks for a calendar the catalog lacks.
  const index = await benchIndex("blind11_catalog.json");
  const status = (q: string) => assess(rankQuery(index, q, { maxHits: 5 })).status;
  assert.equal(
    status("put a 30 min call with the design team on my google calendar tuesday 3pm"),
    "no_match",
  );
  // A verb of the action table still counts ("update the deal stage of Northgate Bank in attio").
  assert.notEqual(status("update the Northgate Bank record in attio: stage won"), "no_match");
});

Deno.test("a request whose one clause asks and the others only say things is one step, asked by that clause (issue #42)", async () => {
  // Freshdesk's `create_freshdesk_ticket` names every field of a ticket; the question asks to read one.
  const index = await benchIndex("blind15_catalog.json");
  const first = (q: string) => search(index, q, { maxHits: 1 })[0]?.tool.short;
  assert.equal(
    first(
      "what's happening with ticket 77120? I need the full back-and-forth with the customer before I call her back",
    ),
    "get_freshdesk_ticket",
  );
});
