/**
 * Call records: the `calls` table and a {@linkcode Recorder} that writes to it
 * off the call path, in batches, without ever failing or blocking a call.
 *
 * @module
 */
import type { DatabaseSync, Migration } from "../store/mod.ts";

/** Schema for call records. Argument values are never stored, only sizes. */
export const intelligenceMigrations: Migration[] = [
  {
    id: "intelligence/1",
    sql: `
      CREATE TABLE calls (
        id INTEGER PRIMARY KEY,
        ts INTEGER NOT NULL,
        server TEXT NOT NULL,
        tool TEXT NOT NULL,
        namespaced TEXT NOT NULL,
        duration_ms INTEGER NOT NULL,
        ok INTEGER NOT NULL,
        error TEXT,
        args_bytes INTEGER NOT NULL,
        result_bytes INTEGER NOT NULL,
        est_tokens INTEGER NOT NULL,
        agent TEXT,
        via TEXT NOT NULL,
        spooled INTEGER NOT NULL DEFAULT 0,
        returned_bytes INTEGER NOT NULL DEFAULT 0
      );
      CREATE INDEX calls_ts ON calls (ts);
      CREATE INDEX calls_server ON calls (server);
      CREATE INDEX calls_agent ON calls (agent);
    `,
  },
  {
    // A call made by code (run_code) names its run; the run_code call itself carries the same id.
    id: "intelligence/2",
    sql: `ALTER TABLE calls ADD COLUMN run_id TEXT;`,
  },
];

/** How a downstream call reached the gateway. */
export type CallVia = "mount" | "call_tool" | "detach" | "code";

/** One finished downstream call, as the hub's result path reports it. */
export interface CallRecord {
  /** When the call started, ms since the epoch. */
  ts: number;
  server: string;
  /** The downstream wire name. */
  tool: string;
  /** The public `server__tool` name. */
  namespaced: string;
  durationMs: number;
  /** False on a transport error or an `isError` result. */
  ok: boolean;
  /** Stored capped at {@linkcode MAX_ERROR_BYTES} bytes. */
  error?: string;
  argsBytes: number;
  resultBytes: number;
  agent?: string;
  via: CallVia;
  /** The result went to the spool and the agent got a receipt. */
  spooled: boolean;
  /** Bytes the agent actually received (the receipt when spooled). */
  returnedBytes: number;
  /** The run_code call this call belongs to (its own record carries the id too). */
  runId?: string;
}

/** Options for {@linkcode Recorder}. */
export interface RecorderOptions {
  /** Where the (rare, deduplicated) store warnings go. @default no output */
  warn?: (message: string) => void;
  /** `false` (config `record: false`) makes the recorder a no-op. @default true */
  enabled?: boolean;
  /** Records kept in memory while the store is unavailable; the oldest go first. @default 10000 */
  maxQueue?: number;
  /** Wait before retrying after a store error. @default 1000 */
  retryMs?: number;
  /** How long records gather before one transaction writes them all. @default 50 */
  batchMs?: number;
}

/** The longest error text stored, in UTF-8 bytes. */
export const MAX_ERROR_BYTES = 512;

/** One call record as the `calls` columns of {@linkcode INSERT_COLUMNS}, in that order. */
export type RecordRow = [
  ts: number,
  server: string,
  tool: string,
  namespaced: string,
  durationMs: number,
  ok: number,
  error: string | null,
  argsBytes: number,
  resultBytes: number,
  estTokens: number,
  agent: string | null,
  via: string,
  spooled: number,
  returnedBytes: number,
  runId: string | null,
];

/** The `calls` columns a {@linkcode RecordRow} fills, in order. */
export const INSERT_COLUMNS = [
  "ts",
  "server",
  "tool",
  "namespaced",
  "duration_ms",
  "ok",
  "error",
  "args_bytes",
  "result_bytes",
  "est_tokens",
  "agent",
  "via",
  "spooled",
  "returned_bytes",
  "run_id",
] as const;

