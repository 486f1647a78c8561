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

/** The longest a timer can wait (setTimeout's limit; a longer delay fires at once). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** What bounds one call. */
export interface CallLimits {
  /** The caller's cancellation. */
  signal?: AbortSignal;
  timeoutMs: number;
}

/** Tells the server a call ended from the gateway's side; `key` is what the call was opened with. */
export type Cancel<K> = (reason: unknown, key: K) => void;

/** The listener options of every call (one object, not one per call). */
const ONCE = { once: true } as const;

/** One call in flight on a connection (see {@linkcode PendingCalls.open}). */
export class PendingCall<T, K = undefined> {
  /** Settles once: see {@linkcode PendingCalls.open}. */
  readonly promise: Promise<T>;
  /** What the opener gave {@linkcode PendingCalls.open} to know the call by (the fast path: its request id). */
  readonly key: K;
  /** When the call times out (`performance.now()` time); read by its connection's timer. */
  at = Infinity;
  #resolve!: (value: T) => void;
  #reject!: (error: unknown) => void;
  /** The connection's open calls while this one is open; undefined once it ended. */
  #open?: Set<PendingCall<unknown, unknown>>;
  #timeoutMs: number;
  #signal?: AbortSignal;
  #cancel: Cancel<K>;

  constructor(
    calls: PendingCalls,
    open: Set<PendingCall<unknown, unknown>> | undefined,
    { signal, timeoutMs }: CallLimits,
    cancel: Cancel<K>,
    key: K,
  ) {
    this.promise = new Promise<T>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    this.key = key;
    this.#timeoutMs = timeoutMs;
    this.#cancel = cancel;
    // The connection has ended, or the call was cancelled before it began: it never opens.
    if (!open || signal?.aborted) {
      this.#reject(!open ? localFailure(ErrorCode.ConnectionClosed, "Connection closed") : signal!.reason);
      return;
    }
    this.#open = open;
    this.at = performance.now() + timeoutMs;
    open.add(this as PendingCall<unknown, unknown>);
    calls.deadline(this.at);
    if (signal) {
      this.#signal = signal;
      signal.addEventListener("abort", this, ONCE);
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
    this.#cancel(reason, this.key);
    this.#reject(reason);
  }

  /** Its deadline passed (called by its connection's timer). */
  timeOut(): void {
    this.cancel(localFailure(ErrorCode.RequestTimeout, "Request timed out", { timeout: this.#timeoutMs }));
  }

  /** The caller's signal aborted (the call is its listener: no closure per call). */
  handleEvent(): void {
    this.cancel(this.#signal!.reason);
  }

  /** Marks the call ended and forgets its listener (and so its deadline); false when it had ended already. */
  #end(): boolean {
    const open = this.#open;
    if (!open) return false;
    this.#open = undefined;
    open.delete(this as PendingCall<unknown, unknown>);
    if (this.#signal) this.#signal.removeEventListener("abort", this);
    return true;
  }
}

/**
 * The calls in flight on one connection: each with its deadline and the caller's cancellation, settled once,
 * and every one still open failed as the gateway's own ConnectionClosed when the connection ends.
 *
 * The deadlines share one timer: a call's own `setTimeout` costs ~10 µs (a timer object and its scheduling)
 * on a path that costs a few hundred. A call is its own deadline entry (no entry or closure per call): it
 * joins and leaves the set of open calls, and the timer is re-armed only for a deadline earlier than the one
 * it waits for (calls that share a timeout end in the order they began, so that is the first call after an
 * idle spell); when it fires, the calls due time out and it waits for the earliest left.
 */
export class PendingCalls {
  /** Undefined once closed. */
  #open?: Set<PendingCall<unknown, unknown>> = new Set();
  #timer?: ReturnType<typeof setTimeout>;
  #armedAt = Infinity;

  /**
   * Opens a call. It ends with {@linkcode PendingCall.resolve} or {@linkcode PendingCall.reject} (its answer),
   * or on its own: after `timeoutMs` with McpError RequestTimeout `{timeout}` and on the signal's abort with
   * its reason, each after `cancel(reason, key)` (which tells the server); with McpError ConnectionClosed on
   * {@linkcode PendingCalls.close}. The timeout and the connection's end are {@linkcode localFailure}s. A
   * signal aborted already, or a closed connection, ends it at once (check {@linkcode PendingCall.open}
   * before sending). `key` is kept as the call's {@linkcode PendingCall.key} and given to `cancel`, so that
   * one `cancel` can serve every call of a connection.
   */
  open<T>(limits: CallLimits, cancel: Cancel<undefined>): PendingCall<T, undefined>;
  open<T, K>(limits: CallLimits, cancel: Cancel<K>, key: K): PendingCall<T, K>;
  open<T, K>(limits: CallLimits, cancel: Cancel<K>, key?: K): PendingCall<T, K> {
    return new PendingCall<T, K>(this, this.#open, limits, cancel, key as K);
  }

  /** A call's deadline (see {@linkcode PendingCall}): re-arms the timer only when it is the earliest. */
  deadline(at: number): void {
    if (at < this.#armedAt) this.#arm(at);
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
    const call = this.open<T, AbortController>(limits, abortSdk, controller);
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
    const open = this.#open;
    this.#open = undefined;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#armedAt = Infinity;
    for (const call of [...open ?? []]) {
      call.reject(localFailure(ErrorCode.ConnectionClosed, "Connection closed"));
    }
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
    const open = this.#open;
    if (!open) return;
    const now = performance.now();
    const due = [...open].filter((call) => call.at <= now).sort((a, b) => a.at - b.at);
    // An earlier one's cancellation may have ended a later one meanwhile (timeOut is then nothing).
    for (const call of due) call.timeOut();
    let next = Infinity;
    for (const call of open) next = Math.min(next, call.at);
    if (next < Infinity && this.#timer === undefined) this.#arm(next);
  }
}

/** The SDK path's cancel: aborts the signal its request was given (the SDK then tells the server). */
function abortSdk(reason: unknown, controller: AbortController): void {
  controller.abort(reason);
}
