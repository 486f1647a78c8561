/**
 * The gateway's own end of stdio: newline-delimited JSON-RPC from the host on stdin, answers on stdout
 * through a coalescing writer.
 *
 * @module
 */
import type { JSONRPCMessage, Transport } from "../mcp/sdk.ts";
import { parseJson } from "../json/mod.ts";
import {
  type ByteSource,
  LineSplitter,
  MAX_HOST_MESSAGE_BYTES,
  OversizedMessage,
  readSource,
} from "../json/lines.ts";
import { CoalescingWriter } from "../json/pipe.ts";
import { utf8 } from "../json/raw_json.ts";
import { parseLineJson, validateMessage } from "../mcp/jsonrpc_line.ts";
import { PROTOCOL_VERSION_KEY, withoutInputKey } from "../mcp/light.ts";
import type { HostEra } from "../mcp/mod.ts";

const CLOSE_LINE = utf8("}\n");
/** The server side on the gateway's own stdin/stdout. Answers non-JSON-RPC input with the protocol's error. */
export class StdioServerTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  #input: ByteSource;
  #output: CoalescingWriter;
  #closed = false;
  #head: readonly Uint8Array[];
  #answered?: { id: string | number; line: string };
  #warn?: (line: string) => void;

  /**
   * `options.writeSync`: a synchronous write to `output`'s pipe for small batches (see
   * {@linkcode CoalescingWriter}). `options.head`: bytes of the host's read already (see early.ts), read
   * before `input`. `options.answered`: the host's `initialize` answered already with this line: the
   * answer sent to its id is not written (`options.warn` is told when it differs). `options.unchanged`: no
   * eras: every message passes as it is, both ways (the `mcp connect` bridge, whose far side is the
   * gateway's HTTP listener, which serves both eras).
   */
  constructor(
    input: ByteSource,
    output: WritableStream<Uint8Array>,
    options: {
      writeSync?: (bytes: Uint8Array) => number;
      head?: readonly Uint8Array[];
      answered?: { id: string | number; line: string };
      warn?: (line: string) => void;
      unchanged?: boolean;
    } = {},
  ) {
    this.#input = input;
    this.#output = new CoalescingWriter(output.getWriter(), options.writeSync);
    this.#head = options.head ?? [];
    this.#answered = options.answered;
    this.#warn = options.warn;
    this.#unchanged = options.unchanged ?? false;
  }

  readonly #unchanged: boolean;

  start(): Promise<void> {
    this.#pump();
    return Promise.resolve();
  }

  async #pump(): Promise<void> {
    const splitter = new LineSplitter(MAX_HOST_MESSAGE_BYTES);
    try {
      const onChunk = (chunk: Uint8Array) => {
        this.#output.readerAlive();
        for (const line of splitter.push(chunk)) {
          if (line instanceof OversizedMessage) {
            this.#inOrder(() =>
              this.#reject(
                -32600,
                `Request too large: a message exceeded the gateway's ${MAX_HOST_MESSAGE_BYTES}-byte limit for ` +
                  "messages from the host and was discarded unread",
              )
            );
            continue;
          }
          if (line.trim() === "") continue;
          let value: unknown;
          try {
            value = parseLineJson(line);
          } catch (error) {
            const parseError = (error as Error).message === "Not JSON";
            this.#inOrder(() =>
              this.#reject(parseError ? -32700 : -32600, parseError ? "Parse error" : "Invalid Request", line)
            );
            continue;
          }
          if (this.#unchanged) {
            this.#hand(value, line);
            continue;
          }
          if (!this.#era && !this.#backlog && passesAsLegacy(value, this.#legacy)) {
            // What HostEra.incoming does with it: delivered unchanged (an `initialize` makes the host legacy).
            if ((value as { method?: unknown } | null)?.method === "initialize") this.#legacy = true;
            this.#hand(value, line);
            continue;
          }
          this.#inOrder(() => this.#incoming(value, line));
        }
      };
      // What was read before the gateway loaded first (see early.ts), then the rest.
      // On a later turn, as bytes read from the pipe come: the session is connected by then.
      const head = this.#head;
      this.#head = [];
      if (head.length) await new Promise((resolve) => setTimeout(resolve, 0));
      for (const chunk of head) onChunk(chunk);
      await readSource(this.#input, onChunk);
    } catch (error) {
      this.onerror?.(error as Error);
    }
    // Messages waiting for the host side of the era are handled before the end.
    if (this.#eraLoaded) await this.#eraLoaded;
    this.#finish();
  }

  /** A message through the eras of the host's messages (see mcp/host_era.ts). */
  #incoming(value: unknown, line: string): void {
    // Which era the message is of: a modern host's may bring an opening first.
    const era = this.#era!.incoming(value);
    if (era.reply) this.#write(era.reply).catch(() => {});
    for (const note of era.notify ?? []) this.#write(note).catch(() => {});
    for (const each of era.deliver) this.#hand(each, each === value ? line : JSON.stringify(each));
  }

  /**
   * Runs `step` now when the host side of the era is loaded, else after it loads (starting the load), in
   * the order the host's messages came.
   */
  #inOrder(step: () => void): void {
    if (this.#era) {
      step();
      return;
    }
    (this.#backlog ??= []).push(step);
    this.#eraLoaded ??= import("../mcp/mod.ts").then(({ HostEra }) => {
      const era = new HostEra();
      if (this.#legacy) era.era = "legacy";
      era.inject = (message) => this.onmessage?.(message);
      this.#era = era;
      const backlog = this.#backlog ?? [];
      this.#backlog = undefined;
      for (const each of backlog) each();
    }, (error) => this.onerror?.(error as Error));
  }

  /** One message for the gateway's server: the fast path's first, then checked and handed on. */
  #hand(value: unknown, line: string): void {
    if (this.intercept && typeof value === "object" && value !== null && this.intercept(value)) {
      return;
    }
    let message: JSONRPCMessage;
    try {
      message = validateMessage(value, line);
    } catch {
      this.#reject(-32600, "Invalid Request", line);
      return;
    }
    this.onmessage?.(message);
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

  /**
   * The eras of the host's messages (see mcp/host_era.ts), loaded with the first message that needs them
   * (a 2026-07-28 request, or a `server/discover` that opens one): until then the host is a 2025 host or
   * has not said, and every message passes unchanged (start-up time: a 2025 host's `initialize` is
   * answered without them).
   */
  #era?: HostEra;
  /** An `initialize` came before the era was loaded (HostEra's "legacy"). */
  #legacy = false;
  /** The host's messages waiting, in order, for the era to load. */
  #backlog?: (() => void)[];
  #eraLoaded?: Promise<void>;

  send(message: JSONRPCMessage, options?: { relatedRequestId?: string | number }): Promise<void> {
    if (this.#closed) return Promise.reject(new Error("The client connection is closed"));
    if (this.#unchanged) return this.#write(message);
    if (this.#answered && answers(message, this.#answered.id)) return this.#answeredAlready(message);
    if (!this.#era) {
      // Before the era loaded, no 2026-07-28 message has come: HostEra would send the message as it is.
      if (!this.#backlog) return this.#write(withoutInputKey(message));
      // One has and waits for it: this message goes after it, as the era then says.
      const { promise, resolve, reject } = Promise.withResolvers<void>();
      this.#backlog.push(() => this.send(message, options).then(resolve, reject));
      return promise;
    }
    const out = this.#era.outgoing(message, options?.relatedRequestId);
    for (const back of out.back ?? []) queueMicrotask(() => this.onmessage?.(back));
    // Through the fast path's hook first: a cancellation made here may be for a call it runs.
    for (const own of out.deliver ?? []) queueMicrotask(() => this.#hand(own, JSON.stringify(own)));
    for (const answer of [...out.also ?? [], ...out.notify ?? []]) this.#write(answer).catch(() => {});
    return out.send ? this.#write(out.send) : Promise.resolve();
  }

  /** The session's answer to the `initialize` answered early: not written again; a difference is a bug. */
  #answeredAlready(message: JSONRPCMessage): Promise<void> {
    const early = this.#answered!.line;
    this.#answered = undefined;
    const line = `${JSON.stringify(message)}\n`;
    if (line !== early) {
      let at = 0;
      while (at < line.length && line[at] === early[at]) at++;
      this.#warn?.(
        `bug: the initialize answer written before the gateway loaded differs from the gateway's own at ` +
          `character ${at} (${early.length - 1} and ${line.length - 1} characters); please report it`,
      );
    }
    return Promise.resolve();
  }

  /**
   * The fast path's hook: sees each parsed message from the host before the SDK's schema check and
   * returns true to take it (it then never reaches `onmessage`).
   */
  intercept?: (message: object) => boolean;

  /**
   * Answers request `id` with a result relayed as the bytes it came in (`result` is the JSON object;
   * `options.resultType`: it has that member already). A 2026-07-28 host's result gets
   * `"resultType":"complete"` as its first member, the bytes after it unchanged (see mcp/host_era.ts).
   */
  sendResult(
    id: string | number,
    result: readonly Uint8Array[],
    options: { resultType?: boolean } = {},
  ): Promise<void> {
    if (this.#closed) return Promise.reject(new Error("The client connection is closed"));
    const answer: { id: string | number; modern: boolean; drop?: true } = this.#era?.rawAnswer(id) ??
      { id, modern: false };
    if (answer.drop) return Promise.resolve();
    const head = utf8(`{"jsonrpc":"2.0","id":${JSON.stringify(answer.id)},"result":`);
    const body = answer.modern && !options.resultType ? withResultType(result) : result;
    return this.#output.writeBytes([head, ...body, CLOSE_LINE]);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    // A modern host's open listens end with their closing result (the host knows they were ended).
    for (const note of this.#era?.endListens().notify ?? []) this.#write(note).catch(() => {});
    this.#closed = true;
    await this.#output.drained();
    this.onclose?.();
  }

  #finish(): void {
    if (this.#closed) return;
    this.close();
  }
}

/**
 * Whether HostEra.incoming (mcp/host_era.ts) would deliver the host's message unchanged while no 2026-07-28
 * request has come (`legacy`: a 2025 `initialize` has): anything but a request or notification, an
 * `initialize`, a message without the envelope's protocol version (but a `server/discover` before the
 * host is legacy), and every message of a legacy host (but a `server/discover` with the envelope).
 */
function passesAsLegacy(value: unknown, legacy: boolean): boolean {
  const m = value as { id?: unknown; method?: unknown; params?: { _meta?: Record<string, unknown> } };
  if (typeof m !== "object" || m === null || typeof m.method !== "string") return true;
  if (m.method === "initialize") return true;
  const version = m.params?._meta?.[PROTOCOL_VERSION_KEY];
  if (m.method === "server/discover" && m.id !== undefined) return legacy && version === undefined;
  return version === undefined || legacy;
}

/** Whether `message` is the answer (result or error) to request `id`. */
function answers(message: JSONRPCMessage, id: string | number): boolean {
  return !("method" in message) && "id" in message && message.id === id;
}

const RESULT_TYPE = utf8('"resultType":"complete"');
const COMMA = utf8(",");

/**
 * A JSON object's bytes (views of the chunks they came in) with `"resultType":"complete"` as its first
 * member, right after the opening brace; a comma after it unless the object is empty; every byte of the
 * object kept, in order. Bytes that are not an object pass unchanged (the fast path relays objects only).
 */
export function withResultType(parts: readonly Uint8Array[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  /** Where the bytes after the opening brace start: [part, offset]; undefined before the brace. */
  let after: [number, number] | undefined;
  for (let p = 0; p < parts.length; p++) {
    const part = parts[p]!;
    let at = 0;
    if (!after) {
      while (at < part.length && isSpace(part[at]!)) at++;
      if (at === part.length) continue;
      if (part[at] !== 0x7b) return [...parts];
      after = [p, ++at];
    }
    while (at < part.length && isSpace(part[at]!)) at++;
    if (at === part.length) continue;
    // The first member (or the closing brace of an empty object) is at `at`.
    const [bp, bo] = after;
    out.push(...parts.slice(0, bp), parts[bp]!.subarray(0, bo), RESULT_TYPE);
    if (part[at] !== 0x7d) out.push(COMMA);
    out.push(parts[bp]!.subarray(bo), ...parts.slice(bp + 1));
    return out;
  }
  return [...parts];
}

function isSpace(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}
