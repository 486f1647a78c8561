/**
 * The search_tools and resolve_tool results: pure builders with the exact
 * shapes and bounds of the compatibility contract. The gateway wraps them as
 * MCP results.
 *
 * @module
 */
import type { CatalogTool } from "../catalog/mod.ts";
import { assess, type Confidence, type ReasonCode, type RouteStatus } from "./assess.ts";
import { rankQuery, type SearchHit } from "./rank.ts";
import type { ResolverIndex } from "./search_index.ts";
import { argumentTemplate } from "./template.ts";

/** Longest query, in UTF-8 bytes. */
export const MAX_QUERY_BYTES = 2048;
/** search_tools `max_hits` default. */
export const SEARCH_DEFAULT_HITS = 20;
/** search_tools `max_hits` cap; larger values clamp to it. */
export const SEARCH_MAX_HITS = 100;
/** resolve_tool `max_hits` default. */
export const RESOLVE_DEFAULT_HITS = 5;
/** resolve_tool `max_hits` range, inclusive. */
export const RESOLVE_MIN_HITS = 1;
/** resolve_tool `max_hits` range, inclusive. */
export const RESOLVE_MAX_HITS = 10;
/** Budget of the serialized search `matches` array (the first match is always kept). */
export const MATCHES_MAX_BYTES = 12 * 1024;
/** Budget of the serialized resolve `alternatives` array. */
export const ALTERNATIVES_MAX_BYTES = 6 * 1024;
/** Per-match description clip, in UTF-8 bytes. */
export const DESCRIPTION_MAX_BYTES = 256;
/** Per-match server description clip, in UTF-8 bytes. */
export const SERVER_DESCRIPTION_MAX_BYTES = 256;
/** Per-match title clip, in UTF-8 bytes. */
export const TITLE_MAX_BYTES = 160;
/** Most use_when hints per match (tool hints first, then server hints), each clipped to 256 bytes. */
export const USE_WHEN_MAX_HINTS = 8;
/** Per-hint clip, in UTF-8 bytes. */
export const USE_WHEN_MAX_BYTES = 256;
/** Most tags per match. */
export const TAGS_MAX = 16;
/** Per-tag clip, in UTF-8 bytes. */
export const TAG_MAX_BYTES = 64;

/** Arguments of search_tools and resolve_tool. */
export interface QueryArguments {
  query: string;
  max_hits?: number | null;
}

/** What the gateway adds to every answer. */
export interface ResponseContext {
  contractVersion: string;
  catalogRevision: string;
}

/** One search match (or resolve alternative). */
export interface Match {
  namespaced: string;
  server: string;
  /** The public short tool name (the part after `server__`); call_tool accepts it with `server`. */
  tool: string;
  title?: string;
  description: string;
  server_description?: string;
  tags?: string[];
  use_when?: string[];
  score: number;
  matched_terms: string[];
  metadata_truncated?: true;
}

/** The search_tools result. */
export interface SearchResponse {
  contract_version: string;
  catalog_revision: string;
  query: string;
  count: number;
  returned: number;
  truncated: boolean;
  byte_limited: boolean;
  matches: Match[];
}

/** The resolve_tool recommendation. */
export interface Recommendation {
  server: string;
  tool: string;
  namespaced: string;
  title: string | null;
  description: string;
  server_description: string | null;
  use_when: string[];
  score: number;
  matched_terms: string[];
  required_fields: string[];
  argument_template: Record<string, string | null>;
  argument_template_truncated: boolean;
  metadata_truncated?: true;
}

