/**
 * How a call to a server ends, the same for both ways a call is made: the stdio fast path's own requests
 * (`stdio.ts`) and the SDK client's (`downstream.ts`, every remote server and what is not relayed as bytes).
 * A call has one deadline (a connection's calls share one timer), the caller's cancellation, and settles once:
 * with its answer, with the caller's reason, or with a failure of the gateway's own ({@linkcode localFailure}:
 * timed out, connection closed), which a server's JSON-RPC error with the same code never passes for. A
 * timeout or a cancellation tells the server first (`notifications/cancelled`).
 *
 * @module
 */
import { ErrorCode, McpError } from "../mcp/sdk.ts";

const LOCAL = new WeakSet<object>();

/**
 * An McpError the gateway made itself (the connection closed, the call timed out), never one a server
 * sent: a server's own -32000/-32001 keeps its identity (issue 41).
 */
export function localFailure(code: number, message: string, data?: unknown): McpError {
  const error = new McpError(code, message, data);
  LOCAL.add(error);
  return error;
}

/** True for an error made by {@linkcode localFailure}. */
export function isLocalFailure(error: unknown): boolean {
  return typeof error === "object" && error !== null && LOCAL.has(error);
}

/**
 * Deadlines of the calls on one connection, under one timer: a call's own `setTimeout` costs ~10 µs (a
 * timer object and its scheduling) on a path that costs a few hundred; here adding and removing one is a
 * set operation, and the timer is re-armed only for a deadline earlier than the one it waits for (calls
 * that share a timeout end in the order they began, so that is the first call after an idle spell).
 */
export class Deadlines {
  #entries = new Set<{ at: number; fire: () => void }>();
  #timer?: ReturnType<typeof setTimeout>;
  #armedAt = Infinity;

  /** Calls `fire` after `ms` unless the returned entry is {@linkcode Deadlines.delete}d first. */
  add(ms: number, fire: () => void): object {
    const entry = { at: performance.now() + ms, fire };
    this.#entries.add(entry);
    if (entry.at < this.#armedAt) this.#arm(entry.at);
    return entry;
  }

  /** Forgets an entry (its call ended). */
  delete(entry: object): void {
    this.#entries.delete(entry as { at: number; fire: () => void });
  }

  /** Stops the timer; entries left are forgotten. */
  clear(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#armedAt = Infinity;
    this.#entries.clear();
  }

  #arm(at: number): void {
    clearTimeout(this.#timer);
    this.#armedAt = at;
    // setTimeout's limit is 2^31-1 ms; a later deadline is re-armed from here when that fires.
    this.#timer = setTimeout(
      () => this.#expire(),
      Math.min(Math.max(0, at - performance.now()), MAX_TIMER_MS),
    );
  }

