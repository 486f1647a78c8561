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
import { parseJson } from "../json/mod.ts";

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
  /**
   * `json`: `JSON.stringify(tools)`, when the caller has it (a large list is serialized in slices), and
   * `hash`: its {@linkcode listHash}, when it has that too (an unchanged list is then not compared again).
   */
  save(
    server: string,
    fingerprint: string,
    tools: readonly ToolDefinition[],
    json?: string,
    hash?: string,
  ): void;
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

/** Identifies a list's JSON text: SHA-256 of its UTF-8, hex (fed in pieces by {@linkcode listHashSteps}). */
export function listHash(json: string): string {
  return createHash("sha256").update(json).digest("hex");
}

/** Characters of a list's text hashed between two yields. */
const HASH_CHARS = 1024 * 1024;

/** {@linkcode listHash} in steps (an 18 MB list takes ~50 ms to hash). */
export function* listHashSteps(json: string): Generator<void, string> {
  const hash = createHash("sha256");
  for (let at = 0; at < json.length;) {
    let end = Math.min(json.length, at + HASH_CHARS);
    // Never between the halves of a surrogate pair (each half alone would be hashed as U+FFFD).
    const last = json.charCodeAt(end - 1);
    if (end < json.length && last >= 0xd800 && last <= 0xdbff) end--;
    hash.update(json.slice(at, end));
    at = end;
    yield;
  }
  return hash.digest("hex");
}

/** {@linkcode ToolListCache} over a store opened with {@linkcode toolCacheMigrations}. */
export class StoreToolCache implements ToolListCache {
  readonly #db: DatabaseSync;
  readonly #clock: () => number;

  constructor(db: DatabaseSync, clock: () => number = Date.now) {
    this.#db = db;
    this.#clock = clock;
  }

  /**
   * What this process last read or wrote of each server's list: its fingerprint and the hash of its text.
   * A save of the same list is then a look at the row's fingerprint, not a compare of 18 MB (its first
   * save after a start included: the load hashed what it read).
   */
  readonly #known = new Map<string, { fingerprint: string; hash: string }>();

  load(server: string, fingerprint: string): ToolDefinition[] | undefined {
    const row = this.#db.prepare("SELECT fingerprint, tools FROM tool_cache WHERE server = ?").get(server) as
      | { fingerprint: string; tools: string }
      | undefined;
    if (!row || row.fingerprint !== fingerprint) return undefined;
    try {
      const tools = parseJson(row.tools);
      if (!Array.isArray(tools)) return undefined;
      this.#known.set(server, { fingerprint, hash: listHash(row.tools) });
      return tools as ToolDefinition[];
    } catch {
      return undefined;
    }
  }

  save(
    server: string,
    fingerprint: string,
    tools: readonly ToolDefinition[],
    json?: string,
    hash?: string,
  ): void {
    const known = this.#known.get(server);
    if (hash !== undefined && known?.fingerprint === fingerprint && known.hash === hash) {
      // The same list as the row held: unchanged unless another process rewrote it meanwhile.
      const row = this.#db.prepare("SELECT fingerprint FROM tool_cache WHERE server = ?").get(server) as
        | { fingerprint: string }
        | undefined;
      if (row?.fingerprint === fingerprint) return;
    }
    const text = json ?? JSON.stringify(tools);
    // Compared by SQLite: an 18 MB list is not read back into a string to learn that it did not change.
    const same = this.#db.prepare(
      "SELECT 1 AS same FROM tool_cache WHERE server = ? AND fingerprint = ? AND tools = ?",
    ).get(server, fingerprint, text);
    if (!same) {
      this.#db.prepare(
        `INSERT INTO tool_cache (server, fingerprint, tools, updated_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (server) DO UPDATE SET fingerprint = excluded.fingerprint, tools = excluded.tools,
           updated_at = excluded.updated_at`,
      ).run(server, fingerprint, text, this.#clock());
    }
    this.#known.set(server, { fingerprint, hash: hash ?? listHash(text) });
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