/** The resolve_tool result. */
export interface ResolveResponse {
  contract_version: string;
  catalog_revision: string;
  status: RouteStatus;
  confidence: Confidence;
  reason_codes: ReasonCode[];
  matched_fraction: number;
  score_gap: number;
  query: string;
  recommendation: Recommendation | null;
  alternatives: Match[];
  alternatives_truncated: boolean;
  hint: string;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Byte length of a string in UTF-8. */
export function utf8Length(text: string): number {
  return encoder.encode(text).length;
}

/**
 * Clips text to at most `maxBytes` UTF-8 bytes on a character boundary,
 * ending in `…` when cut. Whitespace runs collapse to one space first.
 */
export function clipText(text: string, maxBytes: number): { text: string; clipped: boolean } {
  const compact = text.replace(/\s+/g, " ").trim();
  const bytes = encoder.encode(compact);
  if (bytes.length <= maxBytes) return { text: compact, clipped: false };
  let end = Math.max(0, maxBytes - 3);
  // Step back over UTF-8 continuation bytes (10xxxxxx) to a character start.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return { text: `${decoder.decode(bytes.subarray(0, end)).trimEnd()}…`, clipped: true };
}

function checkQuery(query: unknown): string {
  if (typeof query !== "string") throw new TypeError("Query must be a string");
  const size = utf8Length(query);
  if (size > MAX_QUERY_BYTES) {
    throw new RangeError(`Query is ${size} bytes; the limit is ${MAX_QUERY_BYTES} bytes: shorten it`);
  }
  return query;
}

/** search_tools `max_hits`: default 20, integers above 100 clamp to 100, anything below 1 is an error. */
export function searchMaxHits(value: unknown): number {
  if (value === undefined || value === null) return SEARCH_DEFAULT_HITS;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1) {
    throw new RangeError(
      `max_hits must be an integer of at least 1 (values above ${SEARCH_MAX_HITS} are capped); got ${
        JSON.stringify(value)
      }`,
    );
  }
  return Math.min(value, SEARCH_MAX_HITS);
}

/** resolve_tool `max_hits`: default 5, an integer from 1 to 10. */
export function resolveMaxHits(value: unknown): number {
  if (value === undefined || value === null) return RESOLVE_DEFAULT_HITS;
  if (
    typeof value !== "number" || !Number.isInteger(value) || value < RESOLVE_MIN_HITS ||
    value > RESOLVE_MAX_HITS
  ) {
    throw new RangeError(
      `max_hits must be an integer from ${RESOLVE_MIN_HITS} to ${RESOLVE_MAX_HITS}; got ${
        JSON.stringify(value)
      }`,
    );
  }
  return value;
}

function roundScore(score: number): number {
  return Math.round(score * 10000) / 10000;
}

function hintsOf(tool: CatalogTool): { hints: string[]; clipped: boolean } {
  const all = [...tool.toolUseWhen, ...tool.useWhen];
  let clipped = all.length > USE_WHEN_MAX_HINTS;
  const hints = all.slice(0, USE_WHEN_MAX_HINTS).map((h) => {
    const c = clipText(h, USE_WHEN_MAX_BYTES);
    clipped ||= c.clipped;
    return c.text;
  });
  return { hints, clipped };
}

function toMatch(tool: CatalogTool, score: number, matchedTerms: string[]): Match {
  const description = clipText(tool.description, DESCRIPTION_MAX_BYTES);
  const title = tool.title ? clipText(tool.title, TITLE_MAX_BYTES) : undefined;
  const serverDescription = tool.serverDescription
    ? clipText(tool.serverDescription, SERVER_DESCRIPTION_MAX_BYTES)
    : undefined;
  const tags = tool.tags.slice(0, TAGS_MAX).map((tag) => clipText(tag, TAG_MAX_BYTES));
  const hints = hintsOf(tool);
  const clipped = description.clipped || !!title?.clipped || !!serverDescription?.clipped || hints.clipped ||
    tool.tags.length > TAGS_MAX || tags.some((t) => t.clipped);
  // Key order is the contract's; optional keys are left out rather than sent empty.
  return {
    namespaced: tool.namespaced,
    server: tool.server,
    tool: tool.short,
    ...(title ? { title: title.text } : {}),
    description: description.text,
    ...(serverDescription ? { server_description: serverDescription.text } : {}),
    ...(tags.length > 0 ? { tags: tags.map((t) => t.text) } : {}),
    ...(hints.hints.length > 0 ? { use_when: hints.hints } : {}),
    score: roundScore(score),
    matched_terms: matchedTerms,
    ...(clipped ? { metadata_truncated: true as const } : {}),
  };
}

/** Keeps a prefix of items whose JSON array fits `maxBytes`; `keepFirst` keeps item 0 regardless. */
function fitBytes<T>(items: T[], maxBytes: number, keepFirst: boolean): { kept: T[]; cut: boolean } {
  let size = 2; // []
  const kept: T[] = [];
  for (const item of items) {
    const add = utf8Length(JSON.stringify(item)) + (kept.length > 0 ? 1 : 0);
    if (size + add > maxBytes && !(keepFirst && kept.length === 0)) return { kept, cut: true };
    size += add;
    kept.push(item);
  }
  return { kept, cut: false };
}

