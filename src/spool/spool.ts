/**
 * The spool: oversized results stored losslessly in SQLite as fixed-size
 * chunks, so any page costs the same to read at any offset and any total size.
 *
 * @module
 */
import { Chunker } from "./_chunks.ts";
import type { DatabaseSync, StatementSync } from "node:sqlite";
import type { Migration } from "../store/mod.ts";
import { utf8Chunks } from "./_utf8.ts";

/** How long a stored result stays retrievable: 24 hours, fixed. */
export const RETENTION_MS = 24 * 3600 * 1000;

/**
 * The byte size of every stored chunk but a result's last: one full
 * `get_result` page, so an aligned page reads one chunk and any page at most
 * two. Measured (scripts/bench/spool_bench.ts): a page costs ~4x less than with
 * 64 KiB chunks, and spooling is no slower. Each result records its own chunk
 * size, so changing this needs no migration.
 */
export const CHUNK_BYTES = 8 * 1024;

/**
 * Bytes {@linkcode Spool.putBytes} writes per transaction before it yields to the event loop, so that a
 * big result being stored delays other calls by one slice, not by the whole write (over a second for
 * 100 MB). A slice holds the loop for its inserts plus, when its commit crosses SQLite's WAL
 * autocheckpoint (1,000 pages), a checkpoint with two fsyncs. Measured (2026-12-02, `spool_bench`, 100 MB
 * in 64 KiB parts): the longest hold is 22-31 ms at any slice size from 128 KiB to 1 MiB (the checkpoint),
 * while the whole put takes 1.0 s with 1 MiB slices, 1.3 s with 512 KiB, 1.8 s with 256 KiB and 2.8 s with
 * 128 KiB (more commits). In a gateway under CPU contention the inserts of a 1 MiB slice took another
 * ~25 ms (holds of 40-70 ms); 512 KiB halves that at a modest cost. The commits keep the store's
 * durability (WAL, `synchronous = NORMAL`): each survives a crash of the gateway
 * (tests/spool/spool_test.ts), and a receipt is sent only after the last one, so an acknowledged result
 * is never lost to a crash of the process (a power loss can take the commits since the last checkpoint,
 * as for every table of the store).
 */
export const PUT_SLICE_BYTES = 512 * 1024;

/** How often {@linkcode Spool.maybePrune} actually prunes. */
export const PRUNE_INTERVAL_MS = 3600 * 1000;

/**
 * The spool's schema. Chunks are keyed `(call_id, seq)` in a WITHOUT ROWID
 * table, so a page read is one range scan of the clustered key. Each result
 * records its own `chunk_bytes`, so a later change of {@linkcode CHUNK_BYTES}
 * still reads older rows.
 */
export const spoolMigrations: Migration[] = [{
  id: "spool/1",
  sql: `
    CREATE TABLE spool_results (
      call_id TEXT PRIMARY KEY,
      server TEXT NOT NULL,
      tool TEXT NOT NULL,
      namespaced TEXT NOT NULL,
      agent TEXT,
      total_bytes INTEGER NOT NULL,
      chunk_bytes INTEGER NOT NULL,
      created_at INTEGER NOT NULL,
      expires_at INTEGER NOT NULL
    );
    CREATE INDEX spool_results_expires_at ON spool_results (expires_at);
    CREATE TABLE spool_chunks (
      call_id TEXT NOT NULL,
      seq INTEGER NOT NULL,
      data BLOB NOT NULL,
      PRIMARY KEY (call_id, seq)
    ) WITHOUT ROWID;
  `,
}];

/** What the spool knows about one stored result. Times are ms since the epoch. */
export interface StoredMeta {
  /** 32 lowercase hex digits (128 random bits). */
  callId: string;
  server: string;
  /** The downstream wire name of the tool. */
  tool: string;
  /** The public `server__tool` name. */
  namespaced: string;
  /** The agent whose call produced the result, when the gateway runs for one. */
  agent?: string;
  /** UTF-8 byte length of the stored payload. */
  totalBytes: number;
  createdAt: number;
  expiresAt: number;
}

/** Where a stored result came from; the input of {@linkcode Spool.put}. */
export interface PutMeta {
  server: string;
  tool: string;
  namespaced: string;
  agent?: string;
}

