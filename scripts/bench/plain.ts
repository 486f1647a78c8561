/**
 * Plain requests over the three reference servers, typed as a user would ("remember that Ana works at Acme",
 * "open notes.txt", "what is 17 plus 25"): `data/plain_catalog.json` (the live `tools/list` of
 * server-everything, server-memory and server-filesystem as pinned in `tests/servers`, 36 tools) and
 * `data/plain_queries.jsonl` (72 requests, each with the tools that would do the job, and 4 off-topic ones
 * with none), written before the ranking of any of them was looked at (issue #42).
 *
 * A request's gold lists every tool that does the job: it is answered when any of them is. Printed: search's
 * first hit right (top-1), a right tool among search's first five (top-5), and `resolve_tool`'s verdict
 * (default `max_hits` 5): `confident` and right, `confident` and wrong, `ambiguous` with a right tool among the
 * recommendation and alternatives, `ambiguous` without one, `no_match`; and the off-topic requests declined.
 *
 * `data/plain2_queries.jsonl` is a second, blind set (22 requests and 4 off-topic ones over the same catalog),
 * written before the second ranking pass of issue #42 changed anything; `data/plain3_queries.jsonl` a third
 * (33 requests and 4 off-topic ones), written before the fourth pass; `--queries` picks either.
 *
 * `data/plain4_queries.jsonl` (45 requests and 5 off-topic ones) is a blind set written by a helper who had not
 * read the ranking code or the earlier sets, committed before the ranking ran on it. `--catalog` scores another
 * catalog in `data/`: `data/blind5_catalog.json` (81 tools of five public servers none of the other catalogs has;
 * sources in `data/blind5_SOURCES.md`) with `data/blind5_queries.jsonl` (50 requests and 5 off-topic ones), written
 * the same way. `data/plain5_queries.jsonl` (40 requests and 5 off-topic ones) and `data/blind6_catalog.json` (63
 * tools of six public servers; sources in `data/blind6_SOURCES.md`) with `data/blind6_queries.jsonl` (50 requests
 * and 5 off-topic ones) are a second pair written the same way. `data/dev_rank3_queries.jsonl` (28 requests and 2
 * off-topic ones over `data/heldout2_catalog.json`) is the seventh ranking pass's dev set. A gold entry names a
 * tool by its wire name, its public short name or its `server__tool` name.
 *
 * `data/plain6_queries.jsonl` (45 requests and 5 off-topic ones) and `data/blind7_catalog.json` (88 tools of six
 * public servers — Supabase, Google Calendar, Datadog, Mapbox, HubSpot, PayPal — recorded from each npm package's
 * live `tools/list`; sources in `data/blind7_SOURCES.md`) with `data/blind7_queries.jsonl` (50 requests and 5
 * off-topic ones) are a third pair written the same way.
 *
 * `data/plain7_queries.jsonl` (45 requests and 5 off-topic ones) and `data/blind8_catalog.json` (90 tools of six
 * public servers — Elasticsearch, Neon, MongoDB, Asana, Trello, Grafana — recorded from each npm package's live
 * `tools/list`; sources in `data/blind8_SOURCES.md`) with `data/blind8_queries.jsonl` (50 requests and 5
 * off-topic ones) are a fourth pair written the same way.
 *
 * `data/plain8_queries.jsonl` (45 requests and 5 off-topic ones) and `data/blind9_catalog.json` (90 tools of six
 * public servers — Resend, Discord, LINE, CircleCI, Sentry, Pinecone — recorded from each npm package's live
 * `tools/list`; sources in `data/blind9_SOURCES.md`) with `data/blind9_queries.jsonl` (50 requests and 5
 * off-topic ones) are a fifth pair written the same way.
 *
 * `data/plain9_queries.jsonl` (40 requests and 5 off-topic ones) and `data/blind10_catalog.json` (76 tools of four
 * public servers that all track work — Shortcut, monday.com, Plane, Atlassian (Jira and Confluence) — recorded
 * from each npm package's live `tools/list`; sources in `data/blind10_SOURCES.md`) with
 * `data/blind10_queries.jsonl` (45 requests and 5 off-topic ones) are a sixth pair written the same way.
 *
 * `data/plain10_queries.jsonl` and `data/plain11_queries.jsonl` (45 requests and 5 off-topic ones each; gold rules
 * in `data/plain10_NOTES.md`, `data/plain11_NOTES.md`), and three catalogs with their requests (45 and 5
 * off-topic each): `data/blind11_catalog.json` (89 tools of Xero, Paddle, Attio, Shopify and Chatwork, the last
 * described in Japanese), `data/blind12_catalog.json` (79 tools of Railway, Render, Firebase, Obsidian and
 * Terraform) and `data/blind13_catalog.json` (87 tools of Contentful, Strapi, Figma and YouTube), sources in
 * `data/blind11_SOURCES.md` … `data/blind13_SOURCES.md`, were written the same way while the eleventh ranking
 * pass ran: blind to it, and it was judged on them. `data/plain12_queries.jsonl` (45 and 5 off-topic; notes in
 * `data/plain12_NOTES.md`) and `data/blind14_catalog.json` (88 tools of Vercel, Netlify, Cloudflare and Coolify)
 * with `data/blind14_queries.jsonl` (45 and 5) were written the same way before the twelfth pass.
 *
 * ```sh
 * deno run -A scripts/bench/plain.ts [--misses] [--queries plain2_queries.jsonl] [--ranking '{"nameBonus":1}']
 * deno run -A scripts/bench/plain.ts --misses --catalog blind5_catalog.json --queries blind5_queries.jsonl
 * ```
 *
 * @module
 */
