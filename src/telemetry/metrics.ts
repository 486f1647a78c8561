/**
 * The gateway's own metric instruments, kept in process and written in the Prometheus text format (for
 * `GET /metrics`): counters and histograms with a fixed set of label names, and gauges read at scrape
 * time. Label values come from the config and the catalog (server, agent and tool names, methods and
 * error classes), never from request input, so the number of series stays bounded.
 *
 * @module
 */

/** Label values by label name. */
export type Labels = Readonly<Record<string, string>>;

/**
 * The bucket boundaries (seconds) the MCP semantic conventions give for `mcp.client.operation.duration`
 * and `mcp.server.operation.duration`.
 */
export const DURATION_BUCKETS: readonly number[] = [
  0.01,
  0.02,
  0.05,
  0.1,
  0.2,
  0.5,
  1,
  2,
  5,
  10,
  30,
  60,
  120,
  300,
];

/** The most series one instrument keeps; past it, new label sets are counted under `_overflow`. */
export const MAX_SERIES = 2_000;

/** A label set's key: its values in the instrument's label order, NUL-joined. */
function keyOf(names: readonly string[], labels: Labels): string {
  let key = "";
  for (let i = 0; i < names.length; i++) key += (i ? "\0" : "") + (labels[names[i]] ?? "");
  return key;
}

function overflowKey(names: readonly string[]): string {
  return names.map(() => "_overflow").join("\0");
}

/** A monotonically increasing count per label set. */
export class Counter {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
  #values = new Map<string, number>();

  constructor(name: string, help: string, labelNames: readonly string[] = []) {
    this.name = name;
    this.help = help;
    this.labelNames = labelNames;
  }

  /** Adds `value` (>= 0) to the series of `labels`. */
  add(value: number, labels: Labels = {}): void {
    let key = keyOf(this.labelNames, labels);
    if (!this.#values.has(key) && this.#values.size >= MAX_SERIES) key = overflowKey(this.labelNames);
    this.#values.set(key, (this.#values.get(key) ?? 0) + value);
  }

  /** Every series: its label values (in {@linkcode Counter.labelNames} order) and its total. */
  series(): [values: string[], total: number][] {
    return [...this.#values].map(([key, total]) => [this.labelNames.length ? key.split("\0") : [], total]);
  }

  /** The Prometheus text of this counter. */
  render(): string {
    let out = `# HELP ${this.name} ${this.help}\n# TYPE ${this.name} counter\n`;
    for (const [values, total] of this.series()) {
      out += `${this.name}${labelText(this.labelNames, values)} ${formatNumber(total)}\n`;
    }
    return out;
  }
}

interface HistogramSeries {
  counts: number[];
  sum: number;
  count: number;
}

/** A histogram with fixed bucket boundaries, per label set. */
export class Histogram {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
  readonly buckets: readonly number[];
  #series = new Map<string, HistogramSeries>();

  constructor(name: string, help: string, labelNames: readonly string[], buckets = DURATION_BUCKETS) {
    this.name = name;
    this.help = help;
    this.labelNames = labelNames;
    this.buckets = buckets;
  }

  /** Records one observation. */
  observe(value: number, labels: Labels): void {
    let key = keyOf(this.labelNames, labels);
    let series = this.#series.get(key);
    if (!series) {
      if (this.#series.size >= MAX_SERIES) {
        key = overflowKey(this.labelNames);
        series = this.#series.get(key);
      }
      if (!series) {
        series = { counts: new Array(this.buckets.length).fill(0), sum: 0, count: 0 };
        this.#series.set(key, series);
      }
    }
    // Counts per bucket (not cumulative) here; render() accumulates.
    let i = 0;
    while (i < this.buckets.length && value > this.buckets[i]) i++;
    if (i < this.buckets.length) series.counts[i]++;
    series.sum += value;
    series.count++;
  }

  /** The Prometheus text of this histogram. */
  render(): string {
    let out = `# HELP ${this.name} ${this.help}\n# TYPE ${this.name} histogram\n`;
    for (const [key, series] of this.#series) {
      const values = key.split("\0");
      let cumulative = 0;
      for (let i = 0; i < this.buckets.length; i++) {
        cumulative += series.counts[i];
        out += `${this.name}_bucket${
          labelText([...this.labelNames, "le"], [...values, formatNumber(this.buckets[i])])
        } ${cumulative}\n`;
      }
      out += `${this.name}_bucket${
        labelText([...this.labelNames, "le"], [...values, "+Inf"])
      } ${series.count}\n`;
      out += `${this.name}_sum${labelText(this.labelNames, values)} ${formatNumber(series.sum)}\n`;
      out += `${this.name}_count${labelText(this.labelNames, values)} ${series.count}\n`;
    }
    return out;
  }
}

/** One gauge read at scrape time: its series as label sets and values. */
export interface GaugeReading {
  name: string;
  help: string;
  series: { labels: Labels; value: number }[];
}

/** The Prometheus text of a gauge read at scrape time. */
export function renderGauge(gauge: GaugeReading): string {
  let out = `# HELP ${gauge.name} ${gauge.help}\n# TYPE ${gauge.name} gauge\n`;
  for (const { labels, value } of gauge.series) {
    const names = Object.keys(labels);
    out += `${gauge.name}${labelText(names, names.map((n) => labels[n]))} ${formatNumber(value)}\n`;
  }
  return out;
}

/** `{a="x",b="y"}` with the text format's escapes; empty values are left out (Prometheus reads them so). */
function labelText(names: readonly string[], values: readonly string[]): string {
  const pairs: string[] = [];
  for (let i = 0; i < names.length; i++) {
    const value = values[i] ?? "";
    if (value === "") continue;
    pairs.push(`${names[i]}="${value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"')}"`);
  }
  return pairs.length ? `{${pairs.join(",")}}` : "";
}

function formatNumber(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Infinity) return "+Inf";
  if (value === -Infinity) return "-Inf";
  return String(value);
}