/** Options for {@linkcode Spool}. */
export interface SpoolOptions {
  /** The current time in ms since the epoch; injectable for tests. @default Date.now */
  clock?: () => number;
  /** Bytes per stored chunk; each result records its own, so readers need not agree. @default CHUNK_BYTES */
  chunkBytes?: number;
  /** Bytes {@linkcode Spool.putBytes} writes per transaction (benchmarks compare sizes). @default PUT_SLICE_BYTES */
  sliceBytes?: number;
}

/** One page of stored bytes, as {@linkcode Spool.readPage} returns it. */
export interface SpoolPage {
  bytes: Uint8Array;
  totalBytes: number;
}

/** A failure to write a result into the spool. The gateway catches it and returns the full result (fail open). */
export class SpoolWriteError extends Error {
  override name = "SpoolWriteError";
}

/** A `spool_results` row. @internal */
export interface ResultRow {
  call_id: string;
  server: string;
  tool: string;
  namespaced: string;
  agent: string | null;
  total_bytes: number;
  chunk_bytes: number;
  created_at: number;
  expires_at: number;
}

const CALL_ID_PATTERN = /^[0-9a-f]{32}$/;

/** True when `value` has the shape of a callId: 32 lowercase hex digits. */
export function isCallId(value: unknown): value is string {
  return typeof value === "string" && CALL_ID_PATTERN.test(value);
}

/** A `spool_results` row as {@linkcode StoredMeta}. @internal */
export function toMeta(row: ResultRow): StoredMeta {
  const meta: StoredMeta = {
    callId: row.call_id,
    server: row.server,
    tool: row.tool,
    namespaced: row.namespaced,
    totalBytes: row.total_bytes,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
  };
  if (row.agent !== null) meta.agent = row.agent;
  return meta;
}

/**
 * Where oversized results are stored and paged: the local {@linkcode Spool} (SQLite, synchronous) or the
 * shared PostgreSQL one (`PgSpool`). Callers await every answer.
 */
export interface ResultStore {
  /** @throws {SpoolWriteError} when the write fails (the caller passes the result through whole) */
  put(payload: string, meta: PutMeta): StoredMeta | Promise<StoredMeta>;
  /**
   * Stores the concatenation of `parts` (UTF-8 bytes as they arrived) without joining them; yields to the
   * event loop while it writes. Optional: a store without it takes the text through `put`.
   *
   * @throws {SpoolWriteError} when the write fails
   */
  putBytes?(parts: Iterable<Uint8Array>, meta: PutMeta): Promise<StoredMeta>;
  meta(callId: string): StoredMeta | undefined | Promise<StoredMeta | undefined>;
  readPage(
    callId: string,
    cursor: number,
    pageBytes: number,
  ):
    | SpoolPage
    | "unavailable"
    | "cursor_out_of_range"
    | Promise<SpoolPage | "unavailable" | "cursor_out_of_range">;
  /** Housekeeping at most hourly; may throw (callers log and go on). */
  maybePrune(): void | Promise<void>;
}

/** Checks the arguments of a page read. @internal */
export function checkPageArgs(cursor: number, pageBytes: number): void {
  if (!Number.isSafeInteger(cursor) || cursor < 0) {
    throw new RangeError(`Cannot read the page: cursor must be a non-negative integer, got ${cursor}`);
  }
  if (!Number.isSafeInteger(pageBytes) || pageBytes < 1) {
    throw new RangeError(`Cannot read the page: pageBytes must be a positive integer, got ${pageBytes}`);
  }
}

/**
 * Copies the bytes of `[cursor, end)` out of the chunks that overlap it (each `size` bytes but the last);
 * `undefined` when a chunk is missing (a concurrent prune). @internal
 */
export function assemblePage(
  chunks: readonly { seq: number; data: Uint8Array }[],
  cursor: number,
  end: number,
  size: number,
): Uint8Array | undefined {
  const bytes = new Uint8Array(end - cursor);
  let copied = 0;
  for (const chunk of chunks) {
    const chunkStart = chunk.seq * size;
    const from = Math.max(cursor, chunkStart) - chunkStart;
    const to = Math.min(end, chunkStart + chunk.data.length) - chunkStart;
    if (chunkStart + from - cursor !== copied || to <= from) break;
    bytes.set(chunk.data.subarray(from, to), copied);
    copied += to - from;
  }
  return copied === bytes.length ? bytes : undefined;
}

