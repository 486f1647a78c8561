/**
 * The shared PostgreSQL store, for several gateway replicas: one connection pool per process, migrations
 * recorded by id and applied under an advisory lock (several replicas may start at once), and a short
 * circuit breaker so that an unreachable database fails each operation at once instead of holding calls
 * (the callers fail open: results pass through whole, records wait or are dropped).
 *
 * @module
 */
import type postgres from "postgres";
import { numberPlaceholders, redactDbUrl, type SqlReader, type SqlValue } from "./sql.ts";

/** A schema change for PostgreSQL, identified by a stable id such as `"spool/1"`. Applied once, in order. */
export interface PgMigration {
  id: string;
  sql: string;
}

/** The pool's type: postgres.js's `Sql`. */
export type PgSql = postgres.Sql<Record<string, never>>;

/** A transaction handle of {@linkcode PgStore.begin}. */
export type PgTx = postgres.TransactionSql<Record<string, never>>;

/** Removes every occurrence of the URL's password from `text` (driver errors may echo connection details). */
function scrub(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (secret.length >= 3) out = out.split(secret).join("***");
  return out;
}

function passwordsOf(location: string): string[] {
  const out: string[] = [];
  try {
    const url = new URL(location);
    if (url.password) out.push(url.password, decodeURIComponent(url.password));
    const param = url.searchParams.get("password");
    if (param) out.push(param);
  } catch {
    // an unparsable URL fails at connect with the driver's own message
  }
  return out;
}

function unescapePgpass(field: string): string {
  return field.replace(/\\(.)/g, "$1");
}

/**
 * The password libpq would take from a password file (`$PGPASSFILE`, else `~/.pgpass`) for the URL's host,
 * port, database and user — `*` matches anything, `\:` is a literal colon — when neither the URL nor
 * `$PGPASSWORD` gives one (postgres.js does not read the file itself). The file is skipped, as libpq does,
 * when others may read it.
 */
export function pgpassPassword(
  url: string,
  env: { get(key: string): string | undefined },
): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url.replace(/^postgres(ql)?:/i, "http:"));
  } catch {
    return undefined;
  }
  if (parsed.password || parsed.searchParams.get("password") || env.get("PGPASSWORD")) return undefined;
  const home = env.get("HOME");
  const file = env.get("PGPASSFILE") ?? (home ? `${home}/.pgpass` : undefined);
  if (!file) return undefined;
  let text: string;
  try {
    const info = Deno.statSync(file);
    if (!info.isFile || (info.mode !== null && (info.mode & 0o077) !== 0)) return undefined;
    text = Deno.readTextFileSync(file);
  } catch {
    return undefined;
  }
  const host = decodeURIComponent(parsed.hostname) || env.get("PGHOST") || "localhost";
  const port = parsed.port || env.get("PGPORT") || "5432";
  const user = decodeURIComponent(parsed.username) || env.get("PGUSER") || env.get("USER") || "";
  const database = decodeURIComponent(parsed.pathname.slice(1)) || env.get("PGDATABASE") || user;
  for (const line of text.split(/\r?\n/)) {
    if (line.startsWith("#") || line.trim() === "") continue;
    const fields = line.split(/(?<!\\):/).map(unescapePgpass);
    if (fields.length < 5) continue;
    const [h, p, d, u] = fields;
    const password = fields.slice(4).join(":");
    const match = (pattern: string | undefined, value: string) => pattern === "*" || pattern === value;
    if (match(h, host) && match(p, port) && match(d, database) && match(u, user)) return password;
  }
  return undefined;
}

/** A failure of the PostgreSQL store; its message never contains the password. */
export class PgStoreError extends Error {
  override name = "PgStoreError";
}

/** Options for {@linkcode PgStore}. */
export interface PgStoreOptions {
  /** Applied in the order given; each id once per database. @default [] */
  migrations?: readonly PgMigration[];
  /** Connections in the pool. @default 10 */
  max?: number;
  /** Seconds to wait for a connection. @default 5 */
  connectTimeoutS?: number;
  /** How long the store answers "unavailable" at once after a connection failure. @default 2000 */
  breakerMs?: number;
  /** A password from elsewhere than the URL (e.g. {@linkcode pgpassPassword}); never printed. */
  password?: string;
}

// One advisory-lock key for mcphub's migrations ("mcphub" in ASCII, as a bigint).
const MIGRATION_LOCK = 0x6d6370687562n;

const CONNECTION_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENOTFOUND",
  "EPIPE",
  "CONNECT_TIMEOUT",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "57P01", // admin_shutdown
  "57P02",
  "57P03", // cannot_connect_now (starting up / shutting down)
]);

