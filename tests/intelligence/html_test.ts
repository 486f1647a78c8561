import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import {
  bucketStart,
  type CallRecord,
  escapeHtml,
  formatCount,
  intelligenceMigrations,
  niceScale,
  queryReportData,
  Recorder,
  renderStatsHtml,
} from "../../src/intelligence/mod.ts";
import { openStore, sqliteReader } from "../../src/store/mod.ts";
import { NOW, sampleHtml, sampleStore } from "./sample_calls.ts";

const GOLDEN = fileURLToPath(new URL("./testdata/", import.meta.url));
const DAY = 86_400_000;

/** Compares with `testdata/NAME`; `UPDATE_GOLDEN=1` rewrites it. */
async function golden(name: string, actual: string): Promise<void> {
  const path = `${GOLDEN}${name}`;
  if (Deno.env.get("UPDATE_GOLDEN") === "1") {
    await Deno.mkdir(GOLDEN, { recursive: true });
    await Deno.writeTextFile(path, actual);
  }
  assert.equal(actual, await Deno.readTextFile(path), `${name} differs; UPDATE_GOLDEN=1 rewrites it`);
}

Deno.test("renderStatsHtml() of the sample store matches the golden report", async () => {
  await golden("stats_report.html.golden", await sampleHtml({ tools: true, recent: 3 }));
});

Deno.test("renderStatsHtml() with live servers matches the golden live page", async () => {
  await golden("stats_live.html.golden", await sampleHtml({ since: 7 * DAY, live: true }));
});

Deno.test("renderStatsHtml() of an empty store is the header and the no-data sentence", async () => {
  const db = openStore(":memory:", { migrations: intelligenceMigrations });
  try {
    const html = renderStatsHtml(await queryReportData(sqliteReader(db), { now: NOW }), {
      dbPath: "/tmp/none.db",
    });
    assert.match(
      html,
      /<p id="no-data">No calls recorded yet \(all time\)\. Run `mcphub mcp serve` .* in \/tmp\/none\.db\.<\/p>/,
    );
    assert.doesNotMatch(html, /<svg/);
    assert.match(html, /<p id="period">All time: until 2026-11-30 06:00:00 UTC\.<\/p>/);
  } finally {
    db.close();
  }
});

Deno.test("queryReportData() buckets calls per UTC day per server and computes nearest-rank p50/p95", async () => {
  const db = await sampleStore();
  try {
    const data = await queryReportData(sqliteReader(db), { now: NOW, since: NOW - 7 * DAY });
    assert.equal(data.unit, "day");
    // 7 days back from 06:00 starts on the 23rd: 8 UTC days, the 23rd to the 30th.
    assert.deepEqual(data.buckets.map((b) => new Date(b.start).toISOString().slice(0, 10)), [
      "2026-11-23",
      "2026-11-24",
      "2026-11-25",
      "2026-11-26",
      "2026-11-27",
      "2026-11-28",
      "2026-11-29",
      "2026-11-30",
    ]);
    assert.deepEqual(data.servers.map((s) => s.server), ["github", "fs"]);
    assert.deepEqual(data.buckets.map((b) => b.calls), [
      [0, 0],
      [0, 0],
      [0, 0],
      [0, 0],
      [1, 0],
      [0, 0],
      [0, 0],
      [2, 1],
    ]);
    assert.deepEqual(data.totals, {
      calls: 4,
      errors: 1,
      est_tokens: 605,
      total_ms: 510,
      spooled_results: 1,
      tokens_kept_out: 24850,
      tokens_reached: 605,
      detached: 0,
      detached_errors: 0,
    });
    const search = data.tools.find((t) => t.namespaced === "github__search_code")!;
    assert.deepEqual([search.p50_ms, search.p95_ms], [80, 120]);
    const fs = data.servers.find((s) => s.server === "fs")!;
    assert.deepEqual([fs.tokens_reached, fs.tokens_kept_out, fs.spooled_results], [155, 24850, 1]);
  } finally {
    db.close();
  }
});

