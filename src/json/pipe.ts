/**
 * Writing messages into a pipe: one batch at a time, synchronously within the credit the reader renews,
 * joined into few writes, huge values serialized in slices.
 *
 * @module
 */
import type { Writable } from "node:stream";
import { concat } from "./raw_json.ts";
import { slicedStringifyApplies, stringifySteps } from "./sliced_json.ts";
import { Stepper } from "./slices.ts";
/** Where a {@linkcode CoalescingWriter} writes: a web stream's writer, or {@linkcode streamWriter}'s. */
export interface PipeWriter {
  /** Settles once `bytes` are written (or failed): the next write waits for it. */
  write(bytes: Uint8Array): Promise<void>;
  /** Closes the pipe once what was written before is. */
  close(): Promise<void>;
}

/**
 * A {@linkcode PipeWriter} on a Node stream (a child's stdin): each write settles when its bytes have
 * gone into the pipe, so a {@linkcode CoalescingWriter}, which waits for one batch before the next,
 * keeps no more than one batch in memory when the reader is slow.
 */
export function streamWriter(stream: Writable): PipeWriter {
  // Its failures settle the writes; the event alone must not be an uncaught error.
  stream.on("error", () => {});
  return {
    write: (bytes) =>
      new Promise<void>((resolve, reject) => {
        stream.write(bytes, (error) => error ? reject(error) : resolve());
      }),
    close: () =>
      new Promise<void>((resolve) => {
        if (stream.destroyed || stream.writableFinished) return resolve();
        // Whichever comes first: finished, or gone (the child closed its end).
        stream.once("close", () => resolve());
        stream.end(() => resolve());
      }),
  };
}

/** The largest batch written synchronously when a synchronous write is given (a pipe buffers 64 KiB). */
export const SYNC_WRITE_BYTES = 16 * 1024;

/**
 * Bytes written synchronously between two signs that the reader is alive (see
 * {@linkcode CoalescingWriter.readerAlive}); past it, writes are asynchronous until the next sign. Half a
 * pipe's 64 KiB buffer, so a reader that stops reading fills the pipe through the asynchronous path, which
 * waits off the event loop, rather than blocking the event loop in a synchronous write.
 */
export const SYNC_CREDIT_BYTES = 32 * 1024;

/** A synchronous write that took longer than this may have waited for the reader: no more until it reads. */
const SYNC_STALL_MS = 10;

/** Above this, a batch of bytes is written part by part rather than joined into one more copy. */
const JOIN_LIMIT = 1024 * 1024;

/**
 * Writes newline-delimited messages to a pipe, one write per tick: messages sent in the same tick (a
 * burst of progress notifications, eight results at once) go out as one buffer, in order. Each
 * returned promise settles when the write holding that message has.
 *
 * With a synchronous write (the gateway's stdout), a small batch is written synchronously, which is ~15×
 * cheaper than Deno's asynchronous stdout write, but only while that cannot block the event loop on a
 * reader that stopped reading: at most {@linkcode SYNC_CREDIT_BYTES} between two calls of
 * {@linkcode CoalescingWriter.readerAlive} (the host sent something), never while an asynchronous write
 * is pending (order is kept), and none after one that took long (it may have waited for the reader)
 * until the next sign of life.
 */
export class CoalescingWriter {
  #writer: PipeWriter;
  #encoder = new TextEncoder();
  #queue: Uint8Array[] = [];
  #queued = 0;
  #batch?: Promise<void>;
  #writes: Promise<void> = Promise.resolve();

  #writeSync?: (bytes: Uint8Array) => number;
  #credit = SYNC_CREDIT_BYTES;

  /**
   * @param writeSync a synchronous write to the same pipe, for batches of at most
   * {@linkcode SYNC_WRITE_BYTES} (they fit a pipe's buffer, so it returns at once while the reader reads)
   */
  constructor(writer: PipeWriter, writeSync?: (bytes: Uint8Array) => number) {
    this.#writer = writer;
    this.#writeSync = writeSync;
  }

