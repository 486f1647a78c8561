/**
 * The catalogs recorded for the ranking sets (`scripts/bench/data/*_catalog.json`: the reference servers and
 * each blind set's live `tools/list`), and excerpts of them of one server, indexed for the resolver tests.
 *
 * @module
 */
import { buildCatalog } from "../../src/catalog/mod.ts";
import { buildIndex, rankQuery, type ResolverIndex } from "../../src/resolver/mod.ts";
import { catalogFromJson } from "../../scripts/eval_resolver.ts";

const DATA = new URL("../../scripts/bench/data/", import.meta.url);

/** The resolver index of `scripts/bench/data/<file>`. */
export async function benchIndex(file: string): Promise<ResolverIndex> {
  return buildIndex(catalogFromJson(JSON.parse(await Deno.readTextFile(new URL(file, DATA)))));
}

/** A tool of an excerpt: its name and description, no arguments. */
export function tool(name: string, description: string) {
  return { name, description, inputSchema: { type: "object" } };
}

/** The resolver index of one server's excerpt: `tools` under `name`, described by `description`. */
export function serverIndex(
  name: string,
  description: string,
  tools: ReturnType<typeof tool>[],
): ResolverIndex {
  return buildIndex(buildCatalog([{ name, description, tags: [], useWhen: [], tools }]));
}

/** A made-up tool with string arguments (`properties`), of which `required` are required. */
export function schemaTool(
  name: string,
  description: string,
  properties: string[] = [],
  required: string[] = [],
) {
  const props = Object.fromEntries(properties.map((p) => [p, { type: "string" }]));
  return { name, description, inputSchema: { type: "object", properties: props, required } };
}

/** A made-up tool of {@link schemaTool}. */
export type SchemaTool = ReturnType<typeof schemaTool>;

/** The resolver index of made-up servers: `[name, tools]` each, no description. */
export function serversIndex(servers: [string, SchemaTool[]][]): ResolverIndex {
  return buildIndex(
    buildCatalog(servers.map(([name, tools]) => ({ name, description: "", tags: [], useWhen: [], tools }))),
  );
}

/** The short names of a request's first `n` tools. */
export const ranked = (i: ResolverIndex, request: string, n = 10): string[] =>
  rankQuery(i, request, { maxHits: n }).hits.map((h) => h.tool.short);
