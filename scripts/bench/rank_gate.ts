/**
 * The ranking experiments' gate in one line: LiveMCPBench's tuning half (even tasks), held-out half (odd
 * tasks) and all 95 tasks as Recall@5 / nDCG@5, the off-topic decline rate, and every held-out set of
 * `heldout.ts`: the three sets (English and es/pt/fr/it, `h2zh` / `h3zh` the second / third set in
 * Chinese; off-topic declines in brackets) and the pasted-id, directory-read, route, host-name, shopping
 * and relative-date sets (`ids`, `dirs`, `routes`, `hosts`, `shop`, `dates`); and `zh`: English requests
 * for this catalog's tools described in Chinese; `plain`: plain requests over the reference servers as top-1 /
 * top-5 and the wrong `confident` answers (`plain.ts`), `plain2` its second, blind set the same way, `plain3` the third blind set. A ranking change is kept only when it helps the tuning
 * half without hurting any other column (docs/ranking.md).
 *
 * ```sh
 * deno run -A scripts/bench/livemcpbench.ts --out /tmp/lmb     # writes catalog.json and queries.jsonl
 * deno run -A scripts/bench/rank_gate.ts [--dir /tmp/lmb] [--misses] [--odd-misses] [--split-noise] \
 *   [--ranking '{"nameBonus":1}']
 * ```
 *
 * The halves are split by line, as `awk 'NR%2==1'` / `'NR%2==0'` would split queries.jsonl (even = odd line
 * numbers). `--misses` also prints each tuning-half task whose gold is not all in the top five, with the
 * rank of each gold tool and the top five: the per-query output an experiment should be formed from;
 * `--odd-misses` prints the held-out half's the same way (read for failure classes, never for rules about
 * one task). `--split-noise` also prints how far apart two halves of the 95 tasks lie by chance alone with
 * this ranking (random splits; see {@linkcode splitNoise}), beside the even/odd gap. `--ranking` overrides
 * ranking parameters (`RankingOptions` as JSON, merged over the defaults) for every set, so a parameter is
 * swept without editing code.
 *
 * @module
 */
import {
  catalogFromJson,
  type EvalQuery,
  type EvalSummary,
  evaluate,
  parseQueries,
  type Ranker,
  resolverRanker,
} from "../eval_resolver.ts";
import type { CatalogTool } from "../../src/catalog/mod.ts";
import type { RankingOptions } from "../../src/resolver/mod.ts";
import { run as heldout } from "./heldout.ts";
import { run as plain } from "./plain.ts";

const DATA = new URL("./data/", import.meta.url);

/** One gate row: figure name -> value as printed. */
export type GateRow = Record<string, string>;

function pair(s: EvalSummary): string {
  const off = s.unanswerable > 0 ? ` (${s.no_match_accuracy!.toFixed(3)})` : "";
  return `${s["recall@5"].toFixed(3)}/${s["ndcg@5"].toFixed(3)}${off}`;
}

/** What {@link gate} prints besides the row, and the ranking it measures. */
export interface GateOptions {
  /** Print the tuning half's misses. */
  misses?: boolean;
  /** Print the held-out half's misses. */
  oddMisses?: boolean;
  /** Ranking parameters over the defaults. */
  ranking?: RankingOptions;
  /** Print the halves' gap beside random splits' (see {@linkcode splitNoise}). */
  splitNoise?: boolean;
}

