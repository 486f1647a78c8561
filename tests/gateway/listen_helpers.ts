/**
 * What the listen tests share: the notify fixture's path and a recorder of notifications to wait on.
 *
 * @module
 */
import { ROOT } from "../helpers.ts";

/** The listen tests' bound on a wait: the one in helpers.ts. */
export { within } from "../helpers.ts";

export const NOTIFY = `${ROOT}tests/fixtures/notify_server.ts`;

export type Note = { method: string; params?: Record<string, unknown> };

/** Notifications received, with a wait for the next one that matches. */
export class Notes {
  seen: Note[] = [];
  #waiters: { match: (n: Note) => boolean; wake: (n: Note) => void; from: number }[] = [];

  push(n: Note): void {
    this.seen.push(n);
    for (const w of [...this.#waiters]) {
      if (w.match(n)) this.#waiters.splice(this.#waiters.indexOf(w), 1), w.wake(n);
    }
  }

  /** The first notification at or after index `from` that matches (waits for it; fails after 60 s). */
  next(what: string, match: (n: Note) => boolean, from = 0): Promise<Note> {
    const found = this.seen.slice(from).find(match);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), 60_000);
      this.#waiters.push({ match, from, wake: (n) => (clearTimeout(timer), resolve(n)) });
    });
  }
}

/**
 * Notes of every notification `transport` delivers to its client from now on (a v2 client's transport,
 * connected: its `onmessage` is wrapped, so the client still gets each message).
 */
export function notesOf(transport: { onmessage?: (message: never, extra?: never) => void }): Notes {
  const notes = new Notes();
  const onmessage = transport.onmessage!;
  transport.onmessage = (message, extra) => {
    const m = message as { method?: string; id?: unknown };
    if (m.method !== undefined && m.id === undefined) notes.push(structuredClone(m) as never);
    onmessage(message, extra);
  };
  return notes;
}
