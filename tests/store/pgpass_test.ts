import assert from "node:assert/strict";
import { isPostgresUrl, pgpassPassword, redactDbUrl } from "../../src/store/mod.ts";
import { tempDir } from "../helpers.ts";

function env(vars: Record<string, string>) {
  return { get: (key: string) => vars[key] };
}

Deno.test("pgpassPassword() finds the line libpq would use, with * and escaped colons, only in a private file", async () => {
  await using dir = await tempDir();
  const file = `${dir.path}/pgpass`;
  await Deno.writeTextFile(
    file,
    [
      "# comment",
      "other.host:5432:*:mcphub:wrong",
      "db.internal:5432:mcphub:mcphub:pa\\:ss:word",
      "*:*:*:*:fallback",
    ].join("\n"),
  );
  await Deno.chmod(file, 0o600);
  const vars = env({ PGPASSFILE: file });
  assert.equal(pgpassPassword("postgres://mcphub@db.internal/mcphub", vars), "pa:ss:word");
  assert.equal(pgpassPassword("postgres://mcphub@db.internal:5433/mcphub", vars), "fallback");
  assert.equal(pgpassPassword("postgres://mcphub:given@db.internal/mcphub", vars), undefined, "URL wins");
  assert.equal(
    pgpassPassword("postgres://mcphub@db.internal/mcphub", env({ PGPASSFILE: file, PGPASSWORD: "x" })),
    undefined,
    "PGPASSWORD wins (the driver reads it)",
  );
  await Deno.chmod(file, 0o644);
  assert.equal(
    pgpassPassword("postgres://mcphub@db.internal/mcphub", vars),
    undefined,
    "a readable file is skipped",
  );
});

Deno.test("isPostgresUrl() and redactDbUrl() tell URLs from paths and never keep a password", () => {
  assert.equal(isPostgresUrl("postgres://h/db"), true);
  assert.equal(isPostgresUrl("PostgreSQL://h/db"), true);
  assert.equal(isPostgresUrl("/var/lib/mcphub.db"), false);
  assert.equal(isPostgresUrl("./postgres.db"), false);
  assert.equal(redactDbUrl("postgres://u:p%40ss@h:5432/db"), "postgres://u:***@h:5432/db");
  assert.equal(
    redactDbUrl("postgres://u@h/db?password=x&sslmode=require"),
    "postgres://u@h/db?password=***&sslmode=require",
  );
  assert.equal(redactDbUrl("/tmp/a.db"), "/tmp/a.db");
});
