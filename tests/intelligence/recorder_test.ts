import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import {
  type CallRecord,
  capUtf8,
  intelligenceMigrations,
  MAX_ERROR_BYTES,
  Recorder,
} from "../../src/intelligence/mod.ts";
import { openStore } from "../../src/store/mod.ts";

function memoryStore(): DatabaseSync {
  return openStore(":memory:", { migrations: intelligenceMigrations });
}

function rows(db: DatabaseSync): Record<string, unknown>[] {
  return db.prepare("SELECT * FROM calls ORDER BY id").all().map((row) => ({ ...row }));
}

function countRows(db: DatabaseSync): number {
  return Number(db.prepare("SELECT COUNT(*) AS n FROM calls").get()?.n);
}

function nextTick(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

const BASE: CallRecord = {
  ts: 1_790_000_000_123,
  server: "github",
  tool: "github_search",
  namespaced: "github__search",
  durationMs: 42,
  ok: true,
  argsBytes: 10,
  resultBytes: 33,
  via: "mount",
  spooled: false,
  returnedBytes: 33,
};

Deno.test("Recorder.record() stores every field, sizes only, and est_tokens = floor((args + bytes returned to the agent) / 4)", async () => {
  const db = memoryStore();
  const recorder = new Recorder(db);
  recorder.record(BASE);
  recorder.record({
    ...BASE,
    ts: BASE.ts + 1,
    ok: false,
    error: "Upstream said no",
    agent: "claude",
    via: "call_tool",
    spooled: true,
    resultBytes: 70_001,
    returnedBytes: 512,
  });
  await recorder.flush();
  assert.deepEqual(rows(db), [
    {
      id: 1,
      ts: BASE.ts,
      server: "github",
      tool: "github_search",
      namespaced: "github__search",
      duration_ms: 42,
      ok: 1,
      error: null,
      args_bytes: 10,
      result_bytes: 33,
      est_tokens: 10,
      agent: null,
      via: "mount",
      spooled: 0,
      returned_bytes: 33,
      run_id: null,
    },
    {
      id: 2,
      ts: BASE.ts + 1,
      server: "github",
      tool: "github_search",
      namespaced: "github__search",
      duration_ms: 42,
      ok: 0,
      error: "Upstream said no",
      args_bytes: 10,
      result_bytes: 70_001,
      est_tokens: 130, // (10 + the 512 B receipt) / 4: the 70,001 stored bytes never reached the agent
      agent: "claude",
      via: "call_tool",
      spooled: 1,
      returned_bytes: 512,
      run_id: null,
    },
  ]);
  await recorder.close();
  db.close();
});

Deno.test("Recorder.record() only queues; a later tick writes the batch", async () => {
  const db = memoryStore();
  const recorder = new Recorder(db, { batchMs: 0 });
  for (let i = 0; i < 100; i++) recorder.record({ ...BASE, ts: BASE.ts + i });
  assert.equal(countRows(db), 0);
  assert.equal(recorder.pending, 100);
  await nextTick();
  assert.equal(countRows(db), 100);
  assert.equal(recorder.pending, 0);
  await recorder.close();
  db.close();
});

Deno.test("Recorder batches records for batchMs, and flush() writes them at once", async () => {
  const db = memoryStore();
  const recorder = new Recorder(db, { batchMs: 60_000 });
  for (let i = 0; i < 10; i++) recorder.record({ ...BASE, ts: BASE.ts + i });
  await nextTick();
  assert.equal(countRows(db), 0);
  await recorder.flush();
  assert.equal(countRows(db), 10);
  await recorder.close();
  db.close();
});

Deno.test("Recorder.record() caps the error at 512 UTF-8 bytes on a character boundary", async (t) => {
  const cases: [string, string, string][] = [
    ["ASCII", "x".repeat(2000), "x".repeat(512)],
    ["two-byte characters", "é".repeat(300), "é".repeat(256)],
    ["a character straddling the cap", `${"a".repeat(511)}é`, "a".repeat(511)],
    ["a surrogate pair straddling the cap", `${"a".repeat(510)}😀`, "a".repeat(510)],
    ["exactly 512 bytes", `${"a".repeat(510)}é`, `${"a".repeat(510)}é`],
  ];
  for (const [name, error, stored] of cases) {
    await t.step(name, async () => {
      const db = memoryStore();
      const recorder = new Recorder(db);
      recorder.record({ ...BASE, ok: false, error });
      await recorder.close();
      const value = String(rows(db)[0].error);
      assert.equal(value, stored);
      assert.ok(new TextEncoder().encode(value).length <= MAX_ERROR_BYTES);
      db.close();
    });
  }
  assert.equal(capUtf8("short", 512), "short");
});

Deno.test("Recorder with enabled: false or no store is a no-op", async () => {
  const db = memoryStore();
  const off = new Recorder(db, { enabled: false });
  off.record(BASE);
  await off.flush();
  assert.equal(countRows(db), 0);
  assert.equal(off.pending, 0);
  await off.close();
  const none = new Recorder(undefined);
  none.record(BASE);
  await none.flush();
  await none.close();
  db.close();
});

Deno.test("Recorder warns once when the store fails, never throws, and retries later", async () => {
  // No migrations: the calls table is missing until we add it below.
  const db = openStore(":memory:");
  const warnings: string[] = [];
  const recorder = new Recorder(db, { warn: (m) => warnings.push(m), retryMs: 60_000 });
  for (let i = 0; i < 5; i++) {
    recorder.record({ ...BASE, ts: BASE.ts + i });
    await recorder.flush();
  }
  await nextTick();
  assert.equal(warnings.length, 1);
  assert.match(warnings[0], /^Cannot record calls in the store: .*no such table: calls/);
  assert.equal(recorder.pending, 5);

  for (const migration of intelligenceMigrations) db.exec(migration.sql);
  await recorder.flush();
  assert.equal(countRows(db), 5);
  assert.equal(recorder.pending, 0);

  // A new outage after a success warns again, once.
  db.exec("DROP TABLE calls");
  recorder.record(BASE);
  await recorder.flush();
  recorder.record(BASE);
  await recorder.flush();
  assert.equal(warnings.length, 2);
  await recorder.close();
  assert.equal(warnings.length, 3);
  assert.match(warnings[2], /^2 call records were not saved/);
  db.close();
});

Deno.test("Recorder keeps a bounded queue while the store is down and drops the oldest with one warning", async () => {
  const db = openStore(":memory:");
  const warnings: string[] = [];
  const recorder = new Recorder(db, { warn: (m) => warnings.push(m), maxQueue: 5, retryMs: 60_000 });
  for (let i = 0; i < 20; i++) {
    assert.doesNotThrow(() => recorder.record({ ...BASE, ts: BASE.ts + i }));
    await recorder.flush();
  }
  assert.equal(recorder.pending, 5);
  assert.equal(warnings.filter((m) => m.startsWith("Cannot record calls")).length, 1);
  assert.equal(warnings.filter((m) => m.startsWith("Call records are being dropped")).length, 1);
  assert.equal(warnings.length, 2);
  for (const migration of intelligenceMigrations) db.exec(migration.sql);
  await recorder.close();
  assert.deepEqual(rows(db).map((row) => Number(row.ts) - BASE.ts), [15, 16, 17, 18, 19]);
  db.close();
});

Deno.test("Recorder on a closed store warns once and never throws", async () => {
  const db = openStore(":memory:", { migrations: intelligenceMigrations });
  db.close();
  const warnings: string[] = [];
  const recorder = new Recorder(db, { warn: (m) => warnings.push(m), retryMs: 60_000 });
  for (let i = 0; i < 10; i++) {
    assert.doesNotThrow(() => recorder.record(BASE));
    await nextTick();
    await recorder.flush();
  }
  assert.equal(warnings.length, 1);
  await recorder.close();
  assert.equal(warnings.length, 2);
});

Deno.test("Recorder.record() survives a throwing logger and odd values", async () => {
  const db = openStore(":memory:");
  db.close();
  const recorder = new Recorder(db, {
    warn: () => {
      throw new Error("logger down");
    },
  });
  assert.doesNotThrow(() => recorder.record({ ...BASE, durationMs: NaN, argsBytes: -5 }));
  await recorder.flush();
  await recorder.close();

  const good = memoryStore();
  const ok = new Recorder(good);
  ok.record({ ...BASE, durationMs: NaN, argsBytes: -5, resultBytes: 7.9 });
  await ok.close();
  const [row] = rows(good);
  assert.equal(row.duration_ms, 0);
  assert.equal(row.args_bytes, 0);
  assert.equal(row.result_bytes, 7);
  assert.equal(row.est_tokens, 1);
  good.close();
});

Deno.test("Recorder.close() flushes, then ignores further records", async () => {
  const db = memoryStore();
  const recorder = new Recorder(db);
  recorder.record(BASE);
  await recorder.close();
  recorder.record(BASE);
  await recorder.flush();
  assert.equal(countRows(db), 1);
  db.close();
});
