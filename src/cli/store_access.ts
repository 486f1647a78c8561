/**
 * How the commands that read the store (`stats`, `pin --top`, `approve`, `tools changes`, `doctor`) open
 * it, whether it is a SQLite file or a shared PostgreSQL database. Reading never creates a missing file.
 *
 * @module
 */
import {
  isPostgresUrl,
  type Migration,
  openStore,
  pgpassPassword,
  PgStore,
  sqliteReader,
  type SqlReader,
} from "../store/mod.ts";
import { pgStoreMigrations } from "../gateway/mod.ts";

/** True when `path` is an existing regular file. */
export function fileExists(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

/** The shared store at `url`, with every migration the gateway applies (idempotent; one replica at a time). */
export function openPgStore(url: string, env: { get(key: string): string | undefined }): PgStore {
  return new PgStore(url, { migrations: pgStoreMigrations, max: 2, password: pgpassPassword(url, env) });
}

/**
 * Runs `use` with read queries on the store at `location`; undefined (nothing created) when it is a file
 * that does not exist. A PostgreSQL failure throws with the password left out.
 */
export async function withStoreReader<T>(
  location: string,
  options: { migrations: readonly Migration[]; env: { get(key: string): string | undefined } },
  use: (reader: SqlReader) => Promise<T>,
): Promise<T | undefined> {
  const { migrations } = options;
  if (isPostgresUrl(location)) {
    const store = openPgStore(location, options.env);
    try {
      return await use(store);
    } finally {
      await store.close();
    }
  }
  if (!fileExists(location)) return undefined;
  const db = openStore(location, { migrations: [...migrations] });
  try {
    return await use(sqliteReader(db));
  } finally {
    db.close();
  }
}
