/**
 * Fifteenth pass, part C: scale. In a catalog of a thousand tools or more, a tool meeting one common word of a
 * request (a word many tools use) moves behind a tool meeting two or more of its words (change 380).
 */
import assert from "node:assert/strict";
import { buildCatalog } from "../../src/catalog/mod.ts";
import { buildIndex, LARGE_CATALOG, search } from "../../src/resolver/mod.ts";
import { tool } from "./_bench_catalog.ts";

/** A short made-up word per number: no English word, no word of another tool. */
function tag(i: number): string {
  let s = "";
  do {
    s += String.fromCharCode(97 + (i % 26));
    i = Math.floor(i / 26);
  } while (i > 0);
  return s;
}

/**
 * 25 unrelated servers with a `convert` tool each, a currency server whose tool is named by neither request
 * word, and `filler` one-tool servers that share no word with the request.
 */
function catalog(filler: number) {
  const servers = [];
  for (let s = 0; s < 25; s++) {
    servers.push({
      name: `conv${tag(s)}x`,
      description: `Converter kit ${tag(s)}q`,
      tags: [],
      useWhen: [],
      tools: [tool("convert", `Convert a file to ${tag(s)}zz format, or convert it back.`)],
    });
  }
  for (let s = 0; s < filler; s++) {
    servers.push({
      name: `srv${tag(s)}k`,
      description: `Kit ${tag(s)}w`,
      tags: [],
      useWhen: [],
      tools: [tool(`op_${tag(s)}y`, `Run job ${tag(s)}v.`)],
    });
  }
  servers.push({
    name: "money",
    description: "Currency rates",
    tags: [],
    useWhen: [],
    tools: [
      tool(
        "fx_quote",
        "Quote what a sum in one currency is worth in another with the day's rate, for dollars and euros and many other currencies, from the central bank's daily table.",
      ),
    ],
  });
  return buildCatalog(servers);
}

Deno.test("380: in a large catalog two request words met beat one common word met", () => {
  const index = buildIndex(catalog(1000));
  assert.ok(index.tools.length >= LARGE_CATALOG);
  assert.equal(search(index, "convert 250 dollars to euros")[0]?.tool.namespaced, "money__fx_quote");
});

Deno.test("380: below a thousand tools one word still names a tool", () => {
  const index = buildIndex(catalog(900));
  assert.ok(index.tools.length < LARGE_CATALOG);
  assert.equal(search(index, "convert 250 dollars to euros")[0]?.tool.namespaced, "convax__convert");
});
