/**
 * `mcphub store migrate --from FILE --to URL`: copies a local SQLite store into a shared PostgreSQL one —
 * unexpired spooled results (byte for byte), call records, the tool-list cache and tool pins. Safe to run
 * again: results, pins and cache rows already there are kept (the shared store's approvals win), and only
 * call records newer than the last copy from the same file are added.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { resolve } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { type Command, type CommandContext, parseCommandArgs, UsageError } from "./command.ts";
import { isPostgresUrl, type PgTx, redactDbUrl } from "../store/mod.ts";
import { INSERT_COLUMNS } from "../intelligence/mod.ts";
import { fileExists, openPgStore } from "./store_access.ts";
import { listHash, toolListParts } from "../catalog/mod.ts";

const HELP = `Usage: mcphub store migrate --from FILE --to URL

Copies a local store (SQLite file) into a shared PostgreSQL store, for
replicated gateways (see docs/http.md, "Running for a team"):
unexpired spooled results, call records, the tool-list cache and tool pins.
Creates the tables when missing. Run it again to copy newer call records:
rows already in the shared store are kept (its approvals win).

  --from FILE   The local store (e.g. ~/.local/share/mcphub/mcphub.db)
  --to URL      postgres://USER@HOST:PORT/DB (password: \${PGPASSWORD} or ~/.pgpass)
`;

const CHUNKS_PER_INSERT = 64;
const CALLS_PER_INSERT = 1000;

function tables(db: DatabaseSync): Set<string> {
  return new Set(
    (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((r) =>
      r.name
    ),
  );
}

/** What one run copied. */
interface Copied {
  results: number;
  resultBytes: number;
  calls: number;
  cache: number;
  pins: number;
}

async function copy(db: DatabaseSync, url: string, source: string, ctx: CommandContext): Promise<Copied> {
  const have = tables(db);
  const store = openPgStore(url, ctx.env);
  const copied: Copied = { results: 0, resultBytes: 0, calls: 0, cache: 0, pins: 0 };
  try {
    await store.ready();
    if (have.has("spool_results") && have.has("spool_chunks")) {
      const results = db.prepare(
        `SELECT call_id, server, tool, namespaced, agent, total_bytes, chunk_bytes, created_at, expires_at
         FROM spool_results WHERE expires_at > ? ORDER BY created_at`,
      ).all(Date.now()) as Record<string, string | number | null>[];
      const chunks = db.prepare("SELECT seq, data FROM spool_chunks WHERE call_id = ? ORDER BY seq");
      for (const r of results) {
        // One transaction per result, its row last: a reader sees all of it or none.
        const added = await store.begin(async (tx: PgTx) => {
          const exists = await tx`SELECT 1 FROM spool_results WHERE call_id = ${r.call_id}`;
          if (exists.length) return false;
          let batch: { call_id: string; seq: number; data: Uint8Array }[] = [];
          for (const c of chunks.iterate(r.call_id) as Iterable<{ seq: number; data: Uint8Array }>) {
            batch.push({ call_id: String(r.call_id), seq: Number(c.seq), data: c.data });
            if (batch.length === CHUNKS_PER_INSERT) {
              await tx`INSERT INTO spool_chunks ${tx(batch, "call_id", "seq", "data")}`;
              batch = [];
            }
          }
          if (batch.length) await tx`INSERT INTO spool_chunks ${tx(batch, "call_id", "seq", "data")}`;
          await tx`INSERT INTO spool_results ${
            tx(
              [r],
              "call_id",
              "server",
              "tool",
              "namespaced",
              "agent",
              "total_bytes",
              "chunk_bytes",
              "created_at",
              "expires_at",
            )
          }`;
          return true;
        });
        if (added) {
          copied.results++;
          copied.resultBytes += Number(r.total_bytes);
        }
      }
    }
    if (have.has("calls")) {
      const marker = await store.all("SELECT last_call_id FROM store_imports WHERE source = ?", [source]);
      let last = Number(marker[0]?.last_call_id ?? 0);
      const page = db.prepare(
        `SELECT id, ${
          INSERT_COLUMNS.join(", ")
        } FROM calls WHERE id > ? ORDER BY id LIMIT ${CALLS_PER_INSERT}`,
      );
      for (;;) {
        const rows = page.all(last) as Record<string, unknown>[];
        if (rows.length === 0) break;
        const next = Number(rows[rows.length - 1]!.id);
        const objects = rows.map((row) =>
          Object.fromEntries(INSERT_COLUMNS.map((c) => [c, (row[c] ?? null) as string | number | null]))
        );
        // The rows and the marker in one transaction: an interrupted run resumes where it stopped.
        await store.begin(async (tx: PgTx) => {
          await tx`INSERT INTO calls ${tx(objects, ...INSERT_COLUMNS)}`;
          await tx`INSERT INTO store_imports (source, last_call_id, imported_at) VALUES (${source}, ${next},
              ${Date.now()})
            ON CONFLICT (source) DO UPDATE SET last_call_id = excluded.last_call_id,
              imported_at = excluded.imported_at`;
        });
        copied.calls += rows.length;
        last = next;
        if (ctx.stderrIsTerminal ?? Deno.stderr.isTerminal()) ctx.err(`\rcall records: ${copied.calls}`);
      }
      if (copied.calls && (ctx.stderrIsTerminal ?? Deno.stderr.isTerminal())) ctx.err("\n");
    }
    if (have.has("tool_cache")) {
      const columns = (db.prepare("PRAGMA table_info(tool_cache)").all() as { name: string }[]).map((c) =>
        c.name
      );
      const instructions = columns.includes("instructions") ? "instructions" : "NULL AS instructions";
      const generation = columns.includes("generation") ? "generation" : "NULL AS generation";
      const partsByTool = db.prepare("SELECT 1 FROM schema_migrations WHERE id = 'tool_cache/4'").get() !==
        undefined;
      for (
        const r of db.prepare(
          `SELECT server, fingerprint, tools, updated_at, ${instructions}, ${generation} FROM tool_cache`,
        )
          .all() as Record<string, string | number | null>[]
      ) {
        if (r.generation !== null) {
          // A large list is kept in parts: each a JSON array of whole tools (tool_cache/4), or a piece of
          // the list's text cut anywhere (tool_cache/3). Joined, the list's text.
          const parts = (db.prepare(
            "SELECT text FROM tool_cache_parts WHERE server = ? AND generation = ? ORDER BY seq",
          ).all(r.server, r.generation) as { text: string }[]).map((p) => p.text);
          r.tools = partsByTool ? `[${parts.map((p) => p.slice(1, -1)).join(",")}]` : parts.join("");
        }
        let tools: string;
        try {
          // The shared store keeps the list's parts joined by newlines (see PgToolCache).
          tools = toolListParts(String(r.tools)).join("\n");
        } catch {
          continue; // not a list: a cache row is not worth failing the migration for
        }
        const done = await store.all(
          `INSERT INTO tool_cache (server, fingerprint, tools, hash, updated_at, instructions)
           VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT (server) DO NOTHING RETURNING server`,
          [r.server, r.fingerprint, tools, listHash(String(r.tools)), r.updated_at, r.instructions],
        );
        copied.cache += done.length;
      }
    }
    if (have.has("tool_pins")) {
      for (
        const r of db.prepare(
          `SELECT server, tool, hash, definition, pending_hash, pending_definition, changed_at, first_seen,
             approved_at FROM tool_pins`,
        ).all() as Record<string, string | number | null>[]
      ) {
        const done = await store.all(
          `INSERT INTO tool_pins (server, tool, hash, definition, pending_hash, pending_definition, changed_at,
             first_seen, approved_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (server, tool) DO NOTHING RETURNING tool`,
          [
            r.server,
            r.tool,
            r.hash,
            r.definition,
            r.pending_hash,
            r.pending_definition,
            r.changed_at,
            r.first_seen,
            r.approved_at,
          ],
        );
        copied.pins += done.length;
      }
    }
  } finally {
    await store.close();
  }
  return copied;
}

