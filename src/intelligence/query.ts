/**
 * Read side of the call records: the `stats` report, the `stats` meta-tool,
 * the most-called tools for `pin --top`, and `--since` durations.
 *
 * @module
 */
import type { SqlReader } from "../store/mod.ts";
import type { CallVia } from "./recorder.ts";

/** Which calls a report covers; every field narrows it. */
export interface StatsQuery {
  /** Lower bound on `ts`, ms since the epoch (inclusive). */
  since?: number;
  /** Upper bound on `ts`, ms since the epoch (inclusive). @default no bound */
  now?: number;
  server?: string;
  agent?: string;
  /** How many of the latest calls to list in `recent`. @default 0 */
  recent?: number;
}

/** Sums over every call in the window. */
export interface StatsTotals {
  calls: number;
  errors: number;
  /** Estimated tokens that reached the agent's context: (arguments + returned bytes) / 4, receipts for spooled results. */
  est_tokens: number;
  total_ms: number;
  /** Calls whose result went to the spool. */
  spooled_results: number;
  /** Estimated tokens the spool kept out of the agent's context. */
  tokens_kept_out: number;
}

/** One server's row. */
export interface ServerStats {
  server: string;
  calls: number;
  errors: number;
  /** Rounded to an integer. */
  avg_ms: number;
  est_tokens: number;
  /** Estimated tokens of spooled results the agent did not receive. */
  tokens_kept_out: number;
}

/** One tool's row. */
export interface ToolStats {
  namespaced: string;
  server: string;
  tool: string;
  calls: number;
  errors: number;
  avg_ms: number;
  est_tokens: number;
  tokens_kept_out: number;
}

/** One recent call. */
export interface RecentCall {
  ts: number;
  namespaced: string;
  server: string;
  tool: string;
  ok: boolean;
  duration_ms: number;
  est_tokens: number;
  via: CallVia;
  agent?: string;
}

/** What `mcphub stats` reports; rows sorted by calls, most first, then by name. */
export interface StatsReport {
  totals: StatsTotals;
  servers: ServerStats[];
  tools: ToolStats[];
  /** Newest first; empty unless {@linkcode StatsQuery.recent} is set. */
  recent: RecentCall[];
}

/** The `stats` meta-tool result. */
export interface StatsMetaToolResult {
  totals: StatsTotals;
  servers: Omit<ServerStats, "tokens_kept_out">[];
}

/** One entry of {@linkcode topTools}. */
export interface TopTool {
  namespaced: string;
  server: string;
  tool: string;
  calls: number;
}

type SqlValue = string | number | null;

/**
 * Estimated tokens that reached the agent: arguments plus what it received (the receipt of a spooled
 * result, not the stored bytes); none for a call made by code (run_code), whose arguments and result
 * stayed in the sandbox. Computed from the byte columns, so records written before `est_tokens` meant
 * this are counted the same way. @internal
 */
export const CONTEXT_TOKENS_SQL = "CASE WHEN via = 'code' THEN 0 ELSE " +
  "(args_bytes + CASE WHEN spooled = 1 THEN returned_bytes ELSE result_bytes END) / 4 END";
const CONTEXT_TOKENS = CONTEXT_TOKENS_SQL;

/** SQL for the estimated tokens one spooled call kept out of context. @internal */
export const KEPT_OUT_SQL =
  "CASE WHEN spooled = 1 AND result_bytes > returned_bytes THEN (result_bytes - returned_bytes) / 4 ELSE 0 END";

/** The WHERE clause and parameters for `q`. @internal */
export function where(q: StatsQuery): { sql: string; params: SqlValue[] } {
  const clauses: string[] = [];
  const params: SqlValue[] = [];
  if (q.since !== undefined) {
    clauses.push("ts >= ?");
    params.push(Math.floor(q.since));
  }
  if (q.now !== undefined) {
    clauses.push("ts <= ?");
    params.push(Math.floor(q.now));
  }
  if (q.server !== undefined) {
    clauses.push("server = ?");
    params.push(q.server);
  }
  if (q.agent !== undefined) {
    clauses.push("agent = ?");
    params.push(q.agent);
  }
  return { sql: clauses.length ? `WHERE ${clauses.join(" AND ")}` : "", params };
}

