/**
 * Newline-delimited messages from a byte stream: a line splitter that copies each line at most once,
 * spills a long result into a store as it arrives, and reads pipes and sockets on the event loop.
 *
 * @module
 */
import type { Readable } from "node:stream";
import type { SpoolWriter } from "../spool/mod.ts";
import { RawBytes, Scanner } from "./raw_json.ts";
const NEWLINE = 0x0a;

/** Largest single message accepted from a downstream server (results can be large: the spool takes them). */
export const MAX_MESSAGE_BYTES = 1024 * 1024 * 1024;
/** Largest single message accepted from the host (requests are small; a bigger one is refused unread). */
export const MAX_HOST_MESSAGE_BYTES = 16 * 1024 * 1024;

/** What a {@linkcode LineSplitter} returns for a message over its limit: dropped, never buffered. */
export class OversizedMessage extends RangeError {
  override name = "OversizedMessage";
  constructor(readonly limit: number) {
    super(`A message exceeded the ${limit}-byte limit and was discarded unread`);
  }
}

/** What a {@linkcode LineSplitter} returns for a line whose spilled bytes could not be read back. */
export class LostMessage extends OversizedMessage {
  override name = "LostMessage";
  constructor(cause: unknown) {
    super(0);
    this.message =
      `A message was discarded: storing it as it arrived failed and its bytes could not be read back (${
        cause instanceof Error ? cause.message : String(cause)
      })`;
  }
}

/** When and where a {@linkcode LineSplitter} writes a long result into the spool as it arrives. */
export interface LineSpillPolicy {
  /** Bytes of a line's `result` past which it is written as it arrives; undefined = keep it in memory. */
  threshold(): number | undefined;
  /** A writer into the store (undefined or a throw: none; the result is then kept in memory). */
  open(): SpoolWriter | undefined;
}

/** Splits a byte stream into lines without copying more than once per line. */
export class LineSplitter {
  #line = new RawBytes();
  #scanner?: Scanner;
  #size = 0;
  /** In an oversized line: its bytes are dropped until the next newline. */
  #skipping = false;
  /** The current line's spill threshold, once asked (Infinity: not spilled). */
  #threshold?: number;
  /** Lines lost since the last push (reported first by the next). */
  #lost: LostMessage[] = [];
  /**
   * Buffers of {@linkcode READ_BUFFER_BYTES} let go by a spill, for {@linkcode LineSplitter.alloc}: a
   * 100 MB result spilled through a few of them, not 1,600 that the garbage collector frees only once
   * some 64 MB of them are waiting.
   */
  #pool: Uint8Array[] = [];
  constructor(readonly maxLineBytes = MAX_MESSAGE_BYTES) {}

  /**
   * When set, a scanned line's `result` past the policy's threshold is written into the spool as its
   * chunks arrive, and the chunks committed are let go ({@linkcode LineSplitter.settle}): memory stays at
   * a slice, not the whole result. Reads of the line fetch what was let go from the spool.
   */
  spill?: LineSpillPolicy;

  /**
   * When set, each line begun from now on is scanned (see raw_json.ts) as its chunks arrive, along this
   * path; the outcome is the line's `scanned`. So a 100 MB answer is read once, in step with the pipe.
   */
  scanPath?: readonly string[];

  /**
   * Whether a line begun from now on may spill (see {@linkcode LineSplitter.spill}): only while a fast-path
   * call waits, not for a line scanned because a `tools/list` answer is awaited.
   */
  scanSpills = true;
  #lineSpills = true;

  /**
   * Feeds bytes; returns the complete lines they finish (without the newline), in order, with an
   * {@linkcode OversizedMessage} in place of each line over the limit (whose bytes are not kept).
   */
  push(chunk: Uint8Array): (string | OversizedMessage)[] {
    return this.pushRaw(chunk).map((line) => line instanceof OversizedMessage ? line : decodeLine(line));
  }