/**
 * Where the {@linkcode Recorder} writes a batch: another store than the local SQLite file (the shared
 * PostgreSQL one). A rejected write keeps the batch queued for a retry.
 */
export interface RecordSink {
  write(rows: readonly RecordRow[]): Promise<void>;
}

const INSERT_SQL = `INSERT INTO calls (ts, server, tool, namespaced, duration_ms, ok, error, args_bytes,
  result_bytes, est_tokens, agent, via, spooled, returned_bytes, run_id)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

function count(value: number): number {
  return Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}

/** Cuts `text` to at most `maxBytes` UTF-8 bytes without splitting a character. */
export function capUtf8(text: string, maxBytes: number): string {
  if (text.length * 3 <= maxBytes) return text;
  const buffer = new Uint8Array(maxBytes);
  // encodeInto writes whole characters only, so `read` lands on a boundary.
  const { read } = new TextEncoder().encodeInto(text, buffer);
  return text.slice(0, read);
}

function toRow(rec: CallRecord): RecordRow {
  const argsBytes = count(rec.argsBytes);
  const resultBytes = count(rec.resultBytes);
  return [
    Number.isFinite(rec.ts) ? Math.floor(rec.ts) : Date.now(),
    String(rec.server),
    String(rec.tool),
    String(rec.namespaced),
    count(rec.durationMs),
    rec.ok ? 1 : 0,
    rec.error === undefined || rec.error === null ? null : capUtf8(String(rec.error), MAX_ERROR_BYTES),
    argsBytes,
    resultBytes,
    // Tokens that reached the agent: a spooled result counts as the receipt it got; a call made by code
    // (run_code) none, its arguments and result stayed in the sandbox (the run_code call counts its own).
    rec.via === "code"
      ? 0
      : Math.floor((argsBytes + (rec.spooled ? count(rec.returnedBytes) : resultBytes)) / 4),
    rec.agent ? String(rec.agent) : null,
    String(rec.via),
    rec.spooled ? 1 : 0,
    count(rec.returnedBytes),
    rec.runId ? String(rec.runId) : null,
  ];
}

/**
 * Records calls without slowing them: {@linkcode Recorder.record} only queues;
 * a later tick writes the whole queue in one transaction. A store failure warns
 * once per outage and keeps the records queued (bounded) for a later retry.
 * The recorder never closes the database it was given.
 */
export class Recorder {
  #db: DatabaseSync | undefined;
  #warn: (message: string) => void;
  #enabled: boolean;
  #maxQueue: number;
  #retryMs: number;
  #queue: RecordRow[] = [];
  #sink: RecordSink | undefined;
  #writing: Promise<void> | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #failing = false;
  #dropWarned = false;
  #closed = false;
  #batchMs: number;
  #insert?: ReturnType<DatabaseSync["prepare"]>;

  /**
   * @param db the open store (a local database, or a sink for another store); `undefined` makes the
   *   recorder a no-op
   * @param options warnings, on/off, queue bound
   */
  constructor(db: DatabaseSync | RecordSink | undefined, options: RecorderOptions = {}) {
    if (db && typeof (db as RecordSink).write === "function") this.#sink = db as RecordSink;
    else this.#db = db as DatabaseSync | undefined;
    this.#warn = options.warn ?? (() => {});
    this.#enabled = (options.enabled ?? true) && db !== undefined;
    this.#maxQueue = Math.max(1, Math.floor(options.maxQueue ?? 10_000));
    this.#retryMs = Math.max(0, options.retryMs ?? 1000);
    this.#batchMs = Math.max(0, options.batchMs ?? 50);
  }

  /** Records queued and not yet written. */
  get pending(): number {
    return this.#queue.length;
  }

  /** Queues one call record; never throws, never touches the store synchronously. */
  record(rec: CallRecord): void {
    if (!this.#enabled || this.#closed) return;
    try {
      this.#queue.push(toRow(rec));
      if (this.#queue.length > this.#maxQueue) {
        this.#queue.splice(0, this.#queue.length - this.#maxQueue);
        if (!this.#dropWarned) {
          this.#dropWarned = true;
          this.#say(
            `Call records are being dropped: the store is unavailable and more than ${this.#maxQueue} are waiting; the oldest go first`,
          );
        }
      }
      this.#schedule(this.#batchMs);
    } catch (error) {
      this.#say(`Cannot record a call to "${rec?.namespaced}": ${(error as Error)?.message ?? error}`);
    }
  }

  /** Writes everything queued now (shutdown, tests). Resolves even if the store fails. */
  async flush(): Promise<void> {
    this.#clearTimer();
    if (!this.#sink) return this.#drain();
    // A batch in flight first, then whatever queued meanwhile.
    await this.#writing;
    this.#clearTimer();
    this.#drainSink();
    await this.#writing;
  }

  /** Flushes, then stops recording; later {@linkcode Recorder.record} calls are ignored. */
  async close(): Promise<void> {
    if (this.#closed) return;
    await this.flush();
    this.#clearTimer();
    this.#closed = true;
    if (this.#queue.length > 0) {
      this.#say(`${this.#queue.length} call records were not saved: the store is unavailable`);
      this.#queue = [];
    }
  }

  #say(message: string): void {
    try {
      this.#warn(message);
    } catch {
      // a broken logger must not break a call
    }
  }

  #clearTimer(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #schedule(delay = 0): void {
    if (this.#timer !== undefined || this.#closed) return;
    const wait = this.#failing ? Math.max(delay, this.#retryMs) : delay;
    const timer = setTimeout(() => {
      this.#timer = undefined;
      if (this.#sink) this.#drainSink();
      else this.#drain();
    }, wait);
    // A retry must not keep the process alive; close() makes the last attempt.
    if (this.#failing) Deno.unrefTimer(timer);
    this.#timer = timer;
  }

  #drainSink(): void {
    const sink = this.#sink;
    if (!sink || this.#writing || this.#queue.length === 0) return;
    const batch = this.#queue;
    this.#queue = [];
    this.#writing = (async () => {
      try {
        await sink.write(batch);
        this.#failing = false;
        this.#dropWarned = false;
      } catch (error) {
        // Back to the front of the queue, within the bound (the oldest go first).
        this.#queue = [...batch, ...this.#queue].slice(-this.#maxQueue);
        if (!this.#failing) {
          this.#failing = true;
          this.#say(
            `Cannot record calls in the store: ${
              (error as Error)?.message ?? error
            }; calls still work and recording retries in the background`,
          );
        }
      } finally {
        this.#writing = undefined;
      }
      if (this.#queue.length > 0) this.#schedule(this.#failing ? this.#retryMs : this.#batchMs);
    })();
  }

  #drain(): void {
    const db = this.#db;
    if (!db || this.#queue.length === 0) return;
    try {
      // Another module's transaction on the shared connection: try again on the next tick.
      if (db.isOpen && db.isTransaction) return this.#schedule();
      const insert = this.#insert ??= db.prepare(INSERT_SQL);
      db.exec("BEGIN IMMEDIATE");
      try {
        for (const row of this.#queue) insert.run(...row);
        db.exec("COMMIT");
      } catch (error) {
        try {
          db.exec("ROLLBACK");
        } catch {
          // the failed COMMIT or closed connection already ended the transaction
        }
        throw error;
      }
      this.#queue = [];
      this.#failing = false;
      this.#dropWarned = false;
    } catch (error) {
      if (!this.#failing) {
        this.#failing = true;
        this.#say(
          `Cannot record calls in the store: ${
            (error as Error)?.message ?? error
          }; calls still work and recording retries in the background`,
        );
      }
      this.#schedule(this.#retryMs);
    }
  }
}
