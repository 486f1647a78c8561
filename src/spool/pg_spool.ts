/**
 * The spool on the shared PostgreSQL store: the same chunks and page reads as the SQLite {@linkcode Spool}
 * (`bytea` rows keyed `(call_id, seq)`, a page reads the one or two chunks it overlaps), one transaction
 * per put, and retention by an idempotent delete that any replica may run.
 *
 * @module
 */
import type { PgMigration, PgStore } from "../store/mod.ts";
import { utf8Chunks } from "./_utf8.ts";
import {
  assemblePage,
  checkPageArgs,
  CHUNK_BYTES,
  isCallId,
  newCallId,
  PRUNE_INTERVAL_MS,
  type PutMeta,
  type ResultRow,
  type ResultStore,
  RETENTION_MS,
  type SpoolOptions,
  type SpoolPage,
  SpoolWriteError,
  type StoredMeta,
  storedMeta,
  toMeta,
} from "./spool.ts";

/** The spool's PostgreSQL schema (the SQLite one's columns, 64-bit times and sizes). */
export const pgSpoolMigrations: PgMigration[] = [{
  id: "spool/1",
  sql: `
    CREATE TABLE spool_results (
      call_id TEXT PRIMARY KEY,
      server TEXT NOT NULL,
      tool TEXT NOT NULL,
      namespaced TEXT NOT NULL,
      agent TEXT,
      total_bytes BIGINT NOT NULL,
      chunk_bytes INTEGER NOT NULL,
      created_at BIGINT NOT NULL,
      expires_at BIGINT NOT NULL
    );
    CREATE INDEX spool_results_expires_at ON spool_results (expires_at);
    CREATE TABLE spool_chunks (
      call_id TEXT NOT NULL,
      seq INTEGER NOT NULL,
      data BYTEA NOT NULL,
      PRIMARY KEY (call_id, seq)
    );
  `,
}];

// Chunks per INSERT: one round trip carries ~512 KiB.
const ROWS_PER_INSERT = 64;

/** {@linkcode ResultStore} on PostgreSQL (see the module doc). */
export class PgSpool implements ResultStore {
  readonly #store: PgStore;
  readonly #clock: () => number;
  readonly #chunkBytes: number;
  #lastPruneAt = Number.NEGATIVE_INFINITY;

  constructor(store: PgStore, options: SpoolOptions = {}) {
    this.#store = store;
    this.#clock = options.clock ?? Date.now;
    this.#chunkBytes = options.chunkBytes ?? CHUNK_BYTES;
    if (!Number.isSafeInteger(this.#chunkBytes) || this.#chunkBytes < 1) {
      throw new RangeError(`chunkBytes must be a positive integer, got ${options.chunkBytes}`);
    }
  }

  /**
   * Stores `payload` under a new callId in one transaction; the result row goes in last, so a reader on
   * another replica sees the whole result or none of it.
   *
   * @throws {SpoolWriteError} when the write fails
   */
  async put(payload: string, meta: PutMeta): Promise<StoredMeta> {
    const now = this.#clock();
    const callId = newCallId();
    let totalBytes = 0;
    try {
      await this.#store.begin(async (tx) => {
        let seq = 0;
        let batch: { call_id: string; seq: number; data: Uint8Array }[] = [];
        for (const chunk of utf8Chunks(payload, this.#chunkBytes)) {
          // utf8Chunks reuses its buffer: each batched row keeps its own copy.
          batch.push({ call_id: callId, seq: seq++, data: chunk.slice() });
          totalBytes += chunk.length;
          if (batch.length === ROWS_PER_INSERT) {
            await tx`INSERT INTO spool_chunks ${tx(batch, "call_id", "seq", "data")}`;
            batch = [];
          }
        }
        if (batch.length) await tx`INSERT INTO spool_chunks ${tx(batch, "call_id", "seq", "data")}`;
        await tx`INSERT INTO spool_results
          (call_id, server, tool, namespaced, agent, total_bytes, chunk_bytes, created_at, expires_at)
          VALUES (${callId}, ${meta.server}, ${meta.tool}, ${meta.namespaced}, ${meta.agent ?? null},
            ${totalBytes}, ${this.#chunkBytes}, ${now}, ${now + RETENTION_MS})`;
      });
    } catch (error) {
      throw new SpoolWriteError(
        `Cannot store the ${meta.namespaced} result in the spool: ${(error as Error).message}`,
        { cause: error },
      );
    }
    return storedMeta(callId, meta, totalBytes, now);
  }

