/**
 * Prerequisite siblings ("companions"): tools of the same server that a tool
 * needs first. A tool's description or schema may name them outright ("get the
 * code with get-station-code-by-names"), or the tool may require an opaque
 * handle (an id, code, ticker or coordinate) that only a sibling can provide.
 *
 * @module
 */
import type { CatalogTool } from "../catalog/mod.ts";
import { drain } from "../catalog/mod.ts";
import { MAX_INDEXED_CHARS, tokenize } from "./tokenize.ts";

/** Most companions kept per tool. */
export const MAX_COMPANIONS = 3;

/** Servers with more tools than this are skipped (the pairwise scan is quadratic). */
const MAX_SERVER_TOOLS = 300;

/** Required fields whose values a caller cannot know from the request: they come from another tool. */
const HANDLE_FIELD =
  /(?:^|[_-]|[a-z])(?:id|ids|code|codes|key|token|ticker|symbol|uuid|handle|latitude|longitude|lat|lng|lon|coordinates)$/i;

/** Identifier-like words: tool names keep their `_` and `-`. */
const IDENTIFIER = /[\p{L}\p{N}_-]+/gu;

/** Generic handle words that say nothing about which sibling provides them. */
const GENERIC_HANDLES = new Set(["id", "code", "key"]);

/** A set of terms (a `Set`, or a `Map` keyed by term). */
export interface TermSet {
  has(term: string): boolean;
}

/** What {@link findCompanions} reads of each tool, already tokenized by the index. */
export interface CompanionTerms {
  /** Name terms. */
  names: TermSet;
  /** Lead-sentence terms. */
  leads: TermSet;
  /** Description terms. */
  mentions: TermSet;
}

/** Property names and descriptions of a schema, nested (bounded depth); not its title. */
export function schemaWords(schema: unknown, depth = 0): string {
  if (depth > 4 || schema === null || typeof schema !== "object") return "";
  const s = schema as Record<string, unknown>;
  const out: string[] = [];
  const props = s.properties;
  if (props !== null && typeof props === "object") {
    for (const [key, value] of Object.entries(props as Record<string, unknown>)) {
      out.push(key);
      const d = (value as { description?: unknown } | null)?.description;
      if (typeof d === "string") out.push(d);
      out.push(schemaWords(value, depth + 1));
    }
  }
  if (s.items) out.push(schemaWords(s.items, depth + 1));
  return out.join(" ");
}

/**
 * Companions of every tool, as indexes into `tools`: siblings named in the
 * tool's description or schema first, then for each required handle field the
 * sibling that talks about it most prominently (name, then lead sentence, then
 * description) without consuming it itself.
 */
export function findCompanions(
  tools: readonly CatalogTool[],
  serverOf: Int32Array,
  terms: readonly CompanionTerms[],
): number[][] {
  return drain(companionSteps(tools, serverOf, terms));
}

/** {@link findCompanions}, yielding after each server with siblings to compare. */
export function* companionSteps(
  tools: readonly CatalogTool[],
  serverOf: Int32Array,
  terms: readonly CompanionTerms[],
): Generator<void, number[][]> {
  const byServer = new Map<number, number[]>();
  tools.forEach((_, d) => {
    const list = byServer.get(serverOf[d]!);
    if (list) list.push(d);
    else byServer.set(serverOf[d]!, [d]);
  });
  const out: number[][] = tools.map(() => []);
  for (const members of byServer.values()) {
    if (members.length < 2 || members.length > MAX_SERVER_TOOLS) continue;
    yield;
    // Sibling downstream names (lowercase) -> member position, to spot names in a text in one pass.
    const named = new Map<string, number>();
    members.forEach((b, j) => {
      const name = tools[b]!.tool.toLowerCase();
      if (name.length > 3) named.set(name, j);
    });
    let consumes: Set<string>[] | undefined;
    members.forEach((a, i) => {
      const found: number[] = [];
      const t = tools[a]!;
      const text = `${t.description.slice(0, MAX_INDEXED_CHARS)}\n${schemaWords(t.definition.inputSchema)}`
        .slice(0, 2 * MAX_INDEXED_CHARS).toLowerCase();
      for (const word of text.match(IDENTIFIER) ?? []) {
        const j = named.get(word);
        if (j !== undefined && j !== i && !found.includes(members[j]!)) found.push(members[j]!);
      }
      for (const field of tools[a]!.required) {
        if (!HANDLE_FIELD.test(field)) continue;
        const need = tokenize(field).filter((t) => !GENERIC_HANDLES.has(t));
        if (need.length === 0) continue;
        consumes ??= members.map((d) => new Set(tokenize(schemaWords(tools[d]!.definition.inputSchema))));
        let best = -1, bestRank = 0;
        members.forEach((b, j) => {
          if (i === j || need.some((t) => consumes![j]!.has(t))) return;
          const t = terms[b]!;
          const rank = need.every((x) => t.names.has(x))
            ? 3
            : need.every((x) => t.leads.has(x))
            ? 2
            : need.every((x) => t.mentions.has(x))
            ? 1
            : 0;
          if (rank > bestRank) [best, bestRank] = [b, rank];
        });
        if (best >= 0 && !found.includes(best)) found.push(best);
      }
      out[a] = found.slice(0, MAX_COMPANIONS);
    });
  }
  return out;
}
