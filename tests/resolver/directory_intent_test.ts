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