  #expire(): void {
    this.#timer = undefined;
    this.#armedAt = Infinity;
    const now = performance.now();
    const due = [...this.#entries].filter((entry) => entry.at <= now).sort((a, b) => a.at - b.at);
    for (const entry of due) {
      // An earlier one's cancellation may have ended it meanwhile.
      if (!this.#entries.delete(entry)) continue;
      entry.fire();
    }
    let next = Infinity;
    for (const entry of this.#entries) next = Math.min(next, entry.at);
    if (next < Infinity && this.#timer === undefined) this.#arm(next);
  }
}

/** The longest a timer can wait (setTimeout's limit; a longer delay fires at once). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** What bounds one call. */
export interface CallLimits {
  /** The caller's cancellation. */
  signal?: AbortSignal;
  timeoutMs: number;
}

/** One call in flight on a connection (see {@linkcode PendingCalls.open}). */
export class PendingCall<T> {
  /** Settles once: see {@linkcode PendingCalls.open}. */
  readonly promise: Promise<T>;
  #resolve!: (value: T) => void;
  #reject!: (error: unknown) => void;
  /** The connection's open calls while this one is open; undefined once it ended. */
  #open?: Set<PendingCall<unknown>>;
  #deadlines: Deadlines;
  #deadline?: object;
  #signal?: AbortSignal;
  #cancel: (reason: unknown) => void;

  constructor(
    open: Set<PendingCall<unknown>>,
    deadlines: Deadlines,
    { signal, timeoutMs }: CallLimits,
    cancel: (reason: unknown) => void,
    closed: boolean,
  ) {
    this.promise = new Promise<T>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    this.#deadlines = deadlines;
    this.#cancel = cancel;
    // The connection has ended, or the call was cancelled before it began: it never opens.
    if (closed || signal?.aborted) {
      this.#reject(closed ? localFailure(ErrorCode.ConnectionClosed, "Connection closed") : signal!.reason);
      return;
    }
    this.#open = open;
    open.add(this as PendingCall<unknown>);
    this.#deadline = deadlines.add(
      timeoutMs,
      () => this.cancel(localFailure(ErrorCode.RequestTimeout, "Request timed out", { timeout: timeoutMs })),
    );
    if (signal) {
      this.#signal = signal;
      signal.addEventListener("abort", this, { once: true });
    }
  }

  /** True until the call has ended; a call that is not open must not be sent (or answered). */
  get open(): boolean {
    return this.#open !== undefined;
  }

  /** Ends the call with its answer (nothing when it has ended). */
  resolve(value: T): void {
    if (this.#end()) this.#resolve(value);
  }

  /** Ends the call with an error (nothing when it has ended). */
  reject(error: unknown): void {
    if (this.#end()) this.#reject(error);
  }

  /** Ends the call from the gateway's side: the server is told (the `cancel` it was opened with), then `reason`. */
  cancel(reason: unknown): void {
    if (!this.#end()) return;
    this.#cancel(reason);
    this.#reject(reason);
  }

  /** The caller's signal aborted (the call is its listener: no closure per call). */
  handleEvent(): void {
    this.cancel(this.#signal!.reason);
  }

  /** Marks the call ended and forgets its deadline and listener; false when it had ended already. */
  #end(): boolean {
    const open = this.#open;
    if (!open) return false;
    this.#open = undefined;
    open.delete(this as PendingCall<unknown>);
    this.#deadlines.delete(this.#deadline!);
    this.#signal?.removeEventListener("abort", this);
    return true;
  }
}

/**
 * The calls in flight on one connection: each with its deadline and the caller's cancellation, settled once,
 * and every one still open failed as the gateway's own ConnectionClosed when the connection ends.
 */
export class PendingCalls {
  #open = new Set<PendingCall<unknown>>();
  #deadlines = new Deadlines();
  #closed = false;

  /**
   * Opens a call. It ends with {@linkcode PendingCall.resolve} or {@linkcode PendingCall.reject} (its answer),
   * or on its own: after `timeoutMs` with McpError RequestTimeout `{timeout}` and on the signal's abort with
   * its reason, each after `cancel(reason)` (which tells the server); with McpError ConnectionClosed on
   * {@linkcode PendingCalls.close}. The timeout and the connection's end are {@linkcode localFailure}s. A
   * signal aborted already, or a closed connection, ends it at once (check {@linkcode PendingCall.open}
   * before sending).
   */
  open<T>(limits: CallLimits, cancel: (reason: unknown) => void): PendingCall<T> {
    return new PendingCall<T>(this.#open, this.#deadlines, limits, cancel, this.#closed);
  }

  /**
   * A request of the SDK's client as one of these calls: the SDK is given a signal that this call's deadline
   * and the caller's cancellation abort (it then sends `notifications/cancelled` and drops the answer), and a
   * timer of its own that cannot end the call first (without one it would use its 60 s default).
   */
  sdk<T>(
    limits: CallLimits,
    request: (options: { signal: AbortSignal; timeout: number }) => Promise<T>,
  ): Promise<T> {
    const controller = new AbortController();
    const call = this.open<T>(limits, (reason) => controller.abort(reason));
    if (call.open) {
      request({ signal: controller.signal, timeout: MAX_TIMER_MS }).then(
        (value) => call.resolve(value),
        (error) => call.reject(error),
      );
    }
    return call.promise;
  }

  /** Ends every open call with the gateway's own ConnectionClosed; calls opened after this end so at once. */
  close(): void {
    this.#closed = true;
    for (const call of [...this.#open]) {
      call.reject(localFailure(ErrorCode.ConnectionClosed, "Connection closed"));
    }
    this.#deadlines.clear();
  }
}