/** True when `error` means the database could not be reached (not a bad query). */
export function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  if (typeof code === "string" && CONNECTION_CODES.has(code)) return true;
  const errno = (error as { errno?: unknown })?.errno;
  if (typeof errno === "string" && CONNECTION_CODES.has(errno)) return true;
  return /ECONNREFUSED|connection refused|write CONNECTION|terminating connection/i.test(
    String((error as Error)?.message ?? ""),
  );
}

/**
 * One process's pool on the shared database. Connects lazily; {@linkcode PgStore.ready} applies the
 * migrations (once, retried after a failure). Every operation goes through {@linkcode PgStore.run}, which
 * waits for the migrations, fails fast while the database is known to be down, and scrubs the password
 * from error messages.
 */
export class PgStore implements SqlReader {
  /** The URL without its password. */
  readonly location: string;
  readonly #sql: Promise<PgSql>;
  readonly #migrations: readonly PgMigration[];
  readonly #secrets: string[];
  readonly #breakerMs: number;
  #ready: Promise<void> | undefined;
  #downUntil = 0;
  #closed = false;

  constructor(url: string, options: PgStoreOptions = {}) {
    this.location = redactDbUrl(url);
    this.#secrets = passwordsOf(url);
    if (options.password) this.#secrets.push(options.password);
    this.#migrations = options.migrations ?? [];
    this.#breakerMs = options.breakerMs ?? 2000;
    const pool = {
      max: options.max ?? 10,
      connect_timeout: options.connectTimeoutS ?? 5,
      idle_timeout: 60,
      onnotice: () => {},
      // 64-bit integers (COUNT, ids, times) as numbers: every value mcphub stores fits in 2^53.
      types: {
        bigint: {
          to: 20,
          from: [20],
          serialize: (x: number | bigint) => String(x),
          parse: (x: string) => Number(x),
        },
      },
      connection: { application_name: "mcphub" },
      ...(options.password ? { password: options.password } : {}),
    };
    // The driver loads on first use: a gateway on a local file never pays for it.
    this.#sql = import("postgres").then((m) => m.default(url, pool) as unknown as PgSql);
    this.#sql.catch(() => {});
  }

  /** Applies pending migrations (advisory lock: one replica at a time). Memoized; retried after a failure. */
  ready(): Promise<void> {
    this.#ready ??= this.#migrate().catch((error) => {
      this.#ready = undefined;
      throw error;
    });
    return this.#ready;
  }

  async #migrate(): Promise<void> {
    const sql = await this.#sql;
    await sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK.toString()}::bigint)`;
      await tx.unsafe(
        "CREATE TABLE IF NOT EXISTS schema_migrations (id TEXT PRIMARY KEY, applied_at BIGINT NOT NULL)",
      );
      const applied = new Set((await tx`SELECT id FROM schema_migrations`).map((r) => String(r.id)));
      for (const migration of this.#migrations) {
        if (applied.has(migration.id)) continue;
        await tx.unsafe(migration.sql);
        await tx`INSERT INTO schema_migrations (id, applied_at) VALUES (${migration.id}, ${Date.now()})`;
      }
    });
  }

  /** True while a recent connection failure makes operations fail at once. */
  get down(): boolean {
    return Date.now() < this.#downUntil;
  }

  /**
   * Runs `op` on the pool after the migrations. Throws a {@linkcode PgStoreError} (password scrubbed) on
   * failure; a connection failure opens the breaker for a moment so the next operations fail at once.
   */
  async run<T>(op: (sql: PgSql) => Promise<T>): Promise<T> {
    if (this.#closed) throw new PgStoreError(`the store ${this.location} is closed`);
    if (this.down) throw new PgStoreError(`the database ${this.location} is unreachable (retrying)`);
    try {
      await this.ready();
      return await op(await this.#sql);
    } catch (error) {
      if (isConnectionError(error)) this.#downUntil = Date.now() + this.#breakerMs;
      throw this.error(error);
    }
  }

  /** Runs `op` in one transaction (see {@linkcode PgStore.run}). */
  begin<T>(op: (tx: PgTx) => Promise<T>): Promise<T> {
    return this.run((sql) => sql.begin(op) as Promise<T>);
  }

  /** Rows of `query` with `?` placeholders (numbered for PostgreSQL here). */
  all(query: string, params: readonly SqlValue[] = []): Promise<Record<string, unknown>[]> {
    const text = numberPlaceholders(query);
    return this.run(async (sql) =>
      [...await sql.unsafe(text, params as postgres.ParameterOrJSON<never>[])] as Record<string, unknown>[]
    );
  }

  /** `error` as a {@linkcode PgStoreError} whose message names the store and never holds the password. */
  error(error: unknown): PgStoreError {
    if (error instanceof PgStoreError) return error;
    const message = scrub(String((error as Error)?.message ?? error), this.#secrets);
    return new PgStoreError(`${message} (store ${this.location})`);
  }

  /** Closes the pool (waits up to 5 s for running queries). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await (await this.#sql).end({ timeout: 5 }).catch(() => {});
  }
}
