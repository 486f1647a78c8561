/**
 * Newline-delimited JSON-RPC to a downstream server over its pipes: the client end that starts the
 * server (the gateway's own end is `gateway/stdio_server.ts`). Ours rather than the SDK's so that we control the environment,
 * the process group (no orphans), large messages (the SDK's buffer is capped
 * at 10 MB and copies quadratically) and what happens to bytes that are not
 * JSON-RPC.
 *
 * @module
 */
import type { ChildProcess } from "node:child_process";
import type { Readable } from "node:stream";
import { ErrorCode, McpError } from "../mcp/sdk.ts";
import { localFailure, type PendingCall, PendingCalls } from "./deadline.ts";
import { InvalidResultError } from "../mcp/errors.ts";
import type { JSONRPCMessage, Progress, Transport } from "../mcp/sdk.ts";
import { type Member, member, RawBytes, RawResult, scan } from "../json/raw_json.ts";
import { slicedParseApplies } from "../json/sliced_json.ts";
import { NoticeGate } from "./notice_gate.ts";
import { Era, type WireTap } from "../mcp/era.ts";
import {
  decodeLine,
  type LineSpillPolicy,
  LineSplitter,
  OversizedMessage,
  readSocket,
} from "../json/lines.ts";
import { CoalescingWriter, streamWriter } from "../json/pipe.ts";
import { parseLineJson, parseRaw, ProtocolViolation, validateMessage } from "../mcp/jsonrpc_line.ts";
import { putStandIns, SCAN_MIN_BYTES } from "../trust/definition_scan.ts";
import { type ListAnswer, ListScreen, TOOLS_PATH } from "../trust/list_screen.ts";

/** What {@linkcode StdioClientTransport.callRaw} needs besides the tool. */
export interface RawCallOptions {
  signal?: AbortSignal;
  timeoutMs: number;
  onProgress?: (progress: Progress) => void;
  /** For the request's `params._meta` (W3C trace context; see DownstreamCallOptions.meta). */
  meta?: object;
  /** Told the request's id (`mcphub-N`) as it is sent. */
  onRequestId?: (id: string) => void;
}

/** A fast-path call, known by its request id. */
type RawCall = PendingCall<RawResult, string>;

/** A response's result is read down to its content blocks, in the same pass (isError, types, preview). */
const RESULT_PATH = ["result", "content", "*"];

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
  /** Open with a `server/discover` probe (its era is unknown, or it spoke 2026-07-28; see mcp/era.ts). */
  probe?: boolean;
  /** How long the probe waits for its answer before the 2025 opening goes. @default PROBE_MS */
  probeMs?: number;
  /** Sees what is written and read (the gateway's CLIENT spans: see mcp/era.ts). */
  tap?: WireTap;
}

/**
 * How long a `server/discover` probe waits for its answer before the 2025 opening is sent after it, unless
 * told (the downstream gives half its connect timeout): a server that ignores an unknown request before
 * `initialize` costs this once (the cache then says legacy; none of the servers tested does: they answer
 * -32601 at once). It runs from the probe's write, so it
 * includes the server's start.
 */