/**
 * A database number as a number: SQLite gives numbers (or bigints), PostgreSQL's SUM gives numeric
 * strings; anything else is 0. @internal
 */
export function num(value: unknown): number {
  if (typeof value === "number") return value;
  if (typeof value === "bigint") return Number(value);
  if (typeof value === "string" && /^-?\d+(\.\d+)?$/.test(value)) return Number(value);
  return 0;
}

function avg(totalMs: unknown, calls: unknown): number {
  const n = num(calls);
  return n > 0 ? Math.round(num(totalMs) / n) : 0;
}

async function totalsOf(db: SqlReader, q: StatsQuery): Promise<StatsTotals> {
  const { sql, params } = where(q);
  const row = (await db.all(
    `SELECT COUNT(*) AS calls, SUM(CASE WHEN ok = 0 THEN 1 ELSE 0 END) AS errors, SUM(${CONTEXT_TOKENS}) AS est_tokens,
       SUM(duration_ms) AS total_ms, SUM(spooled) AS spooled_results, SUM(${KEPT_OUT_SQL}) AS kept_out
     FROM calls ${sql}`,
    params,
  ))[0] ?? {};
  return {
    calls: num(row.calls),
    errors: num(row.errors),
    est_tokens: num(row.est_tokens),
    total_ms: num(row.total_ms),
    spooled_results: num(row.spooled_results),
    tokens_kept_out: num(row.kept_out),
  };
}

async function serversOf(db: SqlReader, q: StatsQuery): Promise<ServerStats[]> {
  const { sql, params } = where(q);
  return (await db.all(
    `SELECT server, COUNT(*) AS calls, SUM(CASE WHEN ok = 0 THEN 1 ELSE 0 END) AS errors, SUM(duration_ms) AS total_ms,
       SUM(${CONTEXT_TOKENS}) AS est_tokens, SUM(${KEPT_OUT_SQL}) AS kept_out
     FROM calls ${sql} GROUP BY server ORDER BY calls DESC, server ASC`,
    params,
  )).map((row) => ({
    server: String(row.server),
    calls: num(row.calls),
    errors: num(row.errors),
    avg_ms: avg(row.total_ms, row.calls),
    est_tokens: num(row.est_tokens),
    tokens_kept_out: num(row.kept_out),
  }));
}

async function toolsOf(db: SqlReader, q: StatsQuery): Promise<ToolStats[]> {
  const { sql, params } = where(q);
  return (await db.all(
    `SELECT namespaced, server, tool, COUNT(*) AS calls, SUM(CASE WHEN ok = 0 THEN 1 ELSE 0 END) AS errors,
       SUM(duration_ms) AS total_ms, SUM(${CONTEXT_TOKENS}) AS est_tokens, SUM(${KEPT_OUT_SQL}) AS kept_out
     FROM calls ${sql} GROUP BY namespaced, server, tool
     ORDER BY calls DESC, namespaced ASC, server ASC, tool ASC`,
    params,
  )).map((row) => ({
    namespaced: String(row.namespaced),
    server: String(row.server),
    tool: String(row.tool),
    calls: num(row.calls),
    errors: num(row.errors),
    avg_ms: avg(row.total_ms, row.calls),
    est_tokens: num(row.est_tokens),
    tokens_kept_out: num(row.kept_out),
  }));
}

