/**
 * Call records on the shared PostgreSQL store: the `calls` table of the SQLite schema (64-bit times and
 * sizes) and the {@linkcode RecordSink} that writes a batch in one multi-row insert. The stats queries read
 * either store through `SqlReader`.
 *
 * @module
 */
import type { PgMigration, PgStore } from "../store/mod.ts";
import { INSERT_COLUMNS, type RecordRow, type RecordSink } from "./recorder.ts";

/** Schema for call records on PostgreSQL. */
export const pgIntelligenceMigrations: PgMigration[] = [{
  id: "intelligence/1",
  sql: `
    CREATE TABLE calls (
      id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      ts BIGINT NOT NULL,
      server TEXT NOT NULL,
      tool TEXT NOT NULL,
      namespaced TEXT NOT NULL,
      duration_ms BIGINT NOT NULL,
      ok INTEGER NOT NULL,
      error TEXT,
      args_bytes BIGINT NOT NULL,
      result_bytes BIGINT NOT NULL,
      est_tokens BIGINT NOT NULL,
      agent TEXT,
      via TEXT NOT NULL,
      spooled INTEGER NOT NULL DEFAULT 0,
      returned_bytes BIGINT NOT NULL DEFAULT 0
    );
    CREATE INDEX calls_ts ON calls (ts);
    CREATE INDEX calls_server ON calls (server);
    CREATE INDEX calls_agent ON calls (agent);
  `,
}, {
  id: "intelligence/2",
  sql: `ALTER TABLE calls ADD COLUMN run_id TEXT;`,
}];

// Rows per INSERT statement (15 parameters each, well under PostgreSQL's 65,535).
const ROWS_PER_INSERT = 1000;

/** Writes record batches into `store`'s `calls` table, one transaction per batch. */
export function pgRecordSink(store: PgStore): RecordSink {
  return {
    async write(rows: readonly RecordRow[]): Promise<void> {
      if (rows.length === 0) return;
      await store.begin(async (tx) => {
        for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) {
          const objects = rows.slice(i, i + ROWS_PER_INSERT).map((row) =>
            Object.fromEntries(INSERT_COLUMNS.map((column, j) => [column, row[j]]))
          );
          await tx`INSERT INTO calls ${tx(objects, ...INSERT_COLUMNS)}`;
        }
      });
    },
  };
}
