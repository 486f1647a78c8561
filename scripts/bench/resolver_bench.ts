/**
 * Resolver latency on a synthetic catalog (default 10,000 tools on 250 servers): index build time,
 * catalog revision time, and resolve_tool / search_tools latency (p50/p99) over varied queries.
 * Deterministic: a seeded generator builds the same catalog and queries every run.
 *
 * ```sh
 * deno run -A scripts/bench/resolver_bench.ts [--tools 10000] [--queries 500] [--json]
 * ```
 *
 * Target: resolve p50 <= 2 ms at 10,000 tools.
 *
 * @module
 */
import { buildCatalog, type CatalogServer, type ToolDefinition } from "../../src/catalog/mod.ts";
import { buildIndex, catalogRevision, resolveResponse, searchResponse } from "../../src/resolver/mod.ts";

const VERBS = [
  "get",
  "list",
  "create",
  "update",
  "delete",
  "search",
  "read",
  "write",
  "fetch",
  "convert",
  "analyze",
  "export",
  "import",
  "send",
  "schedule",
  "validate",
  "render",
  "summarize",
  "translate",
  "compare",
];
const NOUNS = [
  "file",
  "directory",
  "issue",
  "pull_request",
  "commit",
  "branch",
  "message",
  "channel",
  "email",
  "calendar_event",
  "invoice",
  "customer",
  "order",
  "ticket",
  "document",
  "spreadsheet",
  "presentation",
  "chart",
  "image",
  "video",
  "transcript",
  "weather_forecast",
  "stock_price",
  "exchange_rate",
  "route",
  "location",
  "recipe",
  "paper",
  "package",
  "dependency",
  "container",
  "log",
  "metric",
  "alert",
  "deployment",
  "database_table",
  "query_result",
  "user",
  "team",
  "project",
];
const DOMAINS = [
  "github",
  "gitlab",
  "slack",
  "gmail",
  "calendar",
  "stripe",
  "salesforce",
  "jira",
  "notion",
  "drive",
  "excel",
  "powerpoint",
  "youtube",
  "weather",
  "finance",
  "maps",
  "arxiv",
  "npm",
  "docker",
  "kubernetes",
  "postgres",
  "sentry",
  "datadog",
  "filesystem",
  "browser",
];
const FILLER =
  "the a with for and of to in from by using returns results optional filters pagination supports fields detailed information about specified given current latest multiple items format output json markdown text"
    .split(" ");

