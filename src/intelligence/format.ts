/**
 * The `mcphub stats` report formats: aligned text, GitHub-flavoured markdown and
 * JSON. Pure functions of a {@linkcode StatsReport}; every output ends with a newline.
 *
 * @module
 */
import type { StatsReport } from "./query.ts";

/** What the report covers and what to include. */
export interface StatsFormatOptions {
  /** The `--since` text, such as `"7d"`; absent means all time. */
  since?: string;
  /** The `--server` filter, named in the heading. */
  server?: string;
  /** The `--agent` filter, named in the heading. */
  agent?: string;
  /** Include the per-tool table (JSON: the `tools` array). @default false */
  tools?: boolean;
  /** Where calls are recorded, named in the no-data sentence. */
  dbPath?: string;
  /** The SQLite store does not exist: not the `file` yet, or not even its `directory`. */
  storeMissing?: "file" | "directory";
}

/** `1234567` → `"1,234,567"`: whole numbers with thousands separators. */
export function formatCount(n: number): string {
  const whole = Math.round(n);
  const digits = String(Math.abs(whole)).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return whole < 0 ? `-${digits}` : digits;
}

/** `0.25` → `"25.0%"`. */
export function formatRate(rate: number): string {
  return `${(rate * 100).toFixed(1)}%`;
}

/** `"1 call"`, `"2 calls"`: a count with thousands separators and the right noun. */
export function plural(count: number, one: string, many = `${one}s`): string {
  return `${formatCount(count)} ${count === 1 ? one : many}`;
}

/** `1234` → `"1,234 ms"`. */
export function formatMs(ms: number): string {
  return `${formatCount(ms)} ms`;
}

/** `"all time"`, `"last 7d"`, plus any filters: `"last 7d, server github"`. */
export function describeWindow(options: StatsFormatOptions): string {
  const parts = [options.since ? `last ${options.since}` : "all time"];
  if (options.server !== undefined) parts.push(`server ${options.server}`);
  if (options.agent !== undefined) parts.push(`agent ${options.agent}`);
  return parts.join(", ");
}

/** The one sentence shown instead of empty tables. */
export function noDataSentence(options: StatsFormatOptions): string {
  if (options.storeMissing === "directory") {
    return `No store at ${options.dbPath}: its directory does not exist, so nothing was ever recorded there; ` +
      "pass the --db that mcp serve uses, or leave --db out for the default store.";
  }
  if (options.storeMissing === "file") {
    return `No calls recorded yet: ${options.dbPath} does not exist yet. mcp serve creates it and records ` +
      "calls there once your MCP host starts it and calls a tool.";
  }
  const where = options.dbPath ? ` in ${options.dbPath}` : "";
  const filtered = options.since !== undefined || options.server !== undefined ||
    options.agent !== undefined;
  if (!filtered) {
    return `No calls recorded yet (all time). Run \`mcphub mcp serve\` from your MCP host and call a tool; calls are recorded${where}.`;
  }
  const tips: string[] = [];
  if (options.since !== undefined) tips.push("try a longer --since");
  const filters = [
    options.server !== undefined ? "--server" : "",
    options.agent !== undefined ? "--agent" : "",
  ].filter(Boolean);
  if (filters.length > 0) tips.push(`drop ${filters.join(" or ")}`);
  return `No calls recorded (${describeWindow(options)})${where}; ${tips.join(" or ")}.`;
}

/** `"2026-11-30 05:46:57"`: the UTC time of `ts`, to the second. */
export function formatWhen(ts: number): string {
  return new Date(ts).toISOString().slice(0, 19).replace("T", " ");
}

function totalsLine(report: StatsReport, options: StatsFormatOptions): string {
  const t = report.totals;
  return `Totals (${describeWindow(options)}): ${plural(t.calls, "call")}, ${plural(t.errors, "error")}, ~${
    formatCount(t.est_tokens)
  } tokens to the agent, ${formatMs(t.total_ms)} total`;
}

function spoolLine(report: StatsReport): string | undefined {
  const t = report.totals;
  if (t.spooled_results === 0) return undefined;
  return `Spooled results: ${t.spooled_results}, ~${t.tokens_kept_out} tokens kept out of context`;
}

type Column = { title: string; numeric: boolean };
type Cell = string | number;

const SERVER_COLUMNS: Column[] = [
  { title: "SERVER", numeric: false },
  { title: "CALLS", numeric: true },
  { title: "ERRORS", numeric: true },
  { title: "AVG_MS", numeric: true },
  { title: "EST_TOKENS", numeric: true },
  { title: "KEPT_OUT", numeric: true },
];
const TOOL_COLUMNS: Column[] = [{ title: "TOOL", numeric: false }, ...SERVER_COLUMNS.slice(1)];
const RECENT_COLUMNS: Column[] = [
  { title: "WHEN", numeric: false },
  { title: "TOOL", numeric: false },
  { title: "OK", numeric: false },
  { title: "MS", numeric: true },
  { title: "TOKENS", numeric: true },
];

function serverCells(report: StatsReport): Cell[][] {
  return report.servers.map((s) => [s.server, s.calls, s.errors, s.avg_ms, s.est_tokens, s.tokens_kept_out]);
}

function toolCells(report: StatsReport): Cell[][] {
  return report.tools.map((
    t,
  ) => [t.namespaced, t.calls, t.errors, t.avg_ms, t.est_tokens, t.tokens_kept_out]);
}

function recentCells(report: StatsReport): Cell[][] {
  return report.recent.map((
    c,
  ) => [formatWhen(c.ts), c.namespaced, c.ok ? "yes" : "no", c.duration_ms, c.est_tokens]);
}

