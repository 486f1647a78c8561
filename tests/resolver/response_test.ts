import assert from "node:assert/strict";
import { buildCatalog, type CatalogServer } from "../../src/catalog/mod.ts";
import {
  ALTERNATIVES_MAX_BYTES,
  buildIndex,
  catalogRevision,
  DESCRIPTION_MAX_BYTES,
  MATCHES_MAX_BYTES,
  MAX_QUERY_BYTES,
  RESOLVE_MAX_HITS,
  resolveResponse,
  SEARCH_MAX_HITS,
  searchResponse,
  TITLE_MAX_BYTES,
  utf8Length,
} from "../../src/resolver/mod.ts";
import { fixtureCatalog } from "./_fixture.ts";

const tools = fixtureCatalog();
const index = buildIndex(tools);
const context = { contractVersion: "2", catalogRevision: catalogRevision(tools) };

/** A catalog of `n` tools whose descriptions all match "widget". */
function bigIndex(n: number, description = "Manage a widget. ".repeat(20)) {
  const servers: CatalogServer[] = [{
    name: "big",
    description: "Widget server ".repeat(30),
    tools: Array.from(
      { length: n },
      (_, i) => ({ name: `widget_tool_${String(i).padStart(3, "0")}`, description }),
    ),
  }];
  return buildIndex(buildCatalog(servers));
}

Deno.test("searchResponse() returns the contract shape", () => {
  const r = searchResponse(index, { query: "read a text file" }, context);
  assert.deepEqual(Object.keys(r), [
    "contract_version",
    "catalog_revision",
    "query",
    "count",
    "returned",
    "truncated",
    "byte_limited",
    "matches",
  ]);
  assert.equal(r.contract_version, "2");
  assert.equal(r.catalog_revision, context.catalogRevision);
  assert.equal(r.query, "read a text file");
  const m = r.matches[0]!;
  assert.equal(m.namespaced, "filesystem__read_text_file");
  assert.equal(m.server, "filesystem");
  assert.equal(m.tool, "read_text_file");
  assert.equal(m.server_description, "Secure file operations within allowed directories");
  assert.deepEqual(m.tags, ["files"]);
  assert.deepEqual(m.use_when, ["reading or editing local files"]);
  assert.deepEqual(m.matched_terms, ["read", "text", "file"]);
  assert.equal(typeof m.score, "number");
  assert.equal("metadata_truncated" in m, false);
  assert.equal("title" in m, false);
});

Deno.test("searchResponse() uses the public short name for tool", () => {
  const m = searchResponse(index, { query: "create issue" }, context).matches[0]!;
  assert.equal(m.namespaced, "github__create_issue");
  assert.equal(m.tool, "create_issue");
});

Deno.test("searchResponse() counts every match and flags the count bound", () => {
  const r = searchResponse(index, { query: "file", max_hits: 3 }, context);
  assert.equal(r.returned, 3);
  assert.ok(r.count > 3);
  assert.equal(r.truncated, true);
  assert.equal(r.byte_limited, false);
  const all = searchResponse(index, { query: "timezone" }, context);
  assert.equal(all.returned, all.count);
  assert.equal(all.truncated, false);
});

Deno.test("searchResponse() defaults max_hits to 20 and clamps it to 100", () => {
  // Tiny entries, so the 12 KiB budget does not cut the list first.
  const big = buildIndex(buildCatalog([{
    name: "b",
    tools: Array.from({ length: 150 }, (_, i) => ({ name: `t${i}`, description: "widget" })),
  }]));
  assert.equal(searchResponse(big, { query: "widget" }, context).returned, 20);
  assert.equal(searchResponse(big, { query: "widget", max_hits: null }, context).returned, 20);
  const clamped = searchResponse(big, { query: "widget", max_hits: 1000 }, context);
  assert.equal(clamped.returned, SEARCH_MAX_HITS);
  assert.equal(clamped.count, 150);
  assert.equal(clamped.truncated, true);
  assert.equal(clamped.byte_limited, false);
});

Deno.test("searchResponse() rejects max_hits below 1 or not an integer", async (t) => {
  for (const bad of [0, -1, 2.5, "5", Number.NaN]) {
    await t.step(String(bad), () => {
      assert.throws(
        () => searchResponse(index, { query: "file", max_hits: bad as number }, context),
        (e) => e instanceof RangeError && /integer of at least 1/.test(e.message),
      );
    });
  }
});

Deno.test("searchResponse() rejects a query over 2,048 bytes, naming the limit", () => {
  const ok = "a".repeat(MAX_QUERY_BYTES);
  assert.doesNotThrow(() => searchResponse(index, { query: ok }, context));
  assert.throws(
    () => searchResponse(index, { query: "é".repeat(1025) }, context),
    (e) => e instanceof RangeError && /2050 bytes/.test(e.message) && /2048 bytes/.test(e.message),
  );
  assert.throws(() => searchResponse(index, { query: 42 as unknown as string }, context), TypeError);
});

Deno.test("searchResponse() lists the catalog by name for an empty query", () => {
  const r = searchResponse(index, { query: "", max_hits: 5 }, context);
  assert.equal(r.count, tools.length);
  assert.equal(r.returned, 5);
  assert.equal(r.truncated, true);
  const names = r.matches.map((m) => m.namespaced);
  assert.deepEqual(names, [...tools.map((t) => t.namespaced)].sort().slice(0, 5));
  assert.ok(r.matches.every((m) => m.score === 0 && m.matched_terms.length === 0));
  assert.equal(searchResponse(index, { query: "   " }, context).count, tools.length);
});

