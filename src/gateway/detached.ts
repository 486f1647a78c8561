/**
 * Detached calls: `call_tool {detach: true}` starts a call in the background
 * and `poll_result` collects it. In memory, per gateway process, bounded:
 * at most 8 running, at most 128 finished kept for 24 h (oldest evicted first).
 * With `shared` rows (the HTTP listener on a store), each call's state and
 * finalized result are also written to the store, so that `poll_result` on
 * another replica answers it (the call itself runs only where it started).
 *
 * @module
 */
import type { CallToolResult } from "../mcp/sdk.ts";
import type { DetachedRows } from "../store/mod.ts";

/** Detached calls that may run at once. */
export const MAX_RUNNING = 8;
/** Finished detached calls kept for re-polling. */
export const MAX_FINISHED = 128;
/** How long a finished detached call is kept. */
export const FINISHED_RETENTION_MS = 24 * 3600 * 1000;

/** The 9th concurrent detach. */
export class TooManyDetachedError extends Error {
  override name = "TooManyDetachedError";
}

interface Entry {
  callId: string;
  namespaced: string;
  agent?: string;
  startedAt: number;
  controller: AbortController;
  finishedAt?: number;
  elapsedMs?: number;
  result?: CallToolResult;
  error?: string;
  /** Settles once the start is written to the shared rows (or could not be). */
  stored?: Promise<void>;
  /** Settles once the call finished and its end is written to the shared rows (or could not be). */
  settled?: Promise<void>;
}

/** Options of {@linkcode DetachedCalls}. */
export interface DetachedOptions {
  /** @default Date.now */
  clock?: () => number;
  /** @default MAX_RUNNING */
  maxRunning?: number;
  /** @default MAX_FINISHED */
  maxFinished?: number;
  /** The store's rows, read by `poll_result` for calls that run on another replica. */
  shared?: DetachedRows;
}

function newCallId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The registry of one gateway process. */
export class DetachedCalls {
  #entries = new Map<string, Entry>();
  #running = 0;
  #clock: () => number;
  #maxRunning: number;
  #maxFinished: number;
  #shared?: DetachedRows;

  constructor(options: DetachedOptions = {}) {
    this.#shared = options.shared;
    this.#clock = options.clock ?? Date.now;
    this.#maxRunning = options.maxRunning ?? MAX_RUNNING;
    this.#maxFinished = options.maxFinished ?? MAX_FINISHED;
  }

  /** Calls running now. */
  get running(): number {
    return this.#running;
  }

  /** Entries held (running and finished). */
  get size(): number {
    return this.#entries.size;
  }

  /**
   * Starts `run` in the background. `run` gets an AbortSignal (shutdown) and
   * must resolve to the finalized result, or reject for a failed call.
   */
  start(
    meta: { namespaced: string; agent?: string },
    run: (signal: AbortSignal) => Promise<CallToolResult>,
  ): string {
    if (this.#running >= this.#maxRunning) {
      throw new TooManyDetachedError(
        `${this.#maxRunning} detached calls are already running, the most this gateway runs at once; ` +
          "poll_result one of them until it finishes, or call without detach",
      );
    }
    this.#prune();
    const entry: Entry = {
      callId: newCallId(),
      namespaced: meta.namespaced,
      agent: meta.agent,
      startedAt: this.#clock(),
      controller: new AbortController(),
    };
    this.#entries.set(entry.callId, entry);
    this.#running++;
    // The shared rows fail open: a store that cannot be written leaves the call pollable here only.
    const shared = this.#shared;
    entry.stored = shared?.started(entry.callId, entry.agent ?? "", entry.namespaced, entry.startedAt)
      .catch(() => {});
    const finish = (result?: CallToolResult, error?: string) => {
      this.#running--;
      entry.finishedAt = this.#clock();
      entry.elapsedMs = entry.finishedAt - entry.startedAt;
      entry.result = result;
      entry.error = error;
      this.#prune();
      if (!shared) return;
      const finishedAt = entry.finishedAt;
      return entry.stored!.then(() =>
        shared.finished(entry.callId, finishedAt, result && JSON.stringify(result), error).catch(() => {})
      );
    };
    entry.settled = run(entry.controller.signal).then(
      (result) => finish(result),
      (error) => finish(undefined, error instanceof Error ? error.message : String(error)),
    );
    return entry.callId;
  }

