import assert from "node:assert/strict";
import { buildCatalog } from "../../src/catalog/mod.ts";
import { buildIndex, rankQuery } from "../../src/resolver/mod.ts";
import { parseQuery, UNIT_WEIGHT } from "../../src/resolver/query.ts";
import { pairKey } from "../../src/resolver/search_index.ts";
import { stem } from "../../src/resolver/tokenize.ts";

const pair = (a: string, b: string) => pairKey(stem(a), stem(b));

const tool = (name: string, description: string) => ({ name, description, inputSchema: { type: "object" } });

const servers = [{
  name: "docs",
  tags: [],
  useWhen: [],
  tools: [
    // "cloud" in its name and "word" in its description, apart: without proximity it ranks first.
    tool("cloud_export", "Export a word document to cloud storage."),
    tool("make_chart", "Render a word cloud chart from a list of terms and their weights for a report."),
    tool("read_file", "Read a file."),
    tool("send_mail", "Send an e-mail message."),
    tool("get_time", "Current time in a time zone."),
  ],
}];

Deno.test("parseQuery() keeps the prose's content-word stems in typed order, without paths, broken at steps", () => {
  // "" ends a phrase: a step ("…, then"), a number or a generic request verb (issue #42: no pairs across
  // sentences, none of generic words).
  assert.deepEqual(
    parseQuery("Draw a word cloud of the files in /tmp/notes, then a word count").sequence,
    ["draw", "word", "cloud", "file", "", "word", "count"].map((w) => w && stem(w)),
  );
  assert.deepEqual(parseQuery("find 3 word clouds").sequence, ["", "", stem("word"), stem("clouds")]);
});

Deno.test("a two-word phrase of the query found adjacent in a tool's lead sentence ranks that tool first", () => {
  const catalog = buildCatalog(servers);
  const query = "draw a word cloud";
  const off = rankQuery(buildIndex(catalog, { phraseWeight: 0 }), query).hits.map((h) => h.tool.tool);
  const on = rankQuery(buildIndex(catalog), query).hits.map((h) => h.tool.tool);
  assert.deepEqual(off, ["cloud_export", "make_chart"]);
  assert.deepEqual(on, ["make_chart", "cloud_export"]);
});

Deno.test("the phrase pair index covers names, titles and lead sentences, not the rest of a description", () => {
  const index = buildIndex(buildCatalog([{
    name: "s",
    tags: [],
    useWhen: [],
    tools: [
      { ...tool("getStockPrice", "Quote lookup. Also gives the market cap."), title: "Live Quote" },
    ],
  }]));
  assert.ok(index.pairs.has(pair("stock", "price")), "name words, split");
  assert.ok(index.pairs.has(pair("live", "quote")), "title words, stemmed");
  assert.ok(index.pairs.has(pair("quote", "lookup")), "lead sentence");
  assert.ok(!index.pairs.has(pair("market", "cap")), "a later sentence is not indexed");
  assert.deepEqual([...index.pairs.get(pair("stock", "price"))!.docs], [0]);
});

Deno.test("the word right after a number weighs less: a unit or counted thing of an argument", () => {
  const weight = (q: string, w: string) => parseQuery(q).terms.find((t) => t.term === stem(w))!.weight;
  assert.equal(weight("stay 3 days", "days"), UNIT_WEIGHT);
  assert.equal(weight("days of stay", "days"), 1);
});