export const PROBE_MS = 15_000;

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
    this.era = new Era({ probe: params.probe, listen: true });
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
    if (this.#closed) throw localFailure(ErrorCode.ConnectionClosed, "Connection closed");
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
    splitter.scanPath = this.#rawCalls.size ? RESULT_PATH : this.#lists.awaiting ? TOOLS_PATH : undefined;
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
      if (this.#lists.awaiting && raw.length >= SCAN_MIN_BYTES) {
        const answer = this.#lists.answer(raw);
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
    const tap = this.#params.tap;
    tap?.in(message);
    const era = this.era.incoming(message);
    if (this.#probeTimer !== undefined && this.era.era !== "probing") clearTimeout(this.#probeTimer);
    if (era.send) {
      this.#writer?.write(tap ? tap.out(era.send) : era.send).catch((error) =>
        this.onerror?.(error as Error)
      );
    }
    for (const request of era.requests ?? []) this.onmessage?.(request);
    if (!era.deliver) return;
    message = era.deliver;
    this.#gate.delivered(message);
    if (this.#lists.awaiting && "id" in message && !("method" in message)) this.#lists.answered(message.id!);
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
   * Delivers line `at`, a `tools/list` answer, then the lines after it: each tool over the depth or size
   * limit is judged from its bytes in slices and replaced by its stand-in, unparsed, and big members the
   * gateway does not read are not parsed either (see definition_scan.ts); the rest of the line is parsed
   * as any other.
   */
  async #deliverList(lines: (RawBytes | OversizedMessage)[], at: number, answer: ListAnswer): Promise<void> {
    const raw = lines[at] as RawBytes;
    let message: JSONRPCMessage | undefined;
    try {
      const { bytes, standIns } = await this.#lists.screen(raw, answer);
      message = await parseRaw(bytes);
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

  /** The connection's protocol era, decided by its opening (see mcp/era.ts). */
  readonly era: Era;
  #probeTimer?: ReturnType<typeof setTimeout>;

  async send(message: JSONRPCMessage): Promise<void> {
    if (!this.#writer || this.#closed) throw new Error("The server connection is closed");
    const out = this.era.outgoing(message);
    if (out.reply) {
      const reply = out.reply;
      queueMicrotask(() => this.#hand(reply));
    }
    if (!out.send) return;
    if (this.era.era === "probing" && this.#probeTimer === undefined) {
      // Unanswered in time: the 2025 opening goes after it (a late answer is dropped by the era).
      this.#probeTimer = setTimeout(() => {
        const opening = this.era.probeFailed();
        if (opening && !this.#closed) {
          const tap = this.#params.tap;
          this.#writer?.write(tap ? tap.out(opening) : opening).catch((error) =>
            this.onerror?.(error as Error)
          );
        }
      }, this.#params.probeMs ?? PROBE_MS);
    }
    message = out.send;
    if ("method" in message && message.method === "tools/list" && "id" in message) {
      this.#lists.sent(message.id);
    }
    this.#gate.sent(message);
    const tap = this.#params.tap;
    if (!tap) return await this.#writer.write(message);
    const sent = tap.out(message);
    try {
      await this.#writer.write(sent);
    } catch (error) {
      tap.unsent(sent, error);
      throw error;
    }
  }

  /** The `tools/list` answers awaited, screened from their bytes. */
  #lists = new ListScreen();

  #rawCalls = new Map<string, RawCall>();
  /** The progress listeners of the fast path's calls that have one, by request id. */
  #rawProgress = new Map<string, (progress: Progress) => void>();
  #rawSeq = 0;
  /** The fast path's calls in flight: deadlines, cancellation, settling (see deadline.ts). */
  #calls = new PendingCalls();

  /**
   * Calls a tool beside the SDK's client on the same pipe (ids of our own, `mcphub-N`, that the SDK never
   * issues): its answer is kept as the bytes that came, checked only for what the gateway relies on (an
   * object result, `content` an array, `isError` a boolean). Ends as a call of {@linkcode PendingCalls}
   * (timed out, cancelled, connection closed; the first two send `notifications/cancelled`), McpError for
   * an error answer, InvalidResultError for an invalid result.
   */
  callRaw(name: string, args: Record<string, unknown>, options: RawCallOptions): Promise<RawResult> {
    const writer = this.#writer;
    if (!writer || this.#closed) {
      return Promise.reject(localFailure(ErrorCode.ConnectionClosed, "Connection closed"));
    }
    const { onProgress } = options;
    const id = `mcphub-${++this.#rawSeq}`;
    // One cancel for every call of the connection, told the call's id: no closure per call.
    const call = this.#calls.open<RawResult, string>(options, this.#cancelRaw, id);
    if (!call.open) return call.promise;
    this.#rawCalls.set(id, call);
    if (onProgress) this.#rawProgress.set(id, onProgress);
    const params: Record<string, unknown> = { name, arguments: args };
    const own = options.meta
      ? (onProgress ? { ...options.meta, progressToken: id } : { ...options.meta })
      : onProgress
      ? { progressToken: id }
      : undefined;
    const meta = this.era.meta(own);
    if (meta) params._meta = meta;
    options.onRequestId?.(id);
    writer.write({ method: "tools/call", params, jsonrpc: "2.0", id }).catch((error) => {
      if (this.#rawCalls.get(id) !== call) return;
      this.#forgetRaw(id);
      call.reject(error);
    });
    return call.promise;
  }

  /** A fast-path call ended from the gateway's side (timed out, cancelled): the server is told. */
  #cancelRaw = (reason: unknown, id: string): void => {
    this.#forgetRaw(id);
    this.#writer?.write({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: id, reason: String(reason) },
    }).catch(() => {});
  };

  /** Forgets a fast-path call's id (it ended). */
  #forgetRaw(id: string): void {
    this.#rawCalls.delete(id);
    if (this.#rawProgress.size) this.#rawProgress.delete(id);
  }

  /** Takes a line that answers a call of the fast path, or reports its progress; false for any other. */
  #routeRaw(raw: RawBytes): boolean {
    const top = raw.scanned === undefined ? scan(raw, 0, raw.length, RESULT_PATH) : raw.scanned;
    if (!top || top.kind !== "object") return false;
    const id = member(top.members, "id");
    if (id) {
      if (raw.at(id.start) !== 0x22 || id.end - id.start > 64) return false;
      const key = raw.json(id.start, id.end) as string;
      const call = this.#rawCalls.get(key);
      if (!call) return false;
      this.#forgetRaw(key);
      settleRaw(call, raw, top.members);
      return true;
    }
    const method = member(top.members, "method");
    const params = member(top.members, "params");
    if (!method || !params || method.end - method.start > 64) return false;
    if (raw.json(method.start, method.end) !== "notifications/progress") return false;
    const value = raw.json(params.start, params.end) as Record<string, unknown> | null;
    if (!value || typeof value !== "object" || typeof value.progressToken !== "string") return false;
    if (!this.#rawCalls.has(value.progressToken)) return false;
    const onProgress = this.#rawProgress.get(value.progressToken);
    const { progressToken: _, ...progress } = value;
    if (typeof progress.progress === "number") onProgress?.(progress as unknown as Progress);
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
    clearTimeout(this.#probeTimer);
    this.#rawCalls.clear();
    this.#rawProgress.clear();
    this.#calls.close();
    this.#params.tap?.close();
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
      call.reject(McpError.asSent(e.code, e.message, e.data));
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
