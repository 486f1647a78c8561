/**
 * `mcphub stats`: what the recorded calls cost, as text, markdown, JSON or an
 * HTML report file.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { dirname, resolve } from "node:path";
import { type Command, type CommandContext, parseCommandArgs, UsageError } from "./command.ts";
import { isPostgresUrl, redactDbUrl } from "../store/mod.ts";
import { storeLocationOf } from "./host.ts";
import { withStoreReader } from "./store_access.ts";
import {
  describeWindow,
  formatStatsJson,
  formatStatsMarkdown,
  formatStatsText,
  intelligenceMigrations,
  parseSince,
  plural,
  queryReportData,
  queryStats,
  renderStatsHtml,
  type ReportData,
  type ReportQuery,
  SINCE_FORMS,
  type StatsFormatOptions,
  type StatsReport,
} from "../intelligence/mod.ts";

/** The largest `--recent N`. */
export const MAX_RECENT = 10_000;

const HELP = `Usage: mcphub stats [--tools] [--recent N] [--since D] [--server S] [--agent NAME]
                    [--markdown | --json | --html FILE]

Shows the calls recorded by \`mcphub mcp serve\`: totals, then calls, errors, average
duration and estimated tokens per server. EST_TOKENS is what reached the agent's context
((arguments + returned bytes) / 4; a stored oversized result counts as its receipt);
KEPT_OUT is what the spool kept out of it.

Options:
  --tools         Add a table per tool.
  --recent N      Add the last N calls (1..${MAX_RECENT}), newest first, times in UTC.
  --since D       Only calls in the last D: 30m, 24h, 7d, 2w (units s, m, h, d, w).
  --server S      Only calls to server S.
  --agent NAME    Only calls made by gateways started with --agent NAME.
  --markdown      GitHub-flavoured markdown, for a PR or a CI job summary.
  --json          {totals, servers, tools, recent}; tools and recent are [] unless
                  --tools / --recent N is given.
  --html FILE     Write a self-contained HTML report to FILE (no script, no network):
                  calls per day per server, tokens that reached the agent or were kept
                  out by the spool, p50/p95 and error rate per tool, detached calls.
                  --tools lists every tool, --recent N adds the last N calls.

Global: --db PATH (else $MCPHUB_DB, else ~/.local/share/mcphub/mcphub.db).`;

const EMPTY_REPORT: StatsReport = {
  totals: { calls: 0, errors: 0, est_tokens: 0, total_ms: 0, spooled_results: 0, tokens_kept_out: 0 },
  servers: [],
  tools: [],
  recent: [],
};

/** Options for {@linkcode createStatsCommand}. */
export interface StatsCommandOptions {
  /** The clock `--since` counts back from. @default Date.now */
  now?: () => number;
}

function parseRecent(text: string): number {
  const n = /^\d+$/.test(text.trim()) ? Number(text.trim()) : NaN;
  if (!(n >= 1 && n <= MAX_RECENT)) {
    throw new UsageError(`Invalid --recent "${text}": use a whole number from 1 to ${MAX_RECENT}`, "stats");
  }
  return n;
}

function parseFlags(args: string[]) {
  return parseCommandArgs(
    "stats",
    () =>
      parseArgs({
        args,
        strict: true,
        allowPositionals: false,
        options: {
          tools: { type: "boolean" },
          recent: { type: "string" },
          since: { type: "string" },
          server: { type: "string" },
          agent: { type: "string" },
          markdown: { type: "boolean" },
          json: { type: "boolean" },
          html: { type: "string" },
          help: { type: "boolean", short: "h" },
        },
      }).values,
    "; stats accepts --tools, --recent N, --since D, --server S, --agent NAME, --markdown, --json, --html FILE",
  );
}

/** Whether a SQLite store is missing: the file, or even its directory. */
function missingStore(path: string): "file" | "directory" | undefined {
  try {
    Deno.statSync(path);
    return undefined;
  } catch {
    try {
      return Deno.statSync(dirname(path)).isDirectory ? "file" : "directory";
    } catch {
      return "directory";
    }
  }
}

