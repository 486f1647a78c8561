/**
 * Plain requests over the reference servers' own tools (`scripts/bench/data/plain_catalog.json`: everything,
 * memory, filesystem), typed as a user would: the tool a user relies on comes first, and `resolve_tool`
 * answers as it should (issue #42, eleventh pass).
 *
 * @module
 */
import assert from "node:assert/strict";
import { assess, buildIndex, rankQuery, type ResolverIndex } from "../../src/resolver/mod.ts";
import { ACTION, requestAction, toolActions } from "../../src/resolver/actions.ts";
import { extractLocators } from "../../src/resolver/locators.ts";
import { parseQuery, splitClauses } from "../../src/resolver/query.ts";
import { catalogFromJson } from "../../scripts/eval_resolver.ts";

let plain: ResolverIndex | undefined;

async function index(): Promise<ResolverIndex> {
  const data = new URL("../../scripts/bench/data/plain_catalog.json", import.meta.url);
  plain ??= buildIndex(catalogFromJson(JSON.parse(await Deno.readTextFile(data))));
  return plain;
}

async function first(q: string): Promise<string | undefined> {
  return rankQuery(await index(), q, { maxHits: 5 }).hits[0]?.tool.short;
}

async function status(q: string): Promise<string> {
  return assess(rankQuery(await index(), q, { maxHits: 5 })).status;
}

Deno.test("a user's standard folder named as theirs is a directory (#42)", async () => {
  const kinds = (text: string) => extractLocators(text).spans.map((s) => [s.path, s.directory]);
  assert.deepEqual(kinds("what files are in my downloads"), [[true, true]]);
  assert.deepEqual(kinds("clean up the Desktop"), [[true, true]]);
  assert.deepEqual(kinds("list my Documents folder"), [[true, true]]);
  // "my documents" may be a service's documents; "downloads" alone is no folder of the user's.
  assert.deepEqual(kinds("list my documents in Google Docs"), []);
  assert.deepEqual(kinds("how many downloads did the package get"), []);
  // Listed, not gzipped ("downloaded" in `gzip-file-as-resource`'s description), and never a confident
  // answer by that word alone.
  assert.equal(await first("what files are in my downloads"), "list_directory");
  assert.notEqual(await status("what files are in my downloads"), "confident");
});

Deno.test('a thing made for someone is created: "make me a folder" (#42)', async () => {
  assert.equal(requestAction("make me a folder invoices/2024"), ACTION.create);
  assert.equal(requestAction("make us a new branch off main"), ACTION.create);
  // "Make" stays a light verb: its object's action, else none ("make me happy" makes no thing).
  assert.equal(requestAction("make me a list of my files"), ACTION.list);
  assert.equal(requestAction("make me happy"), 0);
  assert.equal(requestAction("make a copy of the repository"), 0);
  assert.equal(
    await first("make me a folder invoices/2024 (and the parent if it's not there)"),
    "create_directory",
  );
});

Deno.test('a project\'s conventional file named without an extension is a file: "the README" (#42)', async () => {
  const files = (text: string) => extractLocators(text).spans.filter((s) => s.path && !s.directory).length;
  assert.equal(files("reed the README plz"), 1);
  assert.equal(files("what does the Dockerfile do"), 1);
  assert.equal(files("show me the LICENSE"), 1);
  // The word, a longer name or a path's own part is no such file.
  assert.equal(files("check the license of lodash"), 0);
  assert.equal(files("open README.md"), 1);
  assert.equal(files("the readme-generator package"), 0);
  // Read, not written ("written" meets `write_file`'s name).
  assert.equal(await first("reed the README plz"), "read_text_file");
  assert.equal(await first("whats written in the README in docs/ ?"), "read_text_file");
});

Deno.test('a phrase\'s implied terms stand for its verb: "where did I put it" is answerable (#42)', async () => {
  const answered = async (q: string) => (await status(q)) !== "no_match";
  assert.equal(
    await first("where did I put that invoice pdf?? it's somewhere under ~/Documents"),
    "search_files",
  );
  assert.equal(await answered("where did I put that invoice pdf?? it's somewhere under ~/Documents"), true);
  assert.equal(
    await answered("is there a file named invoice somewhere in my documents? i forgot where i put it"),
    true,
  );
  // "Somewhere" alone stands for no word: an off-topic request stays declined.
  assert.equal(await answered("book me a table for two at 8pm somewhere nice"), false);
});

