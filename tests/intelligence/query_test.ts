import assert from "node:assert/strict";
import {
  intelligenceMigrations,
  parseSince,
  queryStats,
  Recorder,
  statsMetaTool,
  topTools,
} from "../../src/intelligence/mod.ts";
import { openStore, sqliteReader } from "../../src/store/mod.ts";
import { NOW, SAMPLE_CALLS, sampleStore } from "./sample_calls.ts";

const DAY = 86_400_000;

Deno.test("queryStats() sums all time and sorts servers and tools by calls, then name", async () => {
  const db = await sampleStore();
  const report = await queryStats(sqliteReader(db), { recent: 3 });
  assert.deepEqual(report.totals, {
    calls: 6,
    errors: 2,
    est_tokens: 685,
    total_ms: 1515,
    spooled_results: 1,
    tokens_kept_out: 24850,
  });
  assert.deepEqual(report.servers, [
    { server: "github", calls: 3, errors: 1, avg_ms: 167, est_tokens: 450, tokens_kept_out: 0 },
    { server: "fs", calls: 2, errors: 0, avg_ms: 8, est_tokens: 210, tokens_kept_out: 24850 },
    { server: "slack", calls: 1, errors: 1, avg_ms: 1000, est_tokens: 25, tokens_kept_out: 0 },
  ]);
  assert.deepEqual(report.tools, [
    {
      namespaced: "fs__read_file",
      server: "fs",
      tool: "read_file",
      calls: 2,
      errors: 0,
      avg_ms: 8,
      est_tokens: 210,
      tokens_kept_out: 24850,
    },
    {
      namespaced: "github__search_code",
      server: "github",
      tool: "search_code",
      calls: 2,
      errors: 0,
      avg_ms: 100,
      est_tokens: 375,
      tokens_kept_out: 0,
    },
    {
      namespaced: "github__create_issue",
      server: "github",
      tool: "create_issue",
      calls: 1,
      errors: 1,
      avg_ms: 300,
      est_tokens: 75,
      tokens_kept_out: 0,
    },
    {
      namespaced: "slack__post",
      server: "slack",
      tool: "post",
      calls: 1,
      errors: 1,
      avg_ms: 1000,
      est_tokens: 25,
      tokens_kept_out: 0,
    },
  ]);
  assert.deepEqual(report.recent, [
    {
      ts: NOW - 30 * 60_000,
      namespaced: "fs__read_file",
      server: "fs",
      tool: "read_file",
      ok: true,
      duration_ms: 10,
      est_tokens: 155,
      via: "call_tool",
      agent: "claude",
    },
    {
      ts: NOW - 3_600_000,
      namespaced: "github__search_code",
      server: "github",
      tool: "search_code",
      ok: true,
      duration_ms: 120,
      est_tokens: 110,
      via: "mount",
      agent: "claude",
    },
    {
      ts: NOW - 7_200_000,
      namespaced: "github__search_code",
      server: "github",
      tool: "search_code",
      ok: true,
      duration_ms: 80,
      est_tokens: 265,
      via: "call_tool",
      agent: "claude",
    },
  ]);
  db.close();
});

Deno.test("est_tokens counts what reached the agent: a spooled result counts as its receipt, the rest as kept out", async () => {
  // The spooled fs__read_file call: 20 B of arguments, 100,000 B stored, a 600 B receipt returned.
  const db = await sampleStore();
  const report = await queryStats(sqliteReader(db), { server: "fs", since: NOW - DAY, recent: 1 });
  assert.equal(report.totals.est_tokens, Math.floor((20 + 600) / 4));
  assert.equal(report.totals.tokens_kept_out, Math.floor((100_000 - 600) / 4));
  assert.equal(report.recent[0]!.est_tokens, 155);
  // The stored column agrees with the query (new records are written the same way).
  const row = db.prepare("SELECT est_tokens FROM calls WHERE spooled = 1").get();
  assert.equal(row?.est_tokens, 155);
  // A record written before est_tokens meant this (all bytes counted) is read the same way.
  db.prepare("UPDATE calls SET est_tokens = 25005 WHERE spooled = 1").run();
  assert.equal(
    (await queryStats(sqliteReader(db), { server: "fs", since: NOW - DAY })).totals.est_tokens,
    155,
  );
  db.close();
});

