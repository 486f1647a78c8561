/**
 * Inline SVG charts for the HTML report: stacked columns over time and
 * horizontal bars. Pure functions returning markup; colours come from CSS classes
 * (`s0`…`s7`, `reached`, `kept`, `p50`, `p95`, `fail`, `ok`) so one chart serves
 * light mode, dark mode and print. Every text is escaped.
 *
 * @module
 */
import { formatCount, plural } from "./format.ts";

/** Escapes `&`, `<`, `>`, `"` and `'` for HTML and SVG text and attributes. */
export function escapeHtml(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;").replaceAll("'", "&#39;");
}

/** The chart width in SVG user units; charts scale to the page width. */
export const CHART_WIDTH = 760;
const CHAR = 7;
const LABEL_CHARS = 30;
/** The least room left to the bars when labels are longer than {@link LABEL_CHARS}. */
const MIN_BAR_SPACE = 200;

function num(n: number): string {
  return String(Math.round(n * 10) / 10);
}

function text(x: number, y: number, value: string, cls: string, anchor = "start"): string {
  return `<text x="${num(x)}" y="${num(y)}" class="${cls}" text-anchor="${anchor}">${
    escapeHtml(value)
  }</text>`;
}

function rect(x: number, y: number, w: number, h: number, cls: string, title?: string): string {
  const body = title === undefined ? "" : `<title>${escapeHtml(title)}</title>`;
  const attrs = `x="${num(x)}" y="${num(y)}" width="${num(Math.max(0, w))}" height="${num(Math.max(0, h))}"`;
  return body ? `<rect ${attrs} class="${cls}">${body}</rect>` : `<rect ${attrs} class="${cls}"/>`;
}

function svg(id: string, label: string, height: number, body: string[]): string {
  return [
    `<svg id="${escapeHtml(id)}" class="chart" role="img" aria-label="${escapeHtml(label)}" ` +
    `viewBox="0 0 ${CHART_WIDTH} ${num(height)}" width="${CHART_WIDTH}" height="${num(height)}" ` +
    `xmlns="http://www.w3.org/2000/svg">`,
    `<title>${escapeHtml(label)}</title>`,
    ...body,
    `</svg>`,
  ].join("\n");
}

/** A round axis maximum ≥ `max` and its step: 1, 2 or 5 times a power of ten, about 4 steps. */
export function niceScale(max: number): { max: number; step: number } {
  if (!(max > 0)) return { max: 1, step: 1 };
  const raw = max / 4;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? 10 * power;
  const whole = Math.max(1, Math.ceil(step));
  const nice = max < 4 ? whole : step;
  return { max: Math.ceil(max / nice) * nice, step: nice };
}

/** Cuts a label to fit the label column; the whole label stays in the row's tooltip. */
export function shortLabel(label: string, chars = LABEL_CHARS): string {
  return label.length <= chars ? label : `${label.slice(0, chars - 1)}…`;
}

/** One series of a chart: its name and CSS class. */
export interface Series {
  name: string;
  cls: string;
}

function legend(series: Series[], y: number, x0: number): { markup: string[]; height: number } {
  const markup: string[] = [];
  let x = x0;
  let row = 0;
  for (const s of series) {
    const width = 18 + s.name.length * CHAR + 16;
    if (x + width > CHART_WIDTH && x > x0) {
      x = x0;
      row++;
    }
    const top = y + row * 18;
    markup.push(rect(x, top, 12, 12, s.cls), text(x + 17, top + 10, s.name, "legend"));
    x += width;
  }
  return { markup, height: (row + 1) * 18 + 6 };
}

/** Input of {@linkcode stackedColumns}: one column per label, one value per series. */
export interface ColumnChart {
  id: string;
  /** Accessible name of the chart. */
  label: string;
  series: Series[];
  columns: { label: string; tooltip: string; values: number[] }[];
  /** The noun after a value in tooltips, singular: `"call"`. */
  unit: string;
}

