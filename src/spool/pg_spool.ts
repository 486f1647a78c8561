/**
 * The spool on the shared PostgreSQL store: the same chunks and page reads as the SQLite {@linkcode Spool}
 * (`bytea` rows keyed `(call_id, seq)`, a page reads the one or two chunks it overlaps), one transaction
 * per put (a binary COPY of the chunks, then the result's row), and retention by an idempotent delete that
 * any replica may run. A result written as it arrives goes through a local scratch spool first (see
 * {@linkcode PgSpool.writer}).
 *
 * @module
 */
import type { PgMigration, PgStore, PgTx } from "../store/mod.ts";
import { utf8Chunks } from "./_utf8.ts";
import { rechunk } from "./_chunks.ts";
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
  type Spool,
  type SpoolOptions,
  type SpoolPage,
  SpoolWriteError,
  type SpoolWriter,
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

/** PostgreSQL's binary COPY header: the signature, then the flags and the header extension's length (0). */
const COPY_HEADER = Uint8Array.from("PGCOPY\n\xff\r\n\0" + "\0".repeat(8), (c) => c.charCodeAt(0));
/** Bytes of rows per COPY write (each write is a message to the server, copied once by the driver). */
const COPY_WRITE_BYTES = 256 * 1024;

/** Longest run of COPY work, in ms, before other calls get a turn. */
const COPY_TURN_MS = 8;

/** The node stream postgres.js answers a `COPY … FROM STDIN` with (the few members used here). */
interface CopyStream {
  readonly writableLength: number;
  write(chunk: Uint8Array): boolean;
  end(callback: (error?: Error | null) => void): void;
  once(event: "drain" | "error", listener: (error?: Error) => void): void;
  off(event: "drain" | "error", listener: (error?: Error) => void): void;
}

/**
 * Writes `chunks` as rows `(callId, 0…)` of `spool_chunks` with a binary COPY on `tx`: the bytes as they
 * are, no hex text (an INSERT's `bytea` parameter is sent as hex: twice the bytes, made as strings the
 * garbage collector is slow to take back), waiting for the socket to drain. Answers the bytes written.
 */
async function copyChunks(tx: PgTx, callId: string, chunks: Iterable<Uint8Array>): Promise<number> {
  const stream = await (tx`COPY spool_chunks (call_id, seq, data) FROM STDIN WITH (FORMAT binary)`
    .writable() as unknown as Promise<CopyStream>);
  let failed: Error | undefined;
  const onError = (error?: Error) => failed ??= error ?? new Error("COPY failed");
  stream.once("error", onError);
  const id = new TextEncoder().encode(callId);
  const rowHead = 2 + 4 + id.length + 4 + 4 + 4;
  let batch = new Uint8Array(COPY_WRITE_BYTES + rowHead);
  let view = new DataView(batch.buffer);
  let used = 0;
  let since = performance.now();
  const send = async (bytes: Uint8Array) => {
    if (failed) throw failed;
    if (!stream.write(bytes)) {
      await new Promise<void>((resolve, reject) => {
        const drained = () => (stream.off("error", errored), resolve());
        const errored = (error?: Error) => (stream.off("drain", drained), reject(error));
        stream.once("drain", drained);
        stream.once("error", errored);
      });
    }
    // A drain can come before the event loop's next turn (the socket took the bytes at once): other
    // calls get a turn every few ms whichever way the write went.
    if (performance.now() - since < COPY_TURN_MS) return;
    await new Promise((resolve) => setTimeout(resolve, 0));
    since = performance.now();
  };
  const flush = async () => {
    await send(batch.subarray(0, used));
    // The driver copies what it is given unless its stream holds writes back (then it keeps the view):
    // the buffer is reused when nothing is held, else the next batch gets one of its own.
    if (stream.writableLength > 0) {
      batch = new Uint8Array(COPY_WRITE_BYTES + rowHead);
      view = new DataView(batch.buffer);
    }
    used = 0;
  };
  batch.set(COPY_HEADER);
  used = COPY_HEADER.length;
  let seq = 0;
  let total = 0;
  for (const chunk of chunks) {
    if (used + rowHead + chunk.length > batch.length) {
      await flush();
      if (rowHead + chunk.length > batch.length) batch = new Uint8Array(rowHead + chunk.length);
      view = new DataView(batch.buffer);
    }
    view.setInt16(used, 3);
    view.setInt32(used + 2, id.length);
    batch.set(id, used + 6);
    let at = used + 6 + id.length;
    view.setInt32(at, 4);
    view.setInt32(at + 4, seq++);
    view.setInt32(at + 8, chunk.length);
    at += 12;
    batch.set(chunk, at);
    used = at + chunk.length;
    total += chunk.length;
  }
  if (used + 2 > batch.length) await flush();
  view.setInt16(used, -1);
  used += 2;
  await send(batch.subarray(0, used));
  await new Promise<void>((resolve, reject) => stream.end((error) => error ? reject(error) : resolve()));
  stream.off("error", onError);
  if (failed) throw failed;
  return total;
}

/** What a {@linkcode PgSpool} takes beside {@linkcode SpoolOptions}. */
export interface PgSpoolOptions extends SpoolOptions {
  /**
   * A local spool for results written as they arrive (see {@linkcode PgSpool.writer}), opened on first
   * use; without one (or when it answers undefined), a result is stored once it is whole.
   */
  scratch?: () => Spool | undefined;
}

/** {@linkcode ResultStore} on PostgreSQL (see the module doc). */
export class PgSpool implements ResultStore {
  readonly #store: PgStore;
  readonly #clock: () => number;
  readonly #chunkBytes: number;
  readonly #scratch?: () => Spool | undefined;
  #lastPruneAt = Number.NEGATIVE_INFINITY;

  constructor(store: PgStore, options: PgSpoolOptions = {}) {
    this.#store = store;
    this.#clock = options.clock ?? Date.now;
    this.#chunkBytes = options.chunkBytes ?? CHUNK_BYTES;
    this.#scratch = options.scratch;
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
  put(payload: string, meta: PutMeta): Promise<StoredMeta> {
    // utf8Chunks reuses its buffer: each chunk is copied into the COPY's batch before the next is made.
    return this.#publish(utf8Chunks(payload, this.#chunkBytes), meta);
  }

  /**
   * Stores the concatenation of `parts` (UTF-8 bytes as they arrived, never joined into one buffer) under a
   * new callId, in one transaction; the network writes let other calls run.
   *
   * @throws {SpoolWriteError} when the write fails
   */
  putBytes(parts: Iterable<Uint8Array>, meta: PutMeta): Promise<StoredMeta> {
    return this.#publish(rechunk(parts, this.#chunkBytes), meta);
  }

  /**
   * A writer that stores a result as its bytes arrive, as the SQLite spool's does: into the local
   * scratch spool (which can be read back synchronously, should the result be passed whole after all),
   * then, once whole, copied here from there a few chunks at a time, and deleted there. Undefined
   * without a scratch spool.
   */
  writer(): SpoolWriter | undefined {
    const scratch = this.#scratch?.();
    return scratch?.writer({
      store: this,
      publish: (chunks, meta) => this.#publish(rechunk(chunks, this.#chunkBytes), meta),
    });
  }

  /** Stores `chunks` (of the chunk size) and lists them under a new callId, in one transaction. */
  async #publish(chunks: Iterable<Uint8Array>, meta: PutMeta): Promise<StoredMeta> {
    const now = this.#clock();
    const callId = newCallId();
    let totalBytes = 0;
    try {
      await this.#store.begin(async (tx) => {
        totalBytes = await copyChunks(tx, callId, chunks);
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
