/**
 * For HTTP downstreams, what downstream/stdio.ts does for pipes, through the same screen (list_screen.ts): the answer to a `tools/list` the gateway sent is
 * read as its bytes arrive, and each tool over the depth or size limit is judged from its bytes and
 * replaced by its stand-in, never parsed (see definition_scan.ts), as are big members the gateway does not
 * read. The SDK's HTTP transports parse whole bodies and events themselves, so this sits in front of them
 * as their `fetch`: a body (`application/json`) or an event stream (`text/event-stream`, each event's
 * `data` line) holding such an answer reaches the SDK with `null` in each stand-in's place, and the
 * transport's `onmessage` puts the stand-ins back before the client reads the list.
 *
 * @module
 */
import type { JSONRPCMessage, Transport } from "../mcp/sdk.ts";
import { concat, RawBytes, type Scanned, Scanner, utf8 } from "../json/raw_json.ts";
import { putStandIns, SCAN_MIN_BYTES, type StandIn } from "./definition_scan.ts";
import { LIST_IDS, ListScreen, TOOLS_PATH } from "./list_screen.ts";
import { SLICE_MS } from "../json/slices.ts";

/** Requests larger than this are not read to see whether they are a `tools/list` (ours are small). */
const REQUEST_PEEK_BYTES = 4096;
const LF = 0x0a;
/** A chunk larger than this is appended and scanned in pieces of this size, a yield check between. */
const SCAN_PIECE_BYTES = 64 * 1024;
const DATA = utf8("data:");
const DATA_SPACE = utf8("data: ");
const LF_BYTES = new Uint8Array([LF]);

type Id = string | number;

/**
 * The `fetch` of one HTTP downstream connection and the hook on its transport: see the module's note.
 * One per transport (the ids it awaits are that connection's).
 */
export class HttpListScreen {
  readonly #base: typeof fetch;
  /** The `tools/list` answers awaited, screened from their bytes. */
  #lists = new ListScreen();
  /** Stand-ins of answers rewritten but not yet delivered, by id. */
  #standIns = new Map<Id, StandIn[]>();

  /** @param base the `fetch` the transport would use otherwise */
  constructor(base: typeof fetch = fetch) {
    this.#base = base;
  }

