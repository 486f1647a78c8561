/**
 * The ranking at catalog scale: every catalog of `data/` in one — the reference servers (`plain_catalog.json`),
 * every `blindN_catalog.json`, `heldout2_catalog.json`'s servers other than the reference ones, and
 * LiveMCPBench's 70 servers (`catalog.json` of `livemcpbench.ts --out`): about 1,150 tools — and each plain and
 * blind request set scored against it as `plain.ts` scores it in its own catalog (top-1, top-5, `resolve_tool`'s
 * verdicts, off-topic declines), and LiveMCPBench's 95 tasks as Recall@5 / nDCG@5 (their gold by tool name: any
 * server's tool of that name counts). A set's gold is pinned to its own catalog's `server__tool` names; a server whose
 * name another catalog already took is renamed `name-pN` / `name-bN` / `name-h2` / `name-lmb`.
 *
 * What it measures: whether a request still finds its tool when ten times as many tools from unrelated servers
 * compete for the first five, as in a hidden evaluation over ~2,800 tools; the sets tuned on have 36–138.
 *
 * Caveat: the pinned gold undercounts. Another server's equally good tool (a second `read_file`, a second
 * `search_issues`) counts as a miss, and an off-topic request may become answerable in the union. Read the
 * misses (`--misses SET`) before believing a figure: the real class is a first tool from an unrelated server
 * reached by a surface word.
 *
 * ```sh
 * deno run -A scripts/bench/livemcpbench.ts --out /tmp/lmb        # once: writes catalog.json
 * deno run -A scripts/bench/union.ts [--lmb /tmp/lmb] [--misses blind8] [--ranking '{"nameBonus":1}']
 * ```
 *
 * @module
 */
import type { RankingOptions } from "../../src/resolver/mod.ts";
import { catalogFromJson, evaluate, parseQueries, resolverRanker } from "../eval_resolver.ts";
import { type PlainReport, run } from "./plain.ts";

const DATA = new URL("./data/", import.meta.url);

interface Server {
  name: string;
  tools: { name: string }[];
}

/** One scored set: its label and its figures in the union. */
export interface UnionLine {
  label: string;
  report: PlainReport;
}

async function readJson(url: URL | string): Promise<{ servers: Server[] }> {
  return JSON.parse(await Deno.readTextFile(url));
}

async function exists(url: URL): Promise<boolean> {
  try {
    await Deno.stat(url);
    return true;
  } catch {
    return false;
  }
}

/**
 * Scores every plain and blind set over the union of all catalogs; `lmb` is the directory `livemcpbench.ts
 * --out` wrote. Calls `each` with each set's line as soon as it is scored.
 */
export async function runUnion(
  lmb: string,
  ranking?: RankingOptions,
  each?: (line: UnionLine) => void,
): Promise<
  {
    servers: number;
    tools: number;
    lines: UnionLine[];
    livemcpbench: { recall5: number; ndcg5: number; tasks: number };
  }
