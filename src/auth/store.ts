/**
 * OAuth state per remote server in the store: the client registration, the
 * tokens, the discovered authorization server. Rows are keyed by server name
 * and URL, so tokens obtained for one URL are never sent to another.
 *
 * @module
 */
import type { DatabaseSync, Migration } from "../store/mod.ts";
import { parseJson } from "../json/mod.ts";

/** The store's OAuth table. Applied with the other migrations by whoever opens the store. */
export const authMigrations: readonly Migration[] = [{
  id: "auth/1",
  sql: `CREATE TABLE oauth_sessions (
    server TEXT NOT NULL,
    url TEXT NOT NULL,
    client TEXT,
    tokens TEXT,
    tokens_at INTEGER,
    expires_at INTEGER,
    scope TEXT,
    discovery TEXT,
    redirect_url TEXT,
    note TEXT,
    wanted_scope TEXT,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (server, url)
  )`,
}];

/** One server's stored OAuth state. JSON columns are parsed; secrets stay inside `client` and `tokens`. */
export interface AuthRecord {
  server: string;
  url: string;
  /** Client information from dynamic registration (may hold a client secret). */
  client?: Record<string, unknown>;
  /** OAuth tokens as the SDK saved them (access and refresh token). */
  tokens?: Record<string, unknown>;
  /** When the tokens were saved, ms since the epoch. */
  tokensAt?: number;
  /** When the access token expires, ms since the epoch; undefined = the server did not say. */
  expiresAt?: number;
  /** Granted scopes, space-separated. */
  scope?: string;
  /** Discovery state: authorization server URL and metadata, resource metadata. */
  discovery?: Record<string, unknown>;
  /** The loopback redirect URL of the last login. */
  redirectUrl?: string;
  /** Why the server is not logged in any more (never a secret). */
  note?: string;
  /** Scopes the server asked for beyond the granted ones (step-up); the next login requests them. */
  wantedScope?: string;
  updatedAt: number;
}

/** Columns {@linkcode AuthStore.update} may set; `null` clears one. */
export interface AuthUpdate {
  client?: Record<string, unknown> | null;
  tokens?: Record<string, unknown> | null;
  tokensAt?: number | null;
  expiresAt?: number | null;
  scope?: string | null;
  discovery?: Record<string, unknown> | null;
  redirectUrl?: string | null;
  note?: string | null;
  wantedScope?: string | null;
}

const COLUMNS: Record<keyof AuthUpdate, string> = {
  client: "client",
  tokens: "tokens",
  tokensAt: "tokens_at",
  expiresAt: "expires_at",
  scope: "scope",
  discovery: "discovery",
  redirectUrl: "redirect_url",
  note: "note",
  wantedScope: "wanted_scope",
};
const JSON_COLUMNS = new Set<keyof AuthUpdate>(["client", "tokens", "discovery"]);

interface Row {
  server: string;
  url: string;
  client: string | null;
  tokens: string | null;
  tokens_at: number | null;
  expires_at: number | null;
  scope: string | null;
  discovery: string | null;
  redirect_url: string | null;
  note: string | null;
  wanted_scope: string | null;
  updated_at: number;
}

function parse(text: string | null): Record<string, unknown> | undefined {
  if (text === null) return undefined;
  try {
    // What an authorization server sent (metadata, tokens, registration), stored as JSON: parsed so
    // that a key it chose cannot poison V8's JSON.parse or be misread by it (see src/json).
    const value = parseJson(text);
    return value && typeof value === "object" ? value as Record<string, unknown> : undefined;
  } catch {
    return undefined;
  }
}

function toRecord(row: Row): AuthRecord {
  const record: AuthRecord = { server: row.server, url: row.url, updatedAt: row.updated_at };
  const client = parse(row.client);
  const tokens = parse(row.tokens);
  const discovery = parse(row.discovery);
  if (client) record.client = client;
  if (tokens) record.tokens = tokens;
  if (row.tokens_at !== null) record.tokensAt = row.tokens_at;
  if (row.expires_at !== null) record.expiresAt = row.expires_at;
  if (row.scope !== null) record.scope = row.scope;
  if (discovery) record.discovery = discovery;
  if (row.redirect_url !== null) record.redirectUrl = row.redirect_url;
  if (row.note !== null) record.note = row.note;
  if (row.wanted_scope !== null) record.wantedScope = row.wanted_scope;
  return record;
}

/** Reads and writes `oauth_sessions`. Several processes may share the file; every write is one statement. */
export class AuthStore {
  #db: DatabaseSync;
  constructor(db: DatabaseSync, readonly now: () => number = Date.now) {
    this.#db = db;
  }

  get(server: string, url: string): AuthRecord | undefined {
    const row = this.#db.prepare("SELECT * FROM oauth_sessions WHERE server = ? AND url = ?").get(
      server,
      url,
    );
    return row ? toRecord(row as unknown as Row) : undefined;
  }

  /** Every stored row, by server name. */
  list(): AuthRecord[] {
    return (this.#db.prepare("SELECT * FROM oauth_sessions ORDER BY server, url").all() as unknown as Row[])
      .map(toRecord);
  }

  /** Sets the given columns, creating the row when missing. */
  update(server: string, url: string, fields: AuthUpdate): void {
    const keys = (Object.keys(fields) as (keyof AuthUpdate)[]).filter((k) => fields[k] !== undefined);
    const now = this.now();
    const values = keys.map((k) => {
      const value = fields[k];
      if (value === null) return null;
      return JSON_COLUMNS.has(k) ? JSON.stringify(value) : value as string | number;
    });
    const columns = keys.map((k) => COLUMNS[k]);
    this.#db.prepare(
      `INSERT INTO oauth_sessions (server, url, updated_at${columns.map((c) => `, ${c}`).join("")})
       VALUES (?, ?, ?${columns.map(() => ", ?").join("")})
       ON CONFLICT (server, url) DO UPDATE SET updated_at = excluded.updated_at${
        columns.map((c) => `, ${c} = excluded.${c}`).join("")
      }`,
    ).run(server, url, now, ...values);
  }

  /**
   * Forgets the tokens, but only if they are still the ones with this refresh token (or
   * access token): another process may have stored newer ones meanwhile.
   */
  dropTokens(
    server: string,
    url: string,
    seen: { refresh?: string; access?: string },
    note: string,
  ): boolean {
    const record = this.get(server, url);
    if (!record?.tokens) return false;
    if (seen.refresh !== undefined && record.tokens.refresh_token !== seen.refresh) return false;
    if (seen.access !== undefined && record.tokens.access_token !== seen.access) return false;
    const result = this.#db.prepare(
      `UPDATE oauth_sessions SET tokens = NULL, tokens_at = NULL, expires_at = NULL, note = ?, updated_at = ?
       WHERE server = ? AND url = ? AND tokens = ?`,
    ).run(note, this.now(), server, url, JSON.stringify(record.tokens));
    return Number(result.changes) > 0;
  }

  /** Deletes a server's rows (every URL); returns how many. */
  delete(server: string): number {
    return Number(this.#db.prepare("DELETE FROM oauth_sessions WHERE server = ?").run(server).changes);
  }
}
