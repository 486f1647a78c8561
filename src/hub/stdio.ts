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
import { JSONRPCMessageSchema } from "./sdk.ts";
import type { JSONRPCMessage, Transport } from "./sdk.ts";

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

/** Splits a byte stream into lines without copying more than once per line. */
export class LineSplitter {
  #parts: Uint8Array[] = [];
  #size = 0;
  /** In an oversized line: its bytes are dropped until the next newline. */
  #skipping = false;
  #decoder = new TextDecoder();
  constructor(readonly maxLineBytes = MAX_MESSAGE_BYTES) {}

  /**
   * Feeds bytes; returns the complete lines they finish (without the newline), in order, with an
   * {@linkcode OversizedMessage} in place of each line over the limit (whose bytes are not kept).
   */
  push(chunk: Uint8Array): (string | OversizedMessage)[] {
    const lines: (string | OversizedMessage)[] = [];
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

  #append(part: Uint8Array, lines: (string | OversizedMessage)[]): void {
    if (part.length === 0 || this.#skipping) return;
    this.#size += part.length;
    if (this.#size > this.maxLineBytes) {
      this.#parts = [];
      this.#size = 0;
      this.#skipping = true;
      lines.push(new OversizedMessage(this.maxLineBytes));
      return;
    }
    // Deno's streams hand out a fresh buffer per chunk, so a view is safe to keep (no copy of big messages).
    this.#parts.push(part);
  }

  #take(): string {
    let bytes: Uint8Array;
    if (this.#parts.length === 1) bytes = this.#parts[0]!;
    else {
      bytes = new Uint8Array(this.#size);
      let at = 0;
      for (const p of this.#parts) {
        bytes.set(p, at);
        at += p.length;
      }
    }
    this.#parts = [];
    this.#size = 0;
    const line = this.#decoder.decode(bytes);
    return line.endsWith("\r") ? line.slice(0, -1) : line;
  }
}

/** A line that is not a JSON-RPC message. */
export class ProtocolViolation extends Error {
  override name = "ProtocolViolation";
  constructor(message: string, readonly line: string, options?: ErrorOptions) {
    super(message, options);
  }
}

function parseLine(line: string): JSONRPCMessage {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    throw new ProtocolViolation("Not JSON", line, { cause: error });
  }
  const parsed = JSONRPCMessageSchema.safeParse(value);
  if (!parsed.success) throw new ProtocolViolation("Not a JSON-RPC 2.0 message", line);
  return parsed.data;
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
}

/**
 * Writes newline-delimited messages to a pipe, one write per tick: messages sent in the same tick (a
 * burst of progress notifications, eight results at once) go out as one buffer, in order. Each
 * returned promise settles when the write holding that message has.
 */
export class CoalescingWriter {
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #encoder = new TextEncoder();
  #queue: Uint8Array[] = [];
  #queued = 0;
  #batch?: Promise<void>;
  #writes: Promise<void> = Promise.resolve();

  constructor(writer: WritableStreamDefaultWriter<Uint8Array>) {
    this.#writer = writer;
  }

  /** Queues one message (serialized here, so a later mutation of it does not change what is sent). */
  write(message: unknown): Promise<void> {
    const bytes = this.#encoder.encode(JSON.stringify(message) + "\n");
    this.#queue.push(bytes);
    this.#queued += bytes.length;
    if (!this.#batch) {
      const batch = this.#writes.then(() => {
        const parts = this.#queue;
        const size = this.#queued;
        this.#queue = [];
        this.#queued = 0;
        this.#batch = undefined;
        if (parts.length === 1) return this.#writer.write(parts[0]!);
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
    return this.#writes;
  }

  /** Closes the pipe once what is queued has been written. */
  async close(): Promise<void> {
    await this.#writes;
    await this.#writer.close();
  }
}

/** The client side of a stdio connection: spawns the server in its own process group. */
export class StdioClientTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  #params: StdioServerParams;
  #child?: Deno.ChildProcess;
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

