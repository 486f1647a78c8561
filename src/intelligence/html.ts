/**
 * The HTML report (`mcphub stats --html FILE`) and the live status page: one
 * self-contained document with inline CSS and SVG, no script, no external asset
 * (a Content-Security-Policy forbids loading any), readable in light and dark mode
 * and printable. Every chart has its table below it. Error texts are never shown.
 *
 * @module
 */
import type { ReportData, ReportTool } from "./report_data.ts";
import { type BarRow, escapeHtml, horizontalBars, type Series, stackedColumns } from "./svg.ts";
import {
  describeWindow,
  formatCount,
  formatMs,
  formatRate,
  formatWhen,
  noDataSentence,
  plural,
  type StatsFormatOptions,
} from "./format.ts";

/** How many servers get their own colour in the calls chart; the rest are `other`. */
export const MAX_SERIES = 7;
/** How many tools a tool chart draws; its table lists them all with `tools`. */
export const MAX_CHART_ROWS = 15;

/** A server's state as `list_servers` reports it; the hub's `ServerStatus` fits. */
export interface LiveServer {
  name: string;
  enabled: boolean;
  connected: boolean;
  state: string;
  tools: number;
  kind: string;
  /** Already redacted by the hub. */
  error?: string;
  next_attempt_at?: string;
  failures?: number;
}

/** Options for {@linkcode renderStatsHtml}. */
export interface StatsHtmlOptions extends StatsFormatOptions {
  /** The live page: server states now, and reload every `refreshSeconds`. @default a static report */
  live?: { servers: LiveServer[]; refreshSeconds: number };
}

const CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

const STYLE = `
:root { color-scheme: light dark; --bg: #ffffff; --fg: #1f2328; --muted: #59636e; --grid: #d1d9e0;
  --card: #f6f8fa; --border: #d1d9e0; --s0: #0969da; --s1: #1a7f37; --s2: #9a6700; --s3: #8250df;
  --s4: #bf3989; --s5: #1b7c83; --s6: #bc4c00; --s7: #818b98; --reached: #0969da; --kept: #4ac26b;
  --p50: #0969da; --p95: #9cd0ff; --fail: #cf222e; --ok: #4ac26b; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #0d1117; --fg: #e6edf3; --muted: #9198a1; --grid: #30363d; --card: #151b23;
    --border: #3d444d; --s0: #4493f8; --s1: #3fb950; --s2: #d29922; --s3: #ab7df8; --s4: #db61a2;
    --s5: #39c5cf; --s6: #f0883e; --s7: #9198a1; --reached: #4493f8; --kept: #2ea043; --p50: #4493f8;
    --p95: #1f4a7a; --fail: #f85149; --ok: #2ea043; }
}
@media print {
  :root { color-scheme: light; --bg: #ffffff; --fg: #000000; --muted: #444c56; --grid: #d1d9e0;
    --card: #ffffff; --border: #d1d9e0; }
  body { margin: 0; max-width: none; }
  section, figure, .cards { break-inside: avoid; }
  table { break-inside: auto; }
}
* { box-sizing: border-box; }
body { background: var(--bg); color: var(--fg); margin: 0 auto; padding: 24px; max-width: 1100px;
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 32px 0 4px; border-bottom: 1px solid var(--border); padding-bottom: 4px; }
p { margin: 4px 0; }
.muted, figcaption { color: var(--muted); }
code { font: 13px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(136px, 1fr)); gap: 8px; margin: 16px 0; }
.card { background: var(--card); border: 1px solid var(--border); border-radius: 6px; padding: 8px 10px; }
.card .value { font-size: 18px; font-weight: 600; font-variant-numeric: tabular-nums; }
.card .value { white-space: nowrap; }
.card .name { color: var(--muted); font-size: 12px; }
figure { margin: 12px 0; }
svg.chart { display: block; width: 100%; height: auto; max-width: 760px; font: 12px system-ui, sans-serif; }
svg .axis, svg .note { fill: var(--muted); font-variant-numeric: tabular-nums; }
svg .label, svg .legend { fill: var(--fg); }
svg .grid { stroke: var(--grid); stroke-width: 1; }
svg .baseline { stroke: var(--muted); stroke-width: 1; }
svg .s0 { fill: var(--s0); } svg .s1 { fill: var(--s1); } svg .s2 { fill: var(--s2); }
svg .s3 { fill: var(--s3); } svg .s4 { fill: var(--s4); } svg .s5 { fill: var(--s5); }
svg .s6 { fill: var(--s6); } svg .s7 { fill: var(--s7); }
svg .reached { fill: var(--reached); } svg .kept { fill: var(--kept); }
svg .p50 { fill: var(--p50); } svg .p95 { fill: var(--p95); }
svg .fail { fill: var(--fail); } svg .ok { fill: var(--ok); }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; margin: 8px 0 4px; font-variant-numeric: tabular-nums; }
caption { text-align: left; color: var(--muted); padding-bottom: 4px; }
th, td { padding: 3px 10px; border-bottom: 1px solid var(--border); text-align: left; vertical-align: top; }
th { font-weight: 600; }
td.n, th.n { text-align: right; white-space: nowrap; }
.state-connected { color: var(--ok); font-weight: 600; }
.state-backoff, .state-failed, .state-disconnected { color: var(--fail); font-weight: 600; }
footer { margin-top: 32px; color: var(--muted); font-size: 12px; }
`.trim();

