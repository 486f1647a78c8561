/**
 * What the HTML report draws: calls per day per server, tokens that reached the
 * agent or were kept out by the spool, p50/p95 duration and error rate per tool,
 * and detached calls. One read of the `calls` table per section.
 *
 * @module
 */
import type { SqlReader } from "../store/mod.ts";
import { KEPT_OUT_SQL, num, queryStats, type RecentCall, type StatsTotals, where } from "./query.ts";

const DAY_MS = 86_400_000;

/** More days than this are drawn as weeks; more weeks than {@linkcode MAX_WEEKS}, as months. */
export const MAX_DAYS = 62;
/** More weeks than this are drawn as months. */
export const MAX_WEEKS = 104;

/** What a report covers: the {@linkcode StatsQuery} filters and the time it was made. */
export interface ReportQuery {
  /** Lower bound on `ts`, ms since the epoch (inclusive). @default the first call */
  since?: number;
  /** When the report is made: the right end of the time axis, ms since the epoch. */
  now: number;
  server?: string;
  agent?: string;
  /** How many of the latest calls to list. @default 0 */
  recent?: number;
}

/** Totals plus what the report adds to them. */
export interface ReportTotals extends StatsTotals {
  /** Estimated tokens that reached the agent (`est_tokens`: arguments + what the agent received). */
  tokens_reached: number;
  /** Calls made with `detach: true`. */
  detached: number;
  /** Detached calls that failed. */
  detached_errors: number;
}

/** One server's row: calls, time and where its tokens went. */
export interface ReportServer {
  server: string;
  calls: number;
  errors: number;
  avg_ms: number;
  est_tokens: number;
  tokens_reached: number;
  tokens_kept_out: number;
  spooled_results: number;
}

/** One tool's row: calls, errors, duration percentiles, detached calls. */
export interface ReportTool {
  namespaced: string;
  server: string;
  tool: string;
  calls: number;
  errors: number;
  /** `errors / calls`, 0..1. */
  error_rate: number;
  avg_ms: number;
  /** Nearest-rank median duration. */
  p50_ms: number;
  /** Nearest-rank 95th percentile duration. */
  p95_ms: number;
  est_tokens: number;
  detached: number;
  detached_errors: number;
  /** Nearest-rank 95th percentile of the detached calls only; 0 when none. */
  detached_p95_ms: number;
}

/** A bar of the calls-over-time chart: one day, week or month (UTC). */
export interface ReportBucket {
  /** Start of the bucket, ms since the epoch (UTC midnight). */
  start: number;
  /** Calls per server, in the order of {@linkcode ReportData.servers}. */
  calls: number[];
}

/** Everything the HTML report shows. */
export interface ReportData {
  query: ReportQuery;
  totals: ReportTotals;
  /** First and last call in the window, ms since the epoch; absent when there are none. */
  first?: number;
  last?: number;
  /** Most calls first, then by name. */
  servers: ReportServer[];
  /** Most calls first, then by name (as `mcphub stats --tools`). */
  tools: ReportTool[];
  unit: "day" | "week" | "month";
  buckets: ReportBucket[];
  /** Newest first; empty unless {@linkcode ReportQuery.recent} is set. */
  recent: RecentCall[];
}

function filters(q: ReportQuery, extra?: string) {
  const w = where({ since: q.since, server: q.server, agent: q.agent });
  if (!extra) return w;
  return { sql: w.sql ? `${w.sql} AND ${extra}` : `WHERE ${extra}`, params: w.params };
}

type ToolKey = string;
const keyOf = (row: Record<string, unknown>): ToolKey =>
  JSON.stringify([String(row.namespaced), String(row.server), String(row.tool)]);

// Nearest rank: the ceil(p * n)-th smallest duration, in integer arithmetic.
async function percentiles(
  db: SqlReader,
  q: ReportQuery,
  extra?: string,
): Promise<Map<ToolKey, [number, number]>> {
  const { sql, params } = filters(q, extra);
  const rows = await db.all(
    `SELECT namespaced, server, tool, duration_ms, rn, n FROM (
       SELECT namespaced, server, tool, duration_ms,
         ROW_NUMBER() OVER (PARTITION BY namespaced, server, tool ORDER BY duration_ms) AS rn,
         COUNT(*) OVER (PARTITION BY namespaced, server, tool) AS n
       FROM calls ${sql}) AS ranked
     WHERE rn = (n + 1) / 2 OR rn = (95 * n + 99) / 100`,
    params,
  );
  const out = new Map<ToolKey, [number, number]>();
  for (const row of rows) {
    const key = keyOf(row);
    const pair = out.get(key) ?? [0, 0];
    const n = num(row.n);
    const rn = num(row.rn);
    if (rn === Math.floor((n + 1) / 2)) pair[0] = num(row.duration_ms);
    if (rn === Math.floor((95 * n + 99) / 100)) pair[1] = num(row.duration_ms);
    out.set(key, pair);
  }
  return out;
}

async function serverExtras(
  db: SqlReader,
  q: ReportQuery,
): Promise<Map<string, { kept: number; spooled: number }>> {
  const { sql, params } = filters(q);
  const out = new Map<string, { kept: number; spooled: number }>();
  for (
    const row of (await db.all(
      `SELECT server, SUM(${KEPT_OUT_SQL}) AS kept, SUM(spooled) AS spooled FROM calls ${sql} GROUP BY server`,
      params,
    ))
  ) out.set(String(row.server), { kept: num(row.kept), spooled: num(row.spooled) });
  return out;
}

