/**
 * Content-addressed catalog revision: a hash over every ranked field and
 * input schema of the in-scope catalog, independent of listing order.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { canonicalJson, type CatalogTool, drain, sortSteps, STEP } from "../catalog/mod.ts";
import { drainAsync } from "./search_index.ts";

// Defined in the catalog (the hub hashes tool pins with it without loading the resolver).
export { CANONICAL_MAX_DEPTH, canonicalJson } from "../catalog/mod.ts";

/** Hex characters of the SHA-256 digest kept in a revision. */
export const REVISION_LENGTH = 16;

/**
 * The revision of a catalog: first {@link REVISION_LENGTH} hex characters of
 * SHA-256 over the tools sorted by public name, each with its ranked fields
 * and input schema. Stable across restarts and server start order.
 */
export function catalogRevision(tools: readonly CatalogTool[]): string {
  return drain(revisionSteps(tools));
}

/** {@link catalogRevision} without blocking the event loop (slices of about `sliceMs`). */
export async function catalogRevisionAsync(tools: readonly CatalogTool[], sliceMs?: number): Promise<string> {
  return await drainAsync(revisionSteps(tools), sliceMs);
}

function* revisionSteps(tools: readonly CatalogTool[]): Generator<void, string> {
  const sorted = yield* sortSteps(
    tools,
    (a, b) => (a.namespaced < b.namespaced ? -1 : a.namespaced > b.namespaced ? 1 : 0),
  );
  const hash = createHash("sha256");
  let i = 0;
  for (const t of sorted) {
    if (++i % STEP === 0) yield;
    hash.update(canonicalJson({
      namespaced: t.namespaced,
      server: t.server,
      tool: t.tool,
      short: t.short,
      title: t.title ?? null,
      description: t.description,
      input_fields: t.inputFields,
      required: t.required,
      server_description: t.serverDescription ?? null,
      tags: t.tags,
      use_when: t.useWhen,
      tool_use_when: t.toolUseWhen,
      input_schema: t.definition.inputSchema ?? null,
    }));
    hash.update("\n");
  }
  return hash.digest("hex").slice(0, REVISION_LENGTH);
}
