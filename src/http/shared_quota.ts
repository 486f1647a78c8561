/**
 * Per-agent quotas counted across the replicas that share a PostgreSQL store (issue 41). The hot path stays
 * in the process: each replica holds leases it took from the store and admits from them without a
 * round-trip; it goes to the store only when a lease runs out.
 *
 * - `sessions`: a row per open session (one short transaction to open, one delete to close). Exact.
 * - `concurrent_calls`: each replica holds places (a row per agent and replica) and raises them when its
 *   running calls reach them; places its calls no longer use are given back `lingerMs` after a call ends.
 *   The fleet never runs more than the limit; another replica may be refused for up to `lingerMs` while
 *   places sit idle here.
 * - `requests`: per agent and window (aligned to the epoch), an atomic upsert claims a slice (1% of the
 *   limit, at least 1) at a time. The fleet never admits more than the limit; up to slice − 1 requests per
 *   replica may go unused at the window's end.
 *
 * Each replica renews a heartbeat row; a replica whose heartbeat is older than `expiryMs` (stopped,
 * crashed, cut off) counts for nothing and its rows are deleted by the next heartbeat of another. When the
 * store cannot be reached, decisions fall back to the per-process counts (logged once per outage).
 *
 * @module
 */
import { isPostgresUrl, pgpassPassword, PgQuotaLedger, pgQuotaMigrations, PgStore } from "../store/mod.ts";
import type { Config } from "../config/mod.ts";
import { AgentQuotas, type QuotaRefusal, type Quotas, type Refusals, type SessionPlace } from "./quota.ts";

/** Settings of {@linkcode SharedQuotas} (tests and benchmarks; the defaults serve production). */
export interface SharedQuotaOptions {
  /** This replica's id in the store. @default a random UUID */
  replica?: string;
  /** A replica whose last heartbeat is older than this holds nothing; heartbeats every third of it. @default 30000 */
  expiryMs?: number;
  /** How long call places stay held after this replica's calls end. @default 1000 */
  lingerMs?: number;
  /** Requests claimed from the store at once. @default {@linkcode requestSlice} of the limit */
  requestSlice?: number;
  /** The clock (ms since the epoch); replicas' clocks are assumed to agree to well within `expiryMs`. */
  now?: () => number;
}

/** The default heartbeat expiry of a replica. */
export const QUOTA_EXPIRY_MS = 30_000;
/** The default time call places are kept after the calls end. */
export const QUOTA_LINGER_MS = 1_000;

interface AgentUse {
  windowStart: number;
  windowMs: number;
  /** Requests claimed from the store for this window and not used yet. */
  left: number;
  /** The `requests` limit at which the store said the window is used up. */
  full?: number;
  /** Calls running on this replica. */
  running: number;
  /** Call places this replica holds in the store. */
  held: number;
  /** Calls waiting for a decision from the store (a claim takes places for them too). */
  waiting: number;
  /** The agent's store operations, one at a time (admissions wait behind it). */
  chain?: Promise<void>;
  trim?: ReturnType<typeof setTimeout>;
}

const NO_PLACE: SessionPlace = { release: () => {} };

/** The requests claimed at once: 1% of the limit, at least 1. */
export function requestSlice(limit: number): number {
  return Math.max(1, Math.floor(limit / 100));
}

/** Quotas of one replica, counted with the others' in the shared store. */
export class SharedQuotas implements Quotas {
  readonly #local: AgentQuotas;
  readonly #store: PgStore;
  readonly #ledger: PgQuotaLedger;
  readonly #log: (line: string) => void;
  readonly #now: () => number;
  readonly #expiryMs: number;
  readonly #lingerMs: number;
  readonly #slice: (limit: number) => number;
  readonly #use = new Map<string, AgentUse>();
  /** Open session places: id → agent. */
  readonly #places = new Map<string, string>();
  readonly #pending = new Set<Promise<unknown>>();
  readonly #heartbeat: ReturnType<typeof setInterval>;
  #registered: Promise<void> | undefined;
  #outage = false;
  #closed = false;