type Cell = { text: string; numeric?: boolean; code?: boolean; cls?: string };

function table(caption: string, head: Cell[], rows: Cell[][], id: string): string {
  const cell = (tag: string, c: Cell) => {
    const classes = [c.numeric ? "n" : "", c.cls ?? ""].filter(Boolean).join(" ");
    const attr = classes ? ` class="${classes}"` : "";
    const body = c.code ? `<code>${escapeHtml(c.text)}</code>` : escapeHtml(c.text);
    return `<${tag}${attr}>${body}</${tag}>`;
  };
  return [
    `<div class="scroll">`,
    `<table id="${id}">`,
    `<caption>${escapeHtml(caption)}</caption>`,
    `<thead><tr>${head.map((c) => cell("th", { ...c, code: false })).join("")}</tr></thead>`,
    `<tbody>`,
    ...rows.map((row) => `<tr>${row.map((c) => cell("td", c)).join("")}</tr>`),
    `</tbody>`,
    `</table>`,
    `</div>`,
  ].join("\n");
}

const n = (value: number): Cell => ({ text: formatCount(value), numeric: true });
const ms = (value: number): Cell => ({ text: formatCount(value), numeric: true });
const code = (text: string): Cell => ({ text, code: true });
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

function day(ts: number): string {
  return new Date(ts).toISOString().slice(0, 10);
}

function shortDay(ts: number, unit: ReportData["unit"]): string {
  const d = new Date(ts);
  return unit === "month"
    ? `${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}`
    : `${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()}`;
}

function section(id: string, title: string, intro: string, body: string[]): string {
  return [
    `<section id="${id}">`,
    `<h2>${escapeHtml(title)}</h2>`,
    `<p class="muted">${intro}</p>`,
    ...body,
    `</section>`,
  ].join("\n");
}

function figure(svg: string, caption: string): string {
  return `<figure>\n${svg}\n<figcaption>${escapeHtml(caption)}</figcaption>\n</figure>`;
}

function busiest(data: ReportData): string {
  let top = data.buckets[0];
  let topCalls = -1;
  for (const b of data.buckets) {
    const calls = b.calls.reduce((a, c) => a + c, 0);
    if (calls > topCalls) [top, topCalls] = [b, calls];
  }
  const when = data.unit === "day" ? day(top.start) : `the ${data.unit} of ${day(top.start)}`;
  return `Busiest ${data.unit}: ${when}, ${plural(topCalls, "call")}; ${
    plural(data.buckets.length, data.unit)
  } shown.`;
}

