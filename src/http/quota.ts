/**
 * Quotas per agent on the HTTP listener (issue 41): sessions open at once, `tools/call` requests running at
 * once, and JSON-RPC requests per time window, each agent counted on its own, so one agent at its limit
 * never affects another. Read from the config in effect (a reload applies to the next request). Counted
 * here per process ({@linkcode AgentQuotas}); replicas sharing a PostgreSQL store count together
 * (shared_quota.ts), behind the same {@linkcode Quotas} interface.
 *
 * @module
 */
import type { AgentQuota, Config } from "../config/mod.ts";

/** The JSON-RPC error code of a request refused by a quota (server-defined range). */
export const QUOTA_ERROR = -32029;

/** What each agent has had refused, by quota. */
export interface Refusals {
  sessions: number;
  concurrent_calls: number;
  requests: number;
}

/** A refusal: the JSON-RPC error to answer with, and the seconds for `Retry-After`. */
export interface QuotaRefusal {
  code: number;
  message: string;
  data: { retry_after_ms: number; quota: string; limit: number };
  retryAfterSeconds: number;
}

/** A session's place in its agent's `sessions` quota, given back when the session ends (or is never made). */
export interface SessionPlace {
  release(): void;
}

/**
 * What the listener asks of a quota keeper. A decision is synchronous when it can be made from what the
 * process knows (always, counted per process), else a promise (a round-trip to the shared store).
 */
export interface Quotas {
  /** A place for a new session of `agent`, which has `open` sessions on this process; or a refusal. */
  openSession(agent: string | undefined, open: number): Promise<QuotaRefusal | SessionPlace>;
  /** See {@linkcode AgentQuotas.admit}. */
  admit(
    agent: string | undefined,
    method: string,
  ): QuotaRefusal | undefined | Promise<QuotaRefusal | undefined>;
  /** See {@linkcode AgentQuotas.release}. */
  release(agent: string | undefined): void;
  /** What `agent` has had refused so far on this process. */
  refusals(agent: string | undefined): Refusals;
  /** Gives back what this process holds (an orderly stop). */
  close(): Promise<void>;
}

/** True when `value` is a refusal (not a place). */
export function isRefusal(value: QuotaRefusal | SessionPlace | undefined): value is QuotaRefusal {
  return value !== undefined && "code" in value;
}

const NO_PLACE: SessionPlace = { release: () => {} };

/**
 * `step` for each call in the order they come; while a step's promise is pending, the calls after it wait
 * behind it (a quota decision the shared store makes holds a session's later messages in order).
 */
export function inOrder<A extends unknown[]>(
  step: (...args: A) => void | Promise<void>,
): (...args: A) => void {
  let tail: Promise<void> | undefined;
  return (...args) => {
    if (tail === undefined) {
      const ran = step(...args);
      if (ran === undefined) return;
      tail = ran;
    } else tail = tail.then(() => step(...args));
    const mine: Promise<void> = tail = tail.catch(() => {});
    void mine.then(() => {
      if (tail === mine) tail = undefined;
    });
  };
}

interface Use {
  calls: number;
  windowStart: number;
  requests: number;
  refused: Refusals;
}

/** Counts and admits one listener's requests by agent, per process. */
export class AgentQuotas implements Quotas {
  #use = new Map<string, Use>();
  #config: () => Config;
  #maxSessions: number;
  #now: () => number;

  constructor(config: () => Config, maxSessions: number, now: () => number = Date.now) {
    this.#config = config;
    this.#maxSessions = maxSessions;
    this.#now = now;
  }

  /** The quota in effect for `agent` (undefined = unscoped). */
  quotaOf(agent: string | undefined): Required<AgentQuota> {
    const config = this.#config();
    const own = agent === undefined ? undefined : config.agents.find((a) => a.name === agent)?.quota;
    const merged = { ...config.agentQuota, ...own };
    // An equal share of the listener's sessions: agents together cannot lock each other out.
    const share = Math.max(1, Math.floor(this.#maxSessions / Math.max(1, config.agents.length)));
    // Unscoped (no agents, loopback): only the listener's own session limit applies.
    return { ...merged, sessions: merged.sessions ?? (agent === undefined ? Infinity : share) };
  }

  #of(agent: string | undefined): Use {
    const key = agent ?? "";
    let use = this.#use.get(key);
    if (!use) {
      use = {
        calls: 0,
        windowStart: this.#now(),
        requests: 0,
        refused: { sessions: 0, concurrent_calls: 0, requests: 0 },
      };
      this.#use.set(key, use);
    }
    return use;
  }

  /** A refusal by `quota`, counted for `agent`; `what` says what the agent has (in the message). */
  refuse(
    agent: string | undefined,
    quota: keyof Refusals,
    limit: number,
    retryMs: number,
    what: string,
  ): QuotaRefusal {
    this.#of(agent).refused[quota] += 1;
    const key = agent === undefined ? `agent_quota.${quota}` : `agents.${agent}.quota.${quota}`;
    const seconds = Math.max(1, Math.ceil(retryMs / 1000));
    return {
      code: QUOTA_ERROR,
      message: `Too many requests: ${what}, the most ${key} allows (${limit}); retry after ${seconds}s`,
      data: { retry_after_ms: Math.max(1, Math.round(retryMs)), quota: key, limit },
      retryAfterSeconds: seconds,
    };
  }

  /** A refusal when `agent` already has `open` sessions at its quota; else undefined. */
  refuseSession(agent: string | undefined, open: number): QuotaRefusal | undefined {
    const limit = this.quotaOf(agent).sessions;
    if (open < limit) return undefined;
    return this.refuse(agent, "sessions", limit, 5_000, `${open} sessions are open for this agent`);
  }

  /** {@linkcode AgentQuotas.refuseSession}, as a place (nothing to give back here). */
  openSession(agent: string | undefined, open: number): Promise<QuotaRefusal | SessionPlace> {
    return Promise.resolve(this.refuseSession(agent, open) ?? NO_PLACE);
  }

  /**
   * Admits one JSON-RPC request (counted in the window; a `tools/call` also as running until
   * {@linkcode release}), or refuses it.
   */
  admit(agent: string | undefined, method: string): QuotaRefusal | undefined {
    const quota = this.quotaOf(agent);
    const use = this.#of(agent);
    const now = this.#now();
    if (now - use.windowStart >= quota.windowMs) {
      use.windowStart = now;
      use.requests = 0;
    }
    if (use.requests >= quota.requests) {
      return this.refuse(
        agent,
        "requests",
        quota.requests,
        use.windowStart + quota.windowMs - now,
        `${use.requests} requests in this ${quota.windowMs}ms window`,
      );
    }
    if (method === "tools/call" && use.calls >= quota.concurrentCalls) {
      return this.refuse(
        agent,
        "concurrent_calls",
        quota.concurrentCalls,
        1_000,
        `${use.calls} calls are running`,
      );
    }
    use.requests++;
    if (method === "tools/call") use.calls++;
    return undefined;
  }

  /** A `tools/call` admitted for `agent` ended (answered, cancelled, or its session ended). */
  release(agent: string | undefined): void {
    const use = this.#of(agent);
    use.calls = Math.max(0, use.calls - 1);
  }

  /** What `agent` has had refused so far. */
  refusals(agent: string | undefined): Refusals {
    return { ...this.#of(agent).refused };
  }

  /** Nothing is held outside the process. */
  close(): Promise<void> {
    return Promise.resolve();
  }
}
