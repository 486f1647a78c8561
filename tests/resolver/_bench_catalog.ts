/**
 * The catalogs recorded for the ranking sets (`scripts/bench/data/*_catalog.json`: the reference servers and
 * each blind set's live `tools/list`), and excerpts of them of one server, indexed for the resolver tests.
 *
 * @module
 */
import { buildCatalog } from "../../src/catalog/mod.ts";
import { buildIndex, type ResolverIndex } from "../../src/resolver/mod.ts";
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