> {
  const all: Server[] = [];
  const taken = new Set<string>();
  const add = (tag: string, servers: Server[]) => {
    const rename = new Map<string, string>();
    for (const s of servers) {
      const name = taken.has(s.name) ? `${s.name}-${tag}` : s.name;
      taken.add(name);
      rename.set(s.name, name);
      all.push({ ...s, name });
    }
    return rename;
  };
  // [label, catalog file, queries file]
  const sets: [string, string, string][] = [];
  const renames = new Map<string, Map<string, string>>();
  renames.set("plain_catalog.json", add("p", (await readJson(new URL("plain_catalog.json", DATA))).servers));
  for (let n = 4; n <= 40; n++) {
    const q = `plain${n}_queries.jsonl`;
    if (await exists(new URL(q, DATA))) sets.push([`plain${n}`, "plain_catalog.json", q]);
  }
  for (let n = 5; n <= 40; n++) {
    const c = `blind${n}_catalog.json`;
    if (!await exists(new URL(c, DATA))) continue;
    renames.set(c, add(`b${n}`, (await readJson(new URL(c, DATA))).servers));
    sets.push([`blind${n}`, c, `blind${n}_queries.jsonl`]);
  }
  const reference = new Set(["everything", "filesystem", "memory"]);
  const h2 = (await readJson(new URL("heldout2_catalog.json", DATA))).servers;
  add("h2", h2.filter((s) => !reference.has(s.name)));
  add("lmb", (await readJson(`${lmb}/catalog.json`)).servers);

  const dir = await Deno.makeTempDir({ prefix: "mcphub_union_" });
  try {
    const union = `${dir}/catalog.json`;
    await Deno.writeTextFile(union, JSON.stringify({ servers: all }));
    const byKey = new Map<string, string>();
    for (const t of catalogFromJson({ servers: all })) byKey.set(`${t.server}\u0000${t.tool}`, t.namespaced);
    const lines: UnionLine[] = [];
    for (const [label, catalog, queries] of sets) {
      const tools = catalogFromJson(await readJson(new URL(catalog, DATA)));
      const rename = renames.get(catalog)!;
      const requests = parseQueries(await Deno.readTextFile(new URL(queries, DATA)));
      const pinned = requests.map((r) => {
        const gold = tools
          .filter((t) => [t.tool, t.short, t.namespaced].some((n) => r.gold.includes(n)))
          .map((t) => byKey.get(`${rename.get(t.server) ?? t.server}\u0000${t.tool}`)!);
        return JSON.stringify({ id: r.id, query: r.query, gold });
      });
      const file = `${dir}/${label}.jsonl`;
      await Deno.writeTextFile(file, pinned.join("\n") + "\n");
      const line = { label, report: await run(ranking, file, union) };
      lines.push(line);
      each?.(line);
    }
    // LiveMCPBench's tasks in the union: gold by tool name, any server's tool of that name counts (lenient).
    const tools = catalogFromJson({ servers: all });
    const ranker = resolverRanker(tools, { top: 10, ranking });
    const tasks = parseQueries(await Deno.readTextFile(`${lmb}/queries.jsonl`));
    const summary = evaluate(tools, tasks, { rank: ranker.rank }).summary;
    const livemcpbench = {
      recall5: summary["recall@5"] ?? 0,
      ndcg5: summary["ndcg@5"] ?? 0,
      tasks: tasks.length,
    };
    return { servers: all.length, tools: all.reduce((n, s) => n + s.tools.length, 0), lines, livemcpbench };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** A set's figures as one line. */
export function unionSummary({ label, report: r }: UnionLine): string {
  const pct = (x: number) => (x / r.answerable).toFixed(3);
  return `${label} top1 ${pct(r.top1)} top5 ${pct(r.top5)} (${r.answerable}); cr ${r.confidentRight} ` +
    `cw ${r.confidentWrong}, nm ${r.noMatch}; off ${r.offTopicDeclined}/${r.offTopic}`;
}

if (import.meta.main) {
  const value = (flag: string) => {
    const at = Deno.args.indexOf(flag);
    return at >= 0 ? Deno.args[at + 1] : undefined;
  };
  const json = value("--ranking");
  const misses = value("--misses");
  const result = await runUnion(
    value("--lmb") ?? "/tmp/lmb",
    json === undefined ? undefined : JSON.parse(json) as RankingOptions,
    (line) => {
      if (line.label === misses) { for (const m of line.report.misses) console.log(m); }
      console.log(unionSummary(line));
    },
  );
  const l = result.livemcpbench;
  console.log(
    `lmb (${l.tasks} tasks, gold by tool name) R@5 ${l.recall5.toFixed(3)} nDCG@5 ${l.ndcg5.toFixed(3)}`,
  );
  console.log(`union: ${result.servers} servers, ${result.tools} tools`);
}