  start(): Promise<void> {
    const { command, args, env, cwd } = this.#params;
    const child = new Deno.Command(command, {
      args,
      env,
      clearEnv: true,
      cwd,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
      // Its own process group, so closing kills wrappers (npx, sh) and what they started.
      detached: Deno.build.os !== "windows",
    }).spawn();
    this.#child = child;
    this.#writer = new CoalescingWriter(child.stdin.getWriter());
    this.#exited = child.status;
    const pumped = this.#pump(child.stdout);
    this.#drainStderr(child.stderr);
    child.status.then(async (status) => {
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
    return Promise.resolve();
  }

  async #pump(stream: ReadableStream<Uint8Array>): Promise<void> {
    const splitter = new LineSplitter();
    try {
      for await (const chunk of stream) {
        for (const line of splitter.push(chunk)) {
          if (line instanceof OversizedMessage) {
            this.onerror?.(new ProtocolViolation(line.message, ""));
            continue;
          }
          if (line.trim() === "") continue;
          let message: JSONRPCMessage;
          try {
            message = parseLine(line);
          } catch (error) {
            this.onerror?.(error as Error);
            continue;
          }
          this.onmessage?.(message);
          // The SDK runs a notification's handler one microtask later but a response at once: yield so a
          // progress notification written just before its response reaches the caller before the result.
          if (!("id" in message)) await null;
        }
      }
    } catch (error) {
      if (!this.#closed) this.onerror?.(error as Error);
    }
  }

  async #drainStderr(stream: ReadableStream<Uint8Array>): Promise<void> {
    try {
      for await (const chunk of stream) this.#params.onStderr?.(chunk);
    } catch {
      // the pipe closes when the child exits
    }
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (!this.#writer || this.#closed) throw new Error("The server connection is closed");
    await this.#writer.write(message);
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
    if (!child) return this.#finish();
    const grace = this.#params.killGraceMs ?? 2000;
    try {
      await this.#writer?.close();
    } catch {
      // already closed by the child
    }
    if (!(await exitsWithin(child.status, grace))) {
      signal(child, "SIGTERM");
      if (!(await exitsWithin(child.status, grace))) signal(child, "SIGKILL");
    }
    await child.status;
    // Leave nothing of its group behind (a wrapper's grandchildren).
    signal(child, "SIGKILL", true);
    this.#finish();
  }

  #finishedOnce = false;
  #finish(): void {
    if (this.#finishedOnce) return;
    this.#finishedOnce = true;
    this.#closed = true;
    this.onclose?.();
  }
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
function signal(child: Deno.ChildProcess, sig: Deno.Signal, groupOnly = false): void {
  if (Deno.build.os !== "windows") {
    try {
      Deno.kill(-child.pid, sig);
      return;
    } catch {
      if (groupOnly) return;
    }
  } else if (groupOnly) return;
  try {
    child.kill(sig);
  } catch {
    // already gone
  }
}

/** The server side on the gateway's own stdin/stdout. Answers non-JSON-RPC input with the protocol's error. */
export class StdioServerTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  #input: ReadableStream<Uint8Array>;
  #output: CoalescingWriter;
  #closed = false;

  constructor(input: ReadableStream<Uint8Array>, output: WritableStream<Uint8Array>) {
    this.#input = input;
    this.#output = new CoalescingWriter(output.getWriter());
  }

  start(): Promise<void> {
    this.#pump();
    return Promise.resolve();
  }

  async #pump(): Promise<void> {
    const splitter = new LineSplitter(MAX_HOST_MESSAGE_BYTES);
    try {
      for await (const chunk of this.#input) {
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
            message = parseLine(line);
          } catch (error) {
            const parseError = (error as Error).message === "Not JSON";
            this.#reject(parseError ? -32700 : -32600, parseError ? "Parse error" : "Invalid Request", line);
            continue;
          }
          this.onmessage?.(message);
        }
      }
    } catch (error) {
      this.onerror?.(error as Error);
    }
    this.#finish();
  }

  #reject(code: number, message: string, line?: string): void {
    let id: string | number | null = null;
    if (line !== undefined) {
      try {
        const value = JSON.parse(line);
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