Deno.test('a shell command typed as the request asks for its action: "cat config.yaml" (#42)', async () => {
  assert.equal(requestAction("cat config.yaml"), ACTION.read);
  assert.equal(requestAction("tail -n 50 app.log"), ACTION.read);
  assert.equal(requestAction("ls ~/projects/site"), ACTION.list);
  assert.equal(requestAction("rm old.log"), ACTION.delete);
  assert.equal(requestAction("mkdir -p src/utils"), ACTION.create);
  // The same words as English are no command.
  assert.equal(requestAction("cat pictures please"), 0);
  assert.equal(requestAction("head of sales"), 0);
  assert.equal(await first("cat config.yaml"), "read_text_file");
  assert.equal(await status("cat config.yaml"), "ambiguous");
});

Deno.test('the agent\'s own work on a named file reads it: "compare a.json and b.json" (#42)', async () => {
  assert.equal(requestAction("compare package.json and deno.json for me"), ACTION.read);
  assert.equal(requestAction("summarize notes/meeting.md"), ACTION.read);
  // A file named as the destination is not the object read; with no file the verb asks for nothing.
  assert.equal(requestAction("summarize it in a PPT in /root/ppt/apple.pptx"), 0);
  assert.equal(requestAction("compare prices of the iphone and the pixel"), 0);
  const q = "compare package.json with package-lock.json for me, side by side";
  assert.equal(await first(q), "read_multiple_files");
  assert.equal(await status(q), "ambiguous");
});

Deno.test('"remember" with its "that" left out still states a value (#42)', async () => {
  const stated = (q: string) =>
    parseQuery(q).words.filter((_, i) => parseQuery(q).stated?.[i] === true).join(" ");
  assert.equal(stated("remember my sister Lena is allergic to peanuts"), "sister lena allergic peanuts");
  assert.equal(stated("remember that my sister Lena is allergic to peanuts"), "sister lena allergic peanuts");
  // No clause after the verb: nothing stated.
  assert.equal(stated("remember the milk"), "");
  const q = "please remember my sister Lena is allergic to peanuts";
  assert.equal(await first(q), "add_observations");
  assert.equal(await status(q), "ambiguous");
});

Deno.test('"the one on Elm Street" is a pronoun, not the number one (#42)', async () => {
  const has = (q: string) => parseQuery(q).words.includes("one");
  assert.equal(has("my dentist is dr okafor, the one on elm street"), false);
  assert.equal(has("open the one I saved yesterday"), false);
  assert.equal(has("create the folders in one operation"), true);
  assert.equal(has("one more thing"), true);
  assert.equal(
    await first("please remember my dentist is dr okafor, the one on elm street"),
    "add_observations",
  );
});

Deno.test("a sentence a server repeats in its tools' descriptions is none of their own words (#42)", async () => {
  // Every filesystem tool but one ends "Only works within allowed directories.": the one named for them wins.
  for (
    const q of [
      "which folders am I allowed to touch?",
      "which directories are you actually allowed to touch?",
      "which folders am i even allowed to touch here?",
    ]
  ) assert.equal(await first(q), "list_allowed_directories", q);
  // The boilerplate's words stay as common as they are: no tool gains by their rarity.
  assert.equal(await first("find people in memory who work at Acme"), "search_nodes");
  assert.equal(await first("whats in my Downloads folder"), "list_directory");
});

Deno.test('the records kept of named things are the things: "pull up the entries for Alice and Bob" (#42)', async () => {
  assert.equal(await first("pull up the entries for Alice and Bob"), "open_nodes");
  assert.equal(await first("pull up the saved entries for Priya and Tomás"), "open_nodes");
  // Entries of a directory are still files ("entries" of `directory_tree`).
  assert.equal(await first("show the entries of /srv/data as a tree"), "directory_tree");
});

Deno.test('"everything you\'ve memorized" is the whole of what was kept (#42)', async () => {
  assert.equal(await first("show me everything you memorized so far"), "read_graph");
  assert.equal(await first("dump everything you've memorised so far"), "read_graph");
  // About one thing, it is searched for, not read whole.
  assert.equal(await first("what have you got saved about the berlin trip?"), "search_nodes");
});

Deno.test('a label of a new thing and a colon asks to create it: "new person: …" (#42)', async () => {
  assert.equal(requestAction("new person: Oksana, role designer, based in Kyiv"), ACTION.create);
  assert.deepEqual(splitClauses("new person: Oksana, role designer, based in Kyiv"), [
    "new person Oksana, role designer, based in Kyiv",
  ]);
  // "New" inside a request is no label.
  assert.equal(requestAction("whats new in the changelog"), ACTION.read | ACTION.search | ACTION.list);
  assert.equal(await first("new person: Oksana, role designer, based in Kyiv"), "create_entities");
});

