/**
 * Content-addressed catalog revision: a hash over every ranked field and
 * input schema of the in-scope catalog, independent of listing order.
 *
 * @module
 */
import { createHash } from "node:crypto";
import type { CatalogTool } from "../catalog/mod.ts";
import { drain, sortSteps, STEP } from "./bm25f.ts";
import { drainAsync } from "./search_index.ts";

/** Hex characters of the SHA-256 digest kept in a revision. */
export const REVISION_LENGTH = 16;

/** Deepest nesting {@link canonicalJson} follows (tool definitions are limited to 64 levels before this). */
export const CANONICAL_MAX_DEPTH = 256;

/**
 * JSON with object keys sorted at every level, so equal content hashes equally.
 *
 * @throws {RangeError} past {@link CANONICAL_MAX_DEPTH} levels (never a stack overflow)
 */
export function canonicalJson(value: unknown, depth = 0): string {
  if (value === null || typeof value !== "object") {
    const json = JSON.stringify(value);
    return json === undefined ? "null" : json;
  }
  if (depth >= CANONICAL_MAX_DEPTH) {
    throw new RangeError(`value nests deeper than ${CANONICAL_MAX_DEPTH} levels`);
  }
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v, depth + 1)).join(",")}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k], depth + 1)}`).join(",")}}`;
}

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