function callsSection(data: ReportData): string {
  const named = data.servers.slice(0, MAX_SERIES);
  const rest = data.servers.length - named.length;
  const series: Series[] = named.map((s, i) => ({ name: s.server, cls: `s${i}` }));
  if (rest > 0) series.push({ name: `other (${rest} servers)`, cls: "s7" });
  const columns = data.buckets.map((b) => {
    const values = b.calls.slice(0, MAX_SERIES);
    if (rest > 0) values.push(b.calls.slice(MAX_SERIES).reduce((a, c) => a + c, 0));
    const when = data.unit === "day" ? day(b.start) : `${data.unit} of ${day(b.start)}`;
    return { label: shortDay(b.start, data.unit), tooltip: when, values };
  });
  const unitTitle = data.unit === "day" ? "Day" : data.unit === "week" ? "Week of" : "Month of";
  const svg = stackedColumns({
    id: "chart-calls",
    label: `Calls per ${data.unit} per server`,
    series,
    columns,
    unit: "call",
  });
  const rows = data.buckets.map((b, i) => [
    { text: day(b.start) },
    ...columns[i].values.map(n),
    n(b.calls.reduce((a, c) => a + c, 0)),
  ]);
  return section(
    "calls",
    `Calls per ${data.unit}`,
    `Each bar is one ${data.unit} (UTC), stacked by server.`,
    [
      figure(svg, busiest(data)),
      table(
        `Calls per ${data.unit} (UTC) and server`,
        [{ text: `${unitTitle} (UTC)` }, ...series.map((s) => ({ text: s.name, numeric: true })), {
          text: "Total",
          numeric: true,
        }],
        rows,
        "table-calls",
      ),
    ],
  );
}

function tokensSection(data: ReportData): string {
  const servers = [...data.servers].sort((a, b) =>
    b.est_tokens - a.est_tokens || a.server.localeCompare(b.server)
  );
  const svg = horizontalBars({
    id: "chart-tokens",
    label: "Estimated tokens per server: reached the agent and kept out by the spool",
    series: [{ name: "reached the agent", cls: "reached" }, { name: "kept out by the spool", cls: "kept" }],
    rows: servers.map((s) => ({
      label: s.server,
      values: [s.tokens_reached, s.tokens_kept_out],
      note: s.tokens_kept_out > 0
        ? `~${formatCount(s.tokens_reached)} + ~${formatCount(s.tokens_kept_out)} kept out`
        : `~${formatCount(s.tokens_reached)}`,
    })),
  });
  const t = data.totals;
  const intro = t.tokens_kept_out > 0
    ? `The spool kept ~${formatCount(t.tokens_kept_out)} of ~${formatCount(t.est_tokens)} estimated tokens ` +
      `(${formatRate(t.tokens_kept_out / t.est_tokens)}) out of the agent's context, in ${
        plural(t.spooled_results, "spooled result")
      }.`
    : `No result was large enough to be spooled; every estimated token reached the agent.`;
  return section(
    "tokens",
    "Where the tokens went",
    escapeHtml(intro) + " Estimate: (argument + result bytes) / 4.",
    [
      figure(svg, "Estimated tokens per server, most first."),
      table(
        "Estimated tokens per server",
        [
          { text: "Server" },
          { text: "Calls", numeric: true },
          { text: "Est. tokens produced", numeric: true },
          { text: "Reached the agent", numeric: true },
          { text: "Kept out by the spool", numeric: true },
          { text: "Spooled results", numeric: true },
        ],
        servers.map((s) => [
          code(s.server),
          n(s.calls),
          n(s.tokens_reached + s.tokens_kept_out),
          n(s.tokens_reached),
          n(s.tokens_kept_out),
          n(s.spooled_results),
        ]),
        "table-tokens",
      ),
    ],
  );
}

function bySlowest(a: ReportTool, b: ReportTool): number {
  return b.p95_ms - a.p95_ms || b.p50_ms - a.p50_ms || b.calls - a.calls ||
    a.namespaced.localeCompare(b.namespaced);
}