import {
  buildIndex,
  catalogRevision,
  type RankingOptions,
  rankQuery,
  resolveResponse,
} from "../../src/resolver/mod.ts";
import { catalogFromJson, parseQueries } from "../eval_resolver.ts";

const DATA = new URL("./data/", import.meta.url);

/** Figures of the plain-request set. */
export interface PlainReport {
  answerable: number;
  /** Share of answerable requests whose first search hit is right. */
  top1: number;
  /** Share of answerable requests with a right tool in search's first five. */
  top5: number;
  confidentRight: number;
  confidentWrong: number;
  ambiguousWithGold: number;
  ambiguousWithout: number;
  noMatch: number;
  offTopic: number;
  offTopicDeclined: number;
  /** One line per request that missed top-1 or was not a confident right answer. */
  misses: string[];
}

/**
 * Scores the resolver on a plain-request set (`queries`, a file in `data/`) over `catalog` (a file in `data/`);
 * `ranking` overrides the ranking parameters.
 */
export async function run(
  ranking?: RankingOptions,
  queries = "plain_queries.jsonl",
  catalog = "plain_catalog.json",
): Promise<PlainReport> {
  const tools = catalogFromJson(JSON.parse(await Deno.readTextFile(new URL(catalog, DATA))));
  const requests = parseQueries(await Deno.readTextFile(new URL(queries, DATA)));
  // A gold entry may name a tool by its wire name, its public short name or its `server__tool` name; hits
  // are compared by `server__tool`, so two servers' tools sharing a short name are never taken for each other.
  const names = (t: (typeof tools)[number]) => [t.tool, t.short, t.namespaced];
  const goldNames = (gold: readonly string[]) =>
    new Set(tools.filter((t) => names(t).some((n) => gold.includes(n))).map((t) => t.namespaced));
  const index = buildIndex(tools, ranking);
  const context = { contractVersion: "eval", catalogRevision: catalogRevision(tools) };
  const r: PlainReport = {
    answerable: 0,
    top1: 0,
    top5: 0,
    confidentRight: 0,
    confidentWrong: 0,
    ambiguousWithGold: 0,
    ambiguousWithout: 0,
    noMatch: 0,
    offTopic: 0,
    offTopicDeclined: 0,
    misses: [],
  };
  for (const q of requests) {
    const resolved = resolveResponse(index, { query: q.query }, context);
    if (q.gold.length === 0) {
      r.offTopic++;
      if (resolved.status === "no_match") r.offTopicDeclined++;
      else {r.misses.push(
          `${q.id} "${q.query}" off-topic: ${resolved.status} ${resolved.recommendation?.tool}`,
        );}
      continue;
    }
    r.answerable++;
    const gold = goldNames(q.gold);
    const ranked = rankQuery(index, q.query, { maxHits: 20 }).hits.map((h) => h.tool.namespaced);
    const first = gold.has(ranked[0] ?? "");
    if (first) r.top1++;
    if (ranked.slice(0, 5).some((n) => gold.has(n))) r.top5++;
    const offered = [resolved.recommendation?.namespaced, ...resolved.alternatives.map((a) => a.namespaced)];
    let verdict: string;
    if (resolved.status === "confident") {
      verdict = gold.has(resolved.recommendation!.namespaced) ? "confident-right" : "CONFIDENT-WRONG";
      if (verdict === "confident-right") r.confidentRight++;
      else r.confidentWrong++;
    } else if (resolved.status === "ambiguous") {
      verdict = offered.some((n) => n !== undefined && gold.has(n)) ? "ambiguous+gold" : "ambiguous-gold";
      if (verdict === "ambiguous+gold") r.ambiguousWithGold++;
      else r.ambiguousWithout++;
    } else {
      verdict = "no_match";
      r.noMatch++;
    }
    if (!first || verdict !== "confident-right") {
      const at = (g: string) => {
        const same = goldNames([g]);
        return ranked.findIndex((n) => same.has(n)) + 1 || "-";
      };
      const ranks = q.gold.map((g) => `${g}@${at(g)}`).join(" ");
      r.misses.push(`${q.id} "${q.query}" ${verdict}; gold ${ranks}; top5 ${ranked.slice(0, 5).join(" ")}`);
    }
  }
  return r;
}

/** The report as one line of figures. */
export function summary(r: PlainReport): string {
  const pct = (x: number) => (x / r.answerable).toFixed(3);
  return `top1 ${pct(r.top1)} top5 ${
    pct(r.top5)
  } (${r.answerable}); resolve confident right ${r.confidentRight}, ` +
    `confident wrong ${r.confidentWrong}, ambiguous with gold ${r.ambiguousWithGold}, ambiguous without ` +
    `${r.ambiguousWithout}, no_match ${r.noMatch}; off-topic declined ${r.offTopicDeclined}/${r.offTopic}`;
}

/** CLI: the misses when asked, then the summary line. */
export async function main(args: readonly string[] = Deno.args): Promise<PlainReport> {
  const value = (flag: string) => {
    const at = args.indexOf(flag);
    return at >= 0 ? args[at + 1] : undefined;
  };
  const json = value("--ranking");
  const ranking = json === undefined ? undefined : JSON.parse(json) as RankingOptions;
  const r = await run(ranking, value("--queries"), value("--catalog"));
  if (args.includes("--misses")) { for (const m of r.misses) console.log(m); }
  console.log(summary(r));
  return r;
}

if (import.meta.main) await main();
