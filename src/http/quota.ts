/**
 * Quotas per agent on the HTTP listener (issue 41): sessions open at once, `tools/call` requests running at
 * once, and JSON-RPC requests per time window, each agent counted on its own, so one agent at its limit
 * never affects another. Read from the config in effect (a reload applies to the next request). Counted
 * per process: replicas sharing a PostgreSQL store each apply the quota on their own.
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

interface Use {
  calls: number;
  windowStart: number;
  requests: number;
  refused: Refusals;
}

/** Counts and admits one listener's requests by agent. */
export class AgentQuotas {
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

  #refuse(agent: string | undefined, quota: keyof Refusals, limit: number, retryMs: number, what: string) {
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
    return this.#refuse(agent, "sessions", limit, 5_000, `${open} sessions are open for this agent`);
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
      return this.#refuse(
        agent,
        "requests",
        quota.requests,
        use.windowStart + quota.windowMs - now,
        `${use.requests} requests in this ${quota.windowMs}ms window`,
      );
    }
    if (method === "tools/call" && use.calls >= quota.concurrentCalls) {
      return this.#refuse(
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
}
