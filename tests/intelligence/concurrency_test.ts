import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { intelligenceMigrations, queryStats } from "../../src/intelligence/mod.ts";
import { openStore, sqliteReader } from "../../src/store/mod.ts";
import { startTogether } from "../_handshake.ts";

const WORKER = fileURLToPath(new URL("./record_worker.ts", import.meta.url));
const PROCESSES = 4;
const PER_PROCESS = 500;

Deno.test("Four processes recording 500 calls each to one store file at once leave exactly 2,000 rows", async () => {
  const dir = await Deno.makeTempDir({ prefix: "mcphub_intel_" });
  try {
    const path = `${dir}/mcphub.db`;
    // Started by a ready/go handshake (not a clock); each waits for the others' first call (record_worker.ts).
    const results = await startTogether(
      WORKER,
      Array.from(
        { length: PROCESSES },
        (_, worker) => [path, String(worker), String(PER_PROCESS), String(PROCESSES)],
      ),
      AbortSignal.timeout(120_000),
    );
    for (const [worker, { code, stderr }] of results.entries()) {
      assert.equal(code, 0, `worker ${worker} failed: ${stderr}`);
      assert.equal(stderr, "", `worker ${worker} warned`);
    }
    const db = openStore(path, { migrations: intelligenceMigrations });
    try {
      const report = await queryStats(sqliteReader(db), {});
      assert.equal(report.totals.calls, PROCESSES * PER_PROCESS);
      assert.equal(report.totals.errors, PROCESSES * PER_PROCESS / 10);
      assert.equal(report.totals.est_tokens, PROCESSES * PER_PROCESS * 20);
      assert.deepEqual(
        report.servers.map((s) => [s.server, s.calls]),
        Array.from({ length: PROCESSES }, (_, worker) => [`worker${worker}`, PER_PROCESS]),
      );
      const migrations = db.prepare("SELECT COUNT(*) AS n FROM schema_migrations WHERE id = ?")
        .get("intelligence/1");
      assert.equal(migrations?.n, 1);
    } finally {
      db.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