function byFailing(a: ReportTool, b: ReportTool): number {
  return b.error_rate - a.error_rate || b.errors - a.errors || a.namespaced.localeCompare(b.namespaced);
}

function leftOut(shown: number, all: number, what: string, flag: string): string {
  return shown < all ? ` The ${shown} ${what} of ${all} tools;${flag}` : "";
}

function durationSection(data: ReportData, allTools: boolean): string {
  const sorted = [...data.tools].sort(bySlowest);
  const charted = sorted.slice(0, MAX_CHART_ROWS);
  const listed = allTools ? sorted : charted;
  const svg = horizontalBars({
    id: "chart-duration",
    label: "Duration per tool, p50 and p95, slowest first",
    series: [{ name: "p50 (median)", cls: "p50" }, { name: "p95", cls: "p95" }],
    mode: "overlay",
    rows: charted.map((t): BarRow => ({
      label: t.namespaced,
      values: [t.p50_ms, t.p95_ms],
      note: `p50 ${formatMs(t.p50_ms)} · p95 ${formatMs(t.p95_ms)}`,
    })),
  });
  const caption = `Duration per tool, slowest p95 first.${
    leftOut(
      charted.length,
      sorted.length,
      "slowest",
      allTools ? " all are in the table." : " add --tools for all.",
    )
  }`;
  return section(
    "duration",
    "Slowest tools",
    "p50 and p95 are nearest-rank percentiles of the call durations.",
    [
      figure(svg, caption),
      table(
        allTools ? "Every tool, slowest p95 first" : "The tools in the chart",
        [
          { text: "Tool" },
          { text: "Calls", numeric: true },
          { text: "p50 ms", numeric: true },
          { text: "p95 ms", numeric: true },
          { text: "Avg ms", numeric: true },
          { text: "Errors", numeric: true },
          { text: "Error rate", numeric: true },
          { text: "Est. tokens", numeric: true },
        ],
        listed.map((t) => [
          code(t.namespaced),
          n(t.calls),
          ms(t.p50_ms),
          ms(t.p95_ms),
          ms(t.avg_ms),
          n(t.errors),
          { text: formatRate(t.error_rate), numeric: true },
          n(t.est_tokens),
        ]),
        "table-duration",
      ),
    ],
  );
}

function errorsSection(data: ReportData): string {
  const failing = data.tools.filter((t) => t.errors > 0).sort(byFailing);
  const t = data.totals;
  const intro = `${formatCount(t.errors)} of ${formatCount(t.calls)} calls failed (${
    formatRate(t.calls > 0 ? t.errors / t.calls : 0)
  }): an error result or a transport error. Error texts are not shown.`;
  if (failing.length === 0) {
    return section("errors", "Failing tools", escapeHtml(intro), [
      `<p id="chart-errors">No call failed.</p>`,
    ]);
  }
  const charted = failing.slice(0, MAX_CHART_ROWS);
  const svg = horizontalBars({
    id: "chart-errors",
    label: "Error rate per tool, highest first",
    series: [{ name: "error rate", cls: "fail" }],
    max: 1,
    rows: charted.map((tool) => ({
      label: tool.namespaced,
      values: [tool.error_rate],
      note: `${formatRate(tool.error_rate)} (${formatCount(tool.errors)} of ${formatCount(tool.calls)})`,
    })),
  });
  return section("errors", "Failing tools", escapeHtml(intro), [
    figure(
      svg,
      `Error rate per tool, highest first.${
        leftOut(charted.length, failing.length, "most failing", " all are in the table.")
      }`,
    ),
    table(
      "Tools with failed calls",
      [
        { text: "Tool" },
        { text: "Calls", numeric: true },
        { text: "Errors", numeric: true },
        { text: "Error rate", numeric: true },
        { text: "p95 ms", numeric: true },
      ],
      failing.map((tool) => [
        code(tool.namespaced),
        n(tool.calls),
        n(tool.errors),
        { text: formatRate(tool.error_rate), numeric: true },
        ms(tool.p95_ms),
      ]),
      "table-errors",
    ),
  ]);
}

