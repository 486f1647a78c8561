/**
 * What the store's readers share across backends: `?`-placeholder queries that return rows, the SQLite
 * adapter, and the helpers for database URLs (which never print a password). Loading this module does not
 * load a database driver.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";

/** A value bound to a `?` placeholder. */
export type SqlValue = string | number | bigint | boolean | null | Uint8Array;

/** Read queries with `?` placeholders, in the SQL both SQLite and PostgreSQL accept. */
export interface SqlReader {
  all(query: string, params?: readonly SqlValue[]): Promise<Record<string, unknown>[]>;
}

/** A {@linkcode SqlReader} over an open SQLite database. */
export function sqliteReader(db: DatabaseSync): SqlReader {
  return {
    all: (query, params = []) =>
      Promise.resolve(
        db.prepare(query).all(
          ...params.map((p) => typeof p === "boolean" ? (p ? 1 : 0) : p) as (string | number | null)[],
        ) as Record<string, unknown>[],
      ),
  };
}

/** True for a `postgres://` or `postgresql://` URL (a store location that is not a file). */
export function isPostgresUrl(location: string | undefined): location is string {
  return location !== undefined && /^postgres(?:ql)?:\/\//i.test(location.trim());
}

/**
 * The URL with its password (and any `password=` parameter) replaced by `***`: the only form of a database
 * URL that mcphub prints, logs or stores.
 */
export function redactDbUrl(location: string): string {
  let out = location.replace(/^(postgres(?:ql)?:\/\/[^:/?#@]*:)[^@/?#]*@/i, "$1***@");
  out = out.replace(/([?&]password=)[^&#]*/gi, "$1***");
  return out;
}

/** `?` placeholders as `$1, $2, …`, outside quoted strings and identifiers. */
export function numberPlaceholders(query: string): string {
  let n = 0;
  let out = "";
  let quote: string | undefined;
  for (const ch of query) {
    if (quote) {
      if (ch === quote) quote = undefined;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
    } else if (ch === "?") {
      out += `$${++n}`;
      continue;
    }
    out += ch;
  }
  return out;
}
