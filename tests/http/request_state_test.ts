/**
 * The sealed requestState of MRTR over HTTP (src/http/request_state.ts): what it binds (agent, method,
 * name, arguments whatever their key order), its expiry, and the store's key (one per store, shared by
 * every process on it).
 */
import assert from "node:assert/strict";
import { REFUSED, StateSeal } from "../../src/http/request_state.ts";
import { openStore, rendezvousMigrations, sqliteReader, storeSecret } from "../../src/store/mod.ts";
import { tempDir } from "../helpers.ts";

const KEY = new Uint8Array(32).fill(7);
const CALL = {
  method: "tools/call",
  params: { name: "relay__elicit", arguments: { a: 1, b: [1, { c: 2, d: 3 }] } },
};

Deno.test("a sealed state opens for its agent and request (arguments in any key order) until it expires", async () => {
  let now = 1_000_000;
  const seal = await StateSeal.create(KEY, "alpha", "replica-1", () => now);
  const token = await seal.seal("cont-1", CALL, 60_000);
  const reordered = {
    method: "tools/call",
    params: { arguments: { b: [1, { d: 3, c: 2 }], a: 1 }, name: "relay__elicit" },
  };
  assert.deepEqual(await seal.open(token, reordered), {
    id: "cont-1",
    owner: "replica-1",
    agent: "alpha",
    expiresAt: 1_060_000,
  });
  // Another replica with the same key opens it too (and learns who holds the call).
  const other = await StateSeal.create(KEY, "alpha", "replica-2", () => now);
  assert.equal(((await other.open(token, CALL)) as { owner: string }).owner, "replica-1");
  now = 1_060_000;
  assert.deepEqual(await seal.open(token, CALL), { refused: REFUSED.expired });
});

Deno.test("a sealed state is refused for another agent, request, key, or with any byte changed", async () => {
  const seal = await StateSeal.create(KEY, "alpha", "r");
  const token = await seal.seal("cont-1", CALL, 60_000);
  const beta = await StateSeal.create(KEY, "beta", "r");
  assert.deepEqual(await beta.open(token, CALL), { refused: REFUSED.agent });
  const unscoped = await StateSeal.create(KEY, "", "r");
  assert.deepEqual(await unscoped.open(token, CALL), { refused: REFUSED.agent });
  const otherKey = await StateSeal.create(new Uint8Array(32).fill(8), "alpha", "r");
  assert.deepEqual(await otherKey.open(token, CALL), { refused: REFUSED.forged });
  for (
    const request of [
      { ...CALL, method: "prompts/get" },
      { method: "tools/call", params: { ...CALL.params, name: "relay__zeta" } },
      { method: "tools/call", params: { ...CALL.params, arguments: { a: 2, b: [1, { c: 2, d: 3 }] } } },
      { method: "tools/call", params: { name: "relay__elicit" } },
    ]
  ) {
    assert.deepEqual(await seal.open(token, request), { refused: REFUSED.request }, JSON.stringify(request));
  }
  // Every single character changed, one at a time (to each of two others, so the last character's spare
  // bits are covered): never opens.
  for (let i = 0; i < token.length; i++) {
    for (const c of ["w", "x", "y", "z"]) {
      if (token[i] === c) continue;
      const opened = await seal.open(token.slice(0, i) + c + token.slice(i + 1), CALL);
      assert.ok("refused" in opened, `changed at ${i} to ${c}`);
    }
  }
  for (const junk of ["", "mcphub1", "mcphub1..", "a.b.c", crypto.randomUUID()]) {
    assert.deepEqual(await seal.open(junk, CALL), { refused: REFUSED.forged });
  }
});

Deno.test("the store's key: made once, the same for every process on the file", async () => {
  await using dir = await tempDir();
  const path = `${dir.path}/store.db`;
  const one = openStore(path, { migrations: rendezvousMigrations });
  const two = openStore(path, { migrations: rendezvousMigrations });
  try {
    const [a, b] = await Promise.all([
      storeSecret(sqliteReader(one), "k"),
      storeSecret(sqliteReader(two), "k"),
    ]);
    assert.equal(a.length, 32);
    assert.deepEqual(a, b);
    assert.deepEqual(await storeSecret(sqliteReader(one), "k"), a);
    assert.notDeepEqual(await storeSecret(sqliteReader(one), "other"), a);
  } finally {
    one.close();
    two.close();
  }
});