Deno.test("queryReportData() p50/p95 follow nearest rank over 20 calls, and detached calls count apart", async () => {
  const db = openStore(":memory:", { migrations: intelligenceMigrations });
  try {
    const recorder = new Recorder(db);
    for (let i = 1; i <= 20; i++) {
      recorder.record({
        ts: NOW - i * 1000,
        server: "s",
        tool: "t",
        namespaced: "s__t",
        durationMs: i * 10,
        ok: i % 5 !== 0,
        argsBytes: 4,
        resultBytes: 4,
        returnedBytes: 4,
        via: i <= 3 ? "detach" : "mount",
        spooled: false,
      });
    }
    await recorder.close();
    const [tool] = (await queryReportData(sqliteReader(db), { now: NOW })).tools;
    // ceil(0.5 * 20) = 10th smallest, ceil(0.95 * 20) = 19th smallest.
    assert.deepEqual(
      [tool.p50_ms, tool.p95_ms, tool.errors, tool.error_rate, tool.detached, tool.detached_errors],
      [100, 190, 4, 0.2, 3, 0],
    );
    assert.equal(tool.detached_p95_ms, 30);
  } finally {
    db.close();
  }
});

Deno.test("queryReportData() draws weeks past 62 days and months past 104 weeks", async () => {
  const db = openStore(":memory:", { migrations: intelligenceMigrations });
  try {
    const recorder = new Recorder(db);
    const base = { server: "s", tool: "t", namespaced: "s__t", durationMs: 1, ok: true } as const;
    for (const daysAgo of [0, 70]) {
      recorder.record({
        ...base,
        ts: NOW - daysAgo * DAY,
        argsBytes: 0,
        resultBytes: 0,
        returnedBytes: 0,
        via: "mount",
        spooled: false,
      });
    }
    await recorder.close();
    const weeks = await queryReportData(sqliteReader(db), { now: NOW });
    assert.equal(weeks.unit, "week");
    // Weeks start on Monday: 2026-11-30 is a Monday.
    assert.equal(weeks.buckets.at(-1)!.start, NOW - 6 * 3_600_000);
    assert.equal(weeks.buckets.reduce((sum, b) => sum + b.calls[0], 0), 2);
    const months = await queryReportData(sqliteReader(db), { now: NOW, since: NOW - 800 * DAY });
    assert.equal(months.unit, "month");
    assert.equal(new Date(months.buckets[0].start).toISOString(), "2024-09-01T00:00:00.000Z");
    assert.equal(bucketStart(Date.UTC(2026, 1, 14, 12), "month"), Date.UTC(2026, 1, 1));
  } finally {
    db.close();
  }
});

Deno.test("formatCount(), niceScale() and escapeHtml()", () => {
  assert.deepEqual([0, 999, 1000, 25535, 1234567, -4200].map(formatCount), [
    "0",
    "999",
    "1,000",
    "25,535",
    "1,234,567",
    "-4,200",
  ]);
  assert.deepEqual(niceScale(0), { max: 1, step: 1 });
  assert.deepEqual(niceScale(3), { max: 3, step: 1 });
  assert.deepEqual(niceScale(37), { max: 40, step: 10 });
  assert.deepEqual(niceScale(1234), { max: 1500, step: 500 });
  assert.equal(escapeHtml(`<a href="x">'&'</a>`), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
});

Deno.test("renderStatsHtml() escapes every name and never shows error texts", async () => {
  const db = openStore(":memory:", { migrations: intelligenceMigrations });
  try {
    const recorder = new Recorder(db);
    const hostile: CallRecord = {
      ts: NOW - 1000,
      server: `<img src=x onerror=alert(1)>`,
      tool: `"><script>alert(2)</script>`,
      namespaced: `<img src=x onerror=alert(1)>__"><script>alert(2)</script>`,
      durationMs: 12,
      ok: false,
      error: "Unauthorized: token ghp_SECRET123 rejected",
      argsBytes: 10,
      resultBytes: 10,
      returnedBytes: 10,
      agent: "<b>ci</b>",
      via: "detach",
      spooled: false,
    };
    recorder.record(hostile);
    await recorder.close();
    const html = renderStatsHtml(await queryReportData(sqliteReader(db), { now: NOW, recent: 5 }), {
      tools: true,
      server: "</title><script>",
      dbPath: "/tmp/<x>.db",
    });
    assert.doesNotMatch(html, /<img|<script|<b>|<\/title><script>|<x>/);
    assert.doesNotMatch(html, /ghp_SECRET123|Unauthorized/);
    assert.match(html, /&lt;img src=x onerror=alert\(1\)&gt;/);
    // No script, no external asset: only the SVG namespace is a URL.
    assert.deepEqual(
      html.match(/https?:\/\/[^"\s]*/g)?.filter((u) => u !== "http://www.w3.org/2000/svg"),
      [],
    );
    assert.doesNotMatch(html, /<[^>]*\s(src|href)=|url\(|@import/);
  } finally {
    db.close();
  }
});
