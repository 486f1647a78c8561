/**
 * The fast path of `--listen`: a `tools/call` result relayed as the bytes the downstream sent (see
 * `json/raw_json.ts`), written into the request's SSE stream as one `message` event without being parsed,
 * held as objects or serialized again. Everything else about the response stays the SDK transport's:
 * which stream it goes to, the event id it is stored under for resumption, when the stream ends.
 *
 * The SDK's transport handles the answer as a placeholder message (`{jsonrpc, id, result: {}}`, which its
 * schema checks accept); this module's SSE writer and {@linkcode rawMessageBytes} (the event store's size)
 * know it by identity and use its bytes. Its `result` refuses `JSON.stringify`, so a path that would
 * serialize the placeholder fails loudly instead of sending an empty result.
 *
 * An SSE `data:` field ends at a line break, so the bytes must hold none: a newline cannot occur (the
 * downstream's message is one line), a carriage return can (as JSON whitespace, or invalid inside a
 * string): such a result, rare, goes the SDK's way (parsed, then serialized).
 *
 * @module
 */
import type { JSONRPCMessage, WebStandardStreamableHTTPServerTransport } from "../mcp/mod.ts";
import { parseJson } from "../json/mod.ts";

const CR = 0x0d;
/** Up to this size an event is written as one chunk (one write to the socket); a larger one part by part. */
const JOIN_LIMIT = 64 * 1024;

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const CLOSE_EVENT = encoder.encode("}\n\n");

/** The bytes of a placeholder message. */
interface RawBody {
  /** `{"jsonrpc":"2.0","id":ID,"result":` */
  head: Uint8Array;
  /** The result's bytes, as views of the chunks they arrived in. */
  parts: readonly Uint8Array[];
  /** Bytes of the whole message. */
  bytes: number;
}

const bodies = new WeakMap<object, RawBody>();

/** Bytes of a message relayed as bytes (its serialized size); undefined for any other message. */
export function rawMessageBytes(message: object): number | undefined {
  return bodies.get(message)?.bytes;
}

/**
 * A copy of a message relayed as bytes, owned by its one holder (the event store, for resumption): the
 * result's bytes in one buffer of their own, not views of the chunks they arrived in. The chunks then die
 * young, with the request; the copy is freed at once by {@linkcode OwnedRawMessage.release} (not when a
 * major GC finds it: events outlive a few minor GCs, so a dropped one would otherwise hold its bytes
 * until then).
 */
export interface OwnedRawMessage {
  /** Bytes of the whole message (as {@linkcode rawMessageBytes}). */
  readonly bytes: number;
  /** A message to write again (a resumption): a fresh placeholder over a copy, so a release never empties it. */
  replay(): JSONRPCMessage;
  /** Frees the copy's bytes; the copy is not used again. */
  release(): void;
}

/** An owned copy of `message` when it is relayed as bytes; undefined for any other message. */
export function ownRawMessage(message: object): OwnedRawMessage | undefined {
  const body = bodies.get(message);
  if (!body) return undefined;
  const { head, bytes } = body;
  const id = (message as { id: string | number }).id;
  let copy: Uint8Array | undefined = join(body.parts, -1, true);
  return {
    bytes,
    replay() {
      if (!copy) throw new Error("a released event was replayed");
      const again = { jsonrpc: "2.0" as const, id, result: unserializable() };
      bodies.set(again, { head, parts: [copy.slice()], bytes });
      return again;
    },
    release() {
      // Detaching the buffer frees its backing store now.
      (copy?.buffer as ArrayBuffer | undefined)?.transfer(0);
      copy = undefined;
    },
  };
}

/** A `result` that cannot be serialized: the placeholder's bytes are elsewhere. */
function unserializable(): Record<string, never> {
  const result = {};
  Object.defineProperty(result, "toJSON", {
    enumerable: false,
    value: () => {
      throw new TypeError(
        "A tools/call result relayed as bytes was about to be serialized as a placeholder; it must be " +
          "written by the raw SSE writer (src/http/raw_sse.ts)",
      );
    },
  });
  return result;
}

type SseWriter = (
  controller: ReadableStreamDefaultController<Uint8Array>,
  encoder: TextEncoder,
  message: JSONRPCMessage,
  eventId?: string,
) => boolean;

/**
 * The SDK transport's members this module relies on (v1 1.32 and v2 2.4 alike: `writeSSEEvent` writes
 * every event, `_enableJsonResponse` says the answers are JSON, not SSE). Neither is public: each is
 * checked by name when a transport is taught (`tests/http/raw_sse_test.ts` fails naming it).
 */
