/**
 * HTTP/1.1 on `Deno.listen`, with the listener in charge of its sockets (issue 41). `Deno.serve` gives no
 * hold on raw connections: a flood of bare connects exhausts the process's file descriptors and its
 * accept loop throws "Too many open files" out of reach. Here every connection is counted and has a
 * state, so:
 *
 * - at most `maxConnections` are open and at most `maxPending` have not completed a request; past
 *   either cap the oldest connection that never completed a request (or was never trusted) is shed
 *   first; a trusted one (a request it sent was authenticated) only when idle, at the connection cap,
 *   when no other is left; one with a request in progress never;
 * - a connection whose request (headers and body) is not complete `headerTimeoutMs` after it started is
 *   closed; a keep-alive connection with no request for `idleTimeoutMs` is closed;
 * - an accept error (EMFILE and the like) sheds the oldest pending connection, waits briefly, and is
 *   logged once per burst; it never ends the process.
 *
 * The handler is fetch-style (`Request` → `Response`), as `Deno.serve`'s; response bodies without a
 * length are sent chunked, so SSE streams flow as written.
 *
 * @module
 */

/** Connection limits; see {@linkcode ListenLimits} in the config for the file's keys. */
export interface ConnectionLimits {
  /** Connections open at once. */
  maxConnections: number;
  /** Connections that have not completed a request yet. */
  maxPending: number;
  /** A request's headers and body must arrive within this of its first byte (of the connection's start). */
  headerTimeoutMs: number;
  /** A keep-alive connection with no request in progress is closed after this. */
  idleTimeoutMs: number;
  /** Bytes of a request's head (request line and headers). */
  maxHeaderBytes: number;
}

/** What a handler may tell about the connection its request came on. */
export interface ConnectionInfo {
  /** The request was authenticated (as `agent`): the connection is shed after unauthenticated ones. */
  trust(agent?: string): void;
}

/** A running server. */
export interface HttpServer {
  addr: Deno.NetAddr;
  /** Connections open now, by state. */
  counts(): {
    open: number;
    pending: number;
    busy: number;
    trusted: number;
    shed: number;
    acceptErrors: number;
  };
  /** Stops accepting, closes idle connections, resolves when the busy ones have finished. */
  shutdown(): Promise<void>;
  /** Closes every connection now. */
  closeAll(): void;
}

/** Options of {@linkcode serveHttp1}. */
export interface ServeOptions extends ConnectionLimits {
  hostname: string;
  port: number;
  handler: (request: Request, info: ConnectionInfo) => Promise<Response>;
  log: (line: string) => void;
  /** Told the size of each response chunk written (see settle.ts). */
  onWritten?: (bytes: number) => void;
}

const CRLF2 = new Uint8Array([13, 10, 13, 10]);
const enc = new TextEncoder();
const dec = new TextDecoder();
const BURST_MS = 2_000;

class BadRequest extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

function indexOf(haystack: Uint8Array, needle: Uint8Array, from: number): number {
  outer: for (let i = Math.max(0, from); i <= haystack.length - needle.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b;
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** Buffered reads over one connection; one read in flight at a time, shared by whoever waits. */
class ConnReader {
  buffer: Uint8Array = new Uint8Array(0);
  eof = false;
  #pending?: Promise<boolean>;
  /**
   * One read buffer per connection: what a read brings is copied out at its size. Small to start (an MCP
   * request's head and body are a few hundred bytes; an idle keep-alive connection holds its buffer in a
   * pending read), doubled after a read that filled it.
   */
  #scratch = new Uint8Array(4 * 1024);
  constructor(private conn: Deno.Conn) {}

  /** Reads more bytes into the buffer; false at end of stream (or a broken connection). */
  fill(): Promise<boolean> {
    if (this.eof) return Promise.resolve(false);
    this.#pending ??= (async () => {
      const chunk = this.#scratch;
      let n: number | null;
      try {
        n = await this.conn.read(chunk);
      } catch {
        n = null;
      }
      this.#pending = undefined;
      if (n === null) {
        this.eof = true;
        return false;
      }
      this.buffer = concat(this.buffer, chunk.slice(0, n));
      // A full buffer: the next read may bring more at once.
      if (n === chunk.length && chunk.length < 256 * 1024) this.#scratch = new Uint8Array(chunk.length * 2);
      return true;
    })();
    return this.#pending;
  }

  take(n: number): Uint8Array {
    const out = this.buffer.subarray(0, n);
    this.buffer = this.buffer.subarray(n);
    return out;
  }
}

