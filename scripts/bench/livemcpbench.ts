/**
 * LiveMCPBench retrieval benchmark. Converts the LiveMCPBench data (Apache-2.0:
 * `tools.json`, ~70 servers / 527 tools; `all_annotations.json`, 95 tasks whose
 * gold is the tool names the task needs) to the eval format, then scores the
 * resolver and a plain BM25 baseline on it.
 *
 * ```sh
 * deno run -A scripts/bench/livemcpbench.ts [--data DIR] [--out DIR] [--json]
 * ```
 *
 * - `--data` LiveMCPBench directory (default /work/shared/bench/livemcpbench, or $LIVEMCPBENCH_DIR).
 * - `--out` also write `catalog.json` / `queries.jsonl` there, for `scripts/eval_resolver.ts`.
 * - `--json` print the figures as one JSON object.
 *
 * Queries are the task questions (clipped to the gateway's 2,048-byte query limit, as an agent would
 * have to: one question embeds an 18 KB base64 image); gold entries are bare downstream names (any
 * server matches).
 * Five gold names do not exist in tools.json and stay unfindable; the "findable gold" row scores the
 * same ranking without them (tasks left with no gold dropped). Tasks alternate dev (even index) /
 * test (odd index); ranking weights were tuned on dev only. `data/livemcpbench_offtopic.jsonl` adds
 * hand-written off-topic queries (empty gold) for the no-match accuracy: off-1..12 informed the
 * no-match threshold, off-13..24 were written afterwards and held out.
 *
 * @module
 */
import { buildCatalog, type CatalogTool, type ToolDefinition } from "../../src/catalog/mod.ts";
import { clipText, MAX_QUERY_BYTES, utf8Length } from "../../src/resolver/mod.ts";
import {
  type CatalogFileServer,
  type EvalQuery,
  type EvalSummary,
  evaluate,
  parseQueries,
  type Ranker,
  resolverRanker,
  toCatalogServers,
} from "../eval_resolver.ts";

const DEFAULT_DATA = "/work/shared/bench/livemcpbench";
const OFFTOPIC = new URL("./data/livemcpbench_offtopic.jsonl", import.meta.url);

interface RawServer {
  name: string;
  description?: string;
  category?: string;
  tools: Record<string, { tools: (ToolDefinition & { annotations?: unknown })[] }>;
}

interface RawTask {
  task_id: string;
  Question: string;
  "Annotator Metadata": { Tools: string };
}

/** The converted benchmark. */
export interface LiveMcpBench {
  servers: CatalogFileServer[];
  queries: EvalQuery[];
}

function serverName(key: string): string {
  return key.toLowerCase().replace(/[^a-z0-9_-]+/g, "-").replace(/_{2,}/g, "_").replace(/^-+|-+$/g, "");
}

function clipQuery(text: string): string {
  return clipText(text, MAX_QUERY_BYTES).text.replace(/…$/, "");
}

/** Converts LiveMCPBench tools.json and all_annotations.json to CATALOG.json servers and queries. */
export function convert(toolsJson: unknown, annotationsJson: unknown): LiveMcpBench {
  const servers: CatalogFileServer[] = [];
  const taken = new Set<string>();
  for (const entry of toolsJson as RawServer[]) {
    for (const [key, body] of Object.entries(entry.tools ?? {})) {
      let name = serverName(key);
      for (let n = 2; taken.has(name); n++) name = `${serverName(key)}-${n}`;
      taken.add(name);
      servers.push({
        name,
        description: entry.description,
        tags: entry.category ? [entry.category] : [],
        tools: (body.tools ?? []).map((t) => {
          const { annotations, ...rest } = t;
          return annotations && typeof annotations === "object" ? { ...rest, annotations } : rest;
        }) as ToolDefinition[],
      });
    }
  }
  const queries = (annotationsJson as RawTask[]).map((task) => ({
    id: task.task_id,
    // An agent cannot send more than the gateway's query limit; one task embeds an 18 KB base64 image.
    query: utf8Length(task.Question) > MAX_QUERY_BYTES ? clipQuery(task.Question) : task.Question,
    gold: task["Annotator Metadata"].Tools.split("\n")
      .map((line) => line.replace(/^\s*\d+[.)]\s*/, "").trim())
      .filter((line) => line.length > 0),
  }));
  return { servers, queries };
}