async function detachedOf(
  db: SqlReader,
  q: ReportQuery,
): Promise<Map<ToolKey, { calls: number; errors: number }>> {
  const { sql, params } = filters(q, "via = 'detach'");
  const out = new Map<ToolKey, { calls: number; errors: number }>();
  for (
    const row of (await db.all(
      `SELECT namespaced, server, tool, COUNT(*) AS calls, SUM(CASE WHEN ok = 0 THEN 1 ELSE 0 END) AS errors FROM calls ${sql}
       GROUP BY namespaced, server, tool`,
      params,
    ))
  ) out.set(keyOf(row), { calls: num(row.calls), errors: num(row.errors) });
  return out;
}

function utcDay(ts: number): number {
  return Math.floor(ts / DAY_MS) * DAY_MS;
}

/** The start (UTC midnight) of the bucket holding `ts`: weeks start on Monday. */
export function bucketStart(ts: number, unit: ReportData["unit"]): number {
  const day = utcDay(ts);
  if (unit === "day") return day;
  const date = new Date(day);
  if (unit === "week") return day - ((date.getUTCDay() + 6) % 7) * DAY_MS;
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
}

function nextBucket(start: number, unit: ReportData["unit"]): number {
  if (unit === "day") return start + DAY_MS;
  if (unit === "week") return start + 7 * DAY_MS;
  const date = new Date(start);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
}

async function bucketsOf(
  db: SqlReader,
  q: ReportQuery,
  servers: ReportServer[],
  from: number,
  to: number,
): Promise<{ unit: ReportData["unit"]; buckets: ReportBucket[] }> {
  const days = Math.floor((utcDay(to) - utcDay(from)) / DAY_MS) + 1;
  const unit = days <= MAX_DAYS ? "day" : days <= MAX_WEEKS * 7 ? "week" : "month";
  const buckets: ReportBucket[] = [];
  const index = new Map<number, ReportBucket>();
  for (let start = bucketStart(from, unit); start <= to; start = nextBucket(start, unit)) {
    const bucket = { start, calls: servers.map(() => 0) };
    buckets.push(bucket);
    index.set(start, bucket);
  }
  const column = new Map(servers.map((s, i) => [s.server, i]));
  const { sql, params } = filters(q);
  for (
    const row of (await db.all(
      `SELECT ts / ${DAY_MS} AS day, server, COUNT(*) AS calls FROM calls ${sql} GROUP BY day, server`,
      params,
    ))
  ) {
    const bucket = index.get(bucketStart(num(row.day) * DAY_MS, unit));
    const i = column.get(String(row.server));
    if (bucket && i !== undefined) bucket.calls[i] += num(row.calls);
  }
  return { unit, buckets };
}

/** Reads everything the HTML report shows for the calls matching `q`. */
export async function queryReportData(db: SqlReader, q: ReportQuery): Promise<ReportData> {
  const stats = await queryStats(db, { since: q.since, server: q.server, agent: q.agent, recent: q.recent });
  const { sql, params } = filters(q);
  const span = (await db.all(`SELECT MIN(ts) AS first, MAX(ts) AS last FROM calls ${sql}`, params))[0] ?? {};
  const extras = await serverExtras(db, q);
  const servers: ReportServer[] = stats.servers.map((s) => {
    const extra = extras.get(s.server) ?? { kept: 0, spooled: 0 };
    return {
      ...s,
      tokens_reached: s.est_tokens,
      tokens_kept_out: extra.kept,
      spooled_results: extra.spooled,
    };
  });
  const pct = await percentiles(db, q);
  const detachedPct = await percentiles(db, q, "via = 'detach'");
  const detached = await detachedOf(db, q);
  const tools: ReportTool[] = stats.tools.map((t) => {
    const key = JSON.stringify([t.namespaced, t.server, t.tool]);
    const [p50, p95] = pct.get(key) ?? [0, 0];
    const d = detached.get(key) ?? { calls: 0, errors: 0 };
    return {
      namespaced: t.namespaced,
      server: t.server,
      tool: t.tool,
      calls: t.calls,
      errors: t.errors,
      error_rate: t.calls > 0 ? t.errors / t.calls : 0,
      avg_ms: t.avg_ms,
      p50_ms: p50,
      p95_ms: p95,
      est_tokens: t.est_tokens,
      detached: d.calls,
      detached_errors: d.errors,
      detached_p95_ms: detachedPct.get(key)?.[1] ?? 0,
    };
  });
  const data: ReportData = {
    query: q,
    totals: {
      ...stats.totals,
      tokens_reached: stats.totals.est_tokens,
      detached: tools.reduce((sum, t) => sum + t.detached, 0),
      detached_errors: tools.reduce((sum, t) => sum + t.detached_errors, 0),
    },
    servers,
    tools,
    unit: "day",
    buckets: [],
    recent: stats.recent,
  };
  if (span.first !== null && span.first !== undefined) {
    data.first = num(span.first);
    data.last = num(span.last);
    const from = q.since ?? data.first;
    const to = Math.max(q.now, data.last);
    Object.assign(data, await bucketsOf(db, q, servers, from, to));
  }
  return data;
}
