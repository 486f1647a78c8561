/**
 * `GET /` on the listener: the stats report of the last 7 days as a live page (server states now,
 * reloading), for the requesting agent's calls and servers. Nothing secret: server errors are the hub's
 * redacted ones, and the store path is left out.
 *
 * @module
 */
import { type DatabaseSync, openStore, sqliteReader, type SqlReader } from "../store/mod.ts";
import { intelligenceMigrations, queryReportData, renderStatsHtml } from "../intelligence/mod.ts";
import type { Hub } from "../hub/mod.ts";

const WEEK_MS = 7 * 24 * 3600 * 1000;

let empty: DatabaseSync | undefined;

/** The page as a response (`no-store`: it is live). */
export async function livePage(
  db: SqlReader | undefined,
  hub: Hub,
  agent: string | undefined,
  refreshSeconds: number,
): Promise<Response> {
  const now = Date.now();
  // Without a store the page still shows the servers, over an empty in-memory report.
  const query = { now, since: now - WEEK_MS, agent, recent: 20 };
  const blank = () => sqliteReader(empty ??= openStore(":memory:", { migrations: intelligenceMigrations }));
  // A shared store that is down still gets the page: the servers now, over an empty report.
  const data = await queryReportData(db ?? blank(), query).catch(() => queryReportData(blank(), query));
  const html = renderStatsHtml(data, {
    since: "7d",
    agent,
    tools: true,
    live: { servers: hub.servers(), refreshSeconds },
  });
  return new Response(html, {
    headers: {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
      "x-frame-options": "DENY",
    },
  });
}
