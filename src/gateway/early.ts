/**
 * A 2025 host's `initialize` answered before the gateway loads (`mcp serve` on stdio, start-up time): the
 * host's first line is read from stdin; when it is a well-formed `initialize` request, its answer (see
 * initialize.ts: byte for byte the gateway's own) is written at once, and the gateway, loaded after, gets
 * every byte read so far and the rest of stdin, in order. Its session takes the same `initialize` as
 * always; the stdio server end drops its answer (written already). Anything else first (a 2026-07-28
 * request, a malformed `initialize`, a notification) is left to the gateway, unanswered here.
 *
 * @module
 */
import type { Readable } from "node:stream";
import type { ByteSource } from "../json/lines.ts";
import { parseJson } from "../json/mod.ts";
import type { Config } from "../config/light.ts";
import { isPostgresUrl } from "../store/mod.ts";
import { readCachedInstructions } from "../catalog/cached_instructions.ts";
import {
  earlyInitializeRequest,
  initializeAnswer,
  type InitializeRequestParts,
  instructionsText,
  scopeOf,
} from "./initialize.ts";

/** Bytes of a first line read before giving up on answering early (an `initialize` is far smaller). */
const FIRST_LINE_LIMIT = 1024 * 1024;

/** What the gateway reads from the host, after an early read. */
export interface HostStart {
  /** The bytes read from stdin so far, in order: the gateway reads them first. */
  head: Uint8Array[];
  /** The rest of stdin; undefined when it ended (or failed) during the early read. */
  rest?: ByteSource;
  /** The `initialize` answered early: its id and the line written; undefined when none was. */
  answered?: { id: string | number; line: string };
}

/**
 * Reads the host's first line from `source`; when it is an `initialize` request that `answer` answers
 * (undefined: not early), writes the answer with `write` (a synchronous write, as `Deno.stdout.writeSync`)
 * and says so. Never throws: a write that fails (the host is gone) is left for the gateway to find.
 */
export async function answerEarly(
  source: ByteSource,
  answer: (request: InitializeRequestParts) => string | undefined,
  write: (bytes: Uint8Array) => number,
): Promise<HostStart> {
  const { head, ended } = await readFirstLine(source);
  const start: HostStart = { head, rest: ended ? undefined : source };
  const line = firstLine(head);
  if (line === undefined) return start;
  let value: unknown;
  try {
    value = parseJson(line);
  } catch {
    return start;
  }
  const request = earlyInitializeRequest(value);
  const text = request && answer(request);
  if (!request || text === undefined) return start;
  try {
    const bytes = new TextEncoder().encode(text);
    for (let at = 0; at < bytes.length;) at += write(bytes.subarray(at));
  } catch {
    // The host is gone: the gateway finds stdin's end.
  }
  return { ...start, answered: { id: request.id, line: text } };
}

/** The first line of `chunks` as text (without its newline and a carriage return); undefined without one. */
function firstLine(chunks: readonly Uint8Array[]): string | undefined {
  const bytes = concat(chunks);
  const nl = bytes.indexOf(0x0a);
  if (nl < 0) return undefined;
  const line = new TextDecoder().decode(bytes.subarray(0, nl));
  return line.endsWith("\r") ? line.slice(0, -1) : line;
}

function concat(chunks: readonly Uint8Array[]): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) (out.set(c, at), at += c.length);
  return out;
}

/**
 * Chunks from `source` until one holds a newline (or {@linkcode FIRST_LINE_LIMIT} bytes came, or the
 * source ended); the source is left where it was, paused, for the gateway to read on.
 */
function readFirstLine(source: ByteSource): Promise<{ head: Uint8Array[]; ended: boolean }> {
  return source instanceof ReadableStream ? readStream(source) : readSocket(source);
}

async function readStream(
  stream: ReadableStream<Uint8Array>,
): Promise<{ head: Uint8Array[]; ended: boolean }> {
  const head: Uint8Array[] = [];
  const reader = stream.getReader();
  let size = 0;
  try {
    while (true) {
      const { value, done } = await reader.read();
      if (done) return { head, ended: true };
      head.push(value);
      size += value.length;
      if (value.includes(0x0a) || size >= FIRST_LINE_LIMIT) return { head, ended: false };
    }
  } catch {
    return { head, ended: true };
  } finally {
    reader.releaseLock();
  }
}

function readSocket(stream: Readable): Promise<{ head: Uint8Array[]; ended: boolean }> {
  return new Promise((resolve) => {
    const head: Uint8Array[] = [];
    let size = 0;
    const done = (ended: boolean) => {
      stream.off("data", onData);
      stream.off("end", onEnd);
      stream.off("close", onEnd);
      stream.off("error", onEnd);
      stream.pause();
      // Until the gateway reads on (its reader listens for errors): an error then is its end, not a crash.
      stream.on("error", () => {});
      resolve({ head, ended });
    };
    const onData = (chunk: Uint8Array) => {
      head.push(chunk);
      size += chunk.length;
      if (chunk.includes(0x0a) || size >= FIRST_LINE_LIMIT) done(false);
    };
    const onEnd = () => done(true);
    stream.on("data", onData);
    stream.once("end", onEnd);
    stream.once("close", onEnd);
    stream.once("error", onEnd);
    stream.resume();
  });
}

/**
 * The gateway's answer to an `initialize` request, as a session of `startGateway` with these options gives
 * it: its instructions from the config, the agent's scope and the servers' instructions the tool-list
 * cache holds in a SQLite store (a shared PostgreSQL store's are read after the session starts, so none
 * then). Undefined when only the gateway can tell: an agent the config does not define, a store that
 * cannot be read now.
 */
export function gatewayAnswerer(
  options: { config: Config; agent?: string; storePath: string; version: string },
): (request: InitializeRequestParts) => string | undefined {
  return (request) => {
    const { config } = options;
    const inScope = scopeOf(config, options.agent);
    if (!inScope) return undefined;
    // An agent with an exact tool allowlist is told no server's own instructions: nothing to read.
    const cached = inScope.scope?.tools || isPostgresUrl(options.storePath)
      ? new Map<string, string>()
      : readCachedInstructions(options.storePath, inScope.servers);
    if (!cached) return undefined;
    const instructions = instructionsText({
      config,
      servers: inScope.servers,
      scope: inScope.scope,
      codeMode: config.codeMode || inScope.scope?.codeMode === true,
      instructions: (server) => cached.get(server),
    });
    return initializeAnswer(request, { version: options.version, instructions });
  };
}