  /** As {@linkcode push}, but each line as the bytes it arrived in (views of the chunks, never joined). */
  pushRaw(chunk: Uint8Array): (RawBytes | OversizedMessage)[] {
    const lines: (RawBytes | OversizedMessage)[] = this.#lost;
    this.#lost = [];
    let start = 0;
    for (let i = chunk.indexOf(NEWLINE); i !== -1; i = chunk.indexOf(NEWLINE, start)) {
      this.#append(chunk.subarray(start, i), lines);
      if (this.#skipping) this.#skipping = false;
      else lines.push(this.#take());
      start = i + 1;
    }
    if (start < chunk.length) this.#append(chunk.subarray(start), lines);
    return lines;
  }

  #append(part: Uint8Array, lines: (RawBytes | OversizedMessage)[]): void {
    if (part.length === 0 || this.#skipping) return;
    this.#size += part.length;
    if (this.#size > this.maxLineBytes) {
      this.#line.discardSpill();
      this.#line = new RawBytes();
      this.#threshold = undefined;
      this.#scanner = undefined;
      this.#size = 0;
      this.#skipping = true;
      lines.push(new OversizedMessage(this.maxLineBytes));
      return;
    }
    if (this.#line.length === 0 && this.scanPath) {
      this.#scanner = new Scanner(this.#line, this.scanPath);
      this.#lineSpills = this.scanSpills;
    }
    // Deno's streams hand out a fresh buffer per chunk, so a view is safe to keep (no copy of big messages).
    this.#line.append(part);
    this.#scanner?.advance();
    if (this.spill && this.#scanner && this.#lineSpills) this.#spillStep(this.spill, this.#scanner);
  }

  /** Queues the bytes of the line's `result` read so far into its spill, opening one past the threshold. */
  #spillStep(policy: LineSpillPolicy, scanner: Scanner): void {
    const line = this.#line;
    const open = scanner.openMember();
    if (!open || open.key !== "result") return;
    if (!line.spill) {
      this.#threshold ??= policy.threshold() ?? Infinity;
      if (line.length - open.start <= this.#threshold) return;
      let writer: SpoolWriter | undefined;
      try {
        writer = policy.open();
      } catch {
        // no store: kept in memory (the finalize path says why)
      }
      if (!writer) {
        this.#threshold = Infinity;
        return;
      }
      line.spill = { writer, start: open.start };
    }
    const spill = line.spill;
    if (open.start !== spill.start) return;
    const from = spill.start + spill.writer.given;
    if (line.length > from) spill.writer.queue(line.slice(from, line.length));
  }

  /** A buffer of `size` bytes for the next chunk (for {@linkcode readChunks}): a recycled one if it can. */
  alloc(size: number): Uint8Array {
    if (size === READ_BUFFER_BYTES && this.#pool.length) return this.#pool.pop()!;
    const buffer = new Uint8Array(size);
    this.#owned.add(buffer.buffer);
    return buffer;
  }

  /** Buffers made by {@linkcode LineSplitter.alloc}: only these are recycled (never a pipe's own). */
  #owned = new WeakSet<ArrayBufferLike>();

  /** Whether the line in progress is spilling (its bytes queued for the spool). */
  get spilling(): boolean {
    return this.#line.spill !== undefined;
  }

  /** `chunk` itself, or while a line spills, a copy in a buffer of the splitter's own (recycled if it can). */
  adopt(chunk: Uint8Array): Uint8Array {
    if (!this.spilling) return chunk;
    const copy = this.alloc(chunk.length);
    copy.set(chunk);
    return copy;
  }

  #recycle = (part: Uint8Array): void => {
    if (
      part.length === READ_BUFFER_BYTES && part.byteOffset === 0 && part.buffer.byteLength === part.length &&
      this.#owned.has(part.buffer) && this.#pool.length < POOL_BUFFERS
    ) {
      this.#pool.push(part);
    }
  };

  /**
   * Writes what the line in progress queued for its spill, a slice at a time (yielding to the event loop),
   * and lets go of the chunks committed. A failed write ends the spill: the line is read back and kept in
   * memory (or, if that fails too, reported lost with the next push), so no byte is passed short.
   */
  async settle(): Promise<void> {
    const line = this.#line;
    const spill = line.spill;
    if (!spill) return;
    try {
      await spill.writer.drain();
      line.dropSpilled(this.#recycle);
      return;
    } catch {
      // below
    }
    this.#threshold = Infinity;
    try {
      line.unspill();
    } catch (error) {
      line.discardSpill();
      // The rest of the line is dropped until its newline.
      this.#line = new RawBytes();
      this.#scanner = undefined;
      this.#size = 0;
      this.#skipping = true;
      this.#lost.push(new LostMessage(error));
    }
  }

  #take(): RawBytes {
    const line = this.#line;
    // Still open at the line's end: not a container.
    if (this.#scanner) line.scanned = this.#scanner.advance() ?? null;
    this.#line = new RawBytes();
    this.#scanner = undefined;
    this.#size = 0;
    this.#threshold = undefined;
    return line;
  }
}

export const lineDecoder = new TextDecoder();

/** A raw line as text, without a trailing carriage return. */
export function decodeLine(raw: RawBytes): string {
  const line = lineDecoder.decode(raw.bytes());
  return line.endsWith("\r") ? line.slice(0, -1) : line;
}

/**
 * Longest run of reads, in ms, before a reader hands the event loop a turn. A pipe that always has data
 * (a 100 MB answer arriving) resolves read after read without a pass through the event loop: timers,
 * and the other pipes' messages behind them, waited 50-100 ms while such a result was read. Only a read
 * that filled its buffer (more is waiting) counts, so small messages never pay for a turn (a timer: ~2 ms
 * in Deno; a message channel's turn does not run the timers).
 */
const TURN_MS = 8;
/** When the readers of this module last handed the event loop a turn (any reader's turn serves all). */
let lastTurn = 0;

/** Resolves on a later turn of the event loop (a timer: everything due runs first). */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) =>
    setTimeout(() => {
      lastTurn = performance.now();
      resolve();
    }, 0)
  );
}

/** Size of the buffer a pipe is read into. */
const READ_BUFFER_BYTES = 64 * 1024;
/** Recycled read buffers a {@linkcode LineSplitter} keeps at most (2 MiB: a few spill slices). */
const POOL_BUFFERS = 32;

/**
 * Reads `stream` to its end, calling `onChunk` with each chunk (a buffer of its own, which the callee may
 * keep) and awaiting what it returns, if anything. A byte stream (Deno's pipes) is read into one reused
 * buffer and each chunk copied out at its size: a 64 KiB allocation per read, which is what the default
 * reader does, costs more than copying the few hundred bytes of a typical message, and the chunks kept
 * (a large message's lines) hold no unused space. `alloc` gives the buffer a chunk is copied into (fresh
 * by default). Another stream is read as it comes.
 */
export async function readChunks(
  stream: ReadableStream<Uint8Array>,
  onChunk: (chunk: Uint8Array) => void | Promise<void>,
  alloc?: (size: number) => Uint8Array,
): Promise<void> {
  let byob: ReadableStreamBYOBReader | undefined;
  try {
    byob = stream.getReader({ mode: "byob" });
  } catch {
    // not a byte stream
  }
  if (!byob) {
    const reader = stream.getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        const pending = onChunk(value);
        if (pending) await pending;
        // As below: only a big chunk says more may be waiting (a small one arrived on its own turn).
        if (value.length >= READ_BUFFER_BYTES && performance.now() - lastTurn >= TURN_MS) await nextTurn();
      }
    } finally {
      reader.releaseLock();
    }
  }
  let buffer = new Uint8Array(READ_BUFFER_BYTES);
  try {
    for (;;) {
      const { value, done } = await byob.read(buffer);
      if (done || !value) return;
      // The read transferred the buffer: the view returned is its new home.
      buffer = new Uint8Array(value.buffer, 0, READ_BUFFER_BYTES);
      if (value.length === 0) continue;
      const full = value.length === READ_BUFFER_BYTES;
      let copy: Uint8Array;
      if (alloc) (copy = alloc(value.length)).set(value);
      else copy = value.slice();
      const pending = onChunk(copy);
      if (pending) await pending;
      // A full buffer: more is waiting in the pipe, so the next read may resolve without a turn.
      if (full && performance.now() - lastTurn >= TURN_MS) await nextTurn();
    }
  } finally {
    byob.releaseLock();
  }
}

