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
  searchMaxHits,
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
  const r = searchResponse(index, { query: "read a text file", max_hits: 3 }, context);
  assert.deepEqual(Object.keys(r), [
    "contract_version",
    "catalog_revision",
    "query",
    "count",
    "returned",
    "truncated",
    "byte_limited",
    "shape",
    "offset",
    "next_page_token",
    "next",
    "matches",
    "servers",
  ]);
  assert.equal(r.shape, "page");
  assert.equal(r.offset, 0);
  assert.match(r.next_page_token!, /^p1\./);
  assert.match(r.next, /^Tools 1-?\d* of \d+ listed|^Tools \d+ of \d+ listed, best first/);
  assert.equal(r.contract_version, "2");
  assert.equal(r.catalog_revision, context.catalogRevision);
  assert.equal(r.query, "read a text file");
  const m = r.matches[0]!;
  assert.equal(m.namespaced, "filesystem__read_text_file");
  assert.equal(m.server, "filesystem");
  assert.equal(m.tool, "read_text_file");
  // Several matches of one server: its description, tags and hints are said once, in `servers`.
  assert.deepEqual(r.servers!.filesystem, {
    description: "Secure file operations within allowed directories",
    tags: ["files"],
    use_when: ["reading or editing local files"],
  });
  assert.deepEqual(Object.keys(m), [
    "namespaced",
    "server",
    "tool",
    "description",
    "required_arguments",
    "score",
    "matched_terms",
    "metadata_truncated",
  ]);
  // The first sentence of the description; describe_tool has the rest (metadata_truncated says so).
  assert.equal(m.description, "Read the complete contents of a file from the file system as text.");
  assert.equal(m.metadata_truncated, true);
  assert.deepEqual(m.required_arguments, ["path"]);
  assert.deepEqual(m.matched_terms, ["read", "text", "file"]);
  assert.equal(typeof m.score, "number");
  assert.ok(r.matches.every((x) => r.servers![x.server] !== undefined || !("server_description" in x)));
});

Deno.test("searchResponse() keeps server metadata in the match when grouping is not shorter", () => {
  // One match of its server: grouping would only add a key.
  const r = searchResponse(index, { query: "timezone" }, context);
  const m = r.matches.find((x) => x.server === "time")!;
  assert.ok(m, JSON.stringify(r.matches.map((x) => x.namespaced)));
  const grouped = "servers" in r;
  if (!grouped) assert.ok(r.matches.every((x) => !("servers" in x)));
  assert.equal(r.shape, r.returned === r.count ? "everything" : "page");
  const one = buildIndex(buildCatalog([{
    name: "solo",
    description: "A server of one tool",
    tools: [{ name: "frobnicate", description: "Frobnicate a widget.", inputSchema: { required: ["id"] } }],
  }]));
  const single = searchResponse(one, { query: "frobnicate" }, context);
  assert.equal("servers" in single, false);
  assert.equal(single.matches[0]!.server_description, "A server of one tool");
  assert.deepEqual(single.matches[0]!.required_arguments, ["id"]);
  assert.equal(single.shape, "everything");
  assert.equal(single.next_page_token, null);
  assert.match(
    single.next,
    /^All 1 matching tools listed: call_tool with server, tool and the required_arguments/,
  );
});

Deno.test("searchResponse() summarises a description by its first sentence and keeps a deprecation", () => {
  const idx = buildIndex(buildCatalog([{
    name: "fs",
    tools: [
      {
        name: "read_file",
        description: "Read a file as text. Handles encodings.\nDEPRECATED: use read_text_file instead.",
      },
      { name: "read_text_file", description: "Read a text file, e.g. notes.txt. Returns its text." },
      { name: "read_short", description: "Read it. Then more." },
    ],
  }]));
  const r = searchResponse(idx, { query: "read" }, context);
  const by = (name: string) => r.matches.find((m) => m.tool === name)!;
  assert.equal(by("read_file").description, "Read a file as text. DEPRECATED: use read_text_file instead.");
  assert.equal(by("read_text_file").description, "Read a text file, e.g. notes.txt.");
  assert.equal(by("read_text_file").metadata_truncated, true);
  // A first "sentence" under 15 characters is no summary: the line is kept.
  assert.equal(by("read_short").description, "Read it. Then more.");
  assert.equal("metadata_truncated" in by("read_short"), false);
});