  constructor(
    local: AgentQuotas,
    store: PgStore,
    options: SharedQuotaOptions & { log: (line: string) => void },
  ) {
    this.#local = local;
    this.#store = store;
    this.#ledger = new PgQuotaLedger(store, options.replica ?? crypto.randomUUID());
    this.#log = options.log;
    this.#now = options.now ?? Date.now;
    this.#expiryMs = options.expiryMs ?? QUOTA_EXPIRY_MS;
    this.#lingerMs = options.lingerMs ?? QUOTA_LINGER_MS;
    const slice = options.requestSlice;
    this.#slice = slice === undefined ? requestSlice : (limit) => Math.max(1, Math.min(slice, limit));
    this.#heartbeat = setInterval(
      () => void this.#track(this.#beat()).catch(() => {}),
      Math.max(50, Math.floor(this.#expiryMs / 3)),
    );
    Deno.unrefTimer(this.#heartbeat);
    this.#ready().catch(() => {});
  }

  /** Renews the heartbeat; a row recreated (this replica was thought gone) gets back what it holds. */
  async #beat(): Promise<void> {
    const now = this.#now();
    try {
      const created = await this.#ledger.heartbeat(now, now + this.#expiryMs);
      if (created && (this.#places.size > 0 || [...this.#use.values()].some((u) => u.held > 0))) {
        const places = [...this.#places].map(([place, agent]) => ({ place, agent }));
        await this.#ledger.restore(places, new Map([...this.#use].map(([agent, u]) => [agent, u.held])));
      }
      this.#reached();
    } catch (error) {
      this.#unreachable(error);
      throw error;
    }
  }

  /** The first heartbeat (retried on the next operation after a failure). */
  #ready(): Promise<void> {
    this.#registered ??= this.#beat().catch((error) => {
      this.#registered = undefined;
      throw error;
    });
    return this.#registered;
  }

  #reached(): void {
    if (this.#outage) this.#log("quotas: the shared store answers again; counting across replicas");
    this.#outage = false;
  }