/** What a put answers: the new result's metadata (expiring after {@linkcode RETENTION_MS}). @internal */
export function storedMeta(callId: string, meta: PutMeta, totalBytes: number, now: number): StoredMeta {
  const stored: StoredMeta = {
    callId,
    server: meta.server,
    tool: meta.tool,
    namespaced: meta.namespaced,
    totalBytes,
    createdAt: now,
    expiresAt: now + RETENTION_MS,
  };
  if (meta.agent !== undefined) stored.agent = meta.agent;
  return stored;
}

/** A new callId: 128 random bits as 32 lowercase hex digits. @internal */
export function newCallId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  let hex = "";
  for (const byte of bytes) hex += byte.toString(16).padStart(2, "0");
  return hex;
}

/**
 * The chunked result store over a database opened with {@linkcode spoolMigrations}
 * (see `openStore`). Several processes may share the file: writes take the
 * write lock up front (`BEGIN IMMEDIATE`) and wait out the busy timeout.
 */
export class Spool implements ResultStore {
  readonly #db: DatabaseSync;
  readonly #clock: () => number;
  readonly #chunkBytes: number;
  readonly #sliceBytes: number;
  readonly #selectMeta: StatementSync;
  readonly #selectChunks: StatementSync;
  readonly #insertResult: StatementSync;
  readonly #insertChunk: StatementSync;
  readonly #deleteExpiredChunks: StatementSync;
  readonly #deleteExpiredResults: StatementSync;
  readonly #deleteChunks: StatementSync;
  readonly #deleteChunkRange: StatementSync;
  #lastPruneAt = Number.NEGATIVE_INFINITY;