Deno.test("searchResponse() pages with next_page_token, and refuses a token of another query or catalog", () => {
  const first = searchResponse(index, { query: "file", max_hits: 3 }, context);
  assert.equal(first.shape, "page");
  const seen = first.matches.map((m) => m.namespaced);
  let token = first.next_page_token;
  let last = first;
  while (token !== null) {
    last = searchResponse(index, { query: "file", max_hits: 3, page_token: token }, context);
    assert.equal(last.offset, seen.length);
    seen.push(...last.matches.map((m) => m.namespaced));
    token = last.next_page_token;
  }
  assert.equal(last.shape, "everything");
  assert.match(last.next, /^The last matching tools \(\d+-\d+ of \d+\) listed/);
  assert.equal(seen.length, first.count);
  assert.equal(new Set(seen).size, seen.length);
  const whole = searchResponse(index, { query: "file", max_hits: 100 }, context);
  assert.deepEqual(seen, whole.matches.map((m) => m.namespaced));
  assert.throws(
    () => searchResponse(index, { query: "files", page_token: first.next_page_token }, context),
    (e) => e instanceof RangeError && /not a next_page_token of this query/.test(e.message),
  );
  assert.throws(
    () => searchResponse(index, { query: "file", page_token: "nonsense" }, context),
    (e) => e instanceof RangeError && /not a next_page_token/.test(e.message),
  );
  assert.throws(
    () =>
      searchResponse(index, { query: "file", page_token: first.next_page_token }, {
        ...context,
        catalogRevision: "0000000000000000",
      }),
    (e) => e instanceof RangeError && /earlier catalog/.test(e.message) && /search again/.test(e.message),
  );
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
  // Tiny entries, so the 12 KiB budget does not cut the default page.
  const big = buildIndex(buildCatalog([{
    name: "b",
    tools: Array.from({ length: 150 }, (_, i) => ({ name: `t${i}`, description: "gear" })),
  }]));
  assert.equal(searchResponse(big, { query: "gear" }, context).returned, 20);
  assert.equal(searchResponse(big, { query: "gear", max_hits: null }, context).returned, 20);
  assert.equal(searchMaxHits(1000), SEARCH_MAX_HITS);
  // 100 entries of ~120 bytes each (with required_arguments) reach the 12 KiB budget: the page is
  // the clamp or the budget, whichever is smaller, and says which.
  const clamped = searchResponse(big, { query: "", max_hits: 1000 }, context);
  assert.ok(clamped.returned <= SEARCH_MAX_HITS && clamped.returned > 90, String(clamped.returned));
  assert.equal(clamped.byte_limited, clamped.returned < SEARCH_MAX_HITS);
  assert.equal(clamped.count, 150);
  assert.equal(clamped.truncated, true);
  const next = searchResponse(
    big,
    { query: "", max_hits: 1000, page_token: clamped.next_page_token },
    context,
  );
  assert.equal(next.offset, clamped.returned);
  assert.equal(next.returned, 150 - clamped.returned);
  assert.equal(next.shape, "everything");
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
  assert.ok(
    utf8Length(JSON.stringify(r.matches)) + utf8Length(JSON.stringify(r.servers ?? {})) <= MATCHES_MAX_BYTES,
  );
  assert.equal(r.count, 100);
  // A page the byte budget cut says so, and its token reads on from the first match left out.
  assert.equal(r.shape, "page");
  assert.match(r.next, /left out to stay within 12 KiB/);
  const next = searchResponse(bigIndex(100), {
    query: "widget",
    max_hits: 100,
    page_token: r.next_page_token,
  }, context);
  assert.equal(next.offset, r.returned);
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
