import assert from "node:assert/strict";
import {
  MAX_QUERY_TERMS,
  MODIFIER_WEIGHT,
  parseQuery,
  QUOTED_WEIGHT,
  splitClauses,
  splitWords,
  stem,
  SYNONYM_WEIGHT,
  tokenize,
} from "../../src/resolver/mod.ts";

Deno.test("splitWords() splits camelCase, acronyms, snake_case and kebab-case", async (t) => {
  const cases: [string, string[][]][] = [
    ["getFileInfo", [["get", "file", "info"]]],
    ["HTTPRequest", [["http", "request"]]],
    ["list_directory", [["list", "directory"]]],
    ["read-text-file", [["read", "text", "file"]]],
    ["XMLHttpRequest parser", [["xml", "http", "request"], ["parser"]]],
    ["plain words, here", [["plain"], ["words"], ["here"]]],
  ];
  for (const [input, parts] of cases) {
    await t.step(input, () => assert.deepEqual(splitWords(input).map((w) => w.parts), parts));
  }
});

Deno.test("splitWords() keeps the joined form of a multi-part identifier", () => {
  assert.deepEqual(splitWords("GitHub"), [{ parts: ["git", "hub"], compound: "github" }]);
  assert.deepEqual(splitWords("github"), [{ parts: ["github"] }]);
});

Deno.test("splitWords() folds accents and compatibility forms", () => {
  assert.deepEqual(splitWords("Café résumé ﬁle").map((w) => w.parts[0]), ["cafe", "resume", "file"]);
});

Deno.test("splitWords() turns CJK runs into character bigrams", () => {
  assert.deepEqual(splitWords("必应搜索").map((w) => w.parts[0]), ["必应", "应搜", "搜索"]);
});

Deno.test("stem() gives inflections and derived forms one stem", async (t) => {
  const groups = [
    ["create", "creates", "creating", "created", "creation", "creator"],
    ["write", "writes", "writing"],
    ["file", "files", "filing"],
    ["search", "searches", "searching", "searched"],
    ["directory", "directories"],
    ["query", "queries"],
    ["visualize", "visualise", "visualization", "visualisation"],
    ["generate", "generation", "generator"],
    ["delete", "deletion", "deleted"],
    ["map", "maps", "mapped", "mapping"],
    ["use", "using", "used", "uses"],
  ];
  for (const group of groups) {
    await t.step(group.join(", "), () => {
      const stems = new Set(group.map(stem));
      assert.equal(stems.size, 1, `${group} stemmed to ${[...stems]}`);
    });
  }
});

Deno.test("stem() leaves short words, numbers and keep-listed words alone", () => {
  for (const w of ["git", "api", "12306", "news", "status", "analysis", "https2"]) assert.equal(stem(w), w);
  assert.equal(stem("https"), "http");
});

Deno.test("tokenize() drops stop words and lone letters, stems, and adds compounds", () => {
  assert.deepEqual(tokenize("Read the contents of a text file"), ["read", "content", "text", "fil"]);
  assert.deepEqual(tokenize("list_directory"), ["list", "directory", "listdirectory"]);
  assert.deepEqual(tokenize("Apple's iPhone"), ["appl", "phon", "iphon"]);
});

Deno.test("tokenize() is consistent between index text and query text", () => {
  const index = new Set(tokenize("read_text_file: Read the complete contents of a file as text"));
  for (const term of tokenize("reading texts from files")) assert.ok(index.has(term), term);
});

Deno.test("parseQuery() dedupes words by stem and bounds them at 64", () => {
  const q = parseQuery("files file FILE filing");
  assert.deepEqual(q.words, ["files"]);
  const many = Array.from({ length: 100 }, (_, i) => `word${i}x`).join(" ");
  assert.equal(parseQuery(many).words.length, MAX_QUERY_TERMS);
});

Deno.test("parseQuery() expands synonyms at a lower weight and keeps the typed word", () => {
  const q = parseQuery("download the webpage");
  const download = q.terms.find((t) => t.term === stem("download"))!;
  const web = q.terms.find((t) => t.term === "web")!;
  assert.equal(download.expansion, false);
  assert.equal(download.weight, 1);
  assert.equal(web.expansion, true);
  assert.ok(web.weight <= SYNONYM_WEIGHT);
  assert.deepEqual(q.words, ["download", "webpage"]);
});

Deno.test("parseQuery() reads a file path as a file operation, not as words", () => {
  const q = parseQuery("save the summary to /root/notes/today.md");
  assert.deepEqual(q.words, ["save", "summary", "md"]);
  const write = q.terms.find((t) => t.term === stem("write"))!;
  const file = q.terms.find((t) => t.term === stem("file"))!;
  assert.equal(write.weight, 1);
  assert.equal(file.weight, 1);
  assert.deepEqual(write.origins, [0]);
  const root = q.terms.find((t) => t.term === "root")!;
  assert.ok(root.weight < 0.5 && root.origins.length === 0);
});

Deno.test("parseQuery() marks quoted text, numbers and capitalized names as argument-like", () => {
  const q = parseQuery("get the weather in Paris for 'Blue Note' on 2025");
  const flags = Object.fromEntries(q.words.map((w, i) => [w, q.argumentLike[i]]));
  assert.deepEqual(flags, { get: false, weather: false, paris: true, blue: true, note: true, 2025: true });
});