// ---- Plain BM25 baseline: one field, lowercase alphanumeric tokens, no stemming, stop words or synonyms.

function plainTokens(text: string): string[] {
  return text.toLowerCase().split(/[^a-z0-9]+/).filter((t) => t.length > 0);
}

/** A plain BM25 (k1 1.2, b 0.75) ranker over one concatenated text per tool. */
export function plainBm25(tools: readonly CatalogTool[], text: (t: CatalogTool) => string, top = 10): Ranker {
  const docs = tools.map((t) => {
    const tf = new Map<string, number>();
    const tokens = plainTokens(text(t));
    for (const tok of tokens) tf.set(tok, (tf.get(tok) ?? 0) + 1);
    return { tf, len: tokens.length };
  });
  const avg = docs.reduce((a, d) => a + d.len, 0) / Math.max(1, docs.length);
  const df = new Map<string, number>();
  for (const d of docs) for (const term of d.tf.keys()) df.set(term, (df.get(term) ?? 0) + 1);
  const n = docs.length;
  return {
    rank(query) {
      const terms = [...new Set(plainTokens(query))];
      const scored = docs.map((d, i) => {
        let s = 0;
        for (const term of terms) {
          const tf = d.tf.get(term);
          if (!tf) continue;
          const f = df.get(term)!;
          const idf = Math.log(1 + (n - f + 0.5) / (f + 0.5));
          s += idf * (tf * 2.2) / (tf + 1.2 * (1 - 0.75 + 0.75 * d.len / avg));
        }
        return { i, s };
      }).filter((x) => x.s > 0);
      scored.sort((a, b) => b.s - a.s || a.i - b.i);
      return { status: "n/a", results: scored.slice(0, top).map((x) => tools[x.i]!.namespaced) };
    },
  };
}

/** Name + description text of a tool. */
export function nameAndDescription(t: CatalogTool): string {
  return `${t.tool} ${t.description}`;
}

/** Every ranked field of a tool as one text. */
export function allFields(t: CatalogTool): string {
  return [
    t.tool,
    t.title ?? "",
    t.description,
    t.inputFields.join(" "),
    t.server,
    t.serverDescription ?? "",
    t.tags.join(" "),
  ]
    .join(" ");
}

/** Figures of one benchmark run. */
export interface LiveMcpBenchReport {
  tools: number;
  servers: number;
  tasks: number;
  unknownGold: string[];
  resolver: { all: EvalSummary; dev: EvalSummary; test: EvalSummary; findable: EvalSummary };
  baseline: { nameDescription: EvalSummary; allFields: EvalSummary };
  offtopic: EvalSummary | null;
}

