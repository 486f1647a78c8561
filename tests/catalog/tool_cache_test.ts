import assert from "node:assert/strict";
import { parseConfig } from "../../src/config/mod.ts";
import { Hub } from "../../src/hub/mod.ts";
import { pgStoreMigrations } from "../../src/gateway/mod.ts";
import { PgToolCache } from "../../src/trust/mod.ts";
import { serverFingerprint, StoreToolCache, toolCacheMigrations } from "../../src/catalog/mod.ts";
import { listHash, listHashSteps, toolListParts } from "../../src/catalog/tool_cache.ts";
import { type DatabaseSync, openStore, PgStore } from "../../src/store/mod.ts";
import { Gateway } from "../../src/gateway/gateway.ts";
import { Downstream } from "../../src/downstream/downstream.ts";
import type { ToolDefinition } from "../../src/catalog/mod.ts";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Client } from "@modelcontextprotocol/sdk/client";
import {
  connectGateway,
  DENO,
  FIXTURE,
  manyToolsConfig,
  q,
  runMcphub,
  structured,
  tempDir,
  until,
  writeConfig,
} from "../helpers.ts";
import { pgCluster, pgTest } from "../store/_pg.ts";

const env = (vars: Record<string, string>) => ({ get: (k: string) => vars[k] });

/** The parts of the list the store holds for `server` (its row's generation): each a JSON array of tools. */
function storedParts(db: DatabaseSync, server: string): string[] {
  const row = db.prepare("SELECT generation FROM tool_cache WHERE server = ?").get(server) as {
    generation: number | null;
  };
  return (db.prepare("SELECT text FROM tool_cache_parts WHERE server = ? AND generation = ? ORDER BY seq")
    .all(server, row.generation) as { text: string }[]).map((p) => p.text);
}

/** The list text the store holds for `server`: the row's, or its generation's parts joined as one array. */
function storedText(db: DatabaseSync, server: string): string {
  const row = db.prepare("SELECT tools, generation FROM tool_cache WHERE server = ?").get(server) as {
    tools: string;
    generation: number | null;
  };
  if (row.generation === null) return row.tools;
  return `[${storedParts(db, server).map((p) => p.slice(1, -1)).join(",")}]`;
}

function server(yaml: string, vars: Record<string, string> = {}) {
  return parseConfig(`servers:\n  s:\n${yaml}`, "mcphub.yaml", { env: env(vars), cwd: "/tmp" }).servers[0]!;
}

/**
 * A tool-cache store in a temp dir, removed (and the database closed) by disposing it; `spy` is the same
 * database with every SQL text it prepares recorded in `sqls`.
 */