  constructor(db: DatabaseSync, options: SpoolOptions = {}) {
    this.#db = db;
    this.#clock = options.clock ?? Date.now;
    this.#chunkBytes = options.chunkBytes ?? CHUNK_BYTES;
    if (!Number.isSafeInteger(this.#chunkBytes) || this.#chunkBytes < 1) {
      throw new RangeError(`chunkBytes must be a positive integer, got ${options.chunkBytes}`);
    }
    this.#sliceBytes = options.sliceBytes ?? PUT_SLICE_BYTES;
    if (!Number.isSafeInteger(this.#sliceBytes) || this.#sliceBytes < 1) {
      throw new RangeError(`sliceBytes must be a positive integer, got ${options.sliceBytes}`);
    }
    this.#selectMeta = db.prepare(
      "SELECT call_id, server, tool, namespaced, agent, total_bytes, chunk_bytes, created_at, expires_at " +
        "FROM spool_results WHERE call_id = ? AND expires_at > ?",
    );
    this.#selectChunks = db.prepare(
      "SELECT seq, data FROM spool_chunks WHERE call_id = ? AND seq BETWEEN ? AND ? ORDER BY seq",
    );
    this.#insertResult = db.prepare(
      "INSERT INTO spool_results " +
        "(call_id, server, tool, namespaced, agent, total_bytes, chunk_bytes, created_at, expires_at) " +
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    );
    this.#insertChunk = db.prepare("INSERT INTO spool_chunks (call_id, seq, data) VALUES (?, ?, ?)");
    this.#deleteExpiredChunks = db.prepare(
      "DELETE FROM spool_chunks WHERE call_id IN (SELECT call_id FROM spool_results WHERE expires_at <= ?)",
    );
    this.#deleteExpiredResults = db.prepare("DELETE FROM spool_results WHERE expires_at <= ?");
    this.#deleteChunks = db.prepare("DELETE FROM spool_chunks WHERE call_id = ?");
    this.#deleteChunkRange = db.prepare("DELETE FROM spool_chunks WHERE call_id = ? AND seq BETWEEN ? AND ?");
  }

  /**
   * Stores `payload` (its UTF-8 bytes) under a new callId, in one transaction
   * that also prunes expired results. Encodes one chunk at a time, so memory
   * beyond the payload string stays at one chunk.
   *
   * @throws {SpoolWriteError} when the write fails (read-only file, disk full, lock held past the busy timeout)
   */
  put(payload: string, meta: PutMeta): StoredMeta {
    const now = this.#clock();
    const callId = newCallId();
    let totalBytes = 0;
    try {
      this.#db.exec("BEGIN IMMEDIATE");
      try {
        this.#prune(now);
        let seq = 0;
        for (const chunk of utf8Chunks(payload, this.#chunkBytes)) {
          this.#insertChunk.run(callId, seq++, chunk);
          totalBytes += chunk.length;
        }
        this.#recordResult(callId, meta, totalBytes, this.#chunkBytes, now);
        this.#db.exec("COMMIT");
      } catch (error) {
        if (this.#db.isTransaction) this.#db.exec("ROLLBACK");
        throw error;
      }
    } catch (error) {
      throw new SpoolWriteError(
        `Cannot store the ${meta.namespaced} result in the spool: ${(error as Error).message}`,
        { cause: error },
      );
    }
    this.#lastPruneAt = now;
    return storedMeta(callId, meta, totalBytes, now);
  }

  /**
   * Stores the concatenation of `parts` (UTF-8 bytes, as they arrived: never joined into one buffer)
   * under a new callId, in transactions of {@linkcode PUT_SLICE_BYTES} (`sliceBytes`) with a yield to the event loop
   * between them. The result becomes visible (and prunable) only with the last one, which also prunes
   * expired results; on failure the chunks already written are deleted.
   *
   * @throws {SpoolWriteError} when the write fails (read-only file, disk full, lock held past the busy timeout)
   */
  async putBytes(parts: Iterable<Uint8Array>, meta: PutMeta): Promise<StoredMeta> {
    const now = this.#clock();
    const callId = newCallId();
    const size = this.#chunkBytes;
    const chunker = new Chunker(size);
    let seq = 0;
    let totalBytes = 0;
    let inSlice = 0;
    let committed = false;
    const db = this.#db;
    const insert = (chunk: Uint8Array) => {
      if (!db.isTransaction) db.exec("BEGIN IMMEDIATE");
      this.#insertChunk.run(callId, seq++, chunk);
      totalBytes += chunk.length;
      inSlice += chunk.length;
    };
    try {
      for (const chunk of chunker.push(parts)) {
        insert(chunk);
        if (inSlice >= this.#sliceBytes) {
          db.exec("COMMIT");
          committed = true;
          inSlice = 0;
          await new Promise((resolve) => setTimeout(resolve, 0));
        }
      }
      const rest = chunker.rest();
      if (rest) insert(rest);
      if (!db.isTransaction) db.exec("BEGIN IMMEDIATE");
      this.#prune(now);
      this.#recordResult(callId, meta, totalBytes, size, now);
      db.exec("COMMIT");
    } catch (error) {
      try {
        if (db.isTransaction) db.exec("ROLLBACK");
        if (committed) this.#deleteChunks.run(callId);
      } catch {
        // the chunks of an unlisted callId are never read; a later put does not reuse it
      }
      throw new SpoolWriteError(
        `Cannot store the ${meta.namespaced} result in the spool: ${(error as Error).message}`,
        { cause: error },
      );
    }
    this.#lastPruneAt = now;
    return storedMeta(callId, meta, totalBytes, now);
  }

  /**
   * A writer that stores a result as its bytes arrive (see {@linkcode SpoolWriter}): the bytes are
   * written in the same slices as {@linkcode Spool.putBytes}, so the caller can let go of each slice once
   * it is committed rather than hold the whole result until it is complete. With a `target`, the result
   * is not listed here: once written, it is published there (this spool is then the scratch space of a
   * store that cannot be read back synchronously, see pg_spool.ts).
   */
  writer(target?: WriterTarget): SpoolWriter {
    return new SpoolWriter(target?.store ?? this, {
      db: this.#db,
      callId: newCallId(),
      chunkBytes: this.#chunkBytes,
      sliceBytes: this.#sliceBytes,
      insertChunk: this.#insertChunk,
      selectChunks: this.#selectChunks,
      deleteChunks: this.#deleteChunks,
      deleteChunkRange: this.#deleteChunkRange,
      publish: target?.publish,
      finish: (callId, meta, totalBytes) => {
        const now = this.#clock();
        this.#prune(now);
        this.#recordResult(callId, meta, totalBytes, this.#chunkBytes, now);
        this.#lastPruneAt = now;
        return storedMeta(callId, meta, totalBytes, now);
      },
    });
  }

  /** The stored result's metadata; `undefined` when the callId is unknown, malformed or expired. */
  meta(callId: string): StoredMeta | undefined {
    const row = this.#row(callId);
    return row ? toMeta(row) : undefined;
  }

  /**
   * Reads up to `pageBytes` bytes starting at byte `cursor`, touching only the
   * chunks that range overlaps. `cursor_out_of_range` when `cursor > totalBytes`,
   * or `cursor === totalBytes` for a non-empty result.
   *
   * @throws {RangeError} when `cursor` is not a non-negative integer or `pageBytes` not a positive one
   */
  readPage(
    callId: string,
    cursor: number,
    pageBytes: number,
  ): SpoolPage | "unavailable" | "cursor_out_of_range" {
    checkPageArgs(cursor, pageBytes);
    const row = this.#row(callId);
    if (!row) return "unavailable";
    const totalBytes = row.total_bytes;
    if (cursor > totalBytes || (cursor === totalBytes && totalBytes > 0)) return "cursor_out_of_range";
    const end = Math.min(totalBytes, cursor + pageBytes);
    if (end === cursor) return { bytes: new Uint8Array(0), totalBytes };
    const size = row.chunk_bytes;
    // all(), not iterate(): a page spans at most a few chunks, and no statement is left mid-scan.
    const chunks = this.#selectChunks.all(
      callId,
      Math.floor(cursor / size),
      Math.floor((end - 1) / size),
    ) as {
      seq: number;
      data: Uint8Array;
    }[];
    const bytes = assemblePage(chunks, cursor, end, size);
    // A concurrent prune in another process can remove the chunks between the two reads.
    return bytes ? { bytes, totalBytes } : "unavailable";
  }

  /** Deletes every expired result now; returns how many results were removed. */
  prune(): number {
    const now = this.#clock();
    this.#db.exec("BEGIN IMMEDIATE");
    try {
      const removed = this.#prune(now);
      this.#db.exec("COMMIT");
      this.#lastPruneAt = now;
      return removed;
    } catch (error) {
      if (this.#db.isTransaction) this.#db.exec("ROLLBACK");
      throw error;
    }
  }

  /**
   * Prunes when the last prune by this instance (or insert) is at least an hour
   * old by the clock. A failed attempt also counts, so a locked or read-only
   * store is retried hourly, not on every call.
   *
   * @throws the database error when the prune fails (housekeeping: callers may log it and go on)
   */
  maybePrune(): void {
    const now = this.#clock();
    if (now - this.#lastPruneAt < PRUNE_INTERVAL_MS) return;
    this.#lastPruneAt = now;
    this.prune();
  }

  #row(callId: string): ResultRow | undefined {
    if (!isCallId(callId)) return undefined;
    return this.#selectMeta.get(callId, this.#clock()) as ResultRow | undefined;
  }

  /** The row that lists a stored result (its chunks written in the same transaction). */
  #recordResult(callId: string, meta: PutMeta, totalBytes: number, chunkBytes: number, now: number): void {
    this.#insertResult.run(
      callId,
      meta.server,
      meta.tool,
      meta.namespaced,
      meta.agent ?? null,
      totalBytes,
      chunkBytes,
      now,
      now + RETENTION_MS,
    );
  }
  #prune(now: number): number {
    this.#deleteExpiredChunks.run(now);
    return Number(this.#deleteExpiredResults.run(now).changes);
  }
}

