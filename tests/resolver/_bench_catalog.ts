/**
 * The catalogs recorded for the ranking sets (`scripts/bench/data/*_catalog.json`: the reference servers and
 * each blind set's live `tools/list`), indexed for the resolver tests.
 *
 * @module
 */
import { buildIndex, type ResolverIndex } from "../../src/resolver/mod.ts";
import { catalogFromJson } from "../../scripts/eval_resolver.ts";

const DATA = new URL("../../scripts/bench/data/", import.meta.url);

/** The resolver index of `scripts/bench/data/<file>`. */
export async function benchIndex(file: string): Promise<ResolverIndex> {
  return buildIndex(catalogFromJson(JSON.parse(await Deno.readTextFile(new URL(file, DATA)))));
}
