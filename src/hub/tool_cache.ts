/**
 * The tool-list cache: each server's last good `tools/list`, kept in the store
 * and keyed by a fingerprint of that server's config entry, so that a gateway
 * answers its first `tools/list` with every tool while the servers are still
 * starting. An entry whose fingerprint no longer matches is not used.
 *
 * @module
 */
import { createHash } from "node:crypto";
import type { ServerConfig } from "../config/mod.ts";
import type { DatabaseSync, Migration } from "../store/mod.ts";
import type { ToolDefinition } from "../catalog/mod.ts";

/** The store migrations of the tool cache. */
export const toolCacheMigrations: Migration[] = [{
  id: "tool_cache/1",
  sql: `
    CREATE TABLE tool_cache (
      server TEXT PRIMARY KEY,
      fingerprint TEXT NOT NULL,
      tools TEXT NOT NULL,
      updated_at INTEGER NOT NULL
    )`,
}, {
  // Each server's `instructions` (from its initialize result), for the gateway's own instructions.
  id: "tool_cache/2",
  sql: "ALTER TABLE tool_cache ADD COLUMN instructions TEXT",
}];

/** Where the hub keeps and finds cached tool lists. */
export interface ToolListCache {
  load(server: string, fingerprint: string): ToolDefinition[] | undefined;
  /** `json`: `JSON.stringify(tools)`, when the caller has it (a large list is serialized in slices). */
  save(server: string, fingerprint: string, tools: readonly ToolDefinition[], json?: string): void;
  /** The server's last known `instructions` (after its tools were saved with this fingerprint). */
  loadInstructions?(server: string, fingerprint: string): string | undefined;
  saveInstructions?(server: string, fingerprint: string, instructions: string | undefined): void;
}

/**
 * Identifies what a server entry starts: command, args, cwd, url, transport, and the names (never the
 * values, which may be secrets) of its `env` and `headers`. A changed entry is a new fingerprint.
 */
export function serverFingerprint(server: ServerConfig): string {
  const identity = {
    command: server.command ?? null,
    args: server.args,
    cwd: server.cwd ?? null,
    url: server.url ?? null,
    transport: server.url ? server.transport : null,
    env: Object.keys(server.env).sort(),
    headers: Object.keys(server.headers).map((h) => h.toLowerCase()).sort(),
  };
  return createHash("sha256").update(JSON.stringify(identity)).digest("hex");
}

/** {@linkcode ToolListCache} over a store opened with {@linkcode toolCacheMigrations}. */
export class StoreToolCache implements ToolListCache {
  readonly #db: DatabaseSync;
  readonly #clock: () => number;

  constructor(db: DatabaseSync, clock: () => number = Date.now) {
    this.#db = db;
    this.#clock = clock;
  }

  load(server: string, fingerprint: string): ToolDefinition[] | undefined {
    const row = this.#db.prepare("SELECT fingerprint, tools FROM tool_cache WHERE server = ?").get(server) as
      | { fingerprint: string; tools: string }
      | undefined;
    if (!row || row.fingerprint !== fingerprint) return undefined;
    try {
      const tools = JSON.parse(row.tools);
      return Array.isArray(tools) ? tools as ToolDefinition[] : undefined;
    } catch {
      return undefined;
    }
  }

  save(server: string, fingerprint: string, tools: readonly ToolDefinition[], json?: string): void {
    const text = json ?? JSON.stringify(tools);
    // Compared by SQLite: an 18 MB list is not read back into a string to learn that it did not change.
    const same = this.#db.prepare(
      "SELECT 1 AS same FROM tool_cache WHERE server = ? AND fingerprint = ? AND tools = ?",
    ).get(server, fingerprint, text);
    if (same) return;
    this.#db.prepare(
      `INSERT INTO tool_cache (server, fingerprint, tools, updated_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (server) DO UPDATE SET fingerprint = excluded.fingerprint, tools = excluded.tools,
         updated_at = excluded.updated_at`,
    ).run(server, fingerprint, text, this.#clock());
  }

  loadInstructions(server: string, fingerprint: string): string | undefined {
    const row = this.#db.prepare("SELECT fingerprint, instructions FROM tool_cache WHERE server = ?").get(
      server,
    ) as { fingerprint: string; instructions: string | null } | undefined;
    return row && row.fingerprint === fingerprint && row.instructions !== null ? row.instructions : undefined;
  }

  saveInstructions(server: string, fingerprint: string, instructions: string | undefined): void {
    this.#db.prepare("UPDATE tool_cache SET instructions = ? WHERE server = ? AND fingerprint = ?")
      .run(instructions ?? null, server, fingerprint);
  }
}
