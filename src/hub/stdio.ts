/**
 * Newline-delimited JSON-RPC over pipes, both directions: the client side that
 * starts a downstream server, and the server side on the gateway's own
 * stdin/stdout. Ours rather than the SDK's so that we control the environment,
 * the process group (no orphans), large messages (the SDK's buffer is capped
 * at 10 MB and copies quadratically) and what happens to bytes that are not
 * JSON-RPC.
 *
 * @module
 */
import type { ChildProcess } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import { ErrorCode, JSONRPCMessageSchema, McpError } from "./sdk.ts";
import type { JSONRPCMessage, Progress, Transport } from "./sdk.ts";
import type { SpoolWriter } from "../spool/mod.ts";
import { parseJson } from "../json/mod.ts";
import { concat, type Member, member, RawBytes, RawResult, scan, Scanner, utf8 } from "./raw_json.ts";
import {
  leadSteps,
  parseSteps,
  slicedParseApplies,
  slicedStringifyApplies,
  stringifySteps,
} from "./sliced_json.ts";
import { Stepper } from "./slices.ts";
import { NoticeGate } from "./notice_gate.ts";
import {
  putStandIns,
  type Replacement,
  replaceSpans,
  SCAN_MIN_BYTES,
  standInSteps,
  unreadMembers,
} from "./definition_scan.ts";

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

const lineDecoder = new TextDecoder();