type State = "pending" | "busy" | "idle";

interface Connection {
  conn: Deno.Conn;
  state: State;
  /** A request of this connection completed. */
  served: boolean;
  /** When its last request ended (ms since the epoch). */
  lastActive: number;
  trusted: boolean;
  /** The agent its last authenticated request came from ("" = unscoped or none). */
  agent: string;
  closed: boolean;
  timer?: ReturnType<typeof setTimeout>;
  close(): void;
}

/**
 * Buffers {@linkcode writeFramed} frames into and lends back once the write is done: every response chunk
 * (a 30 KB result is one) would otherwise be a buffer of its own, freed only by a GC. A few, each at most
 * {@linkcode FRAME_POOL_BYTES} (a write stuck on a slow client holds one; never more than these are made): a
 * bigger frame, or one while all are lent, gets a buffer of its own size.
 */
const framePool: Uint8Array[] = [];
let framePoolMade = 0;
const FRAME_POOL_SIZE = 4;
const FRAME_POOL_BYTES = 128 * 1024;

/** Writes `head` (if any), then `value` as one chunk of a chunked body (or as it is), in one write. */
async function writeFramed(
  conn: Deno.Conn,
  head: Uint8Array | undefined,
  value: Uint8Array,
  chunked: boolean,
): Promise<void> {
  if (!head && !chunked) return await writeAll(conn, value);
  const size = chunked ? enc.encode(`${value.length.toString(16)}\r\n`) : undefined;
  const length = (head?.length ?? 0) + (size?.length ?? 0) + value.length + (chunked ? 2 : 0);
  let out = length <= FRAME_POOL_BYTES ? framePool.pop() : undefined;
  let lent = out !== undefined;
  if (!out && length <= FRAME_POOL_BYTES && framePoolMade < FRAME_POOL_SIZE) {
    out = new Uint8Array(FRAME_POOL_BYTES);
    framePoolMade++;
    lent = true;
  }
  out ??= new Uint8Array(length);
  let at = 0;
  if (head) out.set(head, at), at += head.length;
  if (size) out.set(size, at), at += size.length;
  out.set(value, at);
  at += value.length;
  if (chunked) out.set([13, 10], at);
  try {
    await writeAll(conn, out.subarray(0, length));
  } finally {
    if (lent) framePool.push(out);
  }
}

/**
 * A Headers' fields as pairs, read with `forEach`: iterating a Headers (`for…of`, `entries()`, or a Headers
 * handed to `new Request`/`new Headers`) costs Deno 2.9 some 15 times as much (it sorts the list again at
 * every step), which over many requests is most of the garbage the listener makes.
 */
export function headerPairs(headers: Headers): [string, string][] {
  const pairs: [string, string][] = [];
  headers.forEach((value, name) => pairs.push([name, value]));
  return pairs;
}

async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  let at = 0;
  while (at < bytes.length) at += await conn.write(bytes.subarray(at));
}

const REASONS: Record<number, string> = {
  200: "OK",
  202: "Accepted",
  204: "No Content",
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  406: "Not Acceptable",
  408: "Request Timeout",
  413: "Content Too Large",
  415: "Unsupported Media Type",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large",
  500: "Internal Server Error",
  501: "Not Implemented",
  503: "Service Unavailable",
};

