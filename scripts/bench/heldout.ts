/**
 * Held-out ranking evaluation over real servers' tool lists, written independently of LiveMCPBench:
 * `data/heldout_catalog.json` (the three reference servers' live tool lists plus six servers' tools as
 * their public READMEs list them: git, github, google-maps, time, fetch, brave-search),
 * `data/heldout_queries.jsonl` (72 English queries, 5 of them off-topic) and
 * `data/heldout_translated.jsonl` (32 of them translated to Spanish, Portuguese, French and Italian).
 * The queries were written before looking at the resolver's ranking of them.
 *
 * ```sh
 * deno run -A scripts/bench/heldout.ts [--json]
 * ```
 *
 * @module
 */
import {
  catalogFromJson,
  type EvalSummary,
  evaluate,
  parseQueries,
  resolverRanker,
} from "../eval_resolver.ts";

const DATA = new URL("./data/", import.meta.url);

/** Figures of the held-out sets. */
export interface HeldoutReport {
  tools: number;
  english: EvalSummary;
  translated: EvalSummary;
}

/** Scores the resolver on the held-out sets. */
export async function run(): Promise<HeldoutReport> {
  const tools = catalogFromJson(JSON.parse(await Deno.readTextFile(new URL("heldout_catalog.json", DATA))));
  const ranker = resolverRanker(tools, { top: 10 });
  const load = async (name: string) => parseQueries(await Deno.readTextFile(new URL(name, DATA)));
  return {
    tools: tools.length,
    english: evaluate(tools, await load("heldout_queries.jsonl"), ranker).summary,
    translated: evaluate(tools, await load("heldout_translated.jsonl"), ranker).summary,
  };
}

function row(label: string, s: EvalSummary): string {
  const f = (x: number) => x.toFixed(3);
  return `${label.padEnd(24)} ${f(s["hit@1"])}  ${f(s["recall@5"])}  ${f(s["recall@10"])}  ${
    f(s["ndcg@5"])
  }  ${f(s.mrr)}  ${f(s.answerable_no_match)}`;
}

/** Formats a report for people. */
export function format(r: HeldoutReport): string {
  return [
    `held-out: ${r.tools} tools on 9 real servers`,
    `${"".padEnd(24)} Hit@1  R@5    R@10   nDCG@5 MRR    no_match`,
    row(`English (${r.english.answerable})`, r.english),
    row(`es/pt/fr/it (${r.translated.answerable})`, r.translated),
    `off-topic (${r.english.unanswerable}): no_match accuracy ${r.english.no_match_accuracy}`,
  ].join("\n");
}

/** Runs the held-out evaluation and prints the figures. */
export async function main(args: readonly string[] = Deno.args): Promise<HeldoutReport> {
  const report = await run();
  console.log(args.includes("--json") ? JSON.stringify(report) : format(report));
  return report;
}

if (import.meta.main) await main();
