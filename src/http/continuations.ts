/**
 * MRTR continuations across replicas (2026-07-28 over HTTP): a call that waits for the host's input stays
 * open on the replica that runs it (its owner); a retry that a load balancer sends to another replica is
 * checked there (the sealed state, request_state.ts) and handed to the owner through the store (a
 * rendezvous row keyed by the state's id, store/rendezvous.ts), never run again. The owner polls for
 * rows addressed to it only while it has continuations out, answers the retry as if it had arrived
 * itself, and keeps the row's heartbeat fresh while the call runs; the forwarding replica polls the row
 * for the answer (short polling, bounded: an owner that does not take the retry up within
 * {@linkcode CLAIM_MS}, or whose heartbeat stops for {@linkcode STALE_MS}, ends the wait with an error
 * that says the call was not run again). Without a store there is one key per process and no forwarding.
 *
 * @module
 */
import { Rendezvous, type SqlReader, storeSecret } from "../store/mod.ts";
import type { SealedState } from "./request_state.ts";

/** How long the owner has to take up a forwarded retry. */
export const CLAIM_MS = 30_000;
/** How long the owner's heartbeat may be silent while the call runs. */
export const STALE_MS = 30_000;
/** How often the owner refreshes the heartbeat (and looks for a cancellation). */
const BEAT_MS = 2_000;
/** The owner's polling period while it has continuations out. */
const OWNER_POLL_MS = 20;
/** The forwarding replica's polling period: from the first to the last. */
const FORWARD_POLL_MS = [5, 100] as const;
/** The name of the sealing key in the store. */
const KEY_NAME = "mrtr_request_state";

type Message = Record<string, unknown>;

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function failure(code: number, message: string): Message {
  return { jsonrpc: "2.0", id: null, error: { code, message } };
}

/** One replica's side of the rendezvous. */
export class Continuations {
  /** This replica's id (named in the states it seals). */
  readonly replica: string = crypto.randomUUID();
  readonly #rendezvous?: Rendezvous;
  readonly #log: (line: string) => void;
  #secret?: Promise<Uint8Array<ArrayBuffer>>;
  /** Continuations this replica sealed and may still get a forwarded retry for: id -> expiry. */
  #expected = new Map<string, number>();
  #polling = false;
  #stopped = false;
  #warned = false;
  /** Retries being answered for other replicas (their heartbeats). */
  #serving = new Set<AbortController>();
  /** Answers a forwarded retry: the agent's endpoint serves it as its own. */
  take?: (agent: string, body: unknown, signal: AbortSignal) => Promise<Message | undefined>;

  constructor(sql: SqlReader | undefined, log: (line: string) => void) {
    this.#rendezvous = sql ? new Rendezvous(sql, this.replica) : undefined;
    this.#log = log;
  }

  /** The sealing key: the store's (shared by its replicas), else this process's own. */
  secret(): Promise<Uint8Array<ArrayBuffer>> {
    if (!this.#secret) {
      const sql = this.#rendezvous?.sql;
      this.#secret = sql
        ? storeSecret(sql, KEY_NAME).then((key) => new Uint8Array(key))
        : Promise.resolve(crypto.getRandomValues(new Uint8Array(32)));
      // A store that could not be read is asked again next time.
      this.#secret.catch(() => this.#secret = undefined);
    }
    return this.#secret;
  }

