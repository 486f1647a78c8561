/**
 * What a downstream's notifications cost the gateway, bounded: a storm of them (20,000 in one burst) is
 * screened in the transport, before the SDK's per-message schema checks, so the work it makes is a JSON
 * parse and a lookup each.
 *
 * - A `notifications/progress` whose token no request of the SDK's client is waiting on (never sent, or
 *   its answer already came) is dropped: the SDK would only report it as an error (after validating it
 *   and building an Error with a stack). It is reported here too, as a stackless error with the SDK's
 *   words, which the owner's rate-limited log counts.
 * - A `notifications/…/list_changed` repeated before the event loop's next turn is dropped: the first one
 *   already asked for a refresh that is sent after it, whose answer sees what every repeat announced.
 *
 * @module
 */
import type { JSONRPCMessage } from "../mcp/sdk.ts";

/** Methods whose repeats within one turn say nothing new (they carry no content). */
const LIST_CHANGED = new Set([
  "notifications/tools/list_changed",
  "notifications/resources/list_changed",
  "notifications/prompts/list_changed",
  "notifications/roots/list_changed",
]);

/**
 * An Error without a stack: capturing one (even of depth 0) costs more than all the rest of a dropped
 * notification.
 */
function stacklessError(message: string): Error {
  const error = Object.create(Error.prototype) as Error;
  error.message = message;
  return error;
}

/** Screens one downstream connection's notifications (see the module's doc). */
export class NoticeGate {
  /** Progress tokens of the client's requests (as the SDK keys them: `Number(token)`), by request id. */
  #tokens = new Map<string | number, number>();
  #live = new Map<number, number>();
  /** The list_changed methods delivered since the last turn. */
  #changed = new Set<string>();

  /** Notes a request sent by the client: the progress token it asks for, if any. */
  sent(message: JSONRPCMessage): void {
    if (!("method" in message) || !("id" in message)) return;
    const meta = (message.params as { _meta?: { progressToken?: unknown } } | undefined)?._meta;
    const token = meta?.progressToken;
    if (typeof token !== "string" && typeof token !== "number") return;
    const key = Number(token);
    this.#tokens.set(message.id, key);
    this.#live.set(key, (this.#live.get(key) ?? 0) + 1);
  }

  /**
   * Notes a message handed to the client: an answer ends its request's progress (as the SDK's client
   * forgets its handler), unless it created a task (whose progress goes on).
   */
  delivered(message: JSONRPCMessage): void {
    if ("method" in message || !("id" in message) || message.id === undefined) return;
    const key = this.#tokens.get(message.id);
    if (key === undefined) return;
    const task = "result" in message ? (message.result as { task?: { taskId?: unknown } }).task : undefined;
    if (typeof task?.taskId === "string") return;
    this.#tokens.delete(message.id);
    const n = this.#live.get(key)!;
    if (n > 1) this.#live.set(key, n - 1);
    else this.#live.delete(key);
  }

  /**
   * Whether a parsed line goes on to the client: true, or false to drop it, or the error to report in
   * its place (then it is dropped too).
   */
  admits(value: unknown, line: string): boolean | Error {
    if (!value || typeof value !== "object" || "id" in value) return true;
    const method = (value as { method?: unknown }).method;
    if (method === "notifications/progress") {
      const token = (value as { params?: { progressToken?: unknown } }).params?.progressToken;
      if ((typeof token !== "string" && typeof token !== "number") || this.#live.has(Number(token))) {
        return true;
      }
      return stacklessError(`Received a progress notification for an unknown token: ${line}`);
    }
    if (typeof method !== "string" || !LIST_CHANGED.has(method)) return true;
    if (this.#changed.has(method)) return false;
    if (this.#changed.size === 0) setTimeout(() => this.#changed.clear(), 0);
    this.#changed.add(method);
    return true;
  }
}