Deno.test("searchResponse() caps the matches array at 12 KiB and keeps the first match", () => {
  const r = searchResponse(bigIndex(100), { query: "widget", max_hits: 100 }, context);
  assert.equal(r.byte_limited, true);
  assert.equal(r.truncated, true);
  assert.ok(r.returned >= 1 && r.returned < 100);
  assert.ok(utf8Length(JSON.stringify(r.matches)) <= MATCHES_MAX_BYTES);
  assert.equal(r.count, 100);
});

Deno.test("searchResponse() clips description and title on a character boundary", () => {
  const servers: CatalogServer[] = [{
    name: "wide",
    tools: [{ name: "report", title: "Ü".repeat(120), description: `Report ${"é".repeat(300)}` }],
  }];
  const idx = buildIndex(buildCatalog(servers));
  const m = searchResponse(idx, { query: "report" }, context).matches[0]!;
  assert.equal(m.metadata_truncated, true);
  assert.ok(utf8Length(m.description) <= DESCRIPTION_MAX_BYTES);
  assert.ok(utf8Length(m.title!) <= TITLE_MAX_BYTES);
  assert.ok(m.description.endsWith("…") && m.title!.endsWith("…"));
  assert.ok(!m.description.includes("\uFFFD") && !m.title!.includes("\uFFFD"));
});

Deno.test("resolveResponse() returns the contract shape with an argument template", () => {
  const r = resolveResponse(index, { query: "read the contents of a text file" }, context);
  assert.deepEqual(Object.keys(r), [
    "contract_version",
    "catalog_revision",
    "status",
    "confidence",
    "reason_codes",
    "matched_fraction",
    "score_gap",
    "query",
    "recommendation",
    "alternatives",
    "alternatives_truncated",
    "hint",
  ]);
  assert.equal(r.status, "confident");
  const rec = r.recommendation!;
  assert.deepEqual(Object.keys(rec), [
    "server",
    "tool",
    "namespaced",
    "title",
    "description",
    "server_description",
    "use_when",
    "score",
    "matched_terms",
    "required_fields",
    "argument_template",
    "argument_template_truncated",
  ]);
  assert.equal(rec.namespaced, "filesystem__read_text_file");
  assert.equal(rec.title, null);
  assert.deepEqual(rec.required_fields, ["path"]);
  assert.deepEqual(rec.argument_template, { path: "<value>", head: null, tail: null });
  assert.equal(rec.argument_template_truncated, false);
  assert.equal(r.alternatives.length, 4);
  assert.ok(r.alternatives.every((a) => a.namespaced !== rec.namespaced));
  assert.equal(r.alternatives_truncated, true);
});

Deno.test("resolveResponse() bounds alternatives by max_hits", () => {
  assert.equal(resolveResponse(index, { query: "file", max_hits: 1 }, context).alternatives.length, 0);
  assert.equal(resolveResponse(index, { query: "file", max_hits: 10 }, context).alternatives.length, 9);
  const few = resolveResponse(index, { query: "timezone", max_hits: 10 }, context);
  assert.equal(few.alternatives_truncated, false);
});

Deno.test("resolveResponse() caps alternatives by bytes and flags it", () => {
  const r = resolveResponse(bigIndex(20), { query: "widget", max_hits: RESOLVE_MAX_HITS }, context);
  assert.ok(utf8Length(JSON.stringify(r.alternatives)) <= ALTERNATIVES_MAX_BYTES);
  assert.equal(r.alternatives_truncated, true);
});

Deno.test("resolveResponse() rejects max_hits outside 1..10 and long queries", async (t) => {
  for (const bad of [0, 11, 2.5, "3"]) {
    await t.step(String(bad), () => {
      assert.throws(
        () => resolveResponse(index, { query: "file", max_hits: bad as number }, context),
        (e) => e instanceof RangeError && /from 1 to 10/.test(e.message),
      );
    });
  }
  assert.throws(
    () => resolveResponse(index, { query: "x".repeat(MAX_QUERY_BYTES + 1) }, context),
    (e) => e instanceof RangeError && /2048 bytes/.test(e.message),
  );
});

Deno.test("resolveResponse() answers no_match with no recommendation and a hint", () => {
  const r = resolveResponse(index, { query: "order a pepperoni pizza" }, context);
  assert.equal(r.status, "no_match");
  assert.equal(r.confidence, "none");
  assert.equal(r.recommendation, null);
  assert.deepEqual(r.alternatives, []);
  assert.equal(r.alternatives_truncated, false);
  assert.match(r.hint, /search_tools/);
  const empty = resolveResponse(index, { query: "" }, context);
  assert.equal(empty.status, "no_match");
  assert.deepEqual(empty.reason_codes, ["empty_query"]);
});

Deno.test("resolveResponse() flags a truncated argument template", () => {
  const properties = Object.fromEntries(
    Array.from({ length: 60 }, (_, i) => [`field_${i}`, { type: "string" }]),
  );
  const idx = buildIndex(buildCatalog([{
    name: "wide",
    tools: [{
      name: "configure_everything",
      description: "Configure everything",
      inputSchema: { properties },
    }],
  }]));
  const rec = resolveResponse(idx, { query: "configure everything" }, context).recommendation!;
  assert.equal(rec.argument_template_truncated, true);
  assert.equal(Object.keys(rec.argument_template).length, 48);
});

Deno.test("searchResponse() and resolveResponse() handle an empty catalog", () => {
  const empty = buildIndex([]);
  const ctx = { contractVersion: "2", catalogRevision: catalogRevision([]) };
  assert.match(ctx.catalogRevision, /^[0-9a-f]{16}$/);
  const listing = searchResponse(empty, { query: "" }, ctx);
  assert.equal(listing.count, 0);
  assert.deepEqual(listing.matches, []);
  assert.equal(searchResponse(empty, { query: "read a file" }, ctx).count, 0);
  assert.equal(resolveResponse(empty, { query: "read a file" }, ctx).status, "no_match");
});