/** Computes the gate row, printing the misses asked for. */
export async function gate(dir: string, options: GateOptions = {}): Promise<GateRow> {
  const { ranking } = options;
  const tools = catalogFromJson(JSON.parse(await Deno.readTextFile(`${dir}/catalog.json`)));
  const ranker = resolverRanker(tools, { top: 10, ranking });
  const all = parseQueries(await Deno.readTextFile(`${dir}/queries.jsonl`));
  const even = all.filter((_, i) => i % 2 === 0), odd = all.filter((_, i) => i % 2 === 1);
  const rank = { rank: ranker.rank };
  const row: GateRow = {};
  const evenResult = evaluate(tools, even, rank);
  row.even = pair(evenResult.summary);
  const oddResult = evaluate(tools, odd, rank);
  row.odd = pair(oddResult.summary);
  const allSummary = evaluate(tools, all, rank).summary;
  row.all = pair(allSummary);
  if (options.splitNoise) printSplitNoise(tools, all, rank);
  const offTopic = parseQueries(await Deno.readTextFile(new URL("livemcpbench_offtopic.jsonl", DATA)));
  const offSummary = evaluate(tools, offTopic, rank).summary;
  row.offtopic = offSummary.no_match_accuracy!.toFixed(3);
  const h = await heldout(ranking);
  row.h1 = pair(h.english);
  row.h1t = pair(h.translated);
  row.h2 = pair(h.second.english);
  row.h2t = pair(h.second.translated);
  row.h2zh = pair(h.second.chinese);
  row.h3 = pair(h.third.english);
  row.h3t = pair(h.third.translated);
  row.h3zh = pair(h.third.chinese);
  row.ids = pair(h.features.ids);
  row.dirs = pair(h.features.dirs);
  row.routes = pair(h.features.routes);
  row.hosts = pair(h.features.hosts);
  row.shop = pair(h.features.shopping);
  row.dates = pair(h.features.dates);
  // English requests for tools described in Chinese, over this catalog (`heldout_zh_queries.jsonl`).
  const zh = parseQueries(await Deno.readTextFile(new URL("heldout_zh_queries.jsonl", DATA)));
  row.zh = pair(evaluate(tools, zh, rank).summary);
  // Plain requests over the reference servers (`plain.ts`): top-1 / top-5, and wrong `confident` answers.
  const p = await plain(ranking);
  row.plain = `${(p.top1 / p.answerable).toFixed(3)}/${
    (p.top5 / p.answerable).toFixed(3)
  } cw${p.confidentWrong}`;
  const p2 = await plain(ranking, "plain2_queries.jsonl");
  row.plain2 = `${(p2.top1 / p2.answerable).toFixed(3)}/${
    (p2.top5 / p2.answerable).toFixed(3)
  } cw${p2.confidentWrong} off ${p2.offTopicDeclined}/${p2.offTopic}`;
  const p3 = await plain(ranking, "plain3_queries.jsonl");
  row.plain3 = `${(p3.top1 / p3.answerable).toFixed(3)}/${
    (p3.top5 / p3.answerable).toFixed(3)
  } cw${p3.confidentWrong} off ${p3.offTopicDeclined}/${p3.offTopic}`;
  // Wrong `confident` answers per set (a confident first tool that is not gold, or any for an off-topic one).
  const cw = (s: EvalSummary) => String(s.confident_wrong);
  row.cw = `lmb ${cw(allSummary)}+${cw(offSummary)} h1 ${cw(h.english)} h1t ${cw(h.translated)} h2 ${
    cw(h.second.english)
  } h2t ${cw(h.second.translated)} h2zh ${cw(h.second.chinese)} h3 ${cw(h.third.english)} h3t ${
    cw(h.third.translated)
  } h3zh ${cw(h.third.chinese)} ids ${cw(h.features.ids)} dirs ${cw(h.features.dirs)} routes ${
    cw(h.features.routes)
  } hosts ${cw(h.features.hosts)} shop ${cw(h.features.shopping)} dates ${cw(h.features.dates)} zh ${
    cw(evaluate(tools, zh, rank).summary)
  }`;
  const wire = new Map(tools.map((t) => [t.namespaced, t.tool]));
  if (options.misses) printMisses(even, evenResult.lines, wire);
  if (options.oddMisses) printMisses(odd, oddResult.lines, wire);
  return row;
}

function printMisses(
  queries: readonly EvalQuery[],
  lines: readonly { results: string[] }[],
  wire: ReadonlyMap<string, string>,
): void {
  const matches = (gold: string, name: string) =>
    gold.includes("__") ? gold === name : wire.get(name) === gold;
  queries.forEach((q, i) => {
    const results = lines[i]!.results;
    const gold = [...new Set(q.gold)];
    if (gold.length === 0 || gold.every((g) => results.slice(0, 5).some((n) => matches(g, n)))) return;
    const ranks = gold.map((g) => `${g}@${results.findIndex((n) => matches(g, n)) + 1 || "-"}`);
    console.log(`${q.id}: ${q.query.replace(/\s+/g, " ").slice(0, 200)}`);
    console.log(`  gold ${ranks.join(" ")}`);
    console.log(`  top5 ${results.slice(0, 5).join(" ")}`);
  });
}