async function runStats(ctx: CommandContext, now: () => number): Promise<number> {
  const flags = parseFlags(ctx.args);
  if (flags.help) {
    ctx.out(`${HELP}\n`);
    return 0;
  }
  const json = Boolean(flags.json || ctx.global.json);
  if ([json, flags.markdown, flags.html !== undefined].filter(Boolean).length > 1) {
    throw new UsageError(
      flags.html === undefined
        ? "Choose one of --markdown and --json"
        : "Choose one of --markdown, --json and --html FILE",
      "stats",
    );
  }
  if (flags.html !== undefined && flags.html.trim() === "") {
    throw new UsageError("--html needs a file name, such as --html stats.html", "stats");
  }
  let sinceMs: number | undefined;
  if (flags.since !== undefined) {
    try {
      sinceMs = parseSince(flags.since);
    } catch (error) {
      throw new UsageError(`Invalid --since "${flags.since}": use ${SINCE_FORMS}`, "stats", {
        cause: error,
      });
    }
  }
  const recent = flags.recent === undefined ? 0 : parseRecent(flags.recent);
  const path = await storeLocationOf(ctx);
  const format: StatsFormatOptions = {
    since: flags.since?.trim(),
    server: flags.server,
    agent: flags.agent,
    tools: Boolean(flags.tools),
    dbPath: redactDbUrl(path),
    storeMissing: isPostgresUrl(path) ? undefined : missingStore(resolve(ctx.cwd, path)),
  };
  if (flags.html !== undefined) {
    return writeHtml(ctx, resolve(ctx.cwd, flags.html), path, format, {
      since: sinceMs === undefined ? undefined : now() - sinceMs,
      now: now(),
      server: flags.server,
      agent: flags.agent,
      recent,
    });
  }
  // Reading stats must not create a database as a side effect.
  const report =
    await withStoreReader(path, { migrations: intelligenceMigrations, env: ctx.env }, (db) =>
      queryStats(db, {
        since: sinceMs === undefined ? undefined : now() - sinceMs,
        server: flags.server,
        agent: flags.agent,
        recent,
      })) ?? EMPTY_REPORT;
  const text = json
    ? formatStatsJson(report, format)
    : flags.markdown
    ? formatStatsMarkdown(report, format)
    : formatStatsText(report, format);
  ctx.out(text);
  return 0;
}

async function writeHtml(
  ctx: CommandContext,
  file: string,
  path: string,
  format: StatsFormatOptions,
  q: ReportQuery,
): Promise<number> {
  const data = await withStoreReader(
    path,
    { migrations: intelligenceMigrations, env: ctx.env },
    (db) => queryReportData(db, q),
  ) ??
    emptyData(q);
  try {
    Deno.writeTextFileSync(file, renderStatsHtml(data, format));
  } catch (error) {
    throw new Error(
      `Cannot write the report to ${file}: ${(error as Error).message}; choose a writable --html path`,
      {
        cause: error,
      },
    );
  }
  ctx.out(`Wrote ${file}: ${plural(data.totals.calls, "call")} (${describeWindow(format)}).\n`);
  return 0;
}

function emptyData(q: ReportQuery): ReportData {
  return {
    query: q,
    totals: { ...EMPTY_REPORT.totals, tokens_reached: 0, detached: 0, detached_errors: 0 },
    servers: [],
    tools: [],
    unit: "day",
    buckets: [],
    recent: [],
  };
}

/** Builds the `stats` command; tests inject the clock. */
export function createStatsCommand(options: StatsCommandOptions = {}): Command {
  const now = options.now ?? Date.now;
  return {
    name: "stats",
    summary: "Show recorded calls, errors and estimated token cost per server and tool",
    help: HELP,
    // The executor turns a synchronous throw (a UsageError) into a rejection.
    run: (ctx) => runStats(ctx, now),
  };
}

/** `mcphub stats`. */
export const statsCommand: Command = createStatsCommand();