  #unreachable(error: unknown): void {
    if (this.#outage || this.#closed) return;
    this.#outage = true;
    // PgStore's errors never hold the password.
    this.#log(
      `warning: quotas: the shared store cannot be reached (${(error as Error).message}); ` +
        "counting per process until it answers",
    );
  }

  #track<T>(promise: Promise<T>): Promise<T> {
    this.#pending.add(promise);
    promise.finally(() => this.#pending.delete(promise)).catch(() => {});
    return promise;
  }

  #of(key: string): AgentUse {
    let use = this.#use.get(key);
    if (!use) {
      use = { windowStart: 0, windowMs: 0, left: 0, running: 0, held: 0, waiting: 0 };
      this.#use.set(key, use);
    }
    return use;
  }

  /** Moves `use` to the window holding `now` (windows are aligned to the epoch, the same on every replica). */
  #roll(use: AgentUse, windowMs: number, now: number): void {
    const start = Math.floor(now / windowMs) * windowMs;
    if (use.windowStart === start && use.windowMs === windowMs) return;
    use.windowStart = start;
    use.windowMs = windowMs;
    use.left = 0;
    use.full = undefined;
  }

  /** Runs `op` after the agent's store operations before it. */
  #serial<T>(use: AgentUse, op: () => Promise<T>): Promise<T> {
    const run = (use.chain ?? Promise.resolve()).then(op);
    const tail = run.then(() => {}, () => {});
    use.chain = tail;
    void tail.then(() => {
      if (use.chain === tail) use.chain = undefined;
    });
    return this.#track(run);
  }

  #refuseRequests(agent: string | undefined, limit: number, use: AgentUse, now: number): QuotaRefusal {
    return this.#local.refuse(
      agent,
      "requests",
      limit,
      use.windowStart + use.windowMs - now,
      `${limit} requests in this ${use.windowMs}ms window across replicas`,
    );
  }

  async openSession(agent: string | undefined, open: number): Promise<QuotaRefusal | SessionPlace> {
    const limit = this.#local.quotaOf(agent).sessions;
    // Unscoped (no agents, loopback): only each listener's own session limit applies.
    if (!Number.isFinite(limit)) return NO_PLACE;
    const key = agent ?? "";
    const place = crypto.randomUUID();
    try {
      await this.#ready();
      const taken = await this.#track(this.#ledger.openSession(key, place, { limit, now: this.#now() }));
      this.#reached();
      if (!taken.admitted) {
        return this.#local.refuse(
          agent,
          "sessions",
          limit,
          5_000,
          `${taken.open} sessions are open for this agent`,
        );
      }
    } catch (error) {
      this.#unreachable(error);
      return this.#local.refuseSession(agent, open) ?? NO_PLACE;
    }
    this.#places.set(place, key);
    return {
      release: () => {
        if (!this.#places.delete(place)) return;
        this.#track(this.#ledger.closeSession(place)).catch((error) => this.#unreachable(error));
      },
    };
  }

  admit(
    agent: string | undefined,
    method: string,
  ): QuotaRefusal | undefined | Promise<QuotaRefusal | undefined> {
    const key = agent ?? "";
    const quota = this.#local.quotaOf(agent);
    const use = this.#of(key);
    const now = this.#now();
    this.#roll(use, quota.windowMs, now);
    const call = method === "tools/call";
    if (use.chain === undefined) {
      // Once the store said the window is used up, it stays so (claims only grow) until the window ends.
      if (use.full === quota.requests) return this.#refuseRequests(agent, quota.requests, use, now);
      if (use.left > 0 && (!call || use.running < use.held)) {
        use.left--;
        if (call) use.running++;
        return undefined;
      }
    }
    if (call) use.waiting++;
    return this.#serial(use, () => {
      if (call) use.waiting--;
      return this.#admitFromStore(agent, key, call);
    });
  }

  /** The slow path: claims requests and call places from the store as needed, then decides. */
  async #admitFromStore(
    agent: string | undefined,
    key: string,
    call: boolean,
  ): Promise<QuotaRefusal | undefined> {
    const quota = this.#local.quotaOf(agent);
    const use = this.#of(key);
    const now = this.#now();
    this.#roll(use, quota.windowMs, now);
    if (use.full === quota.requests) return this.#refuseRequests(agent, quota.requests, use, now);
    let counted = true;
    if (use.left === 0) {
      const start = use.windowStart;
      try {
        await this.#ready();
        const granted = await this.#ledger.claimRequests(key, {
          start,
          end: start + use.windowMs,
          want: this.#slice(quota.requests),
          limit: quota.requests,
        });
        this.#reached();
        if (granted === 0) {
          if (use.windowStart === start) use.full = quota.requests;
          return this.#refuseRequests(agent, quota.requests, use, now);
        }
        if (use.windowStart === start) use.left += granted;
        else counted = false; // the window turned meanwhile: this one request is the old window's
      } catch (error) {
        this.#unreachable(error);
        counted = false; // fails open: the store cannot count it
      }
    }
    if (call && use.running >= use.held) {
      try {
        await this.#ready();
        const claimed = await this.#ledger.claimCalls(key, {
          want: use.running + 1 + use.waiting,
          limit: quota.concurrentCalls,
          now: this.#now(),
        });
        this.#reached();
        use.held = claimed.held;
        if (use.held <= use.running) {
          return this.#local.refuse(
            agent,
            "concurrent_calls",
            quota.concurrentCalls,
            Math.max(1_000, this.#lingerMs),
            `${use.running + claimed.others} calls are running across replicas`,
          );
        }
      } catch (error) {
        this.#unreachable(error);
        // Per process while the store is unreachable.
        if (use.running >= quota.concurrentCalls) {
          return this.#local.refuse(
            agent,
            "concurrent_calls",
            quota.concurrentCalls,
            1_000,
            `${use.running} calls are running`,
          );
        }
      }
    }
    if (counted) use.left = Math.max(0, use.left - 1);
    if (call) use.running++;
    return undefined;
  }

  release(agent: string | undefined): void {
    const key = agent ?? "";
    const use = this.#of(key);
    use.running = Math.max(0, use.running - 1);
    if (use.held <= use.running || use.trim !== undefined || this.#closed) return;
    // Places left idle go back after lingerMs (one write however many calls ended meanwhile).
    use.trim = setTimeout(() => {
      use.trim = undefined;
      this.#serial(use, async () => {
        if (use.held <= use.running) return;
        const target = use.running;
        try {
          await this.#ledger.trimCalls(key, target);
          use.held = target;
          this.#reached();
        } catch (error) {
          this.#unreachable(error);
        }
      }).catch(() => {});
    }, this.#lingerMs);
  }

  refusals(agent: string | undefined): Refusals {
    return this.#local.refusals(agent);
  }

  /** Stops the heartbeat and deletes this replica's rows (its sessions and places go back at once). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#heartbeat);
    for (const use of this.#use.values()) {
      clearTimeout(use.trim);
      use.trim = undefined;
    }
    await Promise.allSettled([...this.#pending]);
    await this.#ledger.leave().catch((error) => this.#unreachable(error));
    await this.#store.close();
  }
}

/** What {@linkcode agentQuotas} needs. */
export interface AgentQuotasOptions {
  config: () => Config;
  maxSessions: number;
  /** The store location: a `postgres://` URL makes the counts shared. */
  storePath?: string;
  /** The process environment (for a password in `$PGPASSFILE`/`~/.pgpass`). */
  env: Record<string, string>;
  log: (line: string) => void;
  shared?: SharedQuotaOptions;
}

/** Per process ({@linkcode AgentQuotas}), or across replicas when the store is PostgreSQL. */
export function agentQuotas(options: AgentQuotasOptions): Quotas {
  const local = new AgentQuotas(options.config, options.maxSessions);
  const url = options.storePath;
  if (!isPostgresUrl(url)) return local;
  const env = { get: (key: string) => options.env[key] };
  // A small pool of its own: admissions never queue behind result writes on the store's pool.
  const store = new PgStore(url, {
    migrations: pgQuotaMigrations,
    max: 4,
    // A database that does not answer costs an admission at most this long before counting per process.
    connectTimeoutS: 2,
    password: pgpassPassword(url, env),
  });
  return new SharedQuotas(local, store, { ...options.shared, log: options.log });
}