  /**
   * The reader showed it is alive (the host sent a message): up to {@linkcode SYNC_CREDIT_BYTES} may be
   * written synchronously again.
   */
  readerAlive(): void {
    this.#credit = SYNC_CREDIT_BYTES;
  }

  /** True while small batches are written synchronously (see the class). */
  get synchronous(): boolean {
    return this.#writeSync !== undefined && this.#credit > 0;
  }

  /**
   * Queues one message (serialized here, so a later mutation of it does not change what is sent). A
   * huge one (an array of thousands, such as a 100,000-tool `tools/list` answer: see sliced_json.ts) is
   * serialized and encoded in slices that yield to the event loop, to the bytes `JSON.stringify` gives;
   * the caller must not change it until the returned promise settles. Messages queued meanwhile are
   * written after it, in order.
   */
  write(message: unknown): Promise<void> {
    if (!slicedStringifyApplies(message)) {
      return this.writeBytes([this.#encoder.encode(JSON.stringify(message) + "\n")]);
    }
    return this.#after(new Stepper(stringifySteps(message, "\n")).finishAsync());
  }

  /** Huge messages being serialized in slices, in order: what is queued meanwhile waits behind them. */
  #serializing?: Promise<void>;

  /** Queues `bytes` once they and every serialization before them are ready; settles when written. */
  #after(bytes: Promise<readonly Uint8Array[]>): Promise<void> {
    let written: Promise<void> | undefined;
    const queued = (this.#serializing ?? Promise.resolve()).then(() => bytes).then((parts) => {
      written = this.#enqueue(parts);
    });
    const tail = queued.catch(() => {});
    this.#serializing = tail;
    tail.then(() => {
      if (this.#serializing === tail) this.#serializing = undefined;
    });
    return queued.then(() => written);
  }

  /** Queues bytes already serialized, newline included (kept as views: the caller must not reuse them). */
  writeBytes(bytes: readonly Uint8Array[]): Promise<void> {
    return this.#serializing ? this.#after(Promise.resolve(bytes)) : this.#enqueue(bytes);
  }

  #enqueue(bytes: readonly Uint8Array[]): Promise<void> {
    for (const part of bytes) {
      this.#queue.push(part);
      this.#queued += part.length;
    }
    if (!this.#batch) {
      const batch = this.#writes.then(async () => {
        const parts = this.#queue;
        const size = this.#queued;
        this.#queue = [];
        this.#queued = 0;
        this.#batch = undefined;
        if (this.#writeSync && size <= SYNC_WRITE_BYTES && size <= this.#credit) {
          this.#credit -= size;
          const bytes = parts.length === 1 ? parts[0]! : concat(parts, size);
          const t0 = performance.now();
          for (let at = 0; at < bytes.length;) at += this.#writeSync(bytes.subarray(at));
          // It may have waited for the reader (a full pipe, or just a busy machine): asynchronous until the
          // reader's next sign of life.
          if (performance.now() - t0 > SYNC_STALL_MS) this.#credit = 0;
          return;
        }
        if (parts.length === 1) return this.#writer.write(parts[0]!);
        if (size > JOIN_LIMIT) {
          // A big relayed result: no second copy of it, one write per part as it arrived.
          for (const part of parts) await this.#writer.write(part);
          return;
        }
        const joined = new Uint8Array(size);
        let at = 0;
        for (const part of parts) joined.set(part, at), at += part.length;
        return this.#writer.write(joined);
      });
      this.#batch = batch;
      // The next batch waits for this one, whether it failed or not.
      this.#writes = batch.catch(() => {});
    }
    return this.#batch;
  }

  /** Resolves once everything queued so far has been written (or failed). */
  drained(): Promise<void> {
    return this.#serializing ? this.#serializing.then(() => this.drained()) : this.#writes;
  }

  /** Closes the pipe once what is queued has been written. */
  async close(): Promise<void> {
    await this.drained();
    await this.#writer.close();
  }
}
