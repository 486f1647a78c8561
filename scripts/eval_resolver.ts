/**
 * Offline evaluation of the resolver, running the very code the gateway runs.
 *
 * ```sh
 * deno run -A scripts/eval_resolver.ts --catalog CATALOG.json --queries QUERIES.jsonl [--top 10]
 * ```
 *
 * Inputs:
 * - CATALOG.json: `{"servers": [{"name", "description"?, "tags"?, "use_when"?, "tool_use_when"?,
 *   "tools": [MCP Tool objects]}]}`, built with `buildCatalog` so public names are the gateway's.
 * - QUERIES.jsonl: one `{"id", "query", "gold": [...]}` per line. A gold entry containing `__` must equal
 *   a public `server__tool` name; a bare entry matches that downstream (wire) tool name on any server
 *   (`github_search`, not the public short `search`). An empty
 *   `gold` means nothing fits: the right answer is status `no_match`.
 *
 * Output (stdout): one `{"id", "status", "results"}` line per query (`results` = public names, best
 * first, `--top` long), then one summary line. Definitions, over queries with non-empty gold unless said:
 * - gold is deduplicated; a result "credits" every gold entry it matches that no earlier result matched,
 *   so two servers' copies of a bare gold tool count once.
 * - Hit@1: the first result credits a gold entry.
 * - Recall@k: credited gold entries within the top k / number of gold entries, averaged over queries.
 * - nDCG@5: binary relevance (a result is relevant when it credits a gold entry),
 *   DCG = sum rel_i / log2(i + 1) over ranks i = 1..5, IDCG = the same with min(|gold|, 5) relevant
 *   results first.
 * - MRR: 1 / rank of the first crediting result within `--top`, else 0.
 * - no_match_accuracy: over queries with empty gold, the fraction resolve answers `no_match`
 *   (null when there are none); answerable_no_match: over the others, the fraction it wrongly does.
 * - resolve latency: wall time of `resolveResponse` (default `max_hits`) per query after one warm-up
 *   pass; p50/p99 in milliseconds.
 *
 * Status comes from `resolveResponse`; the ranked list from `rankQuery`, the ranking both
 * `search_tools` and `resolve_tool` use. A query the gateway refuses (over 2,048 bytes) gets status
 * `error: …` and no results.
 *
 * @module
 */
import {
  buildCatalog,
  type CatalogServer,
  type CatalogTool,
  type ToolDefinition,
} from "../src/catalog/mod.ts";
import {
  buildIndex,
  catalogRevision,
  type RankingOptions,
  rankQuery,
  resolveResponse,
} from "../src/resolver/mod.ts";

/** One server of CATALOG.json. */
export interface CatalogFileServer {
  name: string;
  description?: string;
  tags?: string[];
  use_when?: string[];
  tool_use_when?: Record<string, string[]>;
  tools: ToolDefinition[];
}

/** One line of QUERIES.jsonl. */
export interface EvalQuery {
  id: string;
  query: string;
  gold: string[];
}

/** What a ranker answers for one query. */
export interface RankerAnswer {
  status: string;
  /** Public names, best first. */
  results: string[];
}

/** Something that ranks a query; the resolver, or a baseline for comparison. */
export interface Ranker {
  rank(query: string): RankerAnswer;
  /** Times one routing decision, in ms; omitted by baselines. */
  time?(query: string): number;
}

/** Aggregate metrics of one evaluation. */
export interface EvalSummary {
  queries: number;
  answerable: number;
  unanswerable: number;
  "hit@1": number;
  "recall@5": number;
  "recall@10": number;
  "ndcg@5": number;
  mrr: number;
  no_match_accuracy: number | null;
  answerable_no_match: number;
  /** `confident` answers whose first result is not a gold tool (or for a request with no gold). */
  confident_wrong: number;
  resolve_p50_ms: number | null;
  resolve_p99_ms: number | null;
}

/** Per-query lines and the summary. */
export interface EvalResult {
  lines: { id: string; status: string; results: string[] }[];
  summary: EvalSummary;
}

/** Converts CATALOG.json servers to catalog servers. */
export function toCatalogServers(servers: readonly CatalogFileServer[]): CatalogServer[] {
  return servers.map((s) => ({
    name: s.name,
    description: s.description,
    tags: s.tags ?? [],
    useWhen: s.use_when ?? [],
    toolUseWhen: s.tool_use_when ?? {},
    tools: s.tools,
  }));
}

/** Parses QUERIES.jsonl. */
export function parseQueries(text: string): EvalQuery[] {
  const out: EvalQuery[] = [];
  for (const [i, line] of text.split("\n").entries()) {
    if (line.trim() === "") continue;
    let q: EvalQuery;
    try {
      q = JSON.parse(line);
    } catch (cause) {
      throw new SyntaxError(`Cannot parse queries line ${i + 1}: not JSON`, { cause });
    }
    if (typeof q.query !== "string" || !Array.isArray(q.gold)) {
      throw new TypeError(
        `Cannot use queries line ${i + 1}: "query" (string) and "gold" (array) are required`,
      );
    }
    out.push({ id: String(q.id ?? i + 1), query: q.query, gold: q.gold.map(String) });
  }
  return out;
}

