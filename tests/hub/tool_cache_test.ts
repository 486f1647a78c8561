import assert from "node:assert/strict";
import { parseConfig } from "../../src/config/mod.ts";
import { Hub, serverFingerprint, StoreToolCache, toolCacheMigrations } from "../../src/hub/mod.ts";
import { listHash, listHashSteps } from "../../src/hub/tool_cache.ts";
import { type DatabaseSync, openStore } from "../../src/store/mod.ts";
import { manyToolsConfig, tempDir } from "../helpers.ts";

const env = (vars: Record<string, string>) => ({ get: (k: string) => vars[k] });

/** The list text the store holds for `server`: the row's, or its generation's parts joined. */
function storedText(db: DatabaseSync, server: string): string {
  const row = db.prepare("SELECT tools, generation FROM tool_cache WHERE server = ?").get(server) as {
    tools: string;
    generation: number | null;
  };
  if (row.generation === null) return row.tools;
  return (db.prepare("SELECT text FROM tool_cache_parts WHERE server = ? AND generation = ? ORDER BY seq")
    .all(server, row.generation) as { text: string }[]).map((p) => p.text).join("");
}

function server(yaml: string, vars: Record<string, string> = {}) {
  return parseConfig(`servers:\n  s:\n${yaml}`, "mcphub.yaml", { env: env(vars), cwd: "/tmp" }).servers[0]!;
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
  await using tmp = await tempDir();
  const db = openStore(`${tmp.path}/s.db`, { migrations: toolCacheMigrations });
  try {
    const cache = new StoreToolCache(db, () => 1000);
    assert.equal(cache.load("a", "f1"), undefined);
    const tools = [{ name: "echo", description: "Echoes", inputSchema: { type: "object" } }];
    cache.save("a", "f1", tools);
    assert.deepEqual(cache.load("a", "f1"), tools);
    assert.equal(cache.load("a", "f2"), undefined, "a changed entry does not use the old list");
    cache.save("a", "f2", []);
    assert.deepEqual(cache.load("a", "f2"), []);
    assert.equal(cache.load("a", "f1"), undefined);
  } finally {
    db.close();
  }
});

Deno.test("StoreToolCache.save takes the list's JSON when given, and rewrites nothing for an unchanged list", async () => {
  await using tmp = await tempDir();
  const db = openStore(`${tmp.path}/s.db`, { migrations: toolCacheMigrations });
  try {
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
  } finally {
    db.close();
  }
});

Deno.test("listHashSteps hashes in pieces exactly as listHash does, never splitting a surrogate pair", () => {
  const text = "a".repeat(1024 * 1024 - 1) + "😀".repeat(3) + "é".repeat(1024 * 1024);
  const steps = listHashSteps(text);
  let r = steps.next();
  while (!r.done) r = steps.next();
  assert.equal(r.value, listHash(text));
});

Deno.test("StoreToolCache: a list saved with the hash of what it loaded or saved is neither compared nor written", async () => {
  await using tmp = await tempDir();
  const db = openStore(`${tmp.path}/s.db`, { migrations: toolCacheMigrations });
  try {
    const sqls: string[] = [];
    const spy = new Proxy(db, {
      get(target, key) {
        if (key === "prepare") return (sql: string) => (sqls.push(sql), target.prepare(sql));
        const value = Reflect.get(target, key);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
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
  } finally {
    db.close();
  }
});

Deno.test("a hub caches a 100,000-tool list serialized in slices, also when closed before they end", async () => {
  await using tmp = await tempDir();
  const db = openStore(`${tmp.path}/s.db`, { migrations: toolCacheMigrations });
  try {
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
          while (!(await cache.load("big", fingerprint))) await new Promise((r) => setTimeout(r, 20));
        }
      } finally {
        await hub.close();
      }
      const saved = (await cache.load("big", fingerprint))!;
      assert.equal(saved.length, 100_001, `wait: ${wait}`);
      assert.equal(saved[100_000]!.name, "t99999");
      assert.equal(storedText(db, "big"), JSON.stringify(saved), "the text is JSON.stringify's");
    }
  } finally {
    db.close();
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