/** Loads, converts and scores. */
export async function run(dataDir = DEFAULT_DATA, outDir?: string): Promise<LiveMcpBenchReport> {
  const tools = JSON.parse(await Deno.readTextFile(`${dataDir}/tools.json`));
  const annotations = JSON.parse(await Deno.readTextFile(`${dataDir}/all_annotations.json`));
  const bench = convert(tools, annotations);
  if (outDir) {
    await Deno.mkdir(outDir, { recursive: true });
    await Deno.writeTextFile(`${outDir}/catalog.json`, JSON.stringify({ servers: bench.servers }));
    await Deno.writeTextFile(
      `${outDir}/queries.jsonl`,
      bench.queries.map((q) => JSON.stringify(q)).join("\n") + "\n",
    );
  }
  const catalog = buildCatalog(toCatalogServers(bench.servers));
  const known = new Set(catalog.map((t) => t.tool));
  const unknownGold = [...new Set(bench.queries.flatMap((q) => q.gold).filter((g) => !known.has(g)))].sort();
  const ranker = resolverRanker(catalog, { top: 10 });
  // The same tasks scored on the gold the catalog has: unknown names dropped, tasks left without gold dropped.
  const findable = bench.queries
    .map((q) => ({ ...q, gold: q.gold.filter((g) => known.has(g)) }))
    .filter((q) => q.gold.length > 0);
  const dev = bench.queries.filter((_, i) => i % 2 === 0);
  const test = bench.queries.filter((_, i) => i % 2 === 1);
  let offtopic: EvalSummary | null = null;
  try {
    const queries = parseQueries(await Deno.readTextFile(OFFTOPIC));
    offtopic = evaluate(catalog, queries, ranker).summary;
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return {
    tools: catalog.length,
    servers: bench.servers.length,
    tasks: bench.queries.length,
    unknownGold,
    resolver: {
      all: evaluate(catalog, bench.queries, ranker).summary,
      dev: evaluate(catalog, dev, ranker).summary,
      test: evaluate(catalog, test, ranker).summary,
      findable: evaluate(catalog, findable, ranker).summary,
    },
    baseline: {
      nameDescription: evaluate(catalog, bench.queries, plainBm25(catalog, nameAndDescription)).summary,
      allFields: evaluate(catalog, bench.queries, plainBm25(catalog, allFields)).summary,
    },
    offtopic,
  };
}

function row(label: string, s: EvalSummary): string {
  const f = (x: number) => x.toFixed(3);
  return `${label.padEnd(28)} ${f(s["hit@1"])}  ${f(s["recall@5"])}  ${f(s["recall@10"])}  ${
    f(s["ndcg@5"])
  }  ${f(s.mrr)}`;
}

/** Formats a report for people. */
export function format(r: LiveMcpBenchReport): string {
  const base = r.baseline.allFields;
  return [
    `LiveMCPBench: ${r.tasks} tasks, ${r.tools} tools on ${r.servers} servers (gold not in catalog: ${
      r.unknownGold.join(", ") || "none"
    })`,
    `${"".padEnd(28)} Hit@1  R@5    R@10   nDCG@5 MRR`,
    row("plain BM25 name+description", r.baseline.nameDescription),
    row("plain BM25 all fields", base),
    row("resolver (all 95)", r.resolver.all),
    row("resolver dev (even, tuned)", r.resolver.dev),
    row("resolver test (odd, held out)", r.resolver.test),
    row(`resolver, findable gold (${r.resolver.findable.answerable})`, r.resolver.findable),
    `resolver / plain BM25 all fields: R@5 x${
      (r.resolver.all["recall@5"] / base["recall@5"]).toFixed(2)
    }, nDCG@5 x${
      (r.resolver.all["ndcg@5"] / base["ndcg@5"]).toFixed(2)
    }; resolve p50 ${r.resolver.all.resolve_p50_ms} ms, p99 ${r.resolver.all.resolve_p99_ms} ms`,
    r.offtopic
      ? `off-topic queries: no_match accuracy ${r.offtopic.no_match_accuracy} (${r.offtopic.unanswerable} queries); ` +
        `tasks answered no_match: ${r.resolver.all.answerable_no_match}`
      : "off-topic queries: none",
  ].join("\n");
}

/** Runs the benchmark and prints the figures. */
export async function main(args: readonly string[] = Deno.args): Promise<LiveMcpBenchReport> {
  let data = Deno.env.get("LIVEMCPBENCH_DIR") ?? DEFAULT_DATA;
  let out: string | undefined;
  let json = false;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--data") data = args[++i] ?? data;
    else if (args[i] === "--out") out = args[++i];
    else if (args[i] === "--json") json = true;
  }
  const report = await run(data, out);
  console.log(json ? JSON.stringify(report) : format(report));
  return report;
}

if (import.meta.main) await main();