/**
 * The search_tools result. An empty (or blank) query lists the catalog by
 * public name with `count` = every tool.
 * @throws {TypeError} when query is not a string
 * @throws {RangeError} when the query exceeds {@link MAX_QUERY_BYTES} or max_hits is below 1 or not an integer
 */
export function searchResponse(
  index: ResolverIndex,
  args: QueryArguments,
  context: ResponseContext,
): SearchResponse {
  const query = checkQuery(args.query);
  const maxHits = searchMaxHits(args.max_hits);
  let count: number;
  let matches: Match[];
  if (query.trim() === "") {
    count = index.tools.length;
    matches = index.byName.slice(0, maxHits).map((i) => toMatch(index.tools[i]!, 0, []));
  } else {
    const ranked = rankQuery(index, query, { maxHits });
    count = ranked.count;
    matches = ranked.hits.map((h) => toMatch(h.tool, h.score, h.matchedTerms));
  }
  const { kept, cut } = fitBytes(matches, MATCHES_MAX_BYTES, true);
  return {
    contract_version: context.contractVersion,
    catalog_revision: context.catalogRevision,
    query,
    count,
    returned: kept.length,
    truncated: kept.length < count,
    byte_limited: cut,
    matches: kept,
  };
}

function toRecommendation(hit: SearchHit): Recommendation {
  const { tool } = hit;
  const description = clipText(tool.description, DESCRIPTION_MAX_BYTES);
  const title = tool.title ? clipText(tool.title, TITLE_MAX_BYTES) : undefined;
  const serverDescription = tool.serverDescription
    ? clipText(tool.serverDescription, SERVER_DESCRIPTION_MAX_BYTES)
    : undefined;
  const hints = hintsOf(tool);
  const template = argumentTemplate(tool.definition.inputSchema);
  const rec: Recommendation = {
    server: tool.server,
    tool: tool.short,
    namespaced: tool.namespaced,
    title: title?.text ?? null,
    description: description.text,
    server_description: serverDescription?.text ?? null,
    use_when: hints.hints,
    score: roundScore(hit.score),
    matched_terms: hit.matchedTerms,
    ...template,
  };
  if (description.clipped || title?.clipped || serverDescription?.clipped || hints.clipped) {
    rec.metadata_truncated = true;
  }
  return rec;
}

/**
 * The resolve_tool result: the best tool with its argument template, ranked
 * alternatives (up to `max_hits` - 1, bounded by {@link ALTERNATIVES_MAX_BYTES})
 * and the route assessment. A no_match carries no recommendation and no
 * alternatives. `alternatives_truncated` is true when more tools matched than
 * are listed (count bound) or the byte budget cut the list.
 * @throws {TypeError} when query is not a string
 * @throws {RangeError} when the query exceeds {@link MAX_QUERY_BYTES} or max_hits is outside 1..10
 */
export function resolveResponse(
  index: ResolverIndex,
  args: QueryArguments,
  context: ResponseContext,
): ResolveResponse {
  const query = checkQuery(args.query);
  const maxHits = resolveMaxHits(args.max_hits);
  const ranked = rankQuery(index, query, { maxHits });
  const route = assess(ranked);
  const found = route.status !== "no_match";
  const rest = found ? ranked.hits.slice(1).map((h) => toMatch(h.tool, h.score, h.matchedTerms)) : [];
  const { kept, cut } = fitBytes(rest, ALTERNATIVES_MAX_BYTES, false);
  return {
    contract_version: context.contractVersion,
    catalog_revision: context.catalogRevision,
    status: route.status,
    confidence: route.confidence,
    reason_codes: route.reasonCodes,
    matched_fraction: route.matchedFraction,
    score_gap: route.scoreGap,
    query,
    recommendation: found ? toRecommendation(ranked.hits[0]!) : null,
    alternatives: kept,
    alternatives_truncated: cut || (found && kept.length < ranked.count - 1),
    hint: route.hint,
  };
}