function detachedSection(data: ReportData): string {
  const tools = data.tools.filter((t) => t.detached > 0)
    .sort((a, b) => b.detached - a.detached || a.namespaced.localeCompare(b.namespaced));
  const intro =
    "Calls made with <code>call_tool {detach: true}</code> and collected with <code>poll_result</code>.";
  if (tools.length === 0) {
    return section("detached", "Detached calls", intro, [`<p id="chart-detached">No detached calls.</p>`]);
  }
  const charted = tools.slice(0, MAX_CHART_ROWS);
  const svg = horizontalBars({
    id: "chart-detached",
    label: "Detached calls per tool: succeeded and failed",
    series: [{ name: "succeeded", cls: "ok" }, { name: "failed", cls: "fail" }],
    rows: charted.map((t) => ({
      label: t.namespaced,
      values: [t.detached - t.detached_errors, t.detached_errors],
      note: `${formatCount(t.detached)} (${formatCount(t.detached_errors)} failed) · p95 ${
        formatMs(t.detached_p95_ms)
      }`,
    })),
  });
  return section("detached", "Detached calls", intro, [
    figure(
      svg,
      `${plural(data.totals.detached, "detached call")}, ${formatCount(data.totals.detached_errors)} failed.${
        leftOut(charted.length, tools.length, "busiest", " all are in the table.")
      }`,
    ),
    table(
      "Detached calls per tool",
      [
        { text: "Tool" },
        { text: "Detached calls", numeric: true },
        { text: "Failed", numeric: true },
        { text: "p95 ms", numeric: true },
      ],
      tools.map((t) => [code(t.namespaced), n(t.detached), n(t.detached_errors), ms(t.detached_p95_ms)]),
      "table-detached",
    ),
  ]);
}

function recentSection(data: ReportData): string {
  return section("recent", "Recent calls", "Newest first, times in UTC.", [
    table(
      `The last ${formatCount(data.recent.length)} calls`,
      [
        { text: "When (UTC)" },
        { text: "Tool" },
        { text: "OK" },
        { text: "Via" },
        { text: "ms", numeric: true },
        { text: "Est. tokens", numeric: true },
        { text: "Agent" },
      ],
      data.recent.map((c) => [
        { text: formatWhen(c.ts) },
        code(c.namespaced),
        { text: c.ok ? "yes" : "no", cls: c.ok ? "" : "state-failed" },
        { text: c.via },
        ms(c.duration_ms),
        n(c.est_tokens),
        { text: c.agent ?? "" },
      ]),
      "table-recent",
    ),
  ]);
}

function liveSection(servers: LiveServer[]): string {
  const connected = servers.filter((s) => s.connected).length;
  return section(
    "servers",
    "Servers now",
    escapeHtml(`${connected} of ${servers.length} servers connected, as list_servers reports them.`),
    [
      table(
        "Server states",
        [
          { text: "Server" },
          { text: "State" },
          { text: "Tools", numeric: true },
          { text: "Kind" },
          { text: "Failures", numeric: true },
          { text: "Note" },
        ],
        servers.map((s) => [
          code(s.name),
          { text: s.enabled ? s.state : "disabled", cls: `state-${s.enabled ? s.state : "disabled"}` },
          n(s.tools),
          { text: s.kind },
          n(s.failures ?? 0),
          {
            text: [s.error ?? "", s.next_attempt_at ? `next attempt ${s.next_attempt_at}` : ""].filter(
              Boolean,
            ).join("; "),
          },
        ]),
        "table-servers",
      ),
    ],
  );
}

function period(data: ReportData): string {
  const from = data.query.since ?? data.first;
  if (from === undefined) return `until ${formatWhen(data.query.now)} UTC`;
  return `${formatWhen(from)} to ${formatWhen(Math.max(data.query.now, data.last ?? 0))} UTC`;
}