/** Starts serving; throws what `Deno.listen` throws (AddrInUse, permissions). */
export function serveHttp1(options: ServeOptions): HttpServer {
  const listener = Deno.listen({ hostname: options.hostname, port: options.port });
  const addr = listener.addr as Deno.NetAddr;
  const open = new Set<Connection>();
  let shed = 0;
  let acceptErrors = 0;
  // Lowered when the process runs out of descriptors with fewer open: it keeps a few spare to shed with.
  let cap = options.maxConnections;
  let stopped = false;
  let settled: (() => void) | undefined;
  // Logged once per burst: the first event, then a summary when the burst has been quiet for BURST_MS.
  const bursts = new Map<string, { count: number; timer?: ReturnType<typeof setTimeout> }>();
  const note = (kind: string, first: string, summary: (count: number) => string) => {
    let burst = bursts.get(kind);
    if (!burst) {
      burst = { count: 0 };
      bursts.set(kind, burst);
      options.log(first);
    }
    burst.count++;
    clearTimeout(burst.timer);
    const b = burst;
    b.timer = setTimeout(() => {
      bursts.delete(kind);
      if (b.count > 1) options.log(summary(b.count));
    }, BURST_MS);
  };

  const count = (state: State) => [...open].filter((c) => c.state === state).length;

  /**
   * The connection to give up for a newcomer, never one with a request in progress: the oldest that
   * never completed a request, else the oldest idle one never authenticated, else (only at the
   * connection cap, not for `max_pending`) the authenticated one idle the longest: its client reconnects.
   */
  const victim = (idleTrusted: boolean): Connection | undefined => {
    for (const c of open) if (c.state === "pending" && !c.served) return c;
    for (const c of open) if (!c.trusted && c.state !== "busy") return c;
    if (!idleTrusted) return undefined;
    // The agent holding the most connections gives first: one agent's hoard never costs another its own.
    const held = new Map<string, number>();
    for (const c of open) held.set(c.agent, (held.get(c.agent) ?? 0) + 1);
    let longest: Connection | undefined;
    for (const c of open) {
      if (c.state !== "idle") continue;
      if (
        !longest || held.get(c.agent)! > held.get(longest.agent)! ||
        (held.get(c.agent) === held.get(longest.agent) && c.lastActive < longest.lastActive)
      ) longest = c;
    }
    return longest;
  };

  const shedOne = (why: string, idleTrusted = true): boolean => {
    const c = victim(idleTrusted);
    if (!c) return false;
    shed++;
    note(
      "shed",
      `http: ${why}: shedding the oldest connection without an authenticated request`,
      (n) => `http: ${n} connections shed in that burst (${why})`,
    );
    c.close();
    return true;
  };

  const setTimer = (c: Connection, ms: number) => {
    clearTimeout(c.timer);
    c.timer = setTimeout(() => c.close(), ms);
  };

  const serveConnection = async (c: Connection) => {
    const reader = new ConnReader(c.conn);
    try {
      while (!c.closed && !stopped) {
        // Waiting for a request: the header timeout runs from the first byte (from the start when the
        // connection never completed one); the idle timeout until then.
        if (!c.served || reader.buffer.length > 0) setTimer(c, options.headerTimeoutMs);
        else {
          setTimer(c, options.idleTimeoutMs);
          if (!await reader.fill()) return;
          setTimer(c, options.headerTimeoutMs);
        }
        c.state = "pending";
        const head = await readHead(reader, options.maxHeaderBytes);
        if (head === undefined) return;
        if (head instanceof BadRequest) {
          await writeAll(
            c.conn,
            enc.encode(
              `HTTP/1.1 ${head.status} ${REASONS[head.status] ?? ""}\r\ncontent-type: application/json\r\n` +
                `connection: close\r\ncontent-length: ${
                  enc.encode(JSON.stringify({ error: head.message }) + "\n").length
                }\r\n\r\n${JSON.stringify({ error: head.message })}\n`,
            ),
          ).catch(() => {});
          return;
        }
        c.state = "busy";
        const keepAlive = await serveRequest(c, reader, head);
        c.served = true;
        c.lastActive = Date.now();
        if (!keepAlive) return;
        c.state = "idle";
      }
    } finally {
      c.close();
    }
  };

  const serveRequest = async (c: Connection, reader: ConnReader, head: Head): Promise<boolean> => {
    const aborter = new AbortController();
    const headers = head.headers;
    let body: ReadableStream<Uint8Array> | null = null;
    let bodyDone = true;
    const te = headers.get("transfer-encoding");
    const cl = headers.get("content-length");
    if (te !== null) {
      bodyDone = false;
      body = chunkedBody(reader, () => {
        bodyDone = true;
        clearTimeout(c.timer);
      });
    } else if (cl !== null && Number(cl) > 0) {
      bodyDone = false;
      body = lengthBody(reader, Number(cl), () => {
        bodyDone = true;
        clearTimeout(c.timer);
      });
    } else clearTimeout(c.timer);
    if (headers.get("expect")?.toLowerCase() === "100-continue" && body) {
      await writeAll(c.conn, enc.encode("HTTP/1.1 100 Continue\r\n\r\n")).catch(() => {});
    }
    const host = headers.get("host") ?? `${addr.hostname}:${addr.port}`;
    let url: string;
    try {
      url = /^https?:\/\//i.test(head.target) ? head.target : new URL(head.target, `http://${host}`).href;
    } catch {
      url = `http://${addr.hostname}:${addr.port}/`;
    }
    let response: Response;
    let request: Request | undefined;
    try {
      request = new Request(url, {
        method: head.method,
        headers: headerPairs(headers),
        body: head.method === "GET" || head.method === "HEAD" ? null : body,
        signal: aborter.signal,
      });
    } catch {
      response = new Response(JSON.stringify({ error: "Bad Request" }) + "\n", {
        status: 400,
        headers: { "content-type": "application/json" },
      });
    }
    if (request) {
      try {
        response = await options.handler(request, {
          trust: (agent) => {
            c.trusted = true;
            c.agent = agent ?? "";
          },
        });
      } catch (error) {
        options.log(`http: ${(error as Error).message}`);
        response = new Response(JSON.stringify({ error: "Internal Server Error" }) + "\n", {
          status: 500,
          headers: { "content-type": "application/json" },
        });
      }
    }
    clearTimeout(c.timer);
    // A body the handler did not read to its end: the connection cannot carry another request.
    let keepAlive = bodyDone && head.keepAlive && !stopped;
    const out = new Headers(headerPairs(response!.headers));
    out.set("connection", keepAlive ? "keep-alive" : "close");
    const noBody = head.method === "HEAD" || response!.status === 204 || response!.status === 304;
    const stream = response!.body;
    let chunked = false;
    if (noBody || stream === null) {
      if (!noBody) out.set("content-length", "0");
      await response!.body?.cancel().catch(() => {});
    } else if (!out.has("content-length")) {
      // HTTP/1.0 has no chunked encoding: the body ends with the connection.
      if (head.http10) keepAlive = false;
      else {
        chunked = true;
        out.set("transfer-encoding", "chunked");
      }
      out.set("connection", keepAlive ? "keep-alive" : "close");
    }
    let text = `HTTP/1.1 ${response!.status} ${response!.statusText || REASONS[response!.status] || ""}\r\n`;
    out.forEach((value, name) => text += `${name}: ${value}\r\n`);
    const headBytes = enc.encode(text + "\r\n");
    if (noBody || stream === null) {
      try {
        await writeAll(c.conn, headBytes);
      } catch {
        return false;
      }
      return keepAlive;
    }
    // The client going away ends the response: watch the connection while the body streams.
    const bodyReader = stream.getReader();
    const watcher = bodyDone
      ? watchGone(reader, options.maxHeaderBytes, () => {
        aborter.abort();
        bodyReader.cancel().catch(() => {});
      })
      : undefined;
    let first = true;
    try {
      // An event stream's headers go at once: its first event may be long in coming (a running call).
      if (out.get("content-type")?.includes("text/event-stream")) {
        await writeAll(c.conn, headBytes);
        first = false;
      }
      for (;;) {
        const { done, value } = await bodyReader.read();
        if (done) break;
        if (!value || value.length === 0) continue;
        await writeFramed(c.conn, first ? headBytes : undefined, value, chunked);
        options.onWritten?.(value.length);
        first = false;
      }
      if (first) await writeAll(c.conn, headBytes);
      if (chunked) await writeAll(c.conn, enc.encode("0\r\n\r\n"));
    } catch {
      aborter.abort();
      await bodyReader.cancel().catch(() => {});
      return false;
    } finally {
      watcher?.stop();
    }
    return keepAlive && !watcher?.gone;
  };

  const acceptLoop = async () => {
    while (!stopped) {
      let conn: Deno.Conn;
      try {
        conn = await listener.accept();
      } catch (error) {
        if (stopped) return;
        if (error instanceof Deno.errors.BadResource || error instanceof Deno.errors.Interrupted) {
          if (stopped) return;
        }
        acceptErrors++;
        const exhausted = /open files|os error 2[34]\b/i.test((error as Error).message);
        // Headroom for the rest of the process (a config reload, the store, a server's pipes): running out of
        // descriptors elsewhere is worse than a connection refused.
        if (exhausted && open.size > 16) {
          cap = Math.min(cap, open.size - Math.max(8, Math.min(64, open.size >> 3)));
        }
        note(
          "accept",
          `http: accepting a connection failed: ${(error as Error).message}; ${open.size} open; ` +
            `keeping at most ${cap} and shedding connections without an authenticated request`,
          (n) => `http: ${n} accept failures in that burst`,
        );
        // Free a descriptor, then give the system a moment.
        if (exhausted) shedOne("out of file descriptors");
        await new Promise((resolve) => setTimeout(resolve, exhausted ? 5 : 50));
        continue;
      }
      if (stopped) {
        conn.close();
        return;
      }
      // Headers and events are written as they come: no Nagle delay (40 ms against a delayed ACK).
      try {
        (conn as Deno.TcpConn).setNoDelay?.(true);
      } catch {
        // not a TCP connection
      }
      if (open.size >= cap && !shedOne(`${open.size} connections open`)) {
        shed++;
        note(
          "refuse",
          `http: ${open.size} connections are open, the most this listener keeps, all with a request in ` +
            "progress: refusing new ones",
          (n) => `http: ${n} connections refused in that burst`,
        );
        conn.close();
        continue;
      }
      if (count("pending") >= options.maxPending) {
        shedOne(`${options.maxPending} connections wait for a request`);
      }
      const c: Connection = {
        conn,
        state: "pending",
        served: false,
        lastActive: Date.now(),
        trusted: false,
        agent: "",
        closed: false,
        close() {
          if (this.closed) return;
          this.closed = true;
          clearTimeout(this.timer);
          open.delete(this);
          try {
            conn.close();
          } catch {
            // already closed
          }
          if (settled && ![...open].some((o) => o.state === "busy")) settled();
        },
      };
      open.add(c);
      void serveConnection(c).catch(() => c.close());
    }
  };
  void acceptLoop();

  return {
    addr,
    counts: () => ({
      open: open.size,
      pending: count("pending"),
      busy: count("busy"),
      trusted: [...open].filter((c) => c.trusted).length,
      shed,
      acceptErrors,
    }),
    shutdown() {
      stopped = true;
      try {
        listener.close();
      } catch {
        // closed
      }
      for (const c of [...open]) if (c.state !== "busy") c.close();
      if (open.size === 0) return Promise.resolve();
      return new Promise<void>((resolve) => settled = resolve);
    },
    closeAll() {
      stopped = true;
      try {
        listener.close();
      } catch {
        // closed
      }
      for (const c of [...open]) c.close();
      for (const burst of bursts.values()) clearTimeout(burst.timer);
      bursts.clear();
    },
  };
}