Deno.test("parseQuery() down-weights quoted prose but not a quoted identifier or a capitalized name", () => {
  const weight = (q: ReturnType<typeof parseQuery>, word: string) =>
    q.terms.find((t) => !t.expansion && t.origins[0] === q.words.indexOf(word))!.weight;
  const q = parseQuery('find the painting "Corridor in the Asylum" in the Louvre');
  assert.equal(weight(q, "painting"), 1);
  assert.equal(weight(q, "corridor"), QUOTED_WEIGHT);
  assert.equal(weight(q, "asylum"), QUOTED_WEIGHT);
  assert.equal(weight(q, "louvre"), 1, "a capitalized name may be the service asked for");
  const pasted = parseQuery('call "get_file_info" on it');
  assert.equal(weight(pasted, "file"), 1, "a pasted tool name keeps its weight");
});

Deno.test("parseQuery() down-weights the second half of a hyphenated adjective", () => {
  const q = parseQuery("find today's top LLM-related news and list related topics");
  const typed = (word: string) =>
    q.terms.find((t) => !t.expansion && q.words[t.origins[0]!] === word)!.weight;
  assert.equal(typed("llm"), 1);
  assert.ok(typed("related") >= 1, "the word typed on its own keeps its weight");
  const alone = parseQuery("find LLM-related news");
  assert.equal(alone.terms.find((t) => alone.words[t.origins[0]!] === "related")!.weight, MODIFIER_WEIGHT);
});

Deno.test("splitClauses() splits steps and keeps short fragments with a neighbour", () => {
  assert.deepEqual(splitClauses("Find trending repositories, then save a summary to /tmp/a.md."), [
    "Find trending repositories",
    "save a summary to /tmp/a.md",
  ]);
  assert.deepEqual(splitClauses("read a text file"), ["read a text file"]);
  // "differences" is a second object, not a step, so it stays with "compare similarities".
  assert.deepEqual(splitClauses("compare similarities and differences"), [
    "compare similarities and differences",
  ]);
});

Deno.test("splitClauses() splits on a bare and only where a new step starts", () => {
  assert.deepEqual(splitClauses("show the columns and types of the users table"), [
    "show the columns and types of the users table",
  ]);
  assert.deepEqual(splitClauses("stage these files and commit them with a message"), [
    "stage these files",
    "commit them with a message",
  ]);
  assert.deepEqual(splitClauses("geocode the office address and get directions from the airport"), [
    "geocode the office address",
    "get directions from the airport",
  ]);
  assert.deepEqual(splitClauses("show me where to park and what's interesting nearby"), [
    "show me where to park",
    "what's interesting nearby",
  ]);
  // After a comma the "and" is no joint: the comma already split; "the third is at …" states a value, not a
  // step, so it joins the clause before it (issue #42).
  assert.deepEqual(splitClauses("find the office, and the third is at the hospital"), [
    "find the office the third is at the hospital",
  ]);
  // "and then" always splits.
  assert.deepEqual(splitClauses("read the report and then the summary table"), [
    "read the report",
    "the summary table",
  ]);
});

Deno.test("splitClauses() ends no sentence at a title's or a common abbreviation's dot", () => {
  assert.deepEqual(
    splitClauses("Help me find Mr. Lu's resume at the institute and save it to /root/cv.md."),
    [
      "Help me find Mr. Lu's resume at the institute",
      "save it to /root/cv.md",
    ],
  );
  assert.deepEqual(splitClauses("Find hotels near Dr. Smith's clinic. Book the cheapest room."), [
    "Find hotels near Dr. Smith's clinic",
    "Book the cheapest room",
  ]);
});

Deno.test('splitClauses(): choosing "the best one" of what a step found is no step of its own', () => {
  assert.deepEqual(
    splitClauses("Find the latest papers on web agents. Identify the best one, read the full text."),
    [
      "Find the latest papers on web agents Identify the best one",
      "read the full text",
    ],
  );
  // Booking the cheapest one is a step: its verb is no generic or choosing verb.
  assert.deepEqual(splitClauses("Search hotels in Rome and book the cheapest one"), [
    "Search hotels in Rome",
    "book the cheapest one",
  ]);
});

Deno.test("parseQuery() keeps an acronym another language lists as a stop word", () => {
  assert.ok(parseQuery("find EV charging stations").stems.includes("ev"));
  assert.ok(!parseQuery("find ev charging stations").stems.includes("ev"));
});

Deno.test("splitClauses() keeps setup clauses, back-references, stated values and lists with a neighbour", () => {
  // A setup clause joins the step after it.
  assert.deepEqual(
    splitClauses("search the tickets for the outage. Once you have the id, close the ticket"),
    [
      "search the tickets for the outage",
      "Once you have the id close the ticket",
    ],
  );
  // A back-reference with little of its own joins the step before it; an object pronoun does not.
  assert.deepEqual(splitClauses("find the cheapest laptop, then fetch all its details"), [
    "find the cheapest laptop fetch all its details",
  ]);
  assert.deepEqual(splitClauses("stage these files and commit them with a message"), [
    "stage these files",
    "commit them with a message",
  ]);
  // A stated value is an argument of a step.
  assert.deepEqual(splitClauses("send the invoice to the client. My email is ana@example.com"), [
    "send the invoice to the client My email is ana@example.com",
  ]);
  // A comma list of things is one step; a comma before a new verb phrase splits.
  assert.deepEqual(splitClauses("look up the IP address and show its country, city, ISP"), [
    "look up the IP address",
    "show its country, city, ISP",
  ]);
  assert.deepEqual(splitClauses("find the repository, read its README, then write a summary to /tmp/a.md"), [
    "find the repository read its README",
    "write a summary to /tmp/a.md",
  ]);
});