async function recentOf(db: SqlReader, q: StatsQuery, limit: number): Promise<RecentCall[]> {
  const { sql, params } = where(q);
  return (await db.all(
    `SELECT ts, namespaced, server, tool, ok, duration_ms, ${CONTEXT_TOKENS} AS est_tokens, via, agent
     FROM calls ${sql} ORDER BY ts DESC, id DESC LIMIT ?`,
    [...params, limit],
  )).map((row) => {
    const call: RecentCall = {
      ts: num(row.ts),
      namespaced: String(row.namespaced),
      server: String(row.server),
      tool: String(row.tool),
      ok: num(row.ok) !== 0,
      duration_ms: num(row.duration_ms),
      est_tokens: num(row.est_tokens),
      via: String(row.via) as CallVia,
    };
    if (row.agent !== null && row.agent !== undefined) call.agent = String(row.agent);
    return call;
  });
}

/**
 * The full `mcphub stats` report for the calls matching `q`.
 * Servers and tools sort by calls (most first), then by name; `avg_ms` is rounded.
 */
export async function queryStats(db: SqlReader, q: StatsQuery = {}): Promise<StatsReport> {
  const recent = Math.max(0, Math.floor(q.recent ?? 0));
  return {
    totals: await totalsOf(db, q),
    servers: await serversOf(db, q),
    tools: await toolsOf(db, q),
    recent: recent > 0 ? await recentOf(db, q, recent) : [],
  };
}

/** The `stats` meta-tool result: all time, only `agent`'s calls when given. */
export async function statsMetaTool(
  db: SqlReader,
  options: { agent?: string } = {},
): Promise<StatsMetaToolResult> {
  const q: StatsQuery = options.agent === undefined ? {} : { agent: options.agent };
  const t = await totalsOf(db, q);
  return {
    totals: {
      calls: t.calls,
      est_tokens: t.est_tokens,
      total_ms: t.total_ms,
      errors: t.errors,
      spooled_results: t.spooled_results,
      tokens_kept_out: t.tokens_kept_out,
    },
    servers: (await serversOf(db, q)).map((s) => ({
      server: s.server,
      calls: s.calls,
      errors: s.errors,
      est_tokens: s.est_tokens,
      avg_ms: s.avg_ms,
    })),
  };
}

/** Options for {@linkcode topTools}. */
export interface TopToolsOptions {
  /** How many tools at most. */
  limit: number;
  /** Only calls at or after this time, ms since the epoch. @default all time */
  since?: number;
  /** Only this agent's calls. @default every agent's */
  agent?: string;
}

/** The most-called tools (for `mcphub pin --top N`): calls desc, then name. */
export async function topTools(db: SqlReader, options: TopToolsOptions): Promise<TopTool[]> {
  const limit = Math.max(0, Math.floor(options.limit));
  if (limit === 0) return [];
  const { sql, params } = where({ since: options.since, agent: options.agent });
  return (await db.all(
    `SELECT namespaced, server, tool, COUNT(*) AS calls FROM calls ${sql}
     GROUP BY namespaced, server, tool ORDER BY calls DESC, namespaced ASC, server ASC, tool ASC LIMIT ?`,
    [...params, limit],
  )).map((row) => ({
    namespaced: String(row.namespaced),
    server: String(row.server),
    tool: String(row.tool),
    calls: num(row.calls),
  }));
}

const UNIT_MS: Record<string, number> = {
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

/** The accepted `--since` forms, for messages. */
export const SINCE_FORMS = "a positive whole number followed by s, m, h, d or w, such as 30m, 24h, 7d or 2w";

/**
 * Parses a duration such as `"30m"`, `"24h"`, `"7d"` (also `s`, `w`) into milliseconds.
 * @throws {RangeError} naming the accepted forms when `text` is not one of them
 */
export function parseSince(text: string): number {
  const match = /^\s*(\d+)\s*([smhdw])\s*$/.exec(text);
  const ms = match ? Number(match[1]) * UNIT_MS[match[2]] : NaN;
  if (!match || !(ms > 0) || !Number.isSafeInteger(ms)) {
    throw new RangeError(`Invalid duration "${text}": use ${SINCE_FORMS}`);
  }
  return ms;
}