Deno.test("queryStats() filters by since, now, server and agent", async (t) => {
  const db = await sampleStore();
  await t.step("since 7d", async () => {
    const report = await queryStats(sqliteReader(db), { since: NOW - 7 * DAY });
    assert.equal(report.totals.calls, 4);
    assert.deepEqual(report.servers.map((s) => [s.server, s.calls]), [["github", 3], ["fs", 1]]);
    assert.deepEqual(report.recent, []);
  });
  await t.step("since is inclusive and now is an upper bound", async () => {
    assert.equal((await queryStats(sqliteReader(db), { since: NOW - DAY * 3 })).totals.calls, 4);
    assert.equal((await queryStats(sqliteReader(db), { now: NOW - DAY })).totals.calls, 3);
  });
  await t.step("server", async () => {
    const report = await queryStats(sqliteReader(db), { server: "github" });
    assert.equal(report.totals.calls, 3);
    assert.equal(report.totals.errors, 1);
    assert.deepEqual(report.tools.map((x) => x.namespaced), ["github__search_code", "github__create_issue"]);
  });
  await t.step("agent", async () => {
    const report = await queryStats(sqliteReader(db), { agent: "ci", recent: 10 });
    assert.equal(report.totals.calls, 2);
    assert.deepEqual(report.servers.map((s) => s.server), ["github", "slack"]);
    assert.deepEqual(report.recent.map((r) => r.namespaced), ["github__create_issue", "slack__post"]);
  });
  await t.step("a call without an agent omits the key in recent", async () => {
    const report = await queryStats(sqliteReader(db), { server: "fs", recent: 5 });
    assert.equal(report.recent.length, 2);
    assert.equal("agent" in report.recent[1], false);
  });
  await t.step("nothing matches", async () => {
    const report = await queryStats(sqliteReader(db), { server: "nope", recent: 5 });
    assert.deepEqual(report, {
      totals: { calls: 0, errors: 0, est_tokens: 0, total_ms: 0, spooled_results: 0, tokens_kept_out: 0 },
      servers: [],
      tools: [],
      recent: [],
    });
  });
  db.close();
});

Deno.test("statsMetaTool() returns all-time totals and servers, filtered to the agent", async () => {
  const db = await sampleStore();
  const all = await statsMetaTool(sqliteReader(db), {});
  assert.deepEqual(Object.keys(all), ["totals", "servers"]);
  assert.deepEqual(Object.keys(all.totals), [
    "calls",
    "est_tokens",
    "total_ms",
    "errors",
    "spooled_results",
    "tokens_kept_out",
  ]);
  assert.deepEqual(Object.keys(all.servers[0]), ["server", "calls", "errors", "est_tokens", "avg_ms"]);
  assert.equal(all.totals.calls, SAMPLE_CALLS.length);
  assert.deepEqual(await statsMetaTool(sqliteReader(db), { agent: "claude" }), {
    totals: {
      calls: 3,
      est_tokens: 530,
      total_ms: 210,
      errors: 0,
      spooled_results: 1,
      tokens_kept_out: 24850,
    },
    servers: [
      { server: "github", calls: 2, errors: 0, est_tokens: 375, avg_ms: 100 },
      { server: "fs", calls: 1, errors: 0, est_tokens: 155, avg_ms: 10 },
    ],
  });
  db.close();
});

Deno.test("topTools() lists the most-called tools within the window", async () => {
  const db = await sampleStore();
  assert.deepEqual(await topTools(sqliteReader(db), { limit: 2 }), [
    { namespaced: "fs__read_file", server: "fs", tool: "read_file", calls: 2 },
    { namespaced: "github__search_code", server: "github", tool: "search_code", calls: 2 },
  ]);
  assert.deepEqual(
    (await topTools(sqliteReader(db), { limit: 10, since: NOW - 7 * DAY })).map((
      x,
    ) => [x.namespaced, x.calls]),
    [
      ["github__search_code", 2],
      ["fs__read_file", 1],
      ["github__create_issue", 1],
    ],
  );
  assert.deepEqual(await topTools(sqliteReader(db), { limit: 0 }), []);
  db.close();
});

Deno.test("queryStats() on an empty store returns zeros", async () => {
  const db = openStore(":memory:", { migrations: intelligenceMigrations });
  await new Recorder(db).close();
  assert.deepEqual((await queryStats(sqliteReader(db), { recent: 5 })).totals, {
    calls: 0,
    errors: 0,
    est_tokens: 0,
    total_ms: 0,
    spooled_results: 0,
    tokens_kept_out: 0,
  });
  db.close();
});

Deno.test("parseSince() accepts s, m, h, d, w and rejects anything else", async (t) => {
  const good: [string, number][] = [
    ["45s", 45_000],
    ["30m", 1_800_000],
    ["24h", 86_400_000],
    ["7d", 604_800_000],
    ["2w", 1_209_600_000],
    [" 7d ", 604_800_000],
  ];
  for (const [text, ms] of good) {
    await t.step(`"${text}"`, () => assert.equal(parseSince(text), ms));
  }
  for (const text of ["", "7", "d", "0d", "-1d", "1.5h", "7days", "7D", "1y", "99999999999999w"]) {
    await t.step(`rejects "${text}"`, () => {
      assert.throws(() => parseSince(text), (error: unknown) => {
        assert.ok(error instanceof RangeError);
        assert.match(
          error.message,
          /^Invalid duration ".*": use a positive whole number followed by s, m, h, d or w/,
        );
        return true;
      });
    });
  }
});
