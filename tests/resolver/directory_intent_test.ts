import assert from "node:assert/strict";
import { buildCatalog } from "../../src/catalog/mod.ts";
import { buildIndex, rankQuery } from "../../src/resolver/mod.ts";
import { DIRECTORY_INTENT, extractLocators, PATH_INTENT_WEIGHT } from "../../src/resolver/locators.ts";
import { parseQuery } from "../../src/resolver/query.ts";
import { stem } from "../../src/resolver/tokenize.ts";

Deno.test("extractLocators() marks a path without a file extension as a directory", () => {
  const kinds = (text: string) => extractLocators(text).spans.map((s) => [s.path, s.directory]);
  assert.deepEqual(kinds("read the articles in /root/pdf/embodied_ai_papers."), [[true, true]]);
  assert.deepEqual(kinds("save it to /root/markdown/report.md"), [[true, false]]);
  assert.deepEqual(kinds("open https://example.com/docs/guide"), [[false, false]]);
  assert.deepEqual(kinds("read ~/notes/2024/ and /tmp/a.txt"), [[true, true], [true, false]]);
});

Deno.test("DIRECTORY_INTENT: reading verbs imply listing, writing verbs do not", () => {
  const [verbs, targets] = DIRECTORY_INTENT;
  assert.deepEqual(targets, [stem("list"), stem("directory")]);
  for (const v of ["read", "reading", "open", "load", "view"]) assert.equal(verbs.has(stem(v)), true, v);
  for (const v of ["save", "write", "export", "delete"]) assert.equal(verbs.has(stem(v)), false, v);
});

Deno.test("parseQuery() implies listing a directory that a reading verb acts on", () => {
  const term = (text: string, word: string) => parseQuery(text).terms.find((t) => t.term === stem(word));
  const q = parseQuery("Read all the articles in the /root/pdf/papers directory");
  const read = q.stems.indexOf(stem("read"));
  assert.deepEqual(q.terms.find((t) => t.term === stem("list")), {
    term: stem("list"),
    weight: PATH_INTENT_WEIGHT,
    origins: [read],
    expansion: true,
  });
  // A file is read, not listed; a directory written to is not listed either.
  assert.equal(term("read the file /root/txt/notes.txt", "list"), undefined);
  assert.equal(term("save the report in /root/reports", "list"), undefined);
  // Without a path, "read" implies nothing.
  assert.equal(term("read the latest articles about web agents", "list"), undefined);
});

Deno.test("rankQuery() brings the directory listing up for files read from a directory", () => {
  const schema = (name: string, description: string) => ({
    type: "object",
    properties: { [name]: { type: "string", description } },
  });
  const tools = buildCatalog([{
    name: "fs",
    tags: [],
    useWhen: [],
    tools: [
      {
        name: "read_file",
        description: "Read the complete contents of a file from the file system.",
        inputSchema: schema("path", "Path of the file to read"),
      },
      {
        name: "list_directory",
        description: "Get a listing of all files and directories in a specified path.",
        inputSchema: schema("path", "Path of the directory to list"),
      },
      {
        name: "write_file",
        description: "Create a new file or overwrite an existing file with new content.",
        inputSchema: schema("path", "Path of the file to write"),
      },
    ],
  }]);
  const index = buildIndex(tools);
  const order = (q: string) => rankQuery(index, q, { maxHits: 3 }).hits.map((h) => h.tool.tool);
  assert.deepEqual(order("read the articles in /root/pdf/papers").slice(0, 2), [
    "list_directory",
    "read_file",
  ]);
  assert.equal(order("read the article /root/pdf/papers/a.txt")[0], "read_file");
  assert.equal(order("save the report in /root/reports")[0], "write_file");
});

Deno.test("extractLocators() reads a relative directory path, not alternatives, acronyms, numbers or units", () => {
  const kinds = (text: string) => extractLocators(text).spans.map((s) => [s.path, s.directory]);
  assert.deepEqual(kinds("whats inside src/utils"), [[true, true]]);
  assert.deepEqual(kinds("list everything under tests/"), [[true, true]]);
  assert.deepEqual(kinds("show docs/guide/intro, please"), [[true, true]]);
  for (
    const text of ["read/write access", "cats and/or dogs", "his/her name", "TCP/IP stack", "24/7 support"]
  ) {
    assert.deepEqual(kinds(text), [], text);
  }
  assert.deepEqual(kinds("speed in km/h on 12/05/2026"), []);
});

Deno.test("rankQuery(): a relative directory path with no verb finds the directory listing", () => {
  const path = { type: "object", properties: { path: { type: "string" } } };
  const index = buildIndex(buildCatalog([{
    name: "fs",
    tags: [],
    useWhen: [],
    tools: [
      { name: "read_text_file", description: "Read the contents of a text file.", inputSchema: path },
      {
        name: "list_directory",
        description: "List the files and directories in a directory.",
        inputSchema: path,
      },
      { name: "get_weather", description: "Get the weather for a city.", inputSchema: {} },
    ],
  }]));
  assert.equal(
    rankQuery(index, "whats inside src/utils", { maxHits: 3 }).hits[0]?.tool.tool,
    "list_directory",
  );
});