function cacheStore():
  & { db: DatabaseSync; dir: string; spy: DatabaseSync; sqls: string[] }
  & AsyncDisposable {
  const dir = Deno.makeTempDirSync({ prefix: "mcphub-tool-cache-" });
  const db = openStore(`${dir}/s.db`, { migrations: toolCacheMigrations });
  const sqls: string[] = [];
  const spy = new Proxy(db, {
    get(target, key) {
      if (key === "prepare") return (sql: string) => (sqls.push(sql), target.prepare(sql));
      const value = Reflect.get(target, key);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return {
    db,
    dir,
    spy,
    sqls,
    async [Symbol.asyncDispose]() {
      db.close();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

Deno.test("serverFingerprint() changes with what the entry starts, never with secret values", () => {
  const base = serverFingerprint(
    server('    command: node\n    args: [a.js]\n    env: { T: "${T}" }\n', { T: "one" }),
  );
  assert.equal(
    serverFingerprint(server('    command: node\n    args: [a.js]\n    env: { T: "${T}" }\n', { T: "two" })),
    base,
    "a different secret value is the same entry",
  );
  assert.notEqual(
    serverFingerprint(server("    command: node\n    args: [b.js]\n    env: { T: x }\n")),
    base,
  );
  assert.notEqual(
    serverFingerprint(server("    command: node\n    args: [a.js]\n")),
    base,
    "env names count",
  );
  assert.match(base, /^[0-9a-f]{64}$/);
});

Deno.test("StoreToolCache keeps the last list per server and answers only for the same fingerprint", async () => {
  await using store = cacheStore();
  const { db } = store;
  const cache = new StoreToolCache(db, () => 1000);
  assert.equal(cache.load("a", "f1"), undefined);
  const tools = [{ name: "echo", description: "Echoes", inputSchema: { type: "object" } }];
  cache.save("a", "f1", tools);
  assert.deepEqual(cache.load("a", "f1"), tools);
  assert.equal(cache.load("a", "f2"), undefined, "a changed entry does not use the old list");
  cache.save("a", "f2", []);
  assert.deepEqual(cache.load("a", "f2"), []);
  assert.equal(cache.load("a", "f1"), undefined);
});

Deno.test("StoreToolCache.save takes the list's JSON when given, and rewrites nothing for an unchanged list", async () => {
  await using store = cacheStore();
  const { db } = store;
  let now = 1000;
  const cache = new StoreToolCache(db, () => now);
  const tools = [{ name: "echo", description: "Echoes «é»", inputSchema: { type: "object" } }];
  cache.save("a", "f1", tools, JSON.stringify(tools));
  assert.deepEqual(cache.load("a", "f1"), tools);
  const updatedAt = () =>
    (db.prepare("SELECT updated_at FROM tool_cache WHERE server = 'a'").get() as {
      updated_at: number;
    }).updated_at;
  now = 2000;
  cache.save("a", "f1", tools);
  assert.equal(updatedAt(), 1000, "the same list is not written again");
  cache.save("a", "f2", tools);
  assert.equal(updatedAt(), 2000, "a new fingerprint is");
});

Deno.test("listHashSteps hashes in pieces exactly as listHash does, never splitting a surrogate pair", () => {
  const text = "a".repeat(1024 * 1024 - 1) + "😀".repeat(3) + "é".repeat(1024 * 1024);
  const steps = listHashSteps(text);
  let r = steps.next();
  while (!r.done) r = steps.next();
  assert.equal(r.value, listHash(text));
});

Deno.test("StoreToolCache: a list saved with the hash of what it loaded or saved is neither compared nor written", async () => {
  await using store = cacheStore();
  const { db, spy, sqls } = store;
  const tools = [{ name: "echo", description: "Echoes 😀", inputSchema: { type: "object" } }];
  const json = JSON.stringify(tools);
  new StoreToolCache(spy).save("a", "f1", tools, json, listHash(json));
  // A new process: it loads the list, then the server lists the same tools.
  const cache = new StoreToolCache(spy);
  assert.deepEqual(cache.load("a", "f1"), tools);
  sqls.length = 0;
  cache.save("a", "f1", tools, json, listHash(json));
  assert.deepEqual(
    sqls,
    ["SELECT fingerprint, hash FROM tool_cache WHERE server = ?"],
    "only the fingerprint and hash are read",
  );
  // A changed list is written.
  const changed = [{ ...tools[0]!, description: "Changed" }];
  const text = JSON.stringify(changed);
  cache.save("a", "f1", changed, text, listHash(text));
  assert.deepEqual(cache.load("a", "f1"), changed);
  sqls.length = 0;
  cache.save("a", "f1", changed, text, listHash(text));
  assert.equal(sqls.length, 1, "and then known");
  // Rewritten by another process under another fingerprint: saved again.
  new StoreToolCache(db).save("a", "f2", tools);
  cache.save("a", "f1", changed, text, listHash(text));
  assert.deepEqual(new StoreToolCache(db).load("a", "f1"), changed);
});

Deno.test("a hub caches a 100,000-tool list serialized in slices, also when closed before they end", async () => {
  await using store = cacheStore();
  const { db } = store;
  const cache = new StoreToolCache(db);
  const config = manyToolsConfig(100_000);
  const fingerprint = serverFingerprint(config.servers[0]!);
  for (const wait of [true, false]) {
    db.exec("DELETE FROM tool_cache; DELETE FROM tool_cache_parts");
    const hub = new Hub({
      config,
      env: Deno.env.toObject(),
      version: "test",
      log: () => {},
      toolCache: cache,
    });
    try {
      await hub.start();
      // Either the slices end (a timer's turns) or close() finishes them.
      if (wait) {
        await until("the slices to be cached", () => Promise.resolve(cache.load("big", fingerprint)));
      }
    } finally {
      await hub.close();
    }
    const saved = (await cache.load("big", fingerprint))!;
    assert.equal(saved.length, 100_001, `wait: ${wait}`);
    assert.equal(saved[100_000]!.name, "t99999");
    assert.equal(storedText(db, "big"), JSON.stringify(saved), "the text is JSON.stringify's");
  }
});

Deno.test('parseConfig() with serverErrors "fail-server" fails only the server whose entry has the problem', () => {
  const text = `servers:
  good:
    command: node
  bad:
    command: node
    env: { TOKEN: "\${NOT_SET_ANYWHERE}" }
  worse:
    command: node
    url: http://127.0.0.1:1/mcp
`;
  const config = parseConfig(text, "mcphub.yaml", { env: env({}), cwd: "/tmp", serverErrors: "fail-server" });
  assert.equal(config.servers[0]!.loadError, undefined);
  assert.equal(
    config.servers[1]!.loadError,
    "mcphub.yaml:6:19: servers.bad.env.TOKEN: environment variable NOT_SET_ANYWHERE is not set",
  );
  assert.match(config.servers[2]!.loadError!, /^mcphub\.yaml:\d+:\d+: servers\.worse/);
  // Validation (the default) still fails the load, and a structural problem always does.
  assert.throws(() => parseConfig(text, "mcphub.yaml", { env: env({}), cwd: "/tmp" }), /NOT_SET_ANYWHERE/);
  assert.throws(
    () =>
      parseConfig("bogus: 1\n" + text, "mcphub.yaml", {
        env: env({}),
        cwd: "/tmp",
        serverErrors: "fail-server",
      }),
    /bogus: unknown key/,
  );
});

/** A list of `n` tools whose text holds astral characters (surrogate pairs) and escapes, marked `v`. */
function bigList(n: number, v: string) {
  return Array.from({ length: n }, (_, i) => ({
    name: `t${i}`,
    description: `Tool ${i} ${v} «é» 😀 "quoted" \\ ${"x".repeat(i % 7)}`,
    inputSchema: { type: "object", properties: { a: { type: "string" } } },
  }));
}

function partsOf(db: DatabaseSync, server: string): { generation: number; n: number }[] {
  return db.prepare(
    "SELECT generation, COUNT(*) AS n FROM tool_cache_parts WHERE server = ? GROUP BY generation",
  ).all(server) as { generation: number; n: number }[];
}

Deno.test("StoreToolCache: a list over the part size round-trips exactly through parts, which a replaced list frees", async () => {
  await using store = cacheStore();
  const { db } = store;
  // Tiny parts of an odd size (each ~6 tools).
  const cache = new StoreToolCache(db, Date.now, { partChars: 997 });
  const one = bigList(500, "one");
  const json = JSON.stringify(one);
  const saving = cache.save("a", "f1", one, json, listHash(json));
  assert.ok(saving instanceof Promise, "a large list is written in steps");
  await saving;
  assert.equal(storedText(db, "a"), json);
  const row = db.prepare("SELECT tools, hash, parts FROM tool_cache WHERE server = 'a'").get() as {
    tools: string;
    hash: string;
    parts: number;
  };
  assert.deepEqual({ tools: row.tools, hash: row.hash }, { tools: "", hash: listHash(json) });
  assert.ok(row.parts >= Math.ceil(json.length / 997), `${row.parts} parts`);
  assert.deepEqual(new StoreToolCache(db).load("a", "f1"), one, "read at once");
  assert.deepEqual(await new StoreToolCache(db).loadAsync("a", "f1"), one, "or in steps");
  // Replaced by another large list, then by a small one: the old parts are deleted.
  const two = bigList(400, "two");
  await cache.save("a", "f1", two);
  assert.deepEqual(await cache.load("a", "f1"), two);
  assert.equal(partsOf(db, "a").length, 1);
  const small = bigList(2, "small");
  const cleaning = cache.save("a", "f1", small);
  assert.deepEqual(cache.load("a", "f1"), small, "a small list is written at once");
  await cleaning;
  await cache.flush();
  assert.deepEqual(partsOf(db, "a"), []);
});

Deno.test("StoreToolCache: a save that stops between parts (a crash) leaves the old list loadable; the next save cleans up", async () => {
  await using tmp = await tempDir();
  const path = `${tmp.path}/s.db`;
  const db = openStore(path, { migrations: toolCacheMigrations });
  try {
    const one = bigList(300, "one");
    await new StoreToolCache(db, Date.now, { partChars: 1000 }).save("a", "f1", one);
    // Another process writes a few parts of a new list, then dies (its connection closes mid-save).
    const other = openStore(path, { migrations: toolCacheMigrations });
    const dying = new StoreToolCache(other, Date.now, { partChars: 1000 });
    const writing = dying.save("a", "f1", bigList(300, "two"));
    const before = partsOf(db, "a").length;
    while (partsOf(db, "a").length === before || partsOf(db, "a")[1]!.n < 3) {
      await new Promise((r) => setTimeout(r, 0));
    }
    other.close();
    await assert.rejects(writing as Promise<void>);
    assert.equal(partsOf(db, "a").length, 2, "its parts are left");
    assert.deepEqual(await new StoreToolCache(db).load("a", "f1"), one, "the old list is whole");
    const three = bigList(300, "three");
    await new StoreToolCache(db, Date.now, { partChars: 1000 }).save("a", "f1", three);
    assert.deepEqual(await new StoreToolCache(db).load("a", "f1"), three);
    assert.equal(partsOf(db, "a").length, 1, "the next save deleted what the crash left");
  } finally {
    db.close();
  }
});

Deno.test("StoreToolCache: two caches on one file see each other's lists whole, also saving at once", async () => {
  await using tmp = await tempDir();
  const path = `${tmp.path}/s.db`;
  const dbA = openStore(path, { migrations: toolCacheMigrations });
  const dbB = openStore(path, { migrations: toolCacheMigrations });
  try {
    const a = new StoreToolCache(dbA, Date.now, { partChars: 1000 });
    const b = new StoreToolCache(dbB, Date.now, { partChars: 1000 });
    const one = bigList(300, "one");
    const two = bigList(300, "two");
    await a.save("s", "f", one);
    assert.deepEqual(await b.load("s", "f"), one);
    // B saves while A reads: A gets one list or the other, whole.
    const [read] = await Promise.all([a.loadAsync("s", "f"), b.save("s", "f", two)]);
    assert.ok([one, two].some((l) => JSON.stringify(l) === JSON.stringify(read)));
    assert.deepEqual(await a.load("s", "f"), two);
    // Both save different lists at the same time: the one switched to last is whole.
    const three = bigList(300, "three");
    await Promise.allSettled([a.save("s", "f", three), b.save("s", "f", one)]);
    const now = JSON.stringify(await a.load("s", "f"));
    assert.ok(now === JSON.stringify(three) || now === JSON.stringify(one));
    assert.equal(storedText(dbA, "s"), now);
  } finally {
    dbA.close();
    dbB.close();
  }
});

Deno.test("StoreToolCache: an unchanged large list costs one small read; saves under way are serialized and the latest wins", async () => {
  await using store = cacheStore();
  const { db, spy, sqls } = store;
  const one = bigList(300, "one");
  const json = JSON.stringify(one);
  await new StoreToolCache(spy, Date.now, { partChars: 1000 }).save("a", "f1", one, json, listHash(json));
  const cache = new StoreToolCache(spy, Date.now, { partChars: 1000 });
  assert.deepEqual(await cache.load("a", "f1"), one);
  sqls.length = 0;
  assert.equal(cache.save("a", "f1", one, json, listHash(json)), undefined);
  assert.deepEqual(sqls, ["SELECT fingerprint, hash FROM tool_cache WHERE server = ?"]);
  // Three lists in a row: the second waits behind the first and is replaced by the third.
  const lists = ["two", "three", "four"].map((v) => bigList(300, v));
  const saves = lists.map((l) => cache.save("a", "f1", l));
  cache.saveInstructions("a", "f1", "Use it.");
  await Promise.all(saves);
  await cache.flush();
  assert.deepEqual(await cache.load("a", "f1"), lists[2]);
  assert.equal(cache.loadInstructions("a", "f1"), "Use it.");
  assert.equal(partsOf(db, "a").length, 1);
});

Deno.test("StoreToolCache: other work keeps running while a 100,000-tool list is saved and loaded", async () => {
  await using store = cacheStore();
  const { db } = store;
  const tools = bigList(100_000, "big");
  const json = JSON.stringify(tools);
  const cache = new StoreToolCache(db);
  // A timer that re-arms itself: its turns between the start and the end of each step run.
  let turns = 0;
  let ticking = true;
  const tick = () => {
    turns++;
    if (ticking) setTimeout(tick, 0);
  };
  setTimeout(tick, 0);
  try {
    await cache.save("big", "f", tools, json, listHash(json));
    const parts = partsOf(db, "big")[0]!.n;
    assert.ok(turns >= parts, `${turns} timer turns ran during the save of ${parts} parts`);
    turns = 0;
    const loaded = await new StoreToolCache(db).loadAsync("big", "f");
    // The load runs in time slices (SLICE_MS each), so how many depends on the machine's speed; one that
    // held the loop for the whole read would let the timer in once at most (the turn before it starts).
    assert.ok(turns >= 2, `${turns} timer turns ran during the load`);
    assert.equal(JSON.stringify(loaded), json);
  } finally {
    ticking = false;
  }
});

Deno.test("a hub lists a large cached list (kept in parts) while its server starts", async () => {
  await using store = cacheStore();
  const { db } = store;
  // A server that never answers: its tools can only come from the cache.
  const config = parseConfig(
    "servers:\n  slow:\n    command: sleep\n    args: ['30']\n",
    "mcphub.yaml",
    { env: env({}), cwd: "/tmp" },
  );
  const tools = bigList(300, "cached");
  const cache = new StoreToolCache(db, Date.now, { partChars: 1000 });
  await cache.save("slow", serverFingerprint(config.servers[0]!), tools);
  const hub = new Hub({ config, env: {}, version: "test", log: () => {}, toolCache: cache });
  try {
    void hub.start();
    await hub.settled();
    assert.equal(hub.downstream("slow")!.toolsFromCache, true);
    assert.deepEqual(hub.downstream("slow")!.tools.map((t) => t.name), tools.map((t) => t.name));
  } finally {
    await hub.close();
  }
});

pgTest("mcphub store migrate copies a list kept in parts whole", async () => {
  await using tmp = await tempDir();
  const file = `${tmp.path}/local.db`;
  const db = openStore(file, { migrations: toolCacheMigrations });
  const tools = bigList(300, "migrated");
  try {
    await new StoreToolCache(db, Date.now, { partChars: 1000 }).save("a", "f1", tools);
  } finally {
    db.close();
  }
  const cluster = await pgCluster();
  const url = await cluster.database();
  const env = { XDG_DATA_HOME: `${tmp.path}/data` };
  const migrated = await runMcphub(["store", "migrate", "--from", file, "--to", url], { env });
  assert.equal(migrated.code, 0, migrated.stderr);
  const store = new PgStore(url, { migrations: pgStoreMigrations });
  try {
    const cache = new PgToolCache(store);
    await cache.preload();
    assert.deepEqual(cache.load("a", "f1"), tools);
  } finally {
    await store.close();
  }
});

Deno.test("StoreToolCache: a write finished inside another module's transaction switches in a savepoint", async () => {
  await using store = cacheStore();
  const { db } = store;
  const cache = new StoreToolCache(db, Date.now, { partChars: 1000 });
  const tools = bigList(100, "nested");
  const saving = cache.save("a", "f1", tools);
  db.exec("BEGIN IMMEDIATE");
  cache.finishWrites();
  assert.equal(db.isTransaction, true, "the other transaction is still open");
  db.exec("COMMIT");
  await saving;
  assert.deepEqual(new StoreToolCache(db).load("a", "f1"), tools);
  assert.equal(partsOf(db, "a").length, 1);
});

/** A config whose one server never answers: its tools can only come from the cache. */
function silentConfig() {
  return parseConfig("servers:\n  slow:\n    command: sleep\n    args: ['30']\n", "mcphub.yaml", {
    env: env({}),
    cwd: "/tmp",
  });
}

pgTest(
  "a hub on the shared PostgreSQL store lists the cached list and instructions once the store's snapshot is read",
  async () => {
    const cluster = await pgCluster();
    const store = new PgStore(await cluster.database(), { migrations: pgStoreMigrations });
    try {
      const config = silentConfig();
      const fingerprint = serverFingerprint(config.servers[0]!);
      const tools = bigList(300, "pg");
      const writer = new PgToolCache(store);
      await writer.preload();
      writer.save("slow", fingerprint, tools);
      writer.saveInstructions("slow", fingerprint, "Use slow for slow things.");
      await writer.flush();
      // As `mcp serve` opens it: the hub is made before the snapshot is read.
      const cache = new PgToolCache(store);
      const hub = new Hub({
        config,
        env: {},
        version: "test",
        log: () => {},
        toolCache: cache,
        storeReady: cache.preload(),
      });
      try {
        void hub.start();
        await hub.settled();
        const d = hub.downstream("slow")!;
        assert.equal(d.state, "connecting");
        assert.equal(d.toolsFromCache, true);
        assert.deepEqual(d.tools.map((t) => t.name), tools.map((t) => t.name));
        assert.deepEqual(
          (await hub.catalogAsync()).map((t) => t.namespaced),
          tools.map((t) => `slow__${t.name}`).sort(),
        );
        assert.equal(hub.instructions("slow"), "Use slow for slow things.");
      } finally {
        await hub.close();
      }
    } finally {
      await store.close();
    }
  },
);

pgTest(
  "a gateway on the shared PostgreSQL store answers its first tools/list from the cached list",
  async () => {
    const cluster = await pgCluster();
    const url = await cluster.database();
    await using tmp = await tempDir();
    // startup_wait 0: without a usable cache, the first tools/list does not wait for the slow server. It
    // starts once the file `go` exists (connecting as long as the test needs, not a 4 s a loaded machine
    // can spend before list_servers answers).
    const go = `${tmp.path}/go`;
    const config = await writeConfig(
      tmp.path,
      `startup_wait: "0"\nservers:\n  slow:\n    command: ${q(DENO)}\n    args: [run, -A, ${
        q(FIXTURE)
      }, --start-when, ${q(go)}]\n`,
    );
    const options = { db: url, env: { XDG_DATA_HOME: `${tmp.path}/data` } };
    {
      await using gw = await connectGateway(config, options);
      const first = await gw.client.listTools();
      assert.deepEqual(first.tools.filter((t) => t.name.startsWith("slow__")), [], "cold: nothing cached");
      await Deno.writeTextFile(go, "");
      // The call waits for the server; its list is then cached (written through before the gateway exits).
      const echoed = await gw.client.callTool({ name: "slow__echo", arguments: { text: "a" } });
      assert.deepEqual(echoed.content, [{ type: "text", text: "a" }]);
    }
    await Deno.remove(go);
    await using gw = await connectGateway(config, options);
    const names = (await gw.client.listTools()).tools.map((t) => t.name);
    const servers = structured<{ servers: { name: string; state: string }[] }>(
      await gw.client.callTool({ name: "list_servers", arguments: {} }),
    ).servers;
    assert.equal(servers[0]!.state, "connecting", "the server was still starting when tools/list answered");
    assert.ok(
      names.includes("slow__echo") && names.includes("slow__wait"),
      `warm: cached tools at once: ${names}`,
    );
    await Deno.writeTextFile(go, "");
    const echoed = await gw.client.callTool({ name: "slow__echo", arguments: { text: "b" } });
    assert.deepEqual(echoed.content, [{ type: "text", text: "b" }]);
  },
);

Deno.test("a gateway answers initialize and pings while a 100,000-tool cached list is read; tools/list has all of it", async () => {
  await using store = cacheStore();
  const { db } = store;
  const config = silentConfig();
  const tools = bigList(100_000, "warm");
  await new StoreToolCache(db).save("slow", serverFingerprint(config.servers[0]!), tools);
  const hub = new Hub({
    config,
    env: {},
    version: "test",
    log: () => {},
    toolCache: new StoreToolCache(db),
  });
  const d = hub.downstream("slow")!;
  // Nothing of it was read in the constructor: the gateway can serve at once.
  assert.equal(d.tools.length, 0);
  const gateway = new Gateway(hub, { version: "test", log: () => {}, start: () => void hub.start() });
  const [inner, outer] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "host", version: "1" });
  try {
    await gateway.connect(inner);
    await client.connect(outer);
    assert.equal(d.tools.length, 0, "initialize was answered while the cached list was read");
    await client.ping();
    assert.equal(d.tools.length, 0, "a ping was answered while the cached list was read");
    // tools/list waits for the cached list (never the server, which never answers): all of it.
    const listed = (await client.listTools()).tools.map((t) => t.name).filter((n) => n.startsWith("slow__"));
    assert.equal(listed.length, 100_000);
    assert.deepEqual(new Set(listed), new Set(tools.map((t) => `slow__${t.name}`)));
    assert.deepEqual([d.state, d.toolsFromCache, d.tools.length], ["connecting", true, 100_000]);
  } finally {
    await client.close();
    await gateway.close();
    await hub.close();
  }
});

Deno.test("a cached list read before the server lists is screened and listed; one read after the live list is dropped", async () => {
  const config = parseConfig(
    `servers:\n  f:\n    command: ${q(DENO)}\n    args: [run, -A, ${q(FIXTURE)}]\n`,
    "mcphub.yaml",
    { env: env({}), cwd: "/tmp" },
  ).servers[0]!;
  let deep: Record<string, unknown> = { type: "string" };
  for (let i = 0; i < 100; i++) deep = { type: "object", properties: { x: deep } };
  const cached = [{ name: "cached_a", inputSchema: { type: "object" } }, {
    name: "cached_deep",
    inputSchema: deep,
  }];
  const open = (list: Promise<readonly ToolDefinition[] | undefined>, changes: { n: number }) =>
    new Downstream(config, {
      env: Deno.env.toObject(),
      clientName: "test",
      clientVersion: "1",
      connectTimeoutMs: 30_000,
      log: () => {},
      cachedTools: list,
      onToolsChanged: () => changes.n++,
    });
  {
    const list = Promise.withResolvers<readonly ToolDefinition[] | undefined>();
    const changes = { n: 0 };
    const d = open(list.promise, changes);
    try {
      assert.deepEqual([d.tools.length, d.toolsFromCache, d.cacheLoading], [0, false, true]);
      list.resolve(cached);
      await d.cacheLoaded;
      assert.deepEqual(d.tools.map((t) => t.name), ["cached_a"]);
      assert.deepEqual(d.rejected.map((r) => r.name), ["cached_deep"]);
      assert.deepEqual([d.toolsFromCache, d.cacheLoading, changes.n], [true, false, 1]);
      await d.connect();
      assert.equal(d.state, "connected");
      assert.ok(d.tools.some((t) => t.name === "echo") && !d.tools.some((t) => t.name === "cached_a"));
      assert.deepEqual([d.toolsFromCache, d.rejected], [false, []]);
    } finally {
      await d.close();
    }
  }
  {
    const list = Promise.withResolvers<readonly ToolDefinition[] | undefined>();
    const changes = { n: 0 };
    const d = open(list.promise, changes);
    try {
      await d.connect();
      const live = d.tools.map((t) => t.name);
      assert.ok(live.includes("echo"));
      list.resolve(cached);
      await d.cacheLoaded;
      assert.deepEqual(d.tools.map((t) => t.name), live);
      assert.deepEqual([d.toolsFromCache, d.rejected, changes.n], [false, [], 0]);
    } finally {
      await d.close();
    }
  }
});

/** Tools whose text holds what a cut must not mistake for a boundary: commas, brackets, braces, escapes. */
function trickyList(n: number, v: string): ToolDefinition[] {
  return Array.from({ length: n }, (_, i) => ({
    name: `t${i}`,
    description: `${v} ${i}: "a, b]" }, {"x": [1, 2]}, \\"], [ \\ ${"é😀,".repeat(i % 5)}`,
    inputSchema: {
      type: "object",
      properties: { "a,]": { type: "string", enum: ["[", "]", "{", "}", ",", '\\"'] } },
    },
  }));
}

Deno.test("toolListParts() cuts between tools: each part a JSON array of whole tools within the size, a larger tool alone", () => {
  const tools: ToolDefinition[] = trickyList(200, "cut");
  // One tool larger than a part, among the others.
  tools.splice(77, 0, { name: "huge", description: "h,]}".repeat(2000), inputSchema: { type: "object" } });
  const json = JSON.stringify(tools);
  for (const partChars of [300, 997, 4096]) {
    const parts = toolListParts(json, partChars);
    const parsed = parts.map((p) => JSON.parse(p) as ToolDefinition[]);
    assert.deepEqual(parsed.flat(), tools, `${partChars}: the parts hold every tool, in order`);
    assert.equal(`[${parts.map((p) => p.slice(1, -1)).join(",")}]`, json, "joined, the text again");
    for (const [i, part] of parts.entries()) {
      if (part.length > partChars) {
        assert.deepEqual(
          parsed[i]!.map((t) => t.name),
          ["huge"],
          `${partChars}: only a tool larger than a part`,
        );
      } else {
        // Full: the next part's first tool would not have fitted.
        const next = parsed[i + 1]?.[0];
        if (next) assert.ok(part.length + 1 + JSON.stringify(next).length > partChars);
      }
    }
  }
  assert.deepEqual(toolListParts("[]", 10), []);
  assert.deepEqual(toolListParts('[{"a":1}]', 2), ['[{"a":1}]']);
  assert.throws(() => toolListParts('{"a":1}', 10), SyntaxError);
  assert.throws(() => toolListParts('[{"a":1}', 10), SyntaxError);
});

Deno.test("StoreToolCache keeps a large list in parts of whole tools, a tool larger than a part in a part of its own", async () => {
  await using store = cacheStore();
  const { db } = store;
  const tools: ToolDefinition[] = trickyList(300, "parts");
  tools.splice(150, 0, { name: "huge", description: "x".repeat(5000), inputSchema: { type: "object" } });
  await new StoreToolCache(db, Date.now, { partChars: 1000 }).save("a", "f1", tools);
  const parts = storedParts(db, "a");
  assert.deepEqual(parts, toolListParts(JSON.stringify(tools), 1000));
  assert.deepEqual(parts.flatMap((p) => JSON.parse(p) as ToolDefinition[]), tools);
  assert.ok(parts.some((p) => p.length > 5000 && (JSON.parse(p) as unknown[]).length === 1));
  assert.ok(parts.every((p) => p.length <= 1000 || p.includes('"huge"')));
  assert.deepEqual(new StoreToolCache(db).load("a", "f1"), tools);
  assert.deepEqual(await new StoreToolCache(db).loadAsync("a", "f1"), tools);
});

Deno.test("tool_cache/4 drops lists kept in parts cut anywhere and rows without a hash; a hashed row stays", async () => {
  await using tmp = await tempDir();
  const path = `${tmp.path}/s.db`;
  const small = JSON.stringify(bigList(2, "small"));
  const large = JSON.stringify(bigList(50, "large"));
  const old = openStore(path, { migrations: toolCacheMigrations.slice(0, 3) });
  try {
    const row = old.prepare(
      "INSERT INTO tool_cache (server, fingerprint, tools, hash, generation, parts, updated_at) VALUES (?, ?, ?, ?, ?, ?, 1)",
    );
    row.run("hashed", "f1", small, listHash(small), null, null);
    row.run("unhashed", "f1", small, null, null, null);
    row.run("parted", "f1", "", listHash(large), 7, 2);
    const part = old.prepare(
      "INSERT INTO tool_cache_parts (server, generation, seq, text) VALUES (?, ?, ?, ?)",
    );
    part.run("parted", 7, 0, large.slice(0, 1000));
    part.run("parted", 7, 1, large.slice(1000));
  } finally {
    old.close();
  }
  const db = openStore(path, { migrations: toolCacheMigrations });
  try {
    assert.deepEqual(db.prepare("SELECT server FROM tool_cache ORDER BY server").all().map((r) => r.server), [
      "hashed",
    ]);
    assert.equal((db.prepare("SELECT COUNT(*) AS n FROM tool_cache_parts").get() as { n: number }).n, 0);
    assert.deepEqual(new StoreToolCache(db).load("hashed", "f1"), bigList(2, "small"));
    assert.equal(new StoreToolCache(db).load("parted", "f1"), undefined);
  } finally {
    db.close();
  }
});

/** Saves `tools` as a hub does (with the list's text and hash); true when the store was written. */
async function savedAgain(db: DatabaseSync, cache: StoreToolCache, tools: readonly ToolDefinition[]) {
  const before = db.prepare("SELECT updated_at, generation FROM tool_cache WHERE server = 'a'").get();
  const json = JSON.stringify(tools);
  await cache.save("a", "f1", tools, json, listHash(json));
  await cache.flush();
  return JSON.stringify(
    db.prepare("SELECT updated_at, generation FROM tool_cache WHERE server = 'a'").get(),
  ) !==
    JSON.stringify(before);
}

Deno.test("StoreToolCache: a corrupt part or row is cold and rewritten by the next save of the same list", async (t) => {
  await using tmp = await tempDir();
  const db = openStore(`${tmp.path}/s.db`, { migrations: toolCacheMigrations });
  let clock = 1;
  const tick = () => clock++;
  try {
    const large = trickyList(100, "corrupt");
    const small = bigList(3, "small");
    const cases: [string, readonly ToolDefinition[], string][] = [
      // Not JSON any more (a torn page).
      [
        "a part cut short",
        large,
        "UPDATE tool_cache_parts SET text = substr(text, 1, length(text) - 9) WHERE seq = 1",
      ],
      // Still JSON, another list: only the hash tells.
      [
        "a part's tools changed",
        large,
        "UPDATE tool_cache_parts SET text = replace(text, '\"t1\"', '\"t9\"') WHERE seq = 0",
      ],
      ["a part missing", large, "DELETE FROM tool_cache_parts WHERE seq = 2"],
      ["a part not an array", large, "UPDATE tool_cache_parts SET text = '{}' WHERE seq = 0"],
      [
        "a small row's tools changed",
        small,
        "UPDATE tool_cache SET tools = replace(tools, '\"t1\"', '\"t9\"')",
      ],
      ["a small row not JSON", small, "UPDATE tool_cache SET tools = '[{'"],
      ["a small row without a hash", small, "UPDATE tool_cache SET hash = NULL"],
    ];
    for (const [name, tools, corrupt] of cases) {
      await t.step(name, async () => {
        db.exec("DELETE FROM tool_cache; DELETE FROM tool_cache_parts");
        const json = JSON.stringify(tools);
        await new StoreToolCache(db, tick, { partChars: 1000 }).save("a", "f1", tools, json, listHash(json));
        db.exec(corrupt);
        const sync = new StoreToolCache(db, tick, { partChars: 1000 });
        assert.equal(sync.load("a", "f1"), undefined, "cold, at once");
        const cache = new StoreToolCache(db, tick, { partChars: 1000 });
        assert.equal(await cache.loadAsync("a", "f1"), undefined, "cold, in steps");
        // The same list (same hash as the row's) is written again, whole.
        assert.equal(await savedAgain(db, cache, tools), true, "rewritten");
        assert.deepEqual(new StoreToolCache(db).load("a", "f1"), tools);
        assert.deepEqual(await new StoreToolCache(db).loadAsync("a", "f1"), tools);
        // Then unchanged again: not written a second time.
        assert.equal(await savedAgain(db, cache, tools), false, "then not written again");
        assert.equal(await savedAgain(db, sync, tools), true, "the other reader rewrites too");
      });
    }
  } finally {
    db.close();
  }
});

pgTest(
  "PgToolCache keeps a large list as parts of whole tools; tool_cache/4 drops old rows; a corrupt row is cold and rewritten",
  async () => {
    const cluster = await pgCluster();
    const url = await cluster.database();
    const before = pgStoreMigrations.filter((m) => m.id !== "tool_cache/4");
    const old = new PgStore(url, { migrations: before });
    try {
      await old.all(
        "INSERT INTO tool_cache (server, fingerprint, tools, updated_at) VALUES ('old', 'f1', '[]', 1)",
      );
    } finally {
      await old.close();
    }
    const store = new PgStore(url, { migrations: pgStoreMigrations });
    try {
      assert.deepEqual(await store.all("SELECT server FROM tool_cache"), [], "the old row is dropped");
      // Over two parts (512 Ki characters each): 8,000 tools of ~200 characters.
      const tools = trickyList(8000, "pg");
      const json = JSON.stringify(tools);
      assert.ok(json.length > 2 * 512 * 1024, `${json.length}`);
      const writer = new PgToolCache(store);
      await writer.preload();
      writer.save("a", "f1", tools, json, listHash(json));
      await writer.flush();
      const [row] = await store.all("SELECT tools, hash FROM tool_cache WHERE server = 'a'");
      assert.equal(row!.hash, listHash(json));
      assert.equal(row!.tools, toolListParts(json).join("\n"));
      assert.ok(String(row!.tools).split("\n").length >= 3);
      const reader = new PgToolCache(store);
      await reader.preload();
      assert.deepEqual(reader.load("a", "f1"), tools);
      assert.deepEqual(await reader.loadAsync("a", "f1"), tools);
      // A part's tools changed in the store: cold, and the next save of the same list writes it again.
      await store.all(`UPDATE tool_cache SET tools = replace(tools, '"t1"', '"t9"'), updated_at = 0`);
      const cold = new PgToolCache(store);
      await cold.preload();
      assert.equal(await cold.loadAsync("a", "f1"), undefined);
      assert.equal(cold.load("a", "f1"), undefined);
      cold.save("a", "f1", tools, json, listHash(json));
      await cold.flush();
      const [again] = await store.all("SELECT tools, updated_at FROM tool_cache WHERE server = 'a'");
      assert.notEqual(Number(again!.updated_at), 0, "rewritten");
      assert.equal(again!.tools, toolListParts(json).join("\n"));
      const warm = new PgToolCache(store);
      await warm.preload();
      assert.deepEqual(await warm.loadAsync("a", "f1"), tools);
      // A small list: one part, hash-checked too.
      const small = bigList(3, "small");
      warm.save("b", "f1", small);
      await warm.flush();
      await store.all(`UPDATE tool_cache SET tools = '[]' WHERE server = 'b'`);
      const checked = new PgToolCache(store);
      await checked.preload();
      assert.equal(checked.load("b", "f1"), undefined);
    } finally {
      await store.close();
    }
  },
);

pgTest(
  "mcphub store migrate copies a list kept in parts of the earlier form (cut anywhere) whole",
  async () => {
    await using tmp = await tempDir();
    const file = `${tmp.path}/local.db`;
    const tools = bigList(300, "old form");
    const json = JSON.stringify(tools);
    const db = openStore(file, { migrations: toolCacheMigrations.slice(0, 3) });
    try {
      db.prepare(
        "INSERT INTO tool_cache (server, fingerprint, tools, hash, generation, parts, updated_at) VALUES ('a', 'f1', '', ?, 7, 2, 1)",
      ).run(listHash(json));
      const part = db.prepare(
        "INSERT INTO tool_cache_parts (server, generation, seq, text) VALUES ('a', 7, ?, ?)",
      );
      part.run(0, json.slice(0, 1001));
      part.run(1, json.slice(1001));
    } finally {
      db.close();
    }
    const cluster = await pgCluster();
    const url = await cluster.database();
    const migrated = await runMcphub(["store", "migrate", "--from", file, "--to", url], {
      env: { XDG_DATA_HOME: `${tmp.path}/data` },
    });
    assert.equal(migrated.code, 0, migrated.stderr);
    const store = new PgStore(url, { migrations: pgStoreMigrations });
    try {
      const cache = new PgToolCache(store);
      await cache.preload();
      assert.deepEqual(cache.load("a", "f1"), tools);
    } finally {
      await store.close();
    }
  },
);

Deno.test("StoreToolCache: the era each server fingerprint last spoke, rewritten when it changes", async () => {
  await using store = cacheStore();
  const cache = new StoreToolCache(store.db, () => 1000);
  assert.equal(cache.loadEra("f1"), undefined);
  cache.saveEra("f1", "modern");
  cache.saveEra("f2", "legacy");
  assert.equal(cache.loadEra("f1"), "modern");
  cache.saveEra("f1", "legacy");
  // Another process on the same file reads what was written.
  const other = new StoreToolCache(store.db);
  assert.equal(other.loadEra("f1"), "legacy");
  assert.equal(other.loadEra("f2"), "legacy");
  assert.equal(other.loadEra("f3"), undefined);
  // A legacy row written before servers of unknown era were probed first (no `probed` mark): unknown, so
  // the server is probed once more; a modern one stands.
  store.db.exec(`INSERT INTO server_era (fingerprint, era, updated_at) VALUES ('old1', 'legacy', 1),
    ('old2', 'modern', 1)`);
  assert.equal(other.loadEra("old1"), undefined);
  assert.equal(other.loadEra("old2"), "modern");
  other.saveEra("old1", "legacy");
  assert.equal(other.loadEra("old1"), "legacy");
});