/** `512 ms`, `4.2 s`, `5.1 min`, `2.3 h`: a total time at a glance (the tables keep milliseconds). */
function formatDuration(ms: number): string {
  if (ms < 1000) return formatMs(ms);
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 3_600_000) return `${(ms / 60_000).toFixed(1)} min`;
  return `${(ms / 3_600_000).toFixed(1)} h`;
}

function cards(data: ReportData): string {
  const t = data.totals;
  const card = (id: string, value: string, name: string) =>
    `<div class="card" id="total-${id}"><div class="value">${escapeHtml(value)}</div>` +
    `<div class="name">${escapeHtml(name)}</div></div>`;
  return [
    `<div class="cards">`,
    card("calls", formatCount(t.calls), "calls"),
    card("errors", formatCount(t.errors), `errors (${formatRate(t.calls > 0 ? t.errors / t.calls : 0)})`),
    card("tokens", `~${formatCount(t.tokens_reached + t.tokens_kept_out)}`, "estimated tokens produced"),
    card("reached", `~${formatCount(t.tokens_reached)}`, "reached the agent"),
    card(
      "kept",
      `~${formatCount(t.tokens_kept_out)}`,
      `kept out by the spool (${plural(t.spooled_results, "result")})`,
    ),
    card("time", formatDuration(t.total_ms), "time in calls"),
    card("detached", formatCount(t.detached), `detached calls (${formatCount(t.detached_errors)} failed)`),
    `</div>`,
  ].join("\n");
}

/**
 * Renders the report for `data` as one self-contained HTML document.
 * With `options.live` it is the live page: server states first and a reload every
 * `refreshSeconds` (a meta refresh; the page runs no script).
 */
export function renderStatsHtml(data: ReportData, options: StatsHtmlOptions = {}): string {
  const window = describeWindow(options);
  const title = options.live ? "mcphub: live" : `mcphub stats: ${window}`;
  const head = [
    `<!DOCTYPE html>`,
    `<html lang="en">`,
    `<head>`,
    `<meta charset="utf-8">`,
    `<meta http-equiv="Content-Security-Policy" content="${CSP}">`,
    `<meta name="viewport" content="width=device-width, initial-scale=1">`,
    `<meta name="color-scheme" content="light dark">`,
    ...(options.live
      ? [`<meta http-equiv="refresh" content="${Math.max(1, Math.floor(options.live.refreshSeconds))}">`]
      : []),
    `<title>${escapeHtml(title)}</title>`,
    `<style>\n${STYLE}\n</style>`,
    `</head>`,
    `<body>`,
    `<header>`,
    `<h1>${escapeHtml(title)}</h1>`,
    `<p id="period">${escapeHtml(`${window[0].toUpperCase()}${window.slice(1)}: ${period(data)}.`)}</p>`,
    options.dbPath ? `<p class="muted" id="store">Store: <code>${escapeHtml(options.dbPath)}</code></p>` : "",
    `</header>`,
  ].filter(Boolean);
  const body: string[] = [];
  if (options.live) body.push(liveSection(options.live.servers));
  if (data.totals.calls === 0) {
    body.push(`<p id="no-data">${escapeHtml(noDataSentence(options))}</p>`);
  } else {
    body.push(
      cards(data),
      callsSection(data),
      tokensSection(data),
      durationSection(data, Boolean(options.tools)),
      errorsSection(data),
      detachedSection(data),
    );
    if (data.recent.length > 0) body.push(recentSection(data));
  }
  const footer = `<footer>Made by mcphub at ${escapeHtml(formatWhen(data.query.now))} UTC${
    options.live ? `; reloads every ${Math.max(1, Math.floor(options.live.refreshSeconds))} s` : ""
  }. Call records hold sizes and timings, never argument values; error texts are left out.</footer>`;
  return `${[...head, ...body, footer, `</body>`, `</html>`].join("\n")}\n`;
}
