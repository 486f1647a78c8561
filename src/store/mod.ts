/**
 * The local SQLite store shared by the spool and intelligence modules:
 * opening with the right pragmas and file modes, and recorded migrations.
 * Several gateway processes (one per agent) may open the same file.
 *
 * @module
 */
import { DatabaseSync } from "node:sqlite";
import { dirname } from "node:path";

/** A schema change, identified by a stable id such as `"spool/1"`. Applied once, in order. */
export interface Migration {
  id: string;
  sql: string;
}

/** Options for {@linkcode openStore}. */
export interface OpenStoreOptions {
  /** Applied in the order given; each id once per database. @default [] */
  migrations?: readonly Migration[];
  /** How long a writer waits for another process's lock. @default 5000 */
  busyTimeoutMs?: number;
}

/** A failure to open or migrate the store; names the file and what to do. */
export class StoreError extends Error {
  override name = "StoreError";
  constructor(message: string, readonly path: string, options?: ErrorOptions) {
    super(message, options);
  }
}

function ensurePrivateDir(dir: string): void {
  try {
    Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
  }
}

function tightenMode(path: string): void {
  if (Deno.build.os === "windows") return;
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    try {
      if ((Deno.statSync(file).mode ?? 0) & 0o077) Deno.chmodSync(file, 0o600);
    } catch {
      // missing sidecar files are fine; a file we cannot chmod is someone else's choice
    }
  }
}

const SQLITE_HEADER = "SQLite format 3\0";

/**
 * True when `path` is missing, empty or an SQLite database: the only files the store creates, chmods or
 * writes. Anything else (a config file passed to --db by mistake) is left exactly as it is.
 */
function isOurs(path: string): boolean {
  let file: Deno.FsFile;
  try {
    file = Deno.openSync(path, { read: true });
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return true;
    throw error;
  }
  try {
    const header = new Uint8Array(16);
    let read = 0;
    while (read < 16) {
      const n = file.readSync(header.subarray(read));
      if (n === null) break;
      read += n;
    }
    return read === 0 || new TextDecoder().decode(header.subarray(0, read)) === SQLITE_HEADER;
  } finally {
    file.close();
  }
}

/**
 * Opens (creating if needed) the database at `path`: directory 0700, file 0600,
 * WAL, a busy timeout, and every pending migration applied in one transaction each.
 * `":memory:"` opens a private in-memory database (tests).
 */
export function openStore(path: string, options: OpenStoreOptions = {}): DatabaseSync {
  const { migrations = [], busyTimeoutMs = 5000 } = options;
  let db: DatabaseSync;
  try {
    if (path !== ":memory:") {
      ensurePrivateDir(dirname(path));
      if (!isOurs(path)) {
        throw new Error(
          "the file exists and is not an SQLite database; its mode and contents were not changed",
        );
      }
    }
    db = new DatabaseSync(path, { timeout: busyTimeoutMs });
    if (path !== ":memory:") tightenMode(path);
    db.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.trunc(busyTimeoutMs))}`);
    enableWal(db, busyTimeoutMs);
    db.exec("PRAGMA synchronous = NORMAL");
    db.exec("PRAGMA foreign_keys = ON");
    db.exec(
      "CREATE TABLE IF NOT EXISTS schema_migrations (id TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)",
    );
  } catch (error) {
    throw new StoreError(
      `Cannot open the store "${path}": ${
        (error as Error).message
      }; check the path and its permissions, or pass --db`,
      path,
      { cause: error },
    );
  }
  for (const migration of migrations) applyMigration(db, path, migration);
  if (path !== ":memory:") tightenMode(path);
  return db;
}

// node:sqlite in Deno sets `errcode` on some errors only; the message is always there.
function isBusy(error: unknown): boolean {
  const code = (error as { errcode?: number }).errcode;
  if (typeof code === "number") return (code & 0xff) === 5;
  return /database is locked|database is busy/i.test((error as Error).message ?? "");
}

/**
 * Switches to WAL, retrying while another process holds the lock: on a fresh
 * file several openers can race for the exclusive lock this needs, and SQLite
 * answers SQLITE_BUSY at once there instead of waiting out the busy timeout.
 */
function enableWal(db: DatabaseSync, busyTimeoutMs: number): void {
  const deadline = Date.now() + busyTimeoutMs;
  for (let delayMs = 2;; delayMs = Math.min(delayMs * 2, 50)) {
    try {
      db.exec("PRAGMA journal_mode = WAL");
      return;
    } catch (error) {
      if (!isBusy(error) || Date.now() >= deadline) throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, delayMs);
    }
  }
}

function applyMigration(db: DatabaseSync, path: string, migration: Migration): void {
  const applied = db.prepare("SELECT 1 FROM schema_migrations WHERE id = ?");
  if (applied.get(migration.id)) return;
  try {
    // BEGIN IMMEDIATE takes the write lock first, so two processes cannot both apply it.
    db.exec("BEGIN IMMEDIATE");
    try {
      if (!applied.get(migration.id)) {
        db.exec(migration.sql);
        db.prepare("INSERT INTO schema_migrations (id, applied_at) VALUES (?, ?)").run(
          migration.id,
          Date.now(),
        );
      }
      db.exec("COMMIT");
    } catch (error) {
      db.exec("ROLLBACK");
      throw error;
    }
  } catch (error) {
    throw new StoreError(
      `Cannot migrate the store "${path}" (${migration.id}): ${(error as Error).message}`,
      path,
      { cause: error },
    );
  }
}

/** The default store path: `$XDG_DATA_HOME/mcphub/mcphub.db`, else `~/.local/share/mcphub/mcphub.db`. */
export function defaultStorePath(env: { get(key: string): string | undefined }): string {
  const xdg = env.get("XDG_DATA_HOME");
  if (xdg) return `${xdg}/mcphub/mcphub.db`;
  const home = env.get("HOME") ?? env.get("USERPROFILE") ?? ".";
  return `${home}/.local/share/mcphub/mcphub.db`;
}

export type { DatabaseSync };

export { isPostgresUrl, redactDbUrl, sqliteReader, type SqlReader, type SqlValue } from "./sql.ts";
export {
  isConnectionError,
  type PgMigration,
  pgpassPassword,
  type PgSql,
  PgStore,
  PgStoreError,
  type PgStoreOptions,
  type PgTx,
} from "./postgres.ts";
export { PgQuotaLedger, pgQuotaMigrations, type QuotaPlace } from "./pg_quota.ts";
export {
  type ClaimedRetry,
  type DetachedRow,
  DetachedRows,
  pgRendezvousMigrations,
  Rendezvous,
  rendezvousMigrations,
  type RendezvousState,
  storeSecret,
} from "./rendezvous.ts";
