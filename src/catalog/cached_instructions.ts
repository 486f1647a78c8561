/**
 * The servers' `instructions` as the tool-list cache last saved them, read before the gateway loads: the
 * host's `initialize` answer carries them (see gateway/initialize.ts), and this read is the tool-list
 * cache's own (`StoreToolCache.loadInstructions`) without loading the cache. {@linkcode serverFingerprint}
 * keys both.
 *
 * @module
 */
import { DatabaseSync } from "node:sqlite";
import type { ServerConfig } from "../config/light.ts";
import { sha256Hex } from "./hashing.ts";

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
  return sha256Hex(JSON.stringify(identity));
}

/**
 * Each server's cached `instructions` in the SQLite store at `path`, as the tool-list cache reads them when
 * the gateway starts (the row's fingerprint must be the server's). An empty map when the file does not
 * exist or holds no cache yet (a new store: the gateway's would be empty too); undefined when the store
 * cannot be read now, or not written (then only the gateway can tell). Opens the file read-only and closes it.
 */
export function readCachedInstructions(
  path: string,
  servers: readonly ServerConfig[],
): Map<string, string> | undefined {
  const found = new Map<string, string>();
  if (path === ":memory:" || servers.length === 0) return found;
  try {
    if (!Deno.statSync(path).isFile) return undefined;
  } catch (error) {
    return error instanceof Deno.errors.NotFound ? found : undefined;
  }
  try {
    // A file the gateway could not open for writing is no store to it (it then has no cache at all).
    Deno.openSync(path, { read: true, write: true }).close();
  } catch {
    return undefined;
  }
  let db: DatabaseSync | undefined;
  try {
    db = new DatabaseSync(path, { readOnly: true, timeout: 1000 });
    const rows = db.prepare("SELECT server, fingerprint, instructions FROM tool_cache").all() as {
      server: string;
      fingerprint: string;
      instructions: string | null;
    }[];
    const byName = new Map(rows.map((row) => [row.server, row]));
    for (const server of servers) {
      const row = byName.get(server.name);
      if (row && row.instructions !== null && row.fingerprint === serverFingerprint(server)) {
        found.set(server.name, row.instructions);
      }
    }
    return found;
  } catch (error) {
    // A store made before the cache (or its instructions column): the gateway's migrations add them empty.
    return /no such (table|column)/.test((error as Error).message ?? "") ? found : undefined;
  } finally {
    db?.close();
  }
}