/** How far apart the means of two halves of a set of per-task scores lie when the halves are drawn at random. */
export interface SplitNoise {
  trials: number;
  median: number;
  p90: number;
  /** The share of splits whose gap is at most `gap`. */
  within(gap: number): number;
}

/**
 * |mean(A) − mean(B)| over `trials` random splits of `values` into halves (the first ⌈n/2⌉ of a shuffle and
 * the rest), shuffled by a seeded generator so that a run can be repeated.
 */
export function splitNoise(values: readonly number[], trials = 20_000, seed = 1): SplitNoise {
  let state = seed >>> 0 || 1;
  // xorshift32: enough for shuffles, and the same sequence everywhere.
  const next = () => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state / 2 ** 32;
  };
  const half = Math.ceil(values.length / 2);
  const order = [...values];
  const gaps: number[] = [];
  for (let t = 0; t < trials; t++) {
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(next() * (i + 1));
      [order[i], order[j]] = [order[j]!, order[i]!];
    }
    let a = 0, b = 0;
    for (let i = 0; i < half; i++) a += order[i]!;
    for (let i = half; i < order.length; i++) b += order[i]!;
    gaps.push(Math.abs(a / half - b / (order.length - half)));
  }
  gaps.sort((x, y) => x - y);
  const at = (q: number) => gaps[Math.min(gaps.length - 1, Math.floor(q * gaps.length))]!;
  return {
    trials,
    median: at(0.5),
    p90: at(0.9),
    within: (gap) => gaps.filter((g) => g <= gap + 1e-12).length / gaps.length,
  };
}

/** Prints the even/odd R@5 gap of `queries` beside the gaps of random halves ({@linkcode splitNoise}). */
function printSplitNoise(tools: readonly CatalogTool[], queries: readonly EvalQuery[], rank: Ranker): void {
  const perTask = queries
    .filter((q) => q.gold.length > 0)
    .map((q) => evaluate(tools, [q], rank).summary["recall@5"]);
  const mean = (v: number[]) => v.reduce((x, y) => x + y, 0) / v.length;
  const observed = Math.abs(
    mean(perTask.filter((_, i) => i % 2 === 0)) - mean(perTask.filter((_, i) => i % 2 === 1)),
  );
  const noise = splitNoise(perTask);
  console.log(
    `R@5 halves: even/odd gap ${observed.toFixed(3)}; ${noise.trials} random splits: median gap ${
      noise.median.toFixed(3)
    }, 90th percentile ${noise.p90.toFixed(3)}, gap <= 0.04 in ${(100 * noise.within(0.04)).toFixed(1)}%, ` +
      `gap >= the even/odd one in ${(100 * (1 - noise.within(observed - 1e-9))).toFixed(1)}%`,
  );
}

/** Reads `--ranking`'s JSON: an object of ranking options (merged over the defaults by the index). */
export function parseRanking(json: string): RankingOptions {
  let ranking: unknown;
  try {
    ranking = JSON.parse(json);
  } catch (cause) {
    throw new SyntaxError(`Cannot use --ranking: not JSON: ${json}`, { cause });
  }
  if (typeof ranking !== "object" || ranking === null || Array.isArray(ranking)) {
    throw new TypeError(`Cannot use --ranking: expected a JSON object of ranking options: ${json}`);
  }
  return ranking as RankingOptions;
}

/** CLI: prints the misses when asked, then the gate row. */
export async function main(args: readonly string[] = Deno.args): Promise<GateRow> {
  const value = (flag: string) => {
    const at = args.indexOf(flag);
    return at >= 0 ? args[at + 1] : undefined;
  };
  const dir = value("--dir") ?? "/tmp/lmb";
  const json = value("--ranking");
  const ranking = json === undefined ? undefined : parseRanking(json);
  const row = await gate(dir, {
    misses: args.includes("--misses"),
    oddMisses: args.includes("--odd-misses"),
    splitNoise: args.includes("--split-noise"),
    ranking,
  });
  console.log(Object.entries(row).map(([k, v]) => `${k} ${v}`).join("  "));
  return row;
}

if (import.meta.main) await main();