/**
 * Watches a connection for its client going away while a response streams (`onGone` then runs once), until
 * `stop()`. The read it leaves pending when stopped keeps only this small state: a connection that serves
 * many requests never piles up one watcher (and its request's streams) per request.
 */
function watchGone(
  reader: ConnReader,
  maxBuffered: number,
  onGone: () => void,
): { readonly gone: boolean; stop(): void } {
  const state = { gone: false, onGone: onGone as (() => void) | undefined };
  const watch = () => {
    if (!state.onGone || reader.buffer.length > maxBuffered) return;
    void reader.fill().then((more) => {
      const gone = state.onGone;
      if (!gone) return;
      if (!more) {
        state.gone = true;
        state.onGone = undefined;
        gone();
      } else watch();
    });
  };
  watch();
  return {
    get gone() {
      return state.gone;
    },
    stop() {
      state.onGone = undefined;
    },
  };
}

interface Head {
  method: string;
  target: string;
  headers: Headers;
  keepAlive: boolean;
  /** HTTP/1.0: no chunked responses. */
  http10: boolean;
}

/** Reads one request head; undefined at a clean end of stream. */
async function readHead(reader: ConnReader, maxBytes: number): Promise<Head | BadRequest | undefined> {
  let end = -1;
  let searched = 0;
  for (;;) {
    // Blank lines before a request are allowed (RFC 9112 2.2).
    while (reader.buffer.length >= 2 && reader.buffer[0] === 13 && reader.buffer[1] === 10) reader.take(2);
    end = indexOf(reader.buffer, CRLF2, searched - 3);
    if (end !== -1) break;
    searched = reader.buffer.length;
    if (reader.buffer.length > maxBytes + 8 * 1024) {
      return new BadRequest(431, `Request headers are over the limit of ${maxBytes} bytes`);
    }
    if (!await reader.fill()) return undefined;
  }
  const text = dec.decode(reader.take(end + 4)).slice(0, -4);
  const lines = text.split("\r\n");
  const line = /^([A-Z]+) (\S+) HTTP\/1\.([01])$/.exec(lines[0]);
  if (!line) return new BadRequest(400, "Bad Request: malformed request line");
  const headers = new Headers();
  try {
    for (const field of lines.slice(1)) {
      const colon = field.indexOf(":");
      if (colon <= 0 || /[\s]/.test(field.slice(0, colon))) {
        return new BadRequest(400, "Bad Request: malformed header line");
      }
      headers.append(field.slice(0, colon), field.slice(colon + 1).trim());
    }
  } catch {
    return new BadRequest(400, "Bad Request: malformed header");
  }
  const te = headers.get("transfer-encoding");
  const cl = headers.get("content-length");
  if (te !== null && (cl !== null || te.toLowerCase() !== "chunked")) {
    return new BadRequest(
      te.toLowerCase() === "chunked" ? 400 : 501,
      "Bad Request: only Transfer-Encoding: chunked, without Content-Length",
    );
  }
  if (cl !== null && !/^\d{1,15}$/.test(cl)) {
    return new BadRequest(400, "Bad Request: malformed Content-Length");
  }
  const connection = (headers.get("connection") ?? "").toLowerCase();
  const keepAlive = line[3] === "1" ? !/\bclose\b/.test(connection) : /\bkeep-alive\b/.test(connection);
  return { method: line[1], target: line[2], headers, keepAlive, http10: line[3] === "0" };
}

