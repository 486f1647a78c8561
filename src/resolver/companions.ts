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

/** What a sibling named as a prerequisite provides, when the sentence does not say which handle. */
const NAMED_PREREQUISITE = "named";

/** A sentence naming a way to get or find something first ("use X to get the issue_id", "call X first"). */
const PROVIDES =
  /\b(?:to|and)\s+(?:get|find|look\s+up|obtain|retrieve|fetch|resolve|discover|list)\b|\bfirst\b|\b(?:returned|provided|obtained|given)\s+by\b|\bfrom\s+(?:the\s+)?[\w-]{1,80}\s+(?:tool|call)\b/;

/** A sentence naming a sibling to use in this tool's place or after it ("use X instead", "see X"). */
const ALTERNATIVE =
  /\binstead\b|\brather than\b|\balternative\b|\bdo not\b|\bdon't\b|\bnot for\b|\bconsider\b|\bsee\b|\bprefer\b/;

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

/**
 * What each companion provides: for each tool, parallel to its companions, the stems of the required handle
 * fields the companion is the provider of (`drive` for a `drive_id`); empty for a sibling only named.
 */
export type CompanionHandles = string[][][];

/** {@link findCompanions}, yielding after each server with siblings to compare. */
export function* companionSteps(
  tools: readonly CatalogTool[],
  serverOf: Int32Array,
  terms: readonly CompanionTerms[],
  handles?: CompanionHandles,
): Generator<void, number[][]> {
  const byServer = new Map<number, number[]>();
  tools.forEach((_, d) => {
    const list = byServer.get(serverOf[d]!);
    if (list) list.push(d);
    else byServer.set(serverOf[d]!, [d]);
  });
  const out: number[][] = tools.map(() => []);
  if (handles) { for (let d = 0; d < tools.length; d++) handles[d] = []; }
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
      /** Per companion found, the handle words it provides. */
      const provides: string[][] = [];
      const t = tools[a]!;
      const text = `${t.description.slice(0, MAX_INDEXED_CHARS)}\n${schemaWords(t.definition.inputSchema)}`
        .slice(0, 2 * MAX_INDEXED_CHARS).toLowerCase();
      for (const sentence of text.split(/(?<=[.!?;\n])/)) {
        // A sibling named as the way to get what this tool needs ("use get_issue_using_readable_identifier to
        // get the issue_id") is its prerequisite, as a handle's provider is; one named as an alternative or a
        // next step is not.
        const needed = PROVIDES.test(sentence) && !ALTERNATIVE.test(sentence);
        for (const word of sentence.match(IDENTIFIER) ?? []) {
          const j = named.get(word);
          if (j === undefined || j === i) continue;
          const k = found.indexOf(members[j]!);
          if (k < 0) {
            found.push(members[j]!);
            provides.push(needed ? [NAMED_PREREQUISITE] : []);
          } else if (needed && provides[k]!.length === 0) provides[k]!.push(NAMED_PREREQUISITE);
        }
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
        if (best < 0) continue;
        const k = found.indexOf(best);
        if (k < 0) {
          found.push(best);
          provides.push([...need]);
        } else provides[k]!.push(...need);
      }
      out[a] = found.slice(0, MAX_COMPANIONS);
      if (handles) handles[a] = provides.slice(0, MAX_COMPANIONS);
    });
  }
  return out;
}