/** `store migrate`. */
export const storeMigrateCommand: Command = {
  name: "store migrate",
  summary: "Copy a local store into a shared PostgreSQL store",
  help: HELP,
  async run(ctx) {
    const { values, positionals } = parseCommandArgs(
      "store migrate",
      () =>
        parseArgs({
          args: ctx.args,
          options: { from: { type: "string" }, to: { type: "string" } },
          strict: true,
          allowPositionals: true,
        }),
    );
    if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`, "store migrate");
    if (!values.from || !values.to) {
      throw new UsageError("pass both --from FILE and --to URL", "store migrate");
    }
    if (!isPostgresUrl(values.to)) {
      throw new UsageError(
        `--to must be a postgres:// or postgresql:// URL, got "${redactDbUrl(values.to)}"`,
        "store migrate",
      );
    }
    const from = resolve(ctx.cwd, values.from);
    if (!fileExists(from)) {
      throw new Error(`Cannot migrate: ${from} does not exist; pass the store file with --from`);
    }
    let db: DatabaseSync;
    try {
      db = new DatabaseSync(from, { readOnly: true });
      db.prepare("SELECT name FROM sqlite_master LIMIT 1").all();
    } catch (error) {
      throw new Error(`Cannot migrate: ${from} is not a readable mcphub store: ${(error as Error).message}`, {
        cause: error,
      });
    }
    try {
      const copied = await copy(db, values.to, from, ctx);
      const mib = (copied.resultBytes / 1048576).toFixed(1);
      ctx.out(
        `Copied into ${redactDbUrl(values.to)}: ${copied.results} stored results (${mib} MiB), ` +
          `${copied.calls} call records, ${copied.cache} cached tool lists, ${copied.pins} tool pins.\n`,
      );
    } finally {
      db.close();
    }
    return 0;
  },
};