/** The resolver as the gateway runs it. */
export function resolverRanker(
  tools: readonly CatalogTool[],
  options: { top?: number; ranking?: RankingOptions } = {},
): Ranker {
  const top = options.top ?? 10;
  const index = buildIndex(tools, options.ranking);
  const context = { contractVersion: "eval", catalogRevision: catalogRevision(tools) };
  return {
    rank(query) {
      try {
        const status = resolveResponse(index, { query }, context).status;
        return {
          status,
          results: rankQuery(index, query, { maxHits: top }).hits.map((h) => h.tool.namespaced),
        };
      } catch (error) {
        // The gateway refuses the query (e.g. over 2,048 bytes): nothing is returned.
        return { status: `error: ${(error as Error).message}`, results: [] };
      }
    },
    time(query) {
      const start = performance.now();
      try {
        resolveResponse(index, { query }, context);
      } catch { /* timed like any answer */ }
      return performance.now() - start;
    },
  };
}

function matches(gold: string, name: string, byName: ReadonlyMap<string, CatalogTool>): boolean {
  if (gold.includes("__")) return gold === name;
  return byName.get(name)?.tool === gold;
}

function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const at = Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1));
  return Math.round(sorted[at]! * 1000) / 1000;
}

function round(x: number): number {
  return Math.round(x * 10000) / 10000;
}

/** Scores a ranker on queries against a catalog. */
export function evaluate(
  tools: readonly CatalogTool[],
  queries: readonly EvalQuery[],
  ranker: Ranker,
  options: { top?: number } = {},
): EvalResult {
  const top = options.top ?? 10;
  const byName = new Map(tools.map((t) => [t.namespaced, t]));
  const lines: EvalResult["lines"] = [];
  let answerable = 0,
    unanswerable = 0,
    hit1 = 0,
    r5 = 0,
    r10 = 0,
    ndcg = 0,
    mrr = 0,
    noMatchOk = 0,
    falseNoMatch = 0,
    confidentWrong = 0;
  for (const q of queries) {
    const answer = ranker.rank(q.query);
    const results = answer.results.slice(0, top);
    lines.push({ id: q.id, status: answer.status, results });
    const gold = [...new Set(q.gold)];
    if (answer.status === "confident" && !gold.some((g) => results[0] && matches(g, results[0], byName))) {
      confidentWrong++;
    }
    if (gold.length === 0) {
      unanswerable++;
      if (answer.status === "no_match") noMatchOk++;
      continue;
    }
    answerable++;
    if (answer.status === "no_match") falseNoMatch++;
    const credited = new Set<string>();
    const rel: number[] = [];
    for (const name of results) {
      let fresh = 0;
      for (const g of gold) {
        if (!credited.has(g) && matches(g, name, byName)) {
          credited.add(g);
          fresh++;
        }
      }
      rel.push(fresh > 0 ? 1 : 0);
    }
    const creditedWithin = (k: number) => {
      const seen = new Set<string>();
      for (const name of results.slice(0, k)) for (const g of gold) if (matches(g, name, byName)) seen.add(g);
      return seen.size;
    };
    if (rel[0] === 1) hit1++;
    r5 += creditedWithin(5) / gold.length;
    r10 += creditedWithin(10) / gold.length;
    let dcg = 0, idcg = 0;
    for (let i = 0; i < 5; i++) {
      dcg += (rel[i] ?? 0) / Math.log2(i + 2);
      if (i < gold.length) idcg += 1 / Math.log2(i + 2);
    }
    ndcg += dcg / idcg;
    const first = rel.indexOf(1);
    if (first >= 0) mrr += 1 / (first + 1);
  }
  const latencies: number[] = [];
  if (ranker.time) {
    for (const q of queries) ranker.time(q.query); // warm-up
    for (const q of queries) latencies.push(ranker.time(q.query));
    latencies.sort((a, b) => a - b);
  }
  const per = (x: number) => (answerable > 0 ? round(x / answerable) : 0);
  return {
    lines,
    summary: {
      queries: queries.length,
      answerable,
      unanswerable,
      "hit@1": per(hit1),
      "recall@5": per(r5),
      "recall@10": per(r10),
      "ndcg@5": per(ndcg),
      mrr: per(mrr),
      no_match_accuracy: unanswerable > 0 ? round(noMatchOk / unanswerable) : null,
      answerable_no_match: per(falseNoMatch),
      confident_wrong: confidentWrong,
      resolve_p50_ms: percentile(latencies, 0.5),
      resolve_p99_ms: percentile(latencies, 0.99),
    },
  };
}

/** Builds the gateway catalog of a CATALOG.json document. */
export function catalogFromJson(doc: unknown): CatalogTool[] {
  const servers = (doc as { servers?: unknown })?.servers;
  if (!Array.isArray(servers)) throw new TypeError('Cannot use catalog: "servers" must be an array');
  return buildCatalog(toCatalogServers(servers as CatalogFileServer[]));
}

function usage(): never {
  console.error(
    "Usage: deno run -A scripts/eval_resolver.ts --catalog CATALOG.json --queries QUERIES.jsonl [--top 10]",
  );
  Deno.exit(2);
}

/** The CLI: prints per-query lines and the summary line. Returns the result too. */
export async function main(args: readonly string[] = Deno.args): Promise<EvalResult> {
  let catalogPath: string | undefined, queriesPath: string | undefined, top = 10;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const value = () => args[++i] ?? usage();
    if (a === "--catalog") catalogPath = value();
    else if (a === "--queries") queriesPath = value();
    else if (a === "--top") top = Number(value());
    else usage();
  }
  if (!catalogPath || !queriesPath || !Number.isInteger(top) || top < 1) usage();
  const tools = catalogFromJson(JSON.parse(await Deno.readTextFile(catalogPath)));
  const queries = parseQueries(await Deno.readTextFile(queriesPath));
  const result = evaluate(tools, queries, resolverRanker(tools, { top }), { top });
  for (const line of result.lines) console.log(JSON.stringify(line));
  console.log(JSON.stringify({ summary: true, top, ...result.summary }));
  return result;
}

if (import.meta.main) await main();