/** A raw line as text, without a trailing carriage return. */
function decodeLine(raw: RawBytes): string {
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
function nextTurn(): Promise<void> {
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

/** A line that is not a JSON-RPC message. */
export class ProtocolViolation extends Error {
  override name = "ProtocolViolation";
  constructor(message: string, readonly line: string, options?: ErrorOptions) {
    super(message, options);
  }
}

function parseLine(line: string): JSONRPCMessage {
  return validateMessage(parseLineJson(line), line);
}

function parseLineJson(line: string): unknown {
  try {
    return parseJson(line);
  } catch (error) {
    throw new ProtocolViolation("Not JSON", line, { cause: error });
  }
}

/** Characters of a huge line kept in its {@linkcode ProtocolViolation} (it is quoted cut to far fewer). */
const VIOLATION_LINE_BYTES = 64 * 1024;

/**
 * A huge line (see sliced_json.ts) parsed in slices that yield to the event loop: the same message as
 * {@linkcode parseLine} gives, or the same ProtocolViolation ("Not JSON", "Not a JSON-RPC 2.0 message"),
 * whose `line` is then the line's first {@linkcode VIOLATION_LINE_BYTES} bytes. The envelope's check is
 * the SDK's schema, which reads the top of the message only (a `result` is a loose object): ~1 ms.
 */
async function parseLineSliced(raw: RawBytes, lead: number): Promise<JSONRPCMessage> {
  const head = () => lineDecoder.decode(raw.bytes(0, Math.min(raw.length, VIOLATION_LINE_BYTES)));
  let value: unknown;
  try {
    value = await new Stepper(parseSteps(raw, lead)).finishAsync();
  } catch (error) {
    throw new ProtocolViolation("Not JSON", head(), { cause: error });
  }
  const parsed = JSONRPCMessageSchema.safeParse(value);
  if (!parsed.success) throw new ProtocolViolation("Not a JSON-RPC 2.0 message", head());
  return parsed.data;
}

/** A line parsed whole, or in slices when huge (see sliced_json.ts); undefined for a blank line. */
async function parseRaw(raw: RawBytes): Promise<JSONRPCMessage | undefined> {
  if (slicedParseApplies(raw)) {
    const lead = await new Stepper(leadSteps(raw)).finishAsync();
    if (lead >= 0 && (raw.at(lead) === 0x7b || raw.at(lead) === 0x5b)) {
      return await parseLineSliced(raw, lead);
    }
  }
  const line = decodeLine(raw);
  return line.trim() === "" ? undefined : parseLine(line);
}

function validateMessage(value: unknown, line: string): JSONRPCMessage {
  const parsed = JSONRPCMessageSchema.safeParse(value);
  if (!parsed.success) throw new ProtocolViolation("Not a JSON-RPC 2.0 message", line);
  return parsed.data;
}

/** A `tools/call` result that is not one (checked on the fast path, where the SDK's schema is skipped). */
export class InvalidResultError extends TypeError {
  override name = "InvalidResultError";
}

/** What {@linkcode StdioClientTransport.callRaw} needs besides the tool. */
export interface RawCallOptions {
  signal?: AbortSignal;
  timeoutMs: number;
  onProgress?: (progress: Progress) => void;
}

interface RawCall {
  resolve(result: RawResult): void;
  reject(error: unknown): void;
  onProgress?: (progress: Progress) => void;
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

const CLOSE_LINE = utf8("}\n");

/** A response's result is read down to its content blocks, in the same pass (isError, types, preview). */
const RESULT_PATH = ["result", "content", "*"];
/** A `tools/list` answer is read down to its tools (each one's bytes), in the same pass. */
const TOOLS_PATH = ["result", "tools"];
/** What the gateway reads of a `tools/list` answer's scan. */
interface ListAnswer {
  tools: Member;
  top: readonly Member[];
  result: readonly Member[];
}

const NULL_BYTES = utf8("null");

/** `tools/list` requests whose answers are awaited, per connection (the last ones sent). */
const LIST_IDS = 16;

/**
 * Deadlines of the calls on one connection, under one timer: a call's own `setTimeout` costs ~10 µs (a
 * timer object and its scheduling) on a path that costs a few hundred; here adding and removing one is a
 * set operation, and the timer is re-armed only for a deadline earlier than the one it waits for (calls
 * that share a timeout end in the order they began, so that is the first call after an idle spell).
 */
export class Deadlines {
  #entries = new Set<{ at: number; fire: () => void }>();
  #timer?: ReturnType<typeof setTimeout>;
  #armedAt = Infinity;

  /** Calls `fire` after `ms` unless the returned entry is {@linkcode Deadlines.delete}d first. */
  add(ms: number, fire: () => void): object {
    const entry = { at: performance.now() + ms, fire };
    this.#entries.add(entry);
    if (entry.at < this.#armedAt) this.#arm(entry.at);
    return entry;
  }

  /** Forgets an entry (its call ended). */
  delete(entry: object): void {
    this.#entries.delete(entry as { at: number; fire: () => void });
  }

  /** Stops the timer; entries left are forgotten. */
  clear(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#armedAt = Infinity;
    this.#entries.clear();
  }

  #arm(at: number): void {
    clearTimeout(this.#timer);
    this.#armedAt = at;
    // setTimeout's limit is 2^31-1 ms; a later deadline is re-armed from here when that fires.
    this.#timer = setTimeout(
      () => this.#expire(),
      Math.min(Math.max(0, at - performance.now()), 2 ** 31 - 1),
    );
  }

  #expire(): void {
    this.#timer = undefined;
    this.#armedAt = Infinity;
    const now = performance.now();
    const due = [...this.#entries].filter((entry) => entry.at <= now).sort((a, b) => a.at - b.at);
    for (const entry of due) {
      // An earlier one's cancellation may have ended it meanwhile.
      if (!this.#entries.delete(entry)) continue;
      entry.fire();
    }
    let next = Infinity;
    for (const entry of this.#entries) next = Math.min(next, entry.at);
    if (next < Infinity && this.#timer === undefined) this.#arm(next);
  }
}

/** How to start a stdio server. */
export interface StdioServerParams {
  command: string;
  args: string[];
  /** The complete environment of the child (already merged). */
  env: Record<string, string>;
  cwd?: string;
  /** Receives the child's stderr bytes. */
  onStderr?: (chunk: Uint8Array) => void;
  /** Grace period between closing stdin, SIGTERM and SIGKILL. @default 2000 */
  killGraceMs?: number;
  /** Writes a long fast-path result into the spool as it arrives (see {@linkcode LineSplitter.spill}). */
  spill?: LineSpillPolicy;
}

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

/** The client side of a stdio connection: spawns the server in its own process group. */
export class StdioClientTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  #params: StdioServerParams;
  #child?: ChildProcess;
  #writer?: CoalescingWriter;
  #closed = false;
  #exited?: Promise<Deno.CommandStatus>;

  constructor(params: StdioServerParams) {
    this.#params = params;
  }

  /** The child's pid once started. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** Resolves when the child has exited. */
  get exited(): Promise<Deno.CommandStatus> | undefined {
    return this.#exited;
  }

  /**
   * Starts the child with `node:child_process` (Deno's, which runs `Deno.Command` underneath: the same
   * permission checks, `clearEnv`, process group), for its pipes: they are read and written as sockets
   * on the event loop, ~35 µs of the gateway's CPU per call less than through web streams. Its
   * environment is exactly `params.env` (the child is given it as `envPairs`, past the step that adds
   * the gateway's `NODE_V8_COVERAGE`), its command line exactly the one configured (see
   * {@linkcode literalCommandLine}). Rejects as `Deno.Command` throws: NotFound for a command that is
   * not found, PermissionDenied for one the system refuses to run, NotCapable for one our permissions
   * do not include.
   */
  async start(): Promise<void> {
    const { command, args, env, cwd } = this.#params;
    const { ChildProcess } = await childProcessModule();
    // Closed while the module loaded (a connect that was given up): nothing may start now.
    if (this.#closed) throw new McpError(ErrorCode.ConnectionClosed, "Connection closed");
    const child = new ChildProcess();
    this.#child = child;
    const [file, argv] = literalCommandLine(command, args, env);
    try {
      (child as unknown as { spawn(options: object): void }).spawn({
        file,
        // The first is argv[0], which Deno's child_process drops: the program's own is `file`.
        args: [file, ...argv],
        envPairs: Object.entries(env).map(([name, value]) => `${name}=${value}`),
        cwd,
        stdio: ["pipe", "pipe", "pipe"],
        // Its own process group, so closing kills wrappers (npx, sh) and what they started.
        detached: Deno.build.os !== "windows",
      });
    } catch (error) {
      this.#child = undefined;
      throw error;
    }
    // Not started: the reason comes as an event on the next tick.
    if (child.pid === undefined) {
      this.#child = undefined;
      return new Promise((_, reject) => child.once("error", (error) => reject(spawnError(command, error))));
    }
    child.on("error", (error) => {
      if (!this.#closed) this.onerror?.(error);
    });
    this.#writer = new CoalescingWriter(streamWriter(child.stdin!));
    const exited = new Promise<Deno.CommandStatus>((resolve) =>
      child.once("exit", (code, signal) => resolve(commandStatus(code, signal)))
    );
    this.#exited = exited;
    const pumped = this.#pump(child.stdout!);
    this.#drainStderr(child.stderr!);
    exited.then(async (status) => {
      // Deliver what it wrote before exiting (a last response) before reporting the close.
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([pumped, new Promise((r) => timer = setTimeout(r, 1000))]);
      clearTimeout(timer);
      if (!this.#closed) {
        this.onerror?.(new Error(`The server process exited (${describeStatus(status)})`));
      }
      // The pipe to its stdin stays open (one fd per restart) unless closed here.
      this.#writer?.close().catch(() => {});
      this.#finish();
    });
  }

  async #pump(stream: Readable): Promise<void> {
    const splitter = new LineSplitter();
    splitter.spill = this.#params.spill;
    try {
      // While a line spills, its chunks are copied into the splitter's own recycled buffers, so the
      // pipe's buffers die young and the spilled ones are reused (a 100 MB result held as a few buffers).
      await readSocket(stream, (chunk) => this.#lines(splitter, splitter.adopt(chunk)));
    } catch (error) {
      if (!this.#closed) this.onerror?.(error as Error);
    }
  }

  /**
   * Delivers the messages `chunk` completes, in order: synchronously, unless a line is parsed in slices
   * or a notification is followed by more (then the rest follows when the returned promise settles).
   */
  #lines(splitter: LineSplitter, chunk: Uint8Array): void | Promise<void> {
    splitter.scanPath = this.#rawCalls.size ? RESULT_PATH : this.#listIds.length ? TOOLS_PATH : undefined;
    splitter.scanSpills = this.#rawCalls.size > 0;
    const delivered = this.#deliver(splitter.pushRaw(chunk), 0);
    // The line in progress may have queued bytes for its spill: written (yielding) before the next chunk.
    if (delivered) return delivered.then(() => splitter.spilling ? splitter.settle() : undefined);
    if (splitter.spilling) return splitter.settle();
  }

  #deliver(lines: (RawBytes | OversizedMessage)[], from: number): void | Promise<void> {
    for (let i = from; i < lines.length; i++) {
      const raw = lines[i]!;
      if (raw instanceof OversizedMessage) {
        this.onerror?.(new ProtocolViolation(raw.message, ""));
        continue;
      }
      // Only while a call of the fast path is waiting does a line need a look before the SDK's parse.
      if (this.#rawCalls.size && this.#routeRaw(raw)) continue;
      try {
        // Spilled as it arrived, but not a fast-path answer after all: whole again for the SDK.
        raw.unspill();
      } catch (error) {
        this.onerror?.(error as Error);
        continue;
      }
      // The answer to a tools/list of ours: its over-limit tools judged from their bytes, never parsed.
      if (this.#listIds.length && raw.length >= SCAN_MIN_BYTES) {
        const answer = this.#listAnswer(raw);
        if (answer) return this.#deliverList(lines, i, answer);
      }
      // A huge line (a 100,000-tool list) in slices, so other servers' messages go on meanwhile.
      if (slicedParseApplies(raw)) return this.#deliverSliced(lines, i);
      let message: JSONRPCMessage;
      try {
        const line = decodeLine(raw);
        if (line.trim() === "") continue;
        const value = parseLineJson(line);
        // A storm's notifications stop here, before the SDK's checks (see notice_gate.ts).
        const admitted = this.#gate.admits(value, line);
        if (admitted !== true) {
          if (admitted) this.onerror?.(admitted);
          continue;
        }
        message = validateMessage(value, line);
      } catch (error) {
        this.onerror?.(error as Error);
        continue;
      }
      this.#hand(message);
      // The SDK runs a notification's handler one microtask later but a response at once: yield so a
      // progress notification written just before its response reaches the caller before the result.
      if (!("id" in message) && i + 1 < lines.length) {
        return Promise.resolve().then(() => this.#deliver(lines, i + 1));
      }
    }
  }

  #gate = new NoticeGate();

  /**
   * Hands a message to the client (the SDK's), noting the answers the gate must know of, and a small
   * `tools/list` answer (a big one was taken by its bytes): no later line is scanned for one any more.
   */
  #hand(message: JSONRPCMessage): void {
    this.#gate.delivered(message);
    if (this.#listIds.length && "id" in message && !("method" in message)) {
      const k = this.#listIds.indexOf(message.id!);
      if (k >= 0) this.#listIds.splice(k, 1);
    }
    this.onmessage?.(message);
  }

  /** Delivers line `at`, parsed in slices, then the lines after it. */
  async #deliverSliced(lines: (RawBytes | OversizedMessage)[], at: number): Promise<void> {
    const raw = lines[at] as RawBytes;
    let message: JSONRPCMessage | undefined;
    try {
      message = await parseRaw(raw);
    } catch (error) {
      this.onerror?.(error as Error);
    }
    if (message) {
      this.#hand(message);
      if (!("id" in message)) await null;
    }
    return this.#deliver(lines, at + 1);
  }

  /**
   * When `raw` answers a `tools/list` the gateway sent (by its id: that request is then no longer
   * awaited), its `tools` member and the members of the answer and of its result, else undefined. Reads
   * the line's scan only (made as it arrived).
   */
  #listAnswer(raw: RawBytes): ListAnswer | undefined {
    const top = raw.scanned;
    if (!top || top.kind !== "object") return undefined;
    const id = member(top.members, "id");
    if (!id || id.end - id.start > 64) return undefined;
    let value: unknown;
    try {
      value = raw.json(id.start, id.end);
    } catch {
      return undefined;
    }
    const k = this.#listIds.indexOf(value as string | number);
    // A response (a request of the server's own may carry the same id: a different space).
    const result = member(top.members, "result")?.children;
    if (k < 0 || !result || member(top.members, "method")) return undefined;
    this.#listIds.splice(k, 1);
    if (result.kind !== "object") return undefined;
    const tools = member(result.members, "tools");
    if (!tools || raw.at(tools.start) !== 0x5b) return undefined;
    return { tools, top: top.members, result: result.members };
  }

  /**
   * Delivers line `at`, a `tools/list` answer, then the lines after it: each tool over the depth or size
   * limit is judged from its bytes in slices and replaced by its stand-in, unparsed, and big members the
   * gateway does not read are not parsed either (see definition_scan.ts); the rest of the line is parsed
   * as any other.
   */
  async #deliverList(lines: (RawBytes | OversizedMessage)[], at: number, answer: ListAnswer): Promise<void> {
    const raw = lines[at] as RawBytes;
    let message: JSONRPCMessage | undefined;
    try {
      const standIns = await new Stepper(standInSteps(raw, answer.tools)).finishAsync();
      const replaced: Replacement[] = unreadMembers(raw, answer.top, answer.result);
      for (const { span } of standIns) replaced.push({ span, bytes: NULL_BYTES });
      message = await parseRaw(replaced.length ? replaceSpans(raw, replaced) : raw);
      if (message && standIns.length) putStandIns(message, standIns);
    } catch (error) {
      this.onerror?.(error as Error);
    }
    if (message) {
      this.#hand(message);
      if (!("id" in message)) await null;
    }
    return this.#deliver(lines, at + 1);
  }

  async #drainStderr(stream: Readable): Promise<void> {
    try {
      await readSocket(stream, (chunk) => this.#params.onStderr?.(chunk));
    } catch {
      // the pipe closes when the child exits
    }
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (!this.#writer || this.#closed) throw new Error("The server connection is closed");
    if ("method" in message && message.method === "tools/list" && "id" in message) {
      this.#listIds.push(message.id);
      if (this.#listIds.length > LIST_IDS) this.#listIds.shift();
    }
    this.#gate.sent(message);
    await this.#writer.write(message);
  }

  /** Ids of the `tools/list` requests sent whose answers have not come (the last {@link LIST_IDS}). */
  #listIds: (string | number)[] = [];

  #rawCalls = new Map<string, RawCall>();
  #rawSeq = 0;
  #deadlines = new Deadlines();

  /**
   * Calls a tool beside the SDK's client on the same pipe (ids of our own, `mcphub-N`, that the SDK never
   * issues): its answer is kept as the bytes that came, checked only for what the gateway relies on (an
   * object result, `content` an array, `isError` a boolean). Rejects as the SDK's request does: McpError
   * RequestTimeout after `timeoutMs`, ConnectionClosed when the connection ends, the signal's reason on
   * abort (both sending `notifications/cancelled`), McpError for an error answer, InvalidResultError for
   * an invalid result.
   */
  callRaw(name: string, args: Record<string, unknown>, options: RawCallOptions): Promise<RawResult> {
    const writer = this.#writer;
    if (!writer || this.#closed) {
      return Promise.reject(new McpError(ErrorCode.ConnectionClosed, "Connection closed"));
    }
    const { signal, timeoutMs, onProgress } = options;
    if (signal?.aborted) return Promise.reject(signal.reason);
    const id = `mcphub-${++this.#rawSeq}`;
    return new Promise<RawResult>((resolve, reject) => {
      const cleanup = () => {
        this.#deadlines.delete(deadline);
        signal?.removeEventListener("abort", onAbort);
        this.#rawCalls.delete(id);
      };
      const cancel = (reason: unknown) => {
        if (!this.#rawCalls.has(id)) return;
        cleanup();
        writer.write({
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          params: { requestId: id, reason: String(reason) },
        }).catch(() => {});
        reject(reason);
      };
      const onAbort = () => cancel(signal!.reason);
      const deadline = this.#deadlines.add(
        timeoutMs,
        () => cancel(new McpError(ErrorCode.RequestTimeout, "Request timed out", { timeout: timeoutMs })),
      );
      signal?.addEventListener("abort", onAbort, { once: true });
      const call: RawCall = {
        resolve: (result) => (cleanup(), resolve(result)),
        reject: (error) => (cleanup(), reject(error)),
        onProgress,
      };
      this.#rawCalls.set(id, call);
      const params: Record<string, unknown> = { name, arguments: args };
      if (onProgress) params._meta = { progressToken: id };
      writer.write({ method: "tools/call", params, jsonrpc: "2.0", id }).catch((error) => {
        if (this.#rawCalls.get(id) === call) call.reject(error);
      });
    });
  }

  /** Takes a line that answers a call of the fast path, or reports its progress; false for any other. */
  #routeRaw(raw: RawBytes): boolean {
    const top = raw.scanned === undefined ? scan(raw, 0, raw.length, RESULT_PATH) : raw.scanned;
    if (!top || top.kind !== "object") return false;
    const id = member(top.members, "id");
    if (id) {
      if (raw.at(id.start) !== 0x22 || id.end - id.start > 64) return false;
      const call = this.#rawCalls.get(raw.json(id.start, id.end) as string);
      if (!call) return false;
      settleRaw(call, raw, top.members);
      return true;
    }
    const method = member(top.members, "method");
    const params = member(top.members, "params");
    if (!method || !params || method.end - method.start > 64) return false;
    if (raw.json(method.start, method.end) !== "notifications/progress") return false;
    const value = raw.json(params.start, params.end) as Record<string, unknown> | null;
    if (!value || typeof value !== "object" || typeof value.progressToken !== "string") return false;
    const call = this.#rawCalls.get(value.progressToken);
    if (!call) return false;
    const { progressToken: _, ...progress } = value;
    if (typeof progress.progress === "number") call.onProgress?.(progress as unknown as Progress);
    return true;
  }

  #closing?: Promise<void>;

  /**
   * Closes stdin, then SIGTERM, then SIGKILL to the whole process group, each after a grace period.
   * Every call returns the same promise, settled once the process is gone (the SDK closes a transport
   * itself when a connect is aborted; the owner must still be able to wait for the end).
   */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const child = this.#child;
    // Not started (its spawn failed): nothing to stop.
    if (!child || !this.#exited) return this.#finish();
    const grace = this.#params.killGraceMs ?? 2000;
    try {
      await this.#writer?.close();
    } catch {
      // already closed by the child
    }
    const exited = this.#exited!;
    if (!(await exitsWithin(exited, grace))) {
      signal(child, "SIGTERM");
      if (!(await exitsWithin(exited, grace))) signal(child, "SIGKILL");
    }
    await exited;
    // Leave nothing of its group behind (a wrapper's grandchildren).
    signal(child, "SIGKILL", true);
    this.#finish();
  }

  #finishedOnce = false;
  #finish(): void {
    if (this.#finishedOnce) return;
    this.#finishedOnce = true;
    this.#closed = true;
    for (const call of [...this.#rawCalls.values()]) {
      call.reject(new McpError(ErrorCode.ConnectionClosed, "Connection closed"));
    }
    this.#deadlines.clear();
    this.onclose?.();
  }
}

/** Settles a fast-path call with its answer: the result's bytes, or the error it carries. */
function settleRaw(call: RawCall, raw: RawBytes, members: readonly Member[]): void {
  const error = member(members, "error");
  const result = member(members, "result");
  let settled = false;
  try {
    if (error) {
      const e = raw.json(error.start, error.end) as
        | { code?: unknown; message?: unknown; data?: unknown }
        | null;
      if (!e || typeof e !== "object" || typeof e.code !== "number" || typeof e.message !== "string") {
        throw new InvalidResultError("the error answer has no numeric code and string message");
      }
      raw.discardSpill();
      call.reject(new McpError(e.code, e.message, e.data));
      return;
    }
    if (!result) throw new InvalidResultError("the answer has neither result nor error");
    const inner = result.children;
    if (!inner || inner.kind !== "object") throw new InvalidResultError("the result is not an object");
    const content = member(inner.members, "content");
    if (content && raw.at(content.start) !== 0x5b) throw new InvalidResultError('"content" is not an array');
    const isError = member(inner.members, "isError");
    const flag = isError ? raw.text(isError.start, isError.end) : "false";
    if (flag !== "true" && flag !== "false") throw new InvalidResultError('"isError" is not a boolean');
    settled = true;
    call.resolve(new RawResult(raw, result, inner.members, flag === "true"));
  } catch (cause) {
    if (!settled) raw.discardSpill();
    call.reject(
      cause instanceof InvalidResultError ? cause : new InvalidResultError(String(cause), { cause }),
    );
  }
}

/** Signal numbers by name (from node:os, loaded with node:child_process). */
let signalNumbers: Record<string, number> = {};
let childProcessLoaded: Promise<typeof import("node:child_process")> | undefined;

/**
 * node:child_process, loaded with the first server started rather than with this module: a gateway
 * starts its servers after it answered the host's `initialize`, which need not wait for it.
 */
function childProcessModule(): Promise<typeof import("node:child_process")> {
  return childProcessLoaded ??= Promise.all([import("node:child_process"), import("node:os")]).then(
    ([module, os]) => {
      signalNumbers = os.constants.signals as unknown as Record<string, number>;
      return module;
    },
  );
}

/** A child's end as `Deno.Command` reports it (a signal's code is 128 + its number, as a shell's). */
function commandStatus(code: number | null, signal: string | null): Deno.CommandStatus {
  if (signal) {
    const number = signalNumbers[signal] ?? 0;
    return { success: false, code: 128 + number, signal: signal as Deno.Signal };
  }
  return { success: code === 0, code: code ?? 1, signal: null };
}

/**
 * A spawn's failure as `Deno.Command` throws it (node:child_process reports a missing command and one
 * the system refuses as errno errors): NotFound, PermissionDenied; any other as it came (NotCapable).
 */
function spawnError(command: string, error: Error): Error {
  const code = (error as { code?: unknown }).code;
  if (code === "ENOENT") {
    return new Deno.errors.NotFound(`Failed to spawn '${command}': entity not found`, { cause: error });
  }
  if (code === "EACCES" || code === "EPERM") {
    return new Deno.errors.PermissionDenied(
      `Failed to spawn '${command}': ${
        code === "EACCES" ? "Permission denied (os error 13)" : "Operation not permitted (os error 1)"
      }`,
      { cause: error },
    );
  }
  return error;
}

/**
 * The command line to give node:child_process so that it starts exactly `command` with `args`. It
 * rewrites two kinds, for Node programs that start `node`: a child that is this very executable gets
 * its arguments translated as Node's (`deno x.js` becomes `deno run -A x.js`: every permission; in a
 * compiled gateway, `mcphub`'s own arguments), and so does this executable at the start of a shell's
 * `-c` script. Such a command is given by an equivalent path it does not recognise (`dir/./deno`),
 * such a script behind a leading space (nothing to a shell).
 */
export function literalCommandLine(
  command: string,
  args: readonly string[],
  env: Record<string, string>,
): [string, string[]] {
  const self = Deno.execPath();
  let file = command;
  if (command === self) {
    const at = Math.max(self.lastIndexOf("/"), self.lastIndexOf("\\"));
    const separator = at >= 0 ? self[at]! : "/";
    file = `${self.slice(0, at + 1)}.${separator}${self.slice(at + 1)}`;
  }
  const script = args[0] === "-c" ? 1 : args[0] === "/d" && args[1] === "/s" && args[2] === "/c" ? 3 : -1;
  const text = args[script];
  if (text === undefined || !startsLikeSelf(text, self, env)) return [file, [...args]];
  const literal = [...args];
  literal[script] = ` ${text}`;
  return [file, literal];
}

/** Whether a shell script may begin with this executable (by path, quoted or not, or a variable). */
function startsLikeSelf(script: string, self: string, env: Record<string, string>): boolean {
  const text = script.replace(/^["']/, "");
  if (text.startsWith(self)) return true;
  return text.startsWith("$") && Object.values(env).includes(self);
}

function describeStatus(status: Deno.CommandStatus): string {
  return status.signal ? `signal ${status.signal}` : `exit code ${status.code}`;
}

async function exitsWithin(status: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<false>((resolve) => timer = setTimeout(() => resolve(false), ms));
  try {
    return await Promise.race([status.then(() => true as const), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Signals the child's process group (so a wrapper's children go too). Deno.kill needs an
 * unrestricted --allow-run; under a restricted one only the child itself can be signalled
 * (ChildProcess.kill needs no permission), and its own children are its business.
 */
function signal(child: ChildProcess, sig: Deno.Signal, groupOnly = false): void {
  if (Deno.build.os !== "windows") {
    try {
      Deno.kill(-child.pid!, sig);
      return;
    } catch {
      if (groupOnly) return;
    }
  } else if (groupOnly) return;
  try {
    child.kill(sig as Parameters<ChildProcess["kill"]>[0]);
  } catch {
    // already gone
  }
}

/** The server side on the gateway's own stdin/stdout. Answers non-JSON-RPC input with the protocol's error. */
export class StdioServerTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  #input: ByteSource;
  #output: CoalescingWriter;
  #closed = false;

  /** `options.writeSync`: a synchronous write to `output`'s pipe for small batches (see {@linkcode CoalescingWriter}). */
  constructor(
    input: ByteSource,
    output: WritableStream<Uint8Array>,
    options: { writeSync?: (bytes: Uint8Array) => number } = {},
  ) {
    this.#input = input;
    this.#output = new CoalescingWriter(output.getWriter(), options.writeSync);
  }

  start(): Promise<void> {
    this.#pump();
    return Promise.resolve();
  }

  async #pump(): Promise<void> {
    const splitter = new LineSplitter(MAX_HOST_MESSAGE_BYTES);
    try {
      await readSource(this.#input, (chunk) => {
        this.#output.readerAlive();
        for (const line of splitter.push(chunk)) {
          if (line instanceof OversizedMessage) {
            this.#reject(
              -32600,
              `Request too large: a message exceeded the gateway's ${MAX_HOST_MESSAGE_BYTES}-byte limit for ` +
                "messages from the host and was discarded unread",
            );
            continue;
          }
          if (line.trim() === "") continue;
          let message: JSONRPCMessage;
          try {
            const value = parseLineJson(line);
            if (this.intercept && typeof value === "object" && value !== null && this.intercept(value)) {
              continue;
            }
            message = validateMessage(value, line);
          } catch (error) {
            const parseError = (error as Error).message === "Not JSON";
            this.#reject(parseError ? -32700 : -32600, parseError ? "Parse error" : "Invalid Request", line);
            continue;
          }
          this.onmessage?.(message);
        }
      });
    } catch (error) {
      this.onerror?.(error as Error);
    }
    this.#finish();
  }

  #reject(code: number, message: string, line?: string): void {
    let id: string | number | null = null;
    if (line !== undefined) {
      try {
        const value = parseJson(line) as { id?: unknown } | null;
        if (value && (typeof value.id === "string" || typeof value.id === "number")) id = value.id;
      } catch {
        // no id to echo
      }
    }
    this.#write({ jsonrpc: "2.0", id, error: { code, message } }).catch(() => {});
  }

  #write(message: unknown): Promise<void> {
    return this.#output.write(message);
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed) return Promise.reject(new Error("The client connection is closed"));
    return this.#write(message);
  }

  /**
   * The fast path's hook: sees each parsed message from the host before the SDK's schema check and
   * returns true to take it (it then never reaches `onmessage`).
   */
  intercept?: (message: object) => boolean;

  /** Answers request `id` with a result relayed as the bytes it came in (`result` is the JSON value). */
  sendResult(id: string | number, result: readonly Uint8Array[]): Promise<void> {
    if (this.#closed) return Promise.reject(new Error("The client connection is closed"));
    const head = utf8(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":`);
    return this.#output.writeBytes([head, ...result, CLOSE_LINE]);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#output.drained();
    this.onclose?.();
  }

  #finish(): void {
    if (this.#closed) return;
    this.close();
  }
}
