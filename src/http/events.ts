/**
 * Resumable streams: the events of one session, so a client whose SSE stream broke can reconnect with
 * `Last-Event-ID` and receive what it missed (the SDK transport replays from here). In memory and
 * bounded: the oldest events are dropped first beyond {@linkcode MAX_EVENTS} or {@linkcode MAX_EVENT_BYTES};
 * a client that resumes after them gets what is left.
 *
 * @module
 */
import type { JSONRPCMessage } from "../mcp/mod.ts";
import { rawMessageBytes } from "./raw_sse.ts";

/** Events kept per session. */
export const MAX_EVENTS = 1_000;
/** Bytes of events (as JSON) kept per session. */
export const MAX_EVENT_BYTES = 8 * 1024 * 1024;

interface StoredEvent {
  streamId: string;
  message: JSONRPCMessage;
  bytes: number;
}

/** The SDK's `EventStore` for one session. Event ids sort in the order they were stored. */
export class SessionEvents {
  #events = new Map<string, StoredEvent>();
  #next = 0;
  #bytes = 0;
  #maxEvents: number;
  #maxBytes: number;

  constructor(options: { maxEvents?: number; maxBytes?: number } = {}) {
    this.#maxEvents = options.maxEvents ?? MAX_EVENTS;
    this.#maxBytes = options.maxBytes ?? MAX_EVENT_BYTES;
  }

  /** Events held now. */
  get size(): number {
    return this.#events.size;
  }

  storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const id = `${String(++this.#next).padStart(12, "0")}_${streamId}`;
    // A result relayed as bytes (raw_sse.ts) is measured, not serialized.
    const bytes = rawMessageBytes(message) ?? JSON.stringify(message).length;
    this.#events.set(id, { streamId, message, bytes });
    this.#bytes += bytes;
    for (const [oldest, event] of this.#events) {
      if (this.#events.size <= this.#maxEvents && this.#bytes <= this.#maxBytes) break;
      if (oldest === id) break;
      this.#events.delete(oldest);
      this.#bytes -= event.bytes;
    }
    return Promise.resolve(id);
  }

  getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    const cut = eventId.indexOf("_");
    return Promise.resolve(
      cut > 0 && /^\d+$/.test(eventId.slice(0, cut)) ? eventId.slice(cut + 1) : undefined,
    );
  }

  async replayEventsAfter(
    lastEventId: string,
    { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> },
  ): Promise<string> {
    const streamId = await this.getStreamIdForEventId(lastEventId);
    if (streamId === undefined) throw new Error("Unknown Last-Event-ID");
    for (const [id, event] of [...this.#events]) {
      if (id > lastEventId && event.streamId === streamId) await send(id, event.message);
    }
    return streamId;
  }
}