  /**
   * Stores the concatenation of `parts` (UTF-8 bytes as they arrived, never joined into one buffer) under a
   * new callId, in one transaction; the network writes between batches let other calls run.
   *
   * @throws {SpoolWriteError} when the write fails
   */
  async putBytes(parts: Iterable<Uint8Array>, meta: PutMeta): Promise<StoredMeta> {
    const now = this.#clock();
    const callId = newCallId();
    const size = this.#chunkBytes;
    let totalBytes = 0;
    try {
      await this.#store.begin(async (tx) => {
        let seq = 0;
        let batch: { call_id: string; seq: number; data: Uint8Array }[] = [];
        let buffer = new Uint8Array(size);
        let filled = 0;
        const flush = async () => {
          await tx`INSERT INTO spool_chunks ${tx(batch, "call_id", "seq", "data")}`;
          batch = [];
        };
        for (const part of parts) {
          let at = 0;
          while (at < part.length) {
            const n = Math.min(size - filled, part.length - at);
            buffer.set(part.subarray(at, at + n), filled);
            filled += n;
            at += n;
            if (filled === size) {
              batch.push({ call_id: callId, seq: seq++, data: buffer });
              totalBytes += size;
              buffer = new Uint8Array(size);
              filled = 0;
              if (batch.length === ROWS_PER_INSERT) await flush();
            }
          }
        }
        if (filled) {
          batch.push({ call_id: callId, seq: seq++, data: buffer.subarray(0, filled) });
          totalBytes += filled;
        }
        if (batch.length) await flush();
        await tx`INSERT INTO spool_results
          (call_id, server, tool, namespaced, agent, total_bytes, chunk_bytes, created_at, expires_at)
          VALUES (${callId}, ${meta.server}, ${meta.tool}, ${meta.namespaced}, ${meta.agent ?? null},
            ${totalBytes}, ${size}, ${now}, ${now + RETENTION_MS})`;
      });
    } catch (error) {
      throw new SpoolWriteError(
        `Cannot store the ${meta.namespaced} result in the spool: ${(error as Error).message}`,
        { cause: error },
      );
    }
    return storedMeta(callId, meta, totalBytes, now);
  }

  /** The stored result's metadata; `undefined` when unknown, malformed or expired. */
  async meta(callId: string): Promise<StoredMeta | undefined> {
    const row = await this.#row(callId);
    return row ? toMeta(row) : undefined;
  }

  /** Reads up to `pageBytes` bytes at `cursor` (see {@linkcode Spool.readPage}). */
  async readPage(
    callId: string,
    cursor: number,
    pageBytes: number,
  ): Promise<SpoolPage | "unavailable" | "cursor_out_of_range"> {
    checkPageArgs(cursor, pageBytes);
    const row = await this.#row(callId);
    if (!row) return "unavailable";
    const totalBytes = row.total_bytes;
    if (cursor > totalBytes || (cursor === totalBytes && totalBytes > 0)) return "cursor_out_of_range";
    const end = Math.min(totalBytes, cursor + pageBytes);
    if (end === cursor) return { bytes: new Uint8Array(0), totalBytes };
    const size = row.chunk_bytes;
    const first = Math.floor(cursor / size);
    const last = Math.floor((end - 1) / size);
    const chunks = await this.#store.run((sql) =>
      sql`SELECT seq, data FROM spool_chunks WHERE call_id = ${callId} AND seq BETWEEN ${first} AND ${last}
          ORDER BY seq`
    );
    const bytes = assemblePage(
      chunks.map((c) => ({ seq: Number(c.seq), data: c.data as Uint8Array })),
      cursor,
      end,
      size,
    );
    return bytes ? { bytes, totalBytes } : "unavailable";
  }

  /** Deletes every expired result now (any replica may; idempotent); returns how many were removed. */
  async prune(): Promise<number> {
    const now = this.#clock();
    this.#lastPruneAt = now;
    return await this.#store.begin(async (tx) => {
      await tx`DELETE FROM spool_chunks WHERE call_id IN
        (SELECT call_id FROM spool_results WHERE expires_at <= ${now})`;
      const removed = await tx`DELETE FROM spool_results WHERE expires_at <= ${now}`;
      return removed.count;
    });
  }

  /** Prunes when this replica's last prune is an hour old (a failed attempt counts too). */
  async maybePrune(): Promise<void> {
    if (this.#clock() - this.#lastPruneAt < PRUNE_INTERVAL_MS) return;
    await this.prune();
  }

  async #row(callId: string): Promise<ResultRow | undefined> {
    if (!isCallId(callId)) return undefined;
    const now = this.#clock();
    const rows = await this.#store.run((sql) =>
      sql`SELECT call_id, server, tool, namespaced, agent, total_bytes, chunk_bytes, created_at, expires_at
          FROM spool_results WHERE call_id = ${callId} AND expires_at > ${now}`
    );
    return rows[0] as ResultRow | undefined;
  }
}