/**
 * Where a {@linkcode Spool.writer}'s result goes when it is not listed in that spool: `store` is the
 * writer's {@linkcode SpoolWriter.store}; `publish` stores the result's chunks (read back in order, a few
 * at a time) and answers its metadata. The written chunks are deleted after, published or not.
 */
export interface WriterTarget {
  store: ResultStore;
  publish(chunks: Iterable<Uint8Array>, meta: PutMeta, totalBytes: number): Promise<StoredMeta>;
}

/** Chunks a {@linkcode SpoolWriter} reads back at a time when it publishes its result. */
const PUBLISH_READ_CHUNKS = 32;
/** Chunks a {@linkcode SpoolWriter} deletes at a time once its result is published (1 MiB). */
const DELETE_SLICE_CHUNKS = 128;

/** What a {@linkcode SpoolWriter} uses of its {@linkcode Spool}. @internal */
interface WriterParts {
  db: DatabaseSync;
  callId: string;
  chunkBytes: number;
  sliceBytes: number;
  insertChunk: StatementSync;
  selectChunks: StatementSync;
  deleteChunks: StatementSync;
  deleteChunkRange: StatementSync;
  /** Lists the result (in the open transaction) and answers its metadata. */
  finish(callId: string, meta: PutMeta, totalBytes: number): StoredMeta;
  /** When set, the result is published there instead of listed (see {@linkcode WriterTarget}). */
  publish?: WriterTarget["publish"];
}