interface TransportInternals {
  writeSSEEvent: SseWriter;
  _enableJsonResponse: boolean;
}

/** The internals {@linkcode relayRawResults} reaches, and what each must be. */
export const RAW_SSE_INTERNALS = { writeSSEEvent: "function", _enableJsonResponse: "boolean" } as const;

/** A transport that can answer a request with a result relayed as bytes. */
export interface RawResultSender {
  /** Answers request `id` with a result relayed as the bytes it came in (`result` is the JSON value). */
  sendResult(id: string | number, result: readonly Uint8Array[]): Promise<void>;
}

/**
 * Teaches a session's transport to send results as bytes: adds `sendResult` and wraps its SSE writer.
 * Returns the transport, now a {@linkcode RawResultSender}.
 */
export function relayRawResults(
  transport: WebStandardStreamableHTTPServerTransport,
): WebStandardStreamableHTTPServerTransport & RawResultSender {
  const internals = transport as unknown as TransportInternals;
  for (const [name, type] of Object.entries(RAW_SSE_INTERNALS)) {
    const kind: string = typeof (internals as unknown as Record<string, unknown>)[name];
    if (kind !== type) {
      throw new TypeError(
        `The MCP SDK's Streamable HTTP server transport has no ${name} (an SDK upgrade changed it): ` +
          "update src/http/raw_sse.ts",
      );
    }
  }
  const write = internals.writeSSEEvent.bind(transport);
  internals.writeSSEEvent = (controller, sdkEncoder, message, eventId) => {
    const body = bodies.get(message);
    if (!body) return write(controller, sdkEncoder, message, eventId);
    try {
      const lead = encoder.encode(`event: message\n${eventId ? `id: ${eventId}\n` : ""}data: `);
      const parts = [lead, body.head, ...body.parts, CLOSE_EVENT];
      const size = lead.length + body.bytes + 2;
      if (size <= JOIN_LIMIT) controller.enqueue(join(parts, size));
      else for (const part of parts) controller.enqueue(part);
      return true;
    } catch (error) {
      transport.onerror?.(error as Error);
      return false;
    }
  };
  const sender = transport as WebStandardStreamableHTTPServerTransport & RawResultSender;
  sender.sendResult = (id, result) => {
    // A JSON response (not SSE) or bytes with a carriage return: the SDK's way.
    if (internals._enableJsonResponse || result.some((part) => part.includes(CR))) {
      let value: Record<string, unknown>;
      try {
        value = parseJson(decoder.decode(join(result, -1))) as Record<string, unknown>;
      } catch (error) {
        return transport.send({
          jsonrpc: "2.0",
          id,
          error: {
            code: -32603,
            message: `The server's tools/call result is not valid JSON: ${(error as Error).message}`,
          },
        });
      }
      return transport.send({ jsonrpc: "2.0", id, result: value });
    }
    const head = encoder.encode(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":`);
    let bytes = head.length + 1;
    for (const part of result) bytes += part.length;
    const message = { jsonrpc: "2.0" as const, id, result: unserializable() };
    bodies.set(message, { head, parts: result, bytes });
    // Through the property: the listener's wrapper of `send` sees the answer.
    return transport.send(message);
  };
  return sender;
}

/**
 * An SSE response of `events` that then ends, written by the transport's own (raw-aware) event writer: a
 * resumption of a stream whose answer was already sent.
 */
export function finishedReplay(
  transport: WebStandardStreamableHTTPServerTransport,
  events: readonly [string, JSONRPCMessage][],
  sessionId: string,
): Response {
  const internals = transport as unknown as TransportInternals;
  const sdkEncoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const [id, message] of events) internals.writeSSEEvent(controller, sdkEncoder, message, id);
      controller.close();
    },
  });
  return new Response(body, {
    status: 200,
    headers: {
      "content-type": "text/event-stream",
      "cache-control": "no-cache, no-transform",
      "mcp-session-id": sessionId,
    },
  });
}

/** Joins byte arrays into one (`size` < 0: computed); `copy`: a new buffer even for one part. */
function join(parts: readonly Uint8Array[], size: number, copy = false): Uint8Array {
  if (parts.length === 1 && !copy) return parts[0]!;
  if (size < 0) size = parts.reduce((n, p) => n + p.length, 0);
  const out = new Uint8Array(size);
  let at = 0;
  for (const part of parts) out.set(part, at), at += part.length;
  return out;
}