/** Stacked columns (calls per day per server), with a legend, y grid and x labels. */
export function stackedColumns(chart: ColumnChart): string {
  const left = 56;
  const right = 8;
  const { markup: legendMarkup, height: legendHeight } = legend(chart.series, 4, left);
  const top = legendHeight + 10;
  const plotHeight = 200;
  const bottom = 26;
  const height = top + plotHeight + bottom;
  const plotWidth = CHART_WIDTH - left - right;
  const totals = chart.columns.map((c) => c.values.reduce((a, b) => a + b, 0));
  const scale = niceScale(Math.max(0, ...totals));
  const y = (v: number) => top + plotHeight - (v / scale.max) * plotHeight;
  const body = [...legendMarkup];
  for (let v = 0; v <= scale.max + 1e-9; v += scale.step) {
    body.push(
      `<line x1="${left}" x2="${CHART_WIDTH - right}" y1="${num(y(v))}" y2="${num(y(v))}" class="grid"/>`,
      text(left - 6, y(v) + 4, formatCount(v), "axis", "end"),
    );
  }
  const n = Math.max(1, chart.columns.length);
  const band = plotWidth / n;
  const barWidth = Math.max(1, band * 0.72);
  const every = Math.max(1, Math.ceil(n / Math.floor(plotWidth / 64)));
  chart.columns.forEach((column, i) => {
    const x = left + i * band + (band - barWidth) / 2;
    let base = 0;
    column.values.forEach((value, s) => {
      if (value <= 0) return;
      const series = chart.series[s];
      const tip = `${column.tooltip} · ${series.name}: ${plural(value, chart.unit)}`;
      body.push(rect(x, y(base + value), barWidth, y(base) - y(base + value), `bar ${series.cls}`, tip));
      base += value;
    });
    if (i % every === 0) {
      body.push(text(left + i * band + band / 2, top + plotHeight + 17, column.label, "axis", "middle"));
    }
  });
  body.push(
    `<line x1="${left}" x2="${CHART_WIDTH - right}" y1="${num(y(0))}" y2="${num(y(0))}" class="baseline"/>`,
  );
  return svg(chart.id, chart.label, height, body);
}

/** One row of {@linkcode horizontalBars}: stacked segments and the text after the bar. */
export interface BarRow {
  label: string;
  /** Segment lengths in order, one per series. */
  values: number[];
  /** Shown after the bar: `"p50 12 ms · p95 40 ms"`. */
  note: string;
}

/** Input of {@linkcode horizontalBars}. */
export interface BarChart {
  id: string;
  label: string;
  series: Series[];
  rows: BarRow[];
  /** The axis maximum; default: the largest row sum. */
  max?: number;
  /**
   * `stack` (default) draws segments end to end; `overlay` draws each segment from zero,
   * longest first, so a p50 bar sits inside its p95 bar.
   */
  mode?: "stack" | "overlay";
}

/** Horizontal bars, one row per item, labels on the left and a note after each bar. */
export function horizontalBars(chart: BarChart): string {
  const noteWidth = Math.max(0, ...chart.rows.map((r) => r.note.length)) * CHAR + 12;
  // Labels are cut only where the bars would get too little room: a whole tool name beats a cut one.
  const labelChars = Math.max(LABEL_CHARS, Math.floor((CHART_WIDTH - noteWidth - MIN_BAR_SPACE - 12) / CHAR));
  const cut = (label: string) => shortLabel(label, labelChars);
  const longest = Math.max(8, ...chart.rows.map((r) => cut(r.label).length));
  const labelWidth = longest * CHAR + 12;
  const { markup: legendMarkup, height: legendHeight } = legend(chart.series, 4, labelWidth);
  const top = legendHeight + 4;
  const rowHeight = 22;
  const height = top + chart.rows.length * rowHeight + 6;
  const barSpace = Math.max(120, CHART_WIDTH - labelWidth - noteWidth);
  const sums = chart.rows.map((r) =>
    chart.mode === "overlay" ? Math.max(0, ...r.values) : r.values.reduce((a, b) => a + b, 0)
  );
  const max = chart.max ?? Math.max(0, ...sums);
  const w = (v: number) => (max > 0 ? (v / max) * barSpace : 0);
  const body = [...legendMarkup];
  chart.rows.forEach((row, i) => {
    const y = top + i * rowHeight;
    const label = cut(row.label);
    body.push(
      label === row.label
        ? text(labelWidth - 6, y + 15, label, "label", "end")
        : `<text x="${num(labelWidth - 6)}" y="${num(y + 15)}" class="label" text-anchor="end">` +
          `<title>${escapeHtml(row.label)}</title>${escapeHtml(label)}</text>`,
    );
    let x = labelWidth;
    const order = row.values.map((value, s) => ({ value, s }));
    // Longest first so each shorter segment stays visible on top; on a tie the first series wins.
    if (chart.mode === "overlay") order.sort((a, b) => b.value - a.value || b.s - a.s);
    for (const { value, s } of order) {
      if (value <= 0) continue;
      const series = chart.series[s];
      const start = chart.mode === "overlay" ? labelWidth : x;
      const tip = `${row.label} · ${series.name}: ${formatCount(value)}`;
      body.push(rect(start, y + 4, Math.max(1, w(value)), 14, `bar ${series.cls}`, tip));
      if (chart.mode !== "overlay") x += w(value);
    }
    const end = labelWidth + w(sums[i]);
    body.push(text(end + 6, y + 15, row.note, "note"));
  });
  return svg(chart.id, chart.label, height, body);
}