/** Mulberry32: a small seeded PRNG so every run benchmarks the same catalog. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pick<T>(rand: () => number, list: readonly T[]): T {
  return list[Math.floor(rand() * list.length)]!;
}

function sentence(rand: () => number, words: number, extra: readonly string[]): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(rand() < 0.35 ? pick(rand, extra) : pick(rand, FILLER));
  return out.join(" ");
}

/** A synthetic catalog of about `tools` tools and queries over its vocabulary. */
export function syntheticCatalog(tools: number, queries: number, seed = 42): {
  servers: CatalogServer[];
  queries: string[];
} {
  const rand = random(seed);
  const perServer = 40;
  const servers: CatalogServer[] = [];
  for (let s = 0; servers.length * perServer < tools; s++) {
    const domain = `${DOMAINS[s % DOMAINS.length]}${
      s >= DOMAINS.length ? `-${Math.floor(s / DOMAINS.length)}` : ""
    }`;
    const defs: ToolDefinition[] = [];
    const names = new Set<string>();
    while (defs.length < Math.min(perServer, tools - servers.length * perServer)) {
      const verb = pick(rand, VERBS);
      const noun = pick(rand, NOUNS);
      let name = `${verb}_${noun}`;
      if (names.has(name)) name = `${name}_${defs.length}`;
      names.add(name);
      const fields = Array.from(
        { length: 2 + Math.floor(rand() * 5) },
        (_, i) => `${pick(rand, NOUNS)}_${i}`,
      );
      defs.push({
        name: rand() < 0.2 ? `${domain.replace(/-\d+$/, "")}_${name}` : name,
        description: `${verb[0]!.toUpperCase()}${verb.slice(1)} ${noun.replace(/_/g, " ")} in ${domain}. ${
          sentence(rand, 10 + Math.floor(rand() * 40), [...NOUNS, ...VERBS, domain])
        }`,
        inputSchema: {
          type: "object",
          properties: Object.fromEntries(
            fields.map((f) => [f, { type: "string", description: sentence(rand, 6, NOUNS) }]),
          ),
          required: fields.slice(0, 1 + Math.floor(rand() * 2)),
        },
      });
    }
    servers.push({
      name: domain,
      description: `${domain} integration: ${sentence(rand, 12, NOUNS)}`,
      tags: [pick(rand, ["dev", "office", "data", "media", "ops"])],
      useWhen: rand() < 0.5 ? [`working with ${domain} ${pick(rand, NOUNS).replace(/_/g, " ")}s`] : [],
      tools: defs,
    });
  }
  const qs: string[] = [];
  for (let i = 0; i < queries; i++) {
    const kind = i % 4;
    const verb = pick(rand, VERBS), noun = pick(rand, NOUNS).replace(/_/g, " "), domain = pick(rand, DOMAINS);
    if (kind === 0) qs.push(`${verb} ${noun}`);
    else if (kind === 1) qs.push(`${verb} the ${noun} in ${domain}`);
    else if (kind === 2) {
      qs.push(
        `please ${verb} the latest ${noun} from ${domain} and then ${pick(rand, VERBS)} a ${
          pick(rand, NOUNS).replace(/_/g, " ")
        } with the results, save it to /tmp/out/report.md`,
      );
    } else qs.push(sentence(rand, 25, [...NOUNS, ...VERBS, ...DOMAINS]));
  }
  return { servers, queries: qs };
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

/** Figures of one run, in milliseconds. */
export interface ResolverBenchReport {
  tools: number;
  servers: number;
  queries: number;
  buildMs: number;
  revisionMs: number;
  resolve: { p50: number; p99: number; mean: number };
  search: { p50: number; p99: number; mean: number };
}

function stats(samples: number[]): { p50: number; p99: number; mean: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const r = (x: number) => Math.round(x * 1000) / 1000;
  return {
    p50: r(percentile(sorted, 0.5)),
    p99: r(percentile(sorted, 0.99)),
    mean: r(samples.reduce((a, b) => a + b, 0) / samples.length),
  };
}

/** Builds the synthetic catalog and times the resolver on it. */
export function run(toolCount = 10_000, queryCount = 500): ResolverBenchReport {
  const { servers, queries } = syntheticCatalog(toolCount, queryCount);
  const catalog = buildCatalog(servers);
  let start = performance.now();
  const index = buildIndex(catalog);
  const buildMs = performance.now() - start;
  start = performance.now();
  const revision = catalogRevision(catalog);
  const revisionMs = performance.now() - start;
  const context = { contractVersion: "bench", catalogRevision: revision };
  for (const query of queries) resolveResponse(index, { query }, context); // warm-up
  const resolveMs: number[] = [];
  const searchMs: number[] = [];
  for (const query of queries) {
    start = performance.now();
    resolveResponse(index, { query }, context);
    resolveMs.push(performance.now() - start);
    start = performance.now();
    searchResponse(index, { query }, context);
    searchMs.push(performance.now() - start);
  }
  const round = (x: number) => Math.round(x * 10) / 10;
  return {
    tools: catalog.length,
    servers: servers.length,
    queries: queries.length,
    buildMs: round(buildMs),
    revisionMs: round(revisionMs),
    resolve: stats(resolveMs),
    search: stats(searchMs),
  };
}

/** Formats a report for people. */
export function format(r: ResolverBenchReport): string {
  return [
    `resolver: ${r.tools} tools on ${r.servers} servers, ${r.queries} queries`,
    `  index build ${r.buildMs} ms, catalog_revision ${r.revisionMs} ms`,
    `  resolve_tool p50 ${r.resolve.p50} ms, p99 ${r.resolve.p99} ms (target p50 <= 2 ms: ${
      r.resolve.p50 <= 2 ? "ok" : "MISSED"
    })`,
    `  search_tools p50 ${r.search.p50} ms, p99 ${r.search.p99} ms`,
  ].join("\n");
}

/** Runs the benchmark and prints the figures. */
export function main(args: readonly string[] = Deno.args): ResolverBenchReport {
  let tools = 10_000, queries = 500, json = false;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--tools") tools = Number(args[++i]);
    else if (args[i] === "--queries") queries = Number(args[++i]);
    else if (args[i] === "--json") json = true;
  }
  const report = run(tools, queries);
  console.log(json ? JSON.stringify(report) : format(report));
  return report;
}

if (import.meta.main) main();