/**
 * A result stored as it arrives, from {@linkcode Spool.writer}: {@linkcode SpoolWriter.write} queues
 * bytes (views, not copies: the caller must not reuse their buffers) and writes them in transactions of
 * `sliceBytes` (one synchronous run each, never open across an await, so other writers of the connection
 * are not caught in it), yielding to the event loop after each; {@linkcode SpoolWriter.committed} bytes
 * are then durable and readable with {@linkcode SpoolWriter.read}. {@linkcode SpoolWriter.finish} writes
 * the rest and lists the result (it is invisible until then, like a {@linkcode Spool.putBytes} under
 * way); {@linkcode SpoolWriter.abort} deletes what was written.
 */
export class SpoolWriter {
  /** The store it writes into. */
  readonly store: ResultStore;
  readonly #p: WriterParts;
  #queue: Uint8Array[] = [];
  #queued = 0;
  /** Cuts what is written into chunks; a chunk's bytes that did not fill it wait there, copied. */
  #chunker: Chunker;
  #seq = 0;
  #committed = 0;
  #given = 0;
  #done = false;

  constructor(store: ResultStore, parts: WriterParts) {
    this.store = store;
    this.#p = parts;
    this.#chunker = new Chunker(parts.chunkBytes);
  }

  /** Bytes given to {@linkcode SpoolWriter.write} so far. */
  get given(): number {
    return this.#given;
  }

  /** Bytes committed so far (a prefix of those given): they may be dropped by the caller and read back. */
  get committed(): number {
    return this.#committed;
  }

  /**
   * Queues `parts`; when a slice's worth is queued, writes it and yields to the event loop.
   *
   * @throws {SpoolWriteError} when the write fails (nothing of that slice is committed)
   */
  async write(parts: Iterable<Uint8Array>): Promise<void> {
    this.queue(parts);
    await this.drain();
  }

  /** When a slice's worth is queued: writes it and yields to the event loop. @throws {SpoolWriteError} */
  async drain(): Promise<void> {
    if (this.#queued < this.#p.sliceBytes) return;
    this.#flush(false);
    await new Promise((resolve) => setTimeout(resolve, 0));
  }

  /** Queues `parts` (views: their buffers must not be reused) without writing. */
  queue(parts: Iterable<Uint8Array>): void {
    this.#enqueue(parts);
  }

  #enqueue(parts: Iterable<Uint8Array>): void {
    if (this.#done) throw new SpoolWriteError("The spool writer is finished");
    for (const part of parts) {
      if (!part.length) continue;
      this.#queue.push(part);
      this.#queued += part.length;
      this.#given += part.length;
    }
  }

  /** Writes the queue (all of it when `last`, else its whole chunks) in one transaction. */
  #flush(last: boolean, then?: () => void): void {
    const { db, callId, insertChunk } = this.#p;
    let seq = this.#seq;
    let written = 0;
    try {
      db.exec("BEGIN IMMEDIATE");
      try {
        for (const chunk of this.#chunker.push(this.#queue)) {
          insertChunk.run(callId, seq++, chunk);
          written += chunk.length;
        }
        const rest = last ? this.#chunker.rest() : undefined;
        if (rest) {
          insertChunk.run(callId, seq++, rest);
          written += rest.length;
        }
        then?.();
        db.exec("COMMIT");
      } catch (error) {
        if (db.isTransaction) db.exec("ROLLBACK");
        throw error;
      }
    } catch (error) {
      // The carry may hold bytes of the failed slice: this writer cannot go on (the caller aborts it).
      this.#done = true;
      throw new SpoolWriteError(`Cannot store the result in the spool: ${(error as Error).message}`, {
        cause: error,
      });
    }
    // The committed prefix: the carried bytes are copied, so the queue's views are no longer needed.
    this.#committed += written;
    this.#seq = seq;
    this.#queue = [];
    this.#queued = 0;
  }