/** A body of exactly `length` bytes. */
function lengthBody(reader: ConnReader, length: number, done: () => void): ReadableStream<Uint8Array> {
  let left = length;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (reader.buffer.length === 0 && !await reader.fill()) {
        controller.error(new Error("the connection closed before the request body ended"));
        return;
      }
      const chunk = reader.take(Math.min(left, reader.buffer.length)).slice();
      left -= chunk.length;
      controller.enqueue(chunk);
      if (left === 0) {
        done();
        controller.close();
      }
    },
  });
}

/** A `Transfer-Encoding: chunked` body, decoded. */
function chunkedBody(reader: ConnReader, done: () => void): ReadableStream<Uint8Array> {
  let left = 0;
  let finished = false;
  const line = async (): Promise<string> => {
    for (;;) {
      const at = indexOf(reader.buffer, CRLF2.subarray(2), 0);
      if (at !== -1) return dec.decode(reader.take(at + 2)).slice(0, -2);
      if (reader.buffer.length > 8 * 1024) throw new Error("malformed chunked body");
      if (!await reader.fill()) throw new Error("the connection closed before the request body ended");
    }
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        if (finished) return;
        if (left === 0) {
          const size = parseInt((await line()).split(";")[0].trim(), 16);
          if (!Number.isFinite(size) || size < 0) throw new Error("malformed chunk size");
          if (size === 0) {
            // Trailers, up to the blank line.
            while ((await line()) !== "") { /* ignored */ }
            finished = true;
            done();
            controller.close();
            return;
          }
          left = size;
        }
        if (reader.buffer.length === 0 && !await reader.fill()) {
          throw new Error("the connection closed before the request body ended");
        }
        const chunk = reader.take(Math.min(left, reader.buffer.length)).slice();
        left -= chunk.length;
        if (left === 0) {
          while (reader.buffer.length < 2) {
            if (!await reader.fill()) throw new Error("the connection closed before the request body ended");
          }
          reader.take(2);
        }
        controller.enqueue(chunk);
      } catch (error) {
        controller.error(error);
      }
    },
  });
}
