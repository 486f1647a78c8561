import assert from "node:assert/strict";
import { serverIndex, tool } from "./_bench_catalog.ts";
import { rankQuery, stem } from "../../src/resolver/mod.ts";
import { synonymsOf } from "../../src/resolver/synonyms.ts";

// Excerpt of a self-hosting panel's live `tools/list` (blind14's Coolify): the docs search says "docs".
const index = serverIndex("coolify", "MCP server for Coolify", [
  tool("server_domains", "Domains on server"),
  tool("diagnose_app", "App diagnostics by UUID/name/domain"),
  tool("application", "Manage app: create/update/move/delete/delete_preview"),
  tool("get_version", "Coolify API version"),
  tool("list_servers", "List servers (summary)"),
  tool(
    "search_docs",
    "Search the official Coolify docs index. Returns matching pages (title, url, one-line description) ranked " +
      "by relevance — fetch the url for full detail.",
  ),
]);

Deno.test("an abbreviation tools use is a spelling of the word a request writes out (230)", () => {
  const of = (word: string) => new Set(synonymsOf(stem(word)).filter((s) => s.spelling).map((s) => s.term));
  for (
    const [short, long] of [
      ["auth", "authentication"],
      ["auth", "authorization"],
      ["org", "organization"],
      ["admin", "administrator"],
      ["param", "parameter"],
      ["spec", "specification"],
      ["txn", "transaction"],
      ["cert", "certificate"],
      ["tmp", "temporary"],
      ["prev", "previous"],
      ["lib", "library"],
      ["notif", "notification"],
      ["desc", "description"],
      ["attr", "attribute"],
      ["ref", "reference"],
    ]
  ) {
    assert.ok(of(short!).has(stem(long!)), `${short} -> ${long}`);
    assert.ok(of(long!).has(stem(short!)), `${long} -> ${short}`);
  }
  // "docs" is also a database's documents: documentation and docs find each other, as recall only.
  assert.ok(synonymsOf(stem("documentation")).some((s) => s.term === stem("docs") && !s.spelling));
});

Deno.test("'look it up in their documentation' finds the tool that searches the docs (230)", () => {
  const hits = rankQuery(
    index,
    "how do I configure wildcard domains in coolify? look it up in their documentation",
  )
    .hits.map((h) => h.tool.tool);
  assert.ok(hits.indexOf("search_docs") >= 0 && hits.indexOf("search_docs") <= 1, hits.join(" "));
});