function textTable(columns: Column[], rows: Cell[][]): string[] {
  const cells = [columns.map((c) => c.title), ...rows.map((row) => row.map(String))];
  const widths = columns.map((_, i) => Math.max(...cells.map((row) => row[i].length)));
  return cells.map((row) =>
    row.map((cell, i) => columns[i].numeric ? cell.padStart(widths[i]) : cell.padEnd(widths[i]))
      .join("  ").trimEnd()
  );
}

/** The plain-text report: totals, then aligned tables; or the no-data sentence. */
export function formatStatsText(report: StatsReport, options: StatsFormatOptions = {}): string {
  if (report.totals.calls === 0) return `${noDataSentence(options)}\n`;
  const lines = [totalsLine(report, options)];
  const spool = spoolLine(report);
  if (spool) lines.push(spool);
  lines.push("", ...textTable(SERVER_COLUMNS, serverCells(report)));
  if (options.tools) lines.push("", ...textTable(TOOL_COLUMNS, toolCells(report)));
  if (report.recent.length > 0) lines.push("", ...textTable(RECENT_COLUMNS, recentCells(report)));
  return `${lines.join("\n")}\n`;
}

function markdownCell(cell: Cell, code: boolean): string {
  if (typeof cell === "number") return String(cell);
  const text = cell.replaceAll("|", "\\|").replaceAll(/[\r\n]+/g, " ");
  return code ? `\`${text}\`` : text;
}

function markdownTable(titles: string[], numeric: boolean[], code: boolean[], rows: Cell[][]): string[] {
  return [
    `| ${titles.join(" | ")} |`,
    `| ${numeric.map((n) => (n ? "---:" : "---")).join(" | ")} |`,
    ...rows.map((row) => `| ${row.map((cell, i) => markdownCell(cell, code[i])).join(" | ")} |`),
  ];
}

// A lone `~` is GFM strikethrough when a second one follows, so it is escaped.
function markdownText(text: string): string {
  return text.replaceAll("~", "\\~").replaceAll("*", "\\*").replaceAll("_", "\\_");
}

/**
 * One markdown line that stands alone in a CI job summary:
 * `**mcphub stats (last 7d):** 4 calls, 1 error (25.0%), ~25,455 tokens, …; busiest server `github` (3 calls)`.
 */
export function statsSummaryLine(report: StatsReport, options: StatsFormatOptions = {}): string {
  const heading = `**mcphub stats (${markdownText(describeWindow(options))}):**`;
  const t = report.totals;
  if (t.calls === 0) return `${heading} ${markdownText(noDataSentence(options))}`;
  const parts = [
    plural(t.calls, "call"),
    `${plural(t.errors, "error")} (${formatRate(t.errors / t.calls)})`,
    `\\~${formatCount(t.est_tokens)} tokens to the agent`,
  ];
  if (t.tokens_kept_out > 0) {
    parts.push(
      `\\~${formatCount(t.tokens_kept_out)} kept out of context by the spool (${
        plural(t.spooled_results, "result")
      })`,
    );
  }
  parts.push(`${formatMs(t.total_ms)} in calls`);
  const top = report.servers[0];
  const busiest = report.servers.length > 1
    ? `; busiest server ${markdownCell(top.server, true)} (${plural(top.calls, "call")})`
    : "";
  return `${heading} ${parts.join(", ")}${busiest}.`;
}

/** The markdown report for a PR comment or a CI job summary; its first line after the heading is {@linkcode statsSummaryLine}. */
export function formatStatsMarkdown(report: StatsReport, options: StatsFormatOptions = {}): string {
  const lines = ["# mcphub stats", ""];
  if (report.totals.calls === 0) {
    lines.push(markdownText(noDataSentence(options)));
    return `${lines.join("\n")}\n`;
  }
  // The summary line has the totals and what the spool kept out: not repeated in another format.
  lines.push(statsSummaryLine(report, options));
  const numbers = [false, true, true, true, true, true];
  const firstIsCode = [true, false, false, false, false, false];
  lines.push(
    "",
    ...markdownTable(
      ["Server", "Calls", "Errors", "Avg ms", "Est. tokens", "Kept out"],
      numbers,
      firstIsCode,
      serverCells(report),
    ),
  );
  if (options.tools) {
    lines.push(
      "",
      "## Tools",
      "",
      ...markdownTable(
        ["Tool", "Calls", "Errors", "Avg ms", "Est. tokens", "Kept out"],
        numbers,
        firstIsCode,
        toolCells(report),
      ),
    );
  }
  if (report.recent.length > 0) {
    lines.push(
      "",
      "## Recent calls",
      "",
      ...markdownTable(
        ["When (UTC)", "Tool", "OK", "ms", "Tokens"],
        [false, false, false, true, true],
        [false, true, false, false, false],
        recentCells(report),
      ),
    );
  }
  return `${lines.join("\n")}\n`;
}

/**
 * The JSON report: always `{totals, servers, tools, recent}` in that order.
 * `tools` is `[]` unless {@linkcode StatsFormatOptions.tools}; `recent` is `[]` unless the
 * report was queried with `recent`. Pretty-printed with two spaces.
 */
export function formatStatsJson(report: StatsReport, options: StatsFormatOptions = {}): string {
  const value = {
    totals: report.totals,
    servers: report.servers,
    tools: options.tools ? report.tools : [],
    recent: report.recent,
  };
  return `${JSON.stringify(value, null, 2)}\n`;
}