  /**
   * Reads committed bytes `[from, to)` back.
   *
   * @throws {RangeError} when the range is not committed; {@linkcode SpoolWriteError} when the chunks are gone
   */
  read(from: number, to: number): Uint8Array {
    if (from < 0 || to > this.#committed || to < from) {
      throw new RangeError(`Cannot read bytes ${from}-${to}: ${this.#committed} are committed`);
    }
    if (to === from) return new Uint8Array(0);
    const size = this.#p.chunkBytes;
    const chunks = this.#p.selectChunks.all(
      this.#p.callId,
      Math.floor(from / size),
      Math.floor((to - 1) / size),
    ) as { seq: number; data: Uint8Array }[];
    const bytes = assemblePage(chunks, from, to, size);
    if (!bytes) throw new SpoolWriteError(`The spooled bytes ${from}-${to} are gone`);
    return bytes;
  }

  /**
   * Writes `parts` and whatever is queued, in slices that yield, and lists the result under `meta`.
   *
   * @throws {SpoolWriteError} when the write fails (the caller aborts the writer)
   */
  async finish(parts: Iterable<Uint8Array>, meta: PutMeta): Promise<StoredMeta> {
    this.#enqueue(parts);
    // Whole slices first, each in its own transaction, as putBytes writes them.
    while (this.#queued > this.#p.sliceBytes) {
      const queue = this.#queue;
      let take = 0;
      let i = 0;
      while (i < queue.length && take + queue[i]!.length <= this.#p.sliceBytes) take += queue[i++]!.length;
      if (i === 0) i = 1;
      const rest = queue.slice(i);
      const restBytes = rest.reduce((n, p) => n + p.length, 0);
      this.#queue = queue.slice(0, i);
      this.#queued -= restBytes;
      this.#flush(false);
      this.#queue = rest;
      this.#queued = restBytes;
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
    const total = this.#given;
    const publish = this.#p.publish;
    if (publish) {
      this.#flush(true);
      this.#done = true;
      // Published: the scratch chunks go, a slice at a time. Not: they stay for the caller to read back
      // (then abort).
      const stored = await publish(this.#chunks(), meta, total);
      this.deleted = this.#deleteSliced();
      return stored;
    }
    let stored: StoredMeta | undefined;
    this.#flush(true, () => stored = this.#p.finish(this.#p.callId, meta, total));
    this.#done = true;
    return stored!;
  }

  /** Settles once a published result's scratch chunks are deleted (see {@linkcode WriterTarget}). */
  deleted?: Promise<void>;

  /**
   * Deletes the chunks written, {@linkcode DELETE_SLICE_CHUNKS} at a time, yielding between: deleting a
   * 100 MB result's rows at once held the event loop for ~80 ms.
   */
  async #deleteSliced(): Promise<void> {
    const seqs = this.#seq;
    this.#seq = 0;
    for (let seq = 0; seq < seqs; seq += DELETE_SLICE_CHUNKS) {
      try {
        this.#p.deleteChunkRange.run(this.#p.callId, seq, seq + DELETE_SLICE_CHUNKS - 1);
      } catch {
        return; // the chunks of an unlisted callId are never read
      }
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
  }

  /** The written chunks in order, read back {@linkcode PUBLISH_READ_CHUNKS} at a time. */
  *#chunks(): Generator<Uint8Array> {
    for (let seq = 0; seq < this.#seq; seq += PUBLISH_READ_CHUNKS) {
      const rows = this.#p.selectChunks.all(this.#p.callId, seq, seq + PUBLISH_READ_CHUNKS - 1) as {
        seq: number;
        data: Uint8Array;
      }[];
      if (rows.length !== Math.min(PUBLISH_READ_CHUNKS, this.#seq - seq)) {
        throw new SpoolWriteError(`The spooled chunks from ${seq} on are gone`);
      }
      for (const row of rows) yield row.data;
    }
  }

  /** Deletes the chunks written (the result was passed whole or failed); never throws. */
  abort(): void {
    this.#done = true;
    this.#queue = [];
    this.#queued = 0;
    try {
      if (this.#seq) this.#p.deleteChunks.run(this.#p.callId);
    } catch {
      // the chunks of an unlisted callId are never read
    }
  }
}
