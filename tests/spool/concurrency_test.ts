import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { openStore } from "../../src/store/mod.ts";
import { Spool, spoolMigrations } from "../../src/spool/mod.ts";
import { readAll, sha256 } from "./_spool_worker.ts";
import { startTogether } from "../_handshake.ts";

const WORKER = fileURLToPath(new URL("./_spool_worker.ts", import.meta.url));

Deno.test("Spool shares one store file between two processes writing and reading at once", async () => {
  const dir = await Deno.makeTempDir({ prefix: "mcphub_spool_" });
  const path = `${dir}/shared/mcphub.db`;
  try {
    const signal = AbortSignal.timeout(120_000);
    // Both processes open (and migrate) the fresh file at the same time and say ready; then both start on
    // the test's go (a handshake, not a clock).
    const outputs = await startTogether(WORKER, [[path, "alpha", "12"], [path, "bravo", "12"]], signal);
    const summaries = outputs.map(({ code, stdout, stderr }) => {
      assert.equal(code, 0, stderr);
      return JSON.parse(stdout) as {
        label: string;
        stored: { callId: string; sha256: string; totalBytes: number }[];
        othersRead: number;
      };
    });

    const db = openStore(path, { migrations: spoolMigrations });
    try {
      const spool = new Spool(db);
      // Each process paged results the other one wrote while both were running.
      assert.ok(
        summaries.every((summary) => summary.othersRead > 0),
        JSON.stringify(summaries.map((s) => s.othersRead)),
      );
      const all = summaries.flatMap((summary) => summary.stored);
      assert.equal(all.length, 24);
      const rows = db.prepare("SELECT count(*) AS n FROM spool_results").get() as { n: number };
      assert.equal(rows.n, 24, "nothing lost, nothing extra");
      for (const { callId, sha256: digest, totalBytes } of all) {
        const bytes = await readAll(spool, callId, "base64");
        assert.equal(bytes.length, totalBytes);
        assert.equal(await sha256(bytes), digest);
      }
      const migrations = db.prepare("SELECT id FROM schema_migrations").all().map((row) => row.id);
      assert.deepEqual(migrations, ["spool/1"]);
      assert.equal(db.prepare("PRAGMA integrity_check").get()?.integrity_check, "ok");
    } finally {
      db.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