/**
 * As {@linkcode readChunks}, for a Node stream (a socket on a pipe: a child's stdout, the gateway's
 * stdin), read from its `data` events: no web stream between the pipe and `onChunk`, whose chunks are
 * buffers of their own. While what `onChunk` returns is pending, the stream is paused and chunks that
 * still arrive wait, in order; a full read hands the event loop a turn as {@linkcode readChunks} does.
 * Resolves once the stream has ended and every chunk was handled; rejects with the stream's error or
 * `onChunk`'s (reading then stops).
 */
export function readSocket(
  stream: Readable,
  onChunk: (chunk: Uint8Array) => void | Promise<void>,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    /** Chunks that arrived while one was being handled (set while one is). */
    let backlog: Uint8Array[] | undefined;
    let ended = false;
    let failed = false;
    const fail = (error: unknown) => {
      if (failed) return;
      failed = true;
      stream.off("data", onData);
      stream.pause();
      reject(error);
    };
    const handle = (chunk: Uint8Array): void | Promise<void> => {
      const pending = onChunk(chunk);
      // Only a full read says more may be waiting (a small chunk arrived on its own turn).
      const turn = chunk.length >= READ_BUFFER_BYTES && performance.now() - lastTurn >= TURN_MS;
      if (!turn) return pending;
      return pending ? pending.then(nextTurn) : nextTurn();
    };
    const drain = async (pending: Promise<void>) => {
      try {
        await pending;
        for (let next = backlog!.shift(); next; next = backlog!.shift()) await handle(next);
      } catch (error) {
        return fail(error);
      }
      backlog = undefined;
      if (ended) resolve();
      else stream.resume();
    };
    const onData = (chunk: Uint8Array) => {
      if (backlog) return void backlog.push(chunk);
      let pending: void | Promise<void>;
      try {
        pending = handle(chunk);
      } catch (error) {
        return fail(error);
      }
      if (!pending) return;
      backlog = [];
      stream.pause();
      drain(pending);
    };
    const onEnd = () => {
      if (ended) return;
      ended = true;
      if (!backlog && !failed) resolve();
    };
    // Ended (or destroyed) before it was read here, as stdin can while the gateway loads after an early
    // read (gateway/early.ts): nothing more comes, and its events were emitted already.
    if (stream.readableEnded || stream.destroyed) return resolve();
    stream.on("data", onData);
    stream.once("end", onEnd);
    // Destroyed without an end (its pipe closed under it): what came was all there is.
    stream.once("close", onEnd);
    stream.once("error", fail);
    // A stream paused before (the gateway's stdin is, until it is read) does not flow by a listener alone.
    stream.resume();
  });
}

/**
 * Bytes the gateway reads: a web stream, or a Node stream read from its `data` events (the gateway's
 * stdin as a socket: see host_input.ts).
 */
export type ByteSource = ReadableStream<Uint8Array> | Readable;

/** Reads `source` to its end as {@linkcode readChunks} or {@linkcode readSocket} does. */
export function readSource(
  source: ByteSource,
  onChunk: (chunk: Uint8Array) => void | Promise<void>,
): Promise<void> {
  return source instanceof ReadableStream ? readChunks(source, onChunk) : readSocket(source, onChunk);
}
