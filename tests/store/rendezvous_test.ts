/**
 * The MRTR rendezvous rows (src/store/rendezvous.ts) on both backends: a state's retry is posted once,
 * claimed once and only by its owner, kept alive by the owner's heartbeat, answered, read back; a
 * cancellation reaches the owner's heartbeat. The same SQL on the SQLite file and on PostgreSQL.
 */
import assert from "node:assert/strict";
import {
  openStore,
  PgStore,
  Rendezvous,
  rendezvousMigrations,
  sqliteReader,
  type SqlReader,
  storeSecret,
} from "../../src/store/mod.ts";
import { pgStoreMigrations } from "../../src/gateway/mod.ts";
import { tempDir } from "../helpers.ts";
import { pgCluster, pgTest } from "./_pg.ts";

async function rendezvousRoundTrip(one: SqlReader, two: SqlReader): Promise<void> {
  let now = 1_000;
  const clock = () => now;
  const owner = new Rendezvous(one, "owner", clock);
  const other = new Rendezvous(two, "other", clock);
  const forwarder = new Rendezvous(two, "forwarder", clock);
  assert.deepEqual(await owner.claim(), []);
  assert.equal(await forwarder.post("s1", "owner", "alpha", '{"retry":1}', 60_000), true);
  // A state is posted once: the same id again is refused (it was used).
  assert.equal(await forwarder.post("s1", "owner", "alpha", '{"retry":2}', 60_000), false);
  assert.deepEqual(await forwarder.read("s1"), { state: "waiting", createdAt: 1_000 });
  // Only its owner claims it, once.
  assert.deepEqual(await other.claim(), []);
  now = 1_500;
  assert.deepEqual(await owner.claim(), [{ id: "s1", agent: "alpha", request: '{"retry":1}' }]);
  assert.deepEqual(await owner.claim(), []);
  assert.deepEqual(await forwarder.read("s1"), { state: "running", beatAt: 1_500 });
  now = 3_000;
  assert.equal(await owner.beat("s1"), false);
  assert.deepEqual(await forwarder.read("s1"), { state: "running", beatAt: 3_000 });
  await owner.answer("s1", '{"result":{}}');
  assert.deepEqual(await forwarder.read("s1"), { state: "answered", answer: '{"result":{}}' });
  await forwarder.done("s1");
  // Still there as the state's use (a replay is refused), payloads gone.
  assert.equal(await forwarder.post("s1", "owner", "alpha", "{}", 60_000), false);
  // A cancelled forward: the owner's heartbeat says so; its answer is not stored.
  assert.equal(await forwarder.post("s2", "owner", "alpha", "{}", 60_000), true);
  assert.equal((await owner.claim()).length, 1);
  await forwarder.cancel("s2");
  assert.equal(await owner.beat("s2"), true);
  await owner.answer("s2", '{"late":true}');
  assert.deepEqual(await forwarder.read("s2"), { state: "gone" });
  // Rows of states expired over an hour ago are removed by the next post.
  now = 60_000 + 3600_000 + 1;
  assert.equal(await forwarder.post("s3", "owner", "alpha", "{}", now + 60_000), true);
  assert.equal(await forwarder.post("s1", "owner", "alpha", "{}", now + 60_000), true);
  // The sealing key: one for the store, whoever asks first.
  const [k1, k2] = await Promise.all([storeSecret(one, "mrtr"), storeSecret(two, "mrtr")]);
  assert.deepEqual(k1, k2);
}

Deno.test("rendezvous rows on one SQLite file, two connections", async () => {
  await using dir = await tempDir();
  const path = `${dir.path}/store.db`;
  const a = openStore(path, { migrations: rendezvousMigrations });
  const b = openStore(path, { migrations: rendezvousMigrations });
  try {
    await rendezvousRoundTrip(sqliteReader(a), sqliteReader(b));
  } finally {
    a.close();
    b.close();
  }
});

pgTest("rendezvous rows on PostgreSQL, two pools", async () => {
  const url = await (await pgCluster()).database();
  const a = new PgStore(url, { migrations: pgStoreMigrations });
  const b = new PgStore(url, { migrations: pgStoreMigrations });
  try {
    await rendezvousRoundTrip(a, b);
  } finally {
    await a.close();
    await b.close();
  }
});