  /** A continuation this replica sealed: retries for it may arrive through the store until `expiresAt`. */
  expect(id: string, expiresAt: number): void {
    if (!this.#rendezvous) return;
    this.#expected.set(id, expiresAt);
    if (!this.#polling) this.#poll();
  }

  /** The continuation was taken up here (or ended): no forwarded retry is looked for any more. */
  settled(id: string): void {
    this.#expected.delete(id);
  }

  /** The owner's loop: runs while continuations are out, claims the retries forwarded to this replica. */
  async #poll(): Promise<void> {
    this.#polling = true;
    try {
      while (!this.#stopped && this.#expected.size > 0) {
        const now = Date.now();
        for (const [id, expiresAt] of this.#expected) if (expiresAt <= now) this.#expected.delete(id);
        try {
          for (const row of await this.#rendezvous!.claim()) {
            this.#expected.delete(row.id);
            this.#serve(row.id, row.agent, row.request);
          }
        } catch (error) {
          if (!this.#warned) {
            this.#warned = true;
            this.#log(
              `warning: MRTR rendezvous: ${(error as Error).message}; retried while continuations wait`,
            );
          }
        }
        await delay(OWNER_POLL_MS);
      }
    } finally {
      this.#polling = false;
    }
  }

  /** A retry forwarded to this replica, answered here; its heartbeat kept until then. */
  async #serve(id: string, agent: string, request: string): Promise<void> {
    const rendezvous = this.#rendezvous!;
    const controller = new AbortController();
    this.#serving.add(controller);
    const beat = setInterval(() => {
      rendezvous.beat(id).then((cancelled) => {
        if (cancelled) controller.abort(new Error("the forwarding replica's host went away"));
      }, () => {});
    }, BEAT_MS);
    let answer: Message | undefined;
    try {
      answer = await this.take?.(agent, JSON.parse(request), controller.signal) ??
        failure(-32603, "The replica holding the call could not answer the forwarded retry");
    } catch (error) {
      answer = failure(
        -32603,
        `The forwarded retry failed on the replica holding the call: ${(error as Error).message}`,
      );
    } finally {
      clearInterval(beat);
      this.#serving.delete(controller);
    }
    if (controller.signal.aborted) return;
    await rendezvous.answer(id, JSON.stringify(answer)).catch((error) =>
      this.#log(
        `warning: MRTR rendezvous: the answer to a forwarded retry was not stored: ${
          (error as Error).message
        }`,
      )
    );
  }

  /**
   * The forwarding side: a retry whose continuation another replica holds, handed to it through the store;
   * resolves to the owner's answer (a JSON-RPC message, its id to be set), or undefined when `signal`
   * aborted (the host went away: the owner is told, and cancels the call).
   */
  async forward(state: SealedState, body: unknown, signal: AbortSignal): Promise<Message | undefined> {
    const rendezvous = this.#rendezvous;
    if (!rendezvous) {
      return failure(
        -32602,
        "requestState belongs to a call on another replica, and this gateway has no shared store to reach it " +
          "(start every replica with the same --db); nothing was run",
      );
    }
    try {
      const posted = await rendezvous.post(
        state.id,
        state.owner,
        state.agent,
        JSON.stringify(body),
        state.expiresAt,
      );
      if (!posted) {
        return failure(
          -32602,
          "requestState was already used (a continuation is answered once); nothing was run",
        );
      }
    } catch (error) {
      return failure(
        -32603,
        `The retry could not be handed to the replica holding its call (${
          (error as Error).message
        }); nothing was run`,
      );
    }
    const lost = (why: string) =>
      failure(
        -32603,
        `The replica holding this call ${why}; the call was not run again here, and its outcome is unknown`,
      );
    let wait: number = FORWARD_POLL_MS[0];
    let failures = 0;
    while (true) {
      if (signal.aborted || this.#stopped) {
        await rendezvous.cancel(state.id).catch(() => {});
        return this.#stopped ? failure(-32603, "The gateway is stopping") : undefined;
      }
      await delay(wait);
      wait = Math.min(FORWARD_POLL_MS[1], wait * 2);
      let row;
      try {
        row = await rendezvous.read(state.id);
        failures = 0;
      } catch (error) {
        if (++failures < 20) continue;
        await rendezvous.cancel(state.id).catch(() => {});
        return lost(`could not be reached through the store (${(error as Error).message})`);
      }
      const now = Date.now();
      if (row.state === "answered") {
        await rendezvous.done(state.id).catch(() => {});
        return JSON.parse(row.answer);
      }
      if (row.state === "gone") return lost("dropped the retry");
      if (row.state === "waiting" && now - row.createdAt > CLAIM_MS) {
        await rendezvous.cancel(state.id).catch(() => {});
        return lost(`did not take up the retry within ${CLAIM_MS / 1000} s (it may have stopped)`);
      }
      if (row.state === "running" && now - row.beatAt > STALE_MS) {
        await rendezvous.cancel(state.id).catch(() => {});
        return lost(`stopped answering for ${STALE_MS / 1000} s while running it`);
      }
    }
  }

  /** Stops polling; retries being answered for other replicas are given up. */
  stop(): void {
    this.#stopped = true;
    this.#expected.clear();
    for (const controller of this.#serving) controller.abort(new Error("the gateway is stopping"));
  }
}