Deno.test('"what do you know about Ana?" asks a search for Ana: answerable by a search tool (#42)', async () => {
  assert.equal(requestAction("what do you know about Project Falcon?"), ACTION.search);
  assert.equal(requestAction("what do we have stored on him"), ACTION.search);
  for (const q of ["what do you know about Project Falcon?", "what do you have on Acme Corp?"]) {
    assert.equal(await first(q), "search_nodes", q);
    assert.equal(await status(q), "ambiguous", q);
  }
});

Deno.test('"did I ever tell you…" recalls what the user told: a search of what was kept (#42)', async () => {
  assert.equal(await first("did I ever tell you my wifes birthday?"), "search_nodes");
  assert.equal(await first("who did i tell you my landlord was again"), "search_nodes");
  // Telling someone else is no recall.
  assert.notEqual(await first("tell Bob the meeting moved"), "search_nodes");
});

Deno.test('things picked by what they say are searched for: "anything that mentions kubernetes" (#42)', async () => {
  assert.equal(await first("do I have anything saved that mentions kubernetes?"), "search_nodes");
  assert.equal(await status("do I have anything saved that mentions kubernetes?"), "ambiguous");
});

Deno.test('"who do I know that…" asks what is known, searched for (#42)', async () => {
  assert.equal(await first("who do I know that is connected to Globex?"), "search_nodes");
  assert.equal(await status("who do I know that is connected to Globex?"), "ambiguous");
});

Deno.test('"where can you read files?" asks where one is allowed to act (#42)', async () => {
  const top5 = async (q: string) => rankQuery(await index(), q, { maxHits: 5 }).hits.map((h) => h.tool.short);
  assert.ok(
    (await top5("where can you actually read files on this machine")).includes("list_allowed_directories"),
  );
});

Deno.test("a lead sentence's second clause after \"or\" is the tool's action too (#42)", async () => {
  assert.equal(
    toolActions(
      "write_file",
      "",
      "Create a new file or completely overwrite an existing file with new content.",
    ),
    ACTION.create | ACTION.update,
  );
  // A noun after "or" is no verb: "by id or email".
  assert.equal(toolActions("get_user", "", "Get a user by id or email address."), ACTION.read);
  const top5 = async (q: string) => rankQuery(await index(), q, { maxHits: 5 }).hits.map((h) => h.tool.short);
  assert.ok(
    (await top5("replace the whole contents of hosts.txt with the list I pasted above")).includes(
      "write_file",
    ),
  );
});

Deno.test('a relation of two named things stated with no verb is one to keep: "Ana reports to Marco." (#42)', async () => {
  assert.equal(requestAction("Ana reports to Marco."), ACTION.create | ACTION.link);
  assert.equal(requestAction("Tom is Lena's brother"), ACTION.create | ACTION.link);
  // Not a statement of a thing's state, nor a question, nor one with its imperative after it.
  assert.equal(requestAction("Ana is tired"), 0);
  assert.equal(requestAction("who is Lena's brother?"), ACTION.read | ACTION.search | ACTION.list);
  assert.equal(await first("Ana reports to Marco."), "create_relations");
  assert.equal(await first("Priya is Omar's manager, record that relationship"), "create_relations");
  assert.equal(await status("Priya is Omar's manager, record that relationship"), "ambiguous");
});

Deno.test('"everything about the Berlin project", "…about my ex" name a thing as a whole (#42)', async () => {
  assert.equal(await first("forget everything you know about my ex, all of it"), "delete_entities");
  assert.equal(await first("forget everything about the Berlin project, it's cancelled"), "delete_entities");
  // A part of a thing stays a part.
  assert.equal(await first("delete the observation that Bob likes tea"), "delete_observations");
});

Deno.test('"anything stored about X?" is searched for, not read whole (#42)', async () => {
  assert.equal(await first("anything stored in memory about the kubernetes upgrade?"), "search_nodes");
  // Everything kept, with no thing it is about, is still read whole.
  assert.equal(await first("show me everything you memorized so far"), "read_graph");
});

Deno.test('an imperative pointing back at a person ("store her as a person") acts on the statement (#42)', async () => {
  const q = "I just met a new contact, Priya Shah, a data engineer at Globex - store her as a person";
  assert.equal(requestAction(q), ACTION.create);
  assert.equal(await first(q), "create_entities");
  assert.equal(await status(q), "ambiguous");
});

Deno.test('an adverb may sit between the imperative and what it points back at: "fix just that line" (#42)', async () => {
  const q = "in config.yaml the port should be 9090 instead of 8080, fix just that line";
  assert.equal(requestAction(q), ACTION.update);
  assert.equal(await first(q), "edit_file");
  assert.equal(await status(q), "ambiguous");
});
