/**
 * Resumable streams: the events of one session, so a client whose SSE stream broke can reconnect with
 * `Last-Event-ID` and receive what it missed (the SDK transport replays from here). In memory and
 * bounded in bytes, per session and in total: a session's oldest events are dropped first beyond
 * {@linkcode MAX_EVENTS} or {@linkcode MAX_EVENT_BYTES}, and past the listener's shared
 * {@linkcode EventBudget} the session holding the most bytes drops its oldest; a client that resumes after
 * them gets what is left. A session keeps no copy of what it delivered beyond these bounds. Both byte bounds
 * are `listen_limits:` keys (`events_per_session`, `events_total`); 0 keeps none (no resumption).
 *
 * @module
 */
import type { JSONRPCMessage } from "../mcp/mod.ts";
import { type OwnedRawMessage, ownRawMessage } from "./raw_sse.ts";

/** Events kept per session. */
export const MAX_EVENTS = 1_000;
/** Bytes of events (as JSON) kept per session by default (`listen_limits.events_per_session`). */
export const MAX_EVENT_BYTES = 1024 * 1024;
/** Bytes of events kept by all of a listener's sessions together by default (`listen_limits.events_total`). */
export const MAX_TOTAL_EVENT_BYTES = 32 * 1024 * 1024;

/** The bytes every session's events may take together; the session holding the most gives first. */
export class EventBudget {
  bytes = 0;
  readonly stores = new Set<SessionEvents>();
  /** The bound (a reload may change it: it applies from the next event stored). 0 = none kept. */
  constructor(public max: number = MAX_TOTAL_EVENT_BYTES) {}

  /** Drops events until the total fits (never `keep`, the event just stored). */
  settle(keep: string): void {
    while (this.bytes > this.max) {
      let largest: SessionEvents | undefined;
      for (const store of this.stores) if (!largest || store.bytes > largest.bytes) largest = store;
      if (!largest || !largest.dropOldest(keep)) return;
    }
  }
}

interface StoredEvent {
  streamId: string;
  /** The message (none for a result relayed as bytes: holding it would hold the chunks it came in). */
  message?: JSONRPCMessage;
  /** A result relayed as bytes: the store's own copy, freed when the event is dropped. */
  raw?: OwnedRawMessage;
  bytes: number;
}

/** The message to write again for `event`. */
function replayed(event: StoredEvent): JSONRPCMessage {
  return event.raw ? event.raw.replay() : event.message!;
}

/** The SDK's `EventStore` for one session. Event ids sort in the order they were stored. */
export class SessionEvents {
  #events = new Map<string, StoredEvent>();
  #next = 0;
  #bytes = 0;
  #maxEvents: number;
  #maxBytes: number;
  #budget?: EventBudget;

  constructor(options: { maxEvents?: number; maxBytes?: number; budget?: EventBudget } = {}) {
    this.#maxEvents = options.maxEvents ?? MAX_EVENTS;
    this.#maxBytes = options.maxBytes ?? MAX_EVENT_BYTES;
    this.#budget = options.budget;
    this.#budget?.stores.add(this);
  }

  /** Events held now. */
  get size(): number {
    return this.#events.size;
  }

  /** Bytes held now. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Drops the oldest event unless it is `keep`; false when there was none to drop. */
  dropOldest(keep?: string): boolean {
    for (const [id, event] of this.#events) {
      if (id === keep) return false;
      this.#events.delete(id);
      event.raw?.release();
      this.#bytes -= event.bytes;
      if (this.#budget) this.#budget.bytes -= event.bytes;
      return true;
    }
    return false;
  }

  /** Drops every event and leaves the shared budget (the session ended). */
  clear(): void {
    if (this.#budget) {
      this.#budget.bytes -= this.#bytes;
      this.#budget.stores.delete(this);
    }
    for (const event of this.#events.values()) event.raw?.release();
    this.#events.clear();
    this.#answered.clear();
    this.#bytes = 0;
  }

  /** Streams that carried the answer to their request (a POST's stream: nothing more will come on it). */
  #answered = new Set<string>();
  /** Resumptions of answered streams served whole and ended (see {@linkcode answeredReplay}). */
  finishedReplays = 0;

  /**
   * The events after `lastEventId` when its stream was already answered, else undefined. The SDK
   * client (1.32) resumes a POST stream whose answer was a JSON-RPC error (it only counts results as
   * answers); the SDK transport would hold that resumed stream open until the session ends, one
   * connection per error. The listener replays these events and ends the stream instead.
   */
  answeredReplay(lastEventId: string): [string, JSONRPCMessage][] | undefined {
    const cut = lastEventId.indexOf("_");
    if (cut <= 0 || !/^\d+$/.test(lastEventId.slice(0, cut))) return undefined;
    const streamId = lastEventId.slice(cut + 1);
    if (!this.#answered.has(streamId)) return undefined;
    const out: [string, JSONRPCMessage][] = [];
    for (const [id, event] of this.#events) {
      if (id > lastEventId && event.streamId === streamId) out.push([id, replayed(event)]);
    }
    this.finishedReplays++;
    return out;
  }

  storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    if ("id" in message && !("method" in message) && ("result" in message || "error" in message)) {
      this.#answered.add(streamId);
      // Bounded: the oldest answered stream ids go first.
      if (this.#answered.size > 4 * this.#maxEvents) {
        for (const old of this.#answered) {
          this.#answered.delete(old);
          break;
        }
      }
    }
    const id = `${String(++this.#next).padStart(12, "0")}_${streamId}`;
    // No resumption: the event gets its id (the SDK writes it) and nothing is kept.
    if (this.#maxBytes === 0 || this.#budget?.max === 0) return Promise.resolve(id);
    // A result relayed as bytes (raw_sse.ts) is copied into a buffer of the store's own (the chunks it came
    // in are let go with the request) and measured, not serialized.
    const raw = ownRawMessage(message);
    const bytes = raw?.bytes ?? JSON.stringify(message).length;
    this.#events.set(id, { streamId, ...(raw ? { raw } : { message }), bytes });
    this.#bytes += bytes;
    if (this.#budget) this.#budget.bytes += bytes;
    while (this.#events.size > this.#maxEvents || this.#bytes > this.#maxBytes) {
      if (!this.dropOldest(id)) break;
    }
    this.#budget?.settle(id);
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
      if (id > lastEventId && event.streamId === streamId) await send(id, replayed(event));
    }
    return streamId;
  }
}