  /** The `fetch` to give the SDK transport. */
  readonly fetch: typeof fetch = async (input, init) => {
    const id = listRequestId(init);
    if (id !== undefined) {
      this.#lists.sent(id);
    }
    const response = await this.#base(input, init);
    if (!response.ok || !response.body) return response;
    const type = response.headers.get("content-type") ?? "";
    if (type.includes("application/json") && this.#lists.awaiting) {
      return rebuilt(response, (await this.#screenBody(response.body)) as Uint8Array<ArrayBuffer>);
    }
    // Any stream: it may carry the answer to a tools/list sent after it opened (the older HTTP+SSE
    // transport's GET stream); its lines are scanned only while a list is awaited.
    if (type.includes("text/event-stream")) {
      return rebuilt(response, this.#screenEvents(response.body));
    }
    return response;
  };

  /** Hooks `transport`'s `onmessage` (as set by the client, now or later) to put stand-ins back. */
  watch(transport: Transport): void {
    let handler: Transport["onmessage"];
    Object.defineProperty(transport, "onmessage", {
      configurable: true,
      enumerable: true,
      get: () => handler,
      set: (next: Transport["onmessage"]) => {
        handler = next && ((message, extra) => {
          this.#restore(message);
          next(message, extra);
        });
      },
    });
  }

  #restore(message: JSONRPCMessage): void {
    if (!this.#standIns.size || !("id" in message) || !("result" in message)) return;
    const standIns = this.#standIns.get(message.id);
    if (!standIns) return;
    this.#standIns.delete(message.id);
    putStandIns(message, standIns);
  }

  /** A JSON body, read and scanned as it arrives, rewritten when it answers an awaited `tools/list`. */
  async #screenBody(body: ReadableStream<Uint8Array>): Promise<Uint8Array> {
    const raw = new RawBytes();
    const scanner = new Scanner(raw, TOOLS_PATH);
    const turn = new Turns();
    // Chunks that have arrived already come one after another in microtasks: without a macrotask
    // between, a 2 MB answer scanned as it is read held the event loop ~90 ms (a ping waited for it).
    for await (const chunk of body) {
      for (let at = 0; at < chunk.length; at += SCAN_PIECE_BYTES) {
        raw.append(
          at === 0 && chunk.length <= SCAN_PIECE_BYTES ? chunk : chunk.subarray(at, at + SCAN_PIECE_BYTES),
        );
        scanner.advance();
        await turn.check();
      }
    }
    const out = raw.length >= SCAN_MIN_BYTES ? await this.#rewrite(raw, scanner.advance()) : raw;
    return concat(out.parts, out.length);
  }

  /**
   * An event stream whose `data:` lines are scanned as they arrive (the value from after `data:`), and
   * rewritten when they answer an awaited `tools/list`; other lines pass unchanged. An event's data may
   * be split over several `data:` lines (a parser joins their values with a line feed): while a scanned
   * value is still open at the end of its line, the next `data:` lines of the event are joined to it (LF,
   * then their value) and scanned as one, and the event's data is written back, rewritten or not, as
   * `data: ` lines holding the same value. Other field lines in between pass at once; the blank line that
   * ends the event ends the join.
   */
  #screenEvents(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
    const reader = body.getReader();
    /** The line being read; with `joined`, the head of a line until it is known to be `data:` or not. */
    let line = new RawBytes();
    let scanner: Scanner | undefined;
    let decided = false;
    /** An event's data being joined: `data:` and the first value, then LF and each next value. */
    let joined: RawBytes | undefined;
    /** The current line continues `joined`: its bytes after `data:` (and one space) go there. */
    let continuing = false;
    /** A space after `data:` is still to be dropped (it may come in the next chunk). */
    let dropSpace = false;
    const turn = new Turns();
    /** Bytes of a data line that continues `joined` (its first space after `data:` dropped). */
    const continueValue = (bytes: Uint8Array) => {
      if (dropSpace && bytes.length) {
        dropSpace = false;
        if (bytes[0] === 0x20) bytes = bytes.subarray(1);
      }
      if (bytes.length) joined!.append(bytes);
      scanner!.advance();
    };
    const emit = (out: ReadableStreamDefaultController<Uint8Array>, raw: RawBytes) => {
      for (const part of raw.parts) out.enqueue(part);
    };
    /** Writes the joined data back as `data: ` lines (its LFs become line breaks), then forgets it. */
    const finish = async (out: ReadableStreamDefaultController<Uint8Array>) => {
      const data = joined!;
      const whole = data.length >= SCAN_MIN_BYTES ? await this.#rewrite(data, scanner!.advance()) : data;
      for (const part of whole.parts) {
        let at = 0;
        for (let lf = part.indexOf(LF); lf >= 0; lf = part.indexOf(LF, at)) {
          out.enqueue(part.subarray(at, lf + 1));
          out.enqueue(DATA_SPACE);
          at = lf + 1;
        }
        if (at < part.length) out.enqueue(at === 0 ? part : part.subarray(at));
      }
      out.enqueue(LF_BYTES);
      joined = undefined;
      scanner = undefined;
    };
    return new ReadableStream<Uint8Array>({
      // A pull that enqueues nothing is not called again: read until a line is complete or the end.
      pull: async (out) => {
        for (let sent = false; !sent;) {
          const { value: chunk, done } = await reader.read();
          if (done) {
            if (joined) await finish(out);
            if (line.length) out.enqueue(concat(line.parts, line.length));
            out.close();
            return;
          }
          // A big chunk in pieces, and a macrotask now and then: see #screenBody.
          for (let piece = 0; piece < chunk.length; piece += SCAN_PIECE_BYTES) {
            await turn.check();
            const value = chunk.length <= SCAN_PIECE_BYTES
              ? chunk
              : chunk.subarray(piece, piece + SCAN_PIECE_BYTES);
            let at = 0;
            while (at < value.length) {
              const lf = value.indexOf(LF, at);
              const end = lf < 0 ? value.length : lf;
              if (continuing) {
                continueValue(value.subarray(at, end));
                if (lf < 0) break;
                continuing = false;
                dropSpace = false;
                at = lf + 1;
                continue;
              }
              if (end > at) line.append(value.subarray(at, end));
              if (!decided && (line.length >= DATA.length || lf >= 0)) {
                decided = true;
                const data = startsWith(line, DATA);
                if (joined && data) {
                  // The event's next data line: LF, then its value, into the joined data; the line's end
                  // is then handled as any continuing line's (from `end`, the LF or the piece's end).
                  continuing = true;
                  dropSpace = true;
                  joined.append(LF_BYTES);
                  continueValue(concat(line.slice(DATA.length, line.length), line.length - DATA.length));
                  line = new RawBytes();
                  decided = false;
                  at = end;
                  continue;
                }
                if (!joined && data && this.#lists.awaiting) {
                  scanner = new Scanner(line, TOOLS_PATH, DATA.length);
                }
              }
              if (!joined) scanner?.advance();
              if (lf < 0) break;
              if (joined) {
                // A line within the joined event: the blank line ends it; other fields pass at once.
                if (line.length === 0) await finish(out);
                else emit(out, line);
                out.enqueue(LF_BYTES);
                sent = true;
              } else if (scanner && scanner.advance() === undefined) {
                // A value still open at the end of its line: the event's next data lines may continue it
                // (nothing is sent yet, so this pull reads on).
                joined = line;
              } else {
                let whole = line;
                if (scanner && line.length >= SCAN_MIN_BYTES) {
                  whole = await this.#rewrite(line, scanner.advance());
                }
                emit(out, whole);
                out.enqueue(LF_BYTES);
                scanner = undefined;
                sent = true;
              }
              line = new RawBytes();
              decided = false;
              at = lf + 1;
            }
          }
        }
      },
      cancel: (reason) => reader.cancel(reason),
    });
  }

  /**
   * `raw` with each over-limit tool as `null` (its stand-in kept for {@linkcode HttpListScreen.watch}) and
   * big unread members left out, when its scan `top` answers an awaited `tools/list`; else `raw`.
   */
  async #rewrite(raw: RawBytes, top: Scanned | null | undefined): Promise<RawBytes> {
    const answer = this.#lists.answer(raw, top);
    if (!answer) return raw;
    const { bytes, standIns } = await this.#lists.screen(raw, answer);
    if (standIns.length) {
      this.#standIns.set(answer.id, standIns);
      if (this.#standIns.size > LIST_IDS) this.#standIns.delete(this.#standIns.keys().next().value!);
    }
    return bytes;
  }
}

/** The id of a POSTed JSON-RPC `tools/list` request, else undefined. */
function listRequestId(init: RequestInit | undefined): Id | undefined {
  if (init?.method !== "POST" || typeof init.body !== "string" || init.body.length > REQUEST_PEEK_BYTES) {
    return undefined;
  }
  if (!init.body.includes('"tools/list"')) return undefined;
  try {
    const message = JSON.parse(init.body);
    if (message?.method !== "tools/list") return undefined;
    const id = message.id;
    return typeof id === "string" || typeof id === "number" ? id : undefined;
  } catch {
    return undefined;
  }
}

/** `response` with `body` (its length may differ: no `content-length`). */
function rebuilt(response: Response, body: BodyInit): Response {
  const headers = new Headers(response.headers);
  headers.delete("content-length");
  return new Response(body, { status: response.status, statusText: response.statusText, headers });
}

function startsWith(raw: RawBytes, prefix: Uint8Array): boolean {
  if (raw.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (raw.at(i) !== prefix[i]) return false;
  return true;
}

/** Lets other work in (a macrotask) once {@link SLICE_MS} have passed since the last time. */
class Turns {
  #since = performance.now();

  async check(): Promise<void> {
    if (performance.now() - this.#since < SLICE_MS) return;
    await new Promise((resolve) => setTimeout(resolve, 0));
    this.#since = performance.now();
  }
}