  /** The answer of `poll_result` for `callId` (scope: only the agent that started it sees it). */
  poll(callId: unknown, agent?: string): Record<string, unknown> | CallToolResult {
    this.#prune();
    const id = typeof callId === "string" ? callId : "";
    const entry = this.#entries.get(id);
    if (!entry || entry.agent !== agent) {
      return {
        status: "unknown",
        callId: typeof callId === "string" ? callId.slice(0, 64) : null,
        reason:
          "No detached call with this callId: it was never issued here, has expired or been evicted, or was started before the gateway restarted. Run the call again.",
      };
    }
    if (entry.finishedAt === undefined) {
      return {
        status: "pending",
        callId: entry.callId,
        namespaced: entry.namespaced,
        elapsedMs: this.#clock() - entry.startedAt,
        hint: "Still running. Poll again after a short wait.",
      };
    }
    if (entry.result) return entry.result;
    return {
      status: "failed",
      callId: entry.callId,
      namespaced: entry.namespaced,
      error: entry.error ?? "unknown error",
      elapsedMs: entry.elapsedMs,
    };
  }

  /** Settles once call `callId`'s start is in the shared rows (at once without them). */
  async stored(callId: string): Promise<void> {
    await this.#entries.get(callId)?.stored;
  }

  /** Settles once call `callId` finished and its end is in the shared rows. */
  async settled(callId: string): Promise<void> {
    await this.#entries.get(callId)?.settled;
  }

  /**
   * `poll_result` as any replica answers it: this process's call, else (with shared rows) the one the
   * store knows for `agent`, started on another replica.
   */
  async pollAnywhere(callId: unknown, agent?: string): Promise<Record<string, unknown> | CallToolResult> {
    const here = this.poll(callId, agent);
    if (here.status !== "unknown" || !this.#shared || typeof callId !== "string") return here;
    const row = await this.#shared.get(callId, agent ?? "").catch(() => undefined);
    if (!row) return here;
    if (row.finishedAt === undefined) {
      return {
        status: "pending",
        callId: row.callId,
        namespaced: row.namespaced,
        elapsedMs: this.#clock() - row.startedAt,
        hint: "Still running (on another replica). Poll again after a short wait.",
      };
    }
    if (row.result !== undefined) return JSON.parse(row.result) as CallToolResult;
    return {
      status: "failed",
      callId: row.callId,
      namespaced: row.namespaced,
      error: row.error ?? "unknown error",
      elapsedMs: row.finishedAt - row.startedAt,
    };
  }

  /** Drops finished calls past retention, then the oldest finished beyond the cap. */
  #prune(): void {
    const now = this.#clock();
    const finished: Entry[] = [];
    for (const entry of this.#entries.values()) {
      if (entry.finishedAt === undefined) continue;
      if (now - entry.finishedAt > FINISHED_RETENTION_MS) this.#entries.delete(entry.callId);
      else finished.push(entry);
    }
    if (finished.length > this.#maxFinished) {
      finished.sort((a, b) => a.finishedAt! - b.finishedAt!);
      for (const entry of finished.slice(0, finished.length - this.#maxFinished)) {
        this.#entries.delete(entry.callId);
      }
    }
  }

  /** Cancels every running call (shutdown). */
  cancelAll(): void {
    for (const entry of this.#entries.values()) {
      if (entry.finishedAt === undefined) entry.controller.abort(new Error("the gateway is shutting down"));
    }
  }
}
