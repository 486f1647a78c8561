import assert from "node:assert/strict";
import { defaultStorePath, openStore, StoreError } from "../../src/store/mod.ts";
import { tempDir } from "../helpers.ts";

Deno.test("openStore() creates a private directory and file, in WAL mode, and records migrations once", async () => {
  await using dir = await tempDir();
  const path = `${dir.path}/nested/store/mcphub.db`;
  const migrations = [{ id: "test/1", sql: "CREATE TABLE t (x INTEGER)" }];
  const db = openStore(path, { migrations });
  db.prepare("INSERT INTO t VALUES (1)").run();
  assert.equal((db.prepare("PRAGMA journal_mode").get() as { journal_mode: string }).journal_mode, "wal");
  db.close();
  if (Deno.build.os !== "windows") {
    assert.equal((await Deno.stat(`${dir.path}/nested/store`)).mode! & 0o777, 0o700);
    assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
  }
  // Opening again does not re-run the migration (CREATE TABLE would fail) and keeps the data.
  const again = openStore(path, {
    migrations: [...migrations, { id: "test/2", sql: "ALTER TABLE t ADD y TEXT" }],
  });
  const applied = again.prepare("SELECT id FROM schema_migrations ORDER BY id").all().map((r) => r.id);
  assert.deepEqual(applied, ["test/1", "test/2"]);
  assert.deepEqual(again.prepare("SELECT x, y FROM t").all().map((r) => ({ ...r })), [{ x: 1, y: null }]);
  again.close();
});

Deno.test("openStore() names the file and what to do when it cannot open it", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(`${dir.path}/file`, "");
  assert.throws(
    () => openStore(`${dir.path}/file/mcphub.db`),
    (e: Error) =>
      e instanceof StoreError && /Cannot open the store ".*file\/mcphub\.db"/.test(e.message) &&
      /--db/.test(e.message),
  );
});

Deno.test("defaultStorePath() honours XDG_DATA_HOME, else ~/.local/share", () => {
  const env = (vars: Record<string, string>) => ({ get: (k: string) => vars[k] });
  assert.equal(defaultStorePath(env({ XDG_DATA_HOME: "/x", HOME: "/h" })), "/x/mcphub/mcphub.db");
  assert.equal(defaultStorePath(env({ HOME: "/h" })), "/h/.local/share/mcphub/mcphub.db");
});
