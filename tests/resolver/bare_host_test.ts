import assert from "node:assert/strict";
import { buildCatalog } from "../../src/catalog/mod.ts";
import { buildIndex, rankQuery } from "../../src/resolver/mod.ts";
import { extractLocators } from "../../src/resolver/locators.ts";
import { parseQuery } from "../../src/resolver/query.ts";
import { stem } from "../../src/resolver/tokenize.ts";

Deno.test("extractLocators() reads a host name without a scheme as a web address", () => {
  const { rest, spans } = extractLocators("grab docs.python.org/3/whatsnew. then see status.github.com?");
  assert.equal(rest, "grab   then see  ?");
  assert.deepEqual(spans, [
    {
      path: false,
      directory: false,
      words: [{ word: "docs", weight: 0.8 }, { word: "python", weight: 0.8 }],
      extras: [{ term: "url", weight: 0.5 }, { term: "web", weight: 0.5 }, { term: "whatsnew", weight: 0.3 }],
    },
    {
      path: false,
      directory: false,
      words: [{ word: "status", weight: 0.8 }, { word: "github", weight: 0.8 }],
      extras: [{ term: "url", weight: 0.5 }, { term: "web", weight: 0.5 }],
    },
  ]);
});

Deno.test("extractLocators() leaves e-mail addresses and run-on sentences alone", () => {
  for (const text of ["mail ana@example.com now", "done.It works", "a.b.c", "version 1.2.3"]) {
    assert.deepEqual(extractLocators(text), { rest: text, spans: [] }, text);
  }
});

Deno.test("extractLocators() reads a file name without a directory as a file path of its kind", () => {
  const { rest, spans } = extractLocators("edit README.md and photo.png");
  assert.equal(rest.replace(/\s+/g, " ").trim(), "edit and");
  assert.deepEqual(spans.map((s) => [s.path, s.directory, s.words, s.extras.map((e) => e.term)]), [
    [true, false, [{ word: "md", weight: 0.7 }], [stem("file"), "text", stem("readme")]],
    [true, false, [{ word: "png", weight: 0.7 }], [stem("file"), stem("image"), stem("photo")]],
  ]);
});

Deno.test("parseQuery() weighs a bare host's labels like a URL's and drops its top-level domain", () => {
  const q = parseQuery("open example.com in the browser");
  assert.equal(q.stems.includes(stem("com")), false);
  assert.equal(q.terms.find((t) => t.term === stem("example"))?.weight, 0.8);
  assert.equal(q.terms.find((t) => t.term === "web")?.weight, 0.5);
});

Deno.test("rankQuery() brings the web fetcher up for a host name typed without its scheme", () => {
  const tools = buildCatalog([{
    name: "fs",
    tags: [],
    useWhen: [],
    tools: [
      { name: "read_file", description: "Read the complete contents of a file from the file system." },
      {
        name: "fetch",
        description: "Fetches a URL from the internet and extracts its contents as markdown.",
      },
    ],
  }]);
  const index = buildIndex(tools);
  const first = (q: string) => rankQuery(index, q, { maxHits: 1 }).hits[0]?.tool.tool;
  assert.equal(first("the contents of docs.python.org/3/whatsnew"), "fetch");
  assert.equal(first("the contents of /root/notes/whatsnew.txt"), "read_file");
});
