/**
 * A fixed set of call records shared by the intelligence and `stats` CLI tests.
 *
 * @module
 */
import {
  type CallRecord,
  intelligenceMigrations,
  queryReportData,
  Recorder,
  renderStatsHtml,
} from "../../src/intelligence/mod.ts";
import { type DatabaseSync, openStore, sqliteReader } from "../../src/store/mod.ts";

/** The fixed clock: 2026-11-30 06:00:00 UTC. */
export const NOW = Date.UTC(2026, 10, 30, 6, 0, 0);
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

function call(partial: Partial<CallRecord> & Pick<CallRecord, "server" | "tool">): CallRecord {
  return {
    ts: NOW,
    namespaced: `${partial.server}__${partial.tool}`,
    durationMs: 0,
    ok: true,
    argsBytes: 0,
    resultBytes: 0,
    via: "mount",
    spooled: false,
    returnedBytes: partial.resultBytes ?? 0,
    ...partial,
  };
}

/**
 * Six calls over three servers. All time: 6 calls, 2 errors, 685 est. tokens to the agent, 1515 ms,
 * 1 spooled result keeping 24850 tokens out. The last 7 days hold the first four.
 */
export const SAMPLE_CALLS: CallRecord[] = [
  call({
    server: "github",
    tool: "search_code",
    ts: NOW - HOUR,
    durationMs: 120,
    argsBytes: 40,
    resultBytes: 400,
    agent: "claude",
  }),
  call({
    server: "github",
    tool: "search_code",
    ts: NOW - 2 * HOUR,
    durationMs: 80,
    argsBytes: 60,
    resultBytes: 1000,
    agent: "claude",
    via: "call_tool",
  }),
  call({
    server: "github",
    tool: "create_issue",
    ts: NOW - 3 * DAY,
    durationMs: 300,
    ok: false,
    error: "boom",
    argsBytes: 200,
    resultBytes: 100,
    agent: "ci",
  }),
  call({
    server: "fs",
    tool: "read_file",
    ts: NOW - 30 * MINUTE,
    durationMs: 10,
    argsBytes: 20,
    resultBytes: 100_000,
    spooled: true,
    returnedBytes: 600,
    agent: "claude",
    via: "call_tool",
  }),
  call({
    server: "fs",
    tool: "read_file",
    ts: NOW - 10 * DAY,
    durationMs: 5,
    argsBytes: 20,
    resultBytes: 200,
  }),
  call({
    server: "slack",
    tool: "post",
    ts: NOW - 8 * DAY,
    durationMs: 1000,
    ok: false,
    error: "timeout",
    argsBytes: 100,
    agent: "ci",
    via: "detach",
  }),
];

/** Opens `path` (default in memory) with the intelligence schema and records {@linkcode SAMPLE_CALLS}. */
export async function sampleStore(path = ":memory:"): Promise<DatabaseSync> {
  const db = openStore(path, { migrations: intelligenceMigrations });
  const recorder = new Recorder(db);
  for (const rec of SAMPLE_CALLS) recorder.record(rec);
  await recorder.close();
  return db;
}

/** The sample store's report, all time or the last 7 days. */
export async function sampleHtml(
  options: { since?: number; live?: boolean; tools?: boolean; recent?: number } = {},
): Promise<string> {
  const db = await sampleStore();
  try {
    const data = await queryReportData(sqliteReader(db), {
      now: NOW,
      since: options.since === undefined ? undefined : NOW - options.since,
      recent: options.recent,
    });
    return renderStatsHtml(data, {
      since: options.since === undefined ? undefined : `${options.since / DAY}d`,
      tools: options.tools,
      dbPath: "/home/dev/.local/share/mcphub/mcphub.db",
      live: options.live
        ? {
          refreshSeconds: 10,
          servers: [
            { name: "github", enabled: true, connected: true, state: "connected", tools: 41, kind: "http" },
            {
              name: "slack",
              enabled: true,
              connected: false,
              state: "backoff",
              tools: 0,
              kind: "stdio",
              error: "exited with code 1",
              failures: 3,
              next_attempt_at: "2026-11-30T06:00:08.000Z",
            },
            { name: "fs", enabled: false, connected: false, state: "disabled", tools: 0, kind: "stdio" },
          ],
        }
        : undefined,
    });
  } finally {
    db.close();
  }
}
