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
/** Per-match description clip, in UTF-8 bytes (a search match carries the description's first sentence). */
export const DESCRIPTION_MAX_BYTES = 256;
/** Most required argument names a search match lists (describe_tool gives the full schema). */
export const REQUIRED_ARGUMENTS_MAX = 16;
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
  /** search_tools only: the `next_page_token` of the previous page of the same query. */
  page_token?: string | null;
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
  /** The tool's required input fields, in schema order (at most {@link REQUIRED_ARGUMENTS_MAX}). */
  required_arguments: string[];
  score: number;
  matched_terms: string[];
  metadata_truncated?: true;
}

/** What a search match's server says of itself, given once per server when that is shorter. */
export interface ServerInfo {
  description?: string;
  tags?: string[];
  use_when?: string[];
}

/**
 * Which of the three shapes a search answer is: every matching tool (`everything`), one page of
 * more (`page`, with `next_page_token`), or fewer than the page asked for because the byte budget
 * left the rest out (`page` too, `byte_limited` true: the token reads on from the first one left out).
 */
export type SearchShape = "everything" | "page";

/** The search_tools result. */
export interface SearchResponse {
  contract_version: string;
  catalog_revision: string;
  query: string;
  count: number;
  returned: number;
  truncated: boolean;
  byte_limited: boolean;
  shape: SearchShape;
  /** How many matching tools came before this page (0 on the first page). */
  offset: number;
  /** Pass back as `page_token` with the same query for the next page; null when nothing is left. */
  next_page_token: string | null;
  /** What this answer is and the next step, in one sentence. */
  next: string;
  matches: Match[];
  /**
   * Present when the matches' servers are described once here rather than in every match (the
   * shorter of the two): the server's description, tags and use_when hints, by server name.
   */
  servers?: Record<string, ServerInfo>;
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

/**
 * The first sentence of a description (of its first paragraph when that is shorter): what an agent
 * needs to choose between tools; describe_tool gives the rest.
 */
export function summaryOf(description: string): string {
  const text = description.trim();
  const line = text.split(/\n\s*\n/, 1)[0]!.replace(/\s+/g, " ").trim();
  // A sentence ends at . ! or ? followed by a space and a capital, digit, quote or bracket (not "e.g. x").
  const end = /[.!?](?=\s+["'`(\[]?[\p{Lu}\p{N}])/u.exec(line);
  if (!end || end.index < 15) return line;
  const lead = line.slice(0, end.index + 1);
  // A later sentence that says the tool is deprecated or replaced is part of choosing it.
  const warning = /[^.!?]*\b(?:deprecated|obsolete|superseded|do not use|use \S+ instead)\b[^.!?]*[.!?]?/i
    .exec(
      text.slice(lead.length),
    );
  return warning ? `${lead} ${warning[0].replace(/\s+/g, " ").trim()}` : lead;
}

function toMatch(tool: CatalogTool, score: number, matchedTerms: string[], summary = false): Match {
  const full = tool.description.replace(/\s+/g, " ").trim();
  const lead = summary ? summaryOf(tool.description) : full;
  const description = clipText(lead, DESCRIPTION_MAX_BYTES);
  const title = tool.title ? clipText(tool.title, TITLE_MAX_BYTES) : undefined;
  const serverDescription = tool.serverDescription
    ? clipText(tool.serverDescription, SERVER_DESCRIPTION_MAX_BYTES)
    : undefined;
  const tags = tool.tags.slice(0, TAGS_MAX).map((tag) => clipText(tag, TAG_MAX_BYTES));
  const hints = hintsOf(tool);
  const required = [...new Set(tool.required)];
  const clipped = description.clipped || lead.length < full.length || !!title?.clipped ||
    !!serverDescription?.clipped || hints.clipped || tool.tags.length > TAGS_MAX ||
    tags.some((t) => t.clipped) ||
    required.length > REQUIRED_ARGUMENTS_MAX;
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
    required_arguments: required.slice(0, REQUIRED_ARGUMENTS_MAX).map((r) => clipText(r, TAG_MAX_BYTES).text),
    score: roundScore(score),
    matched_terms: matchedTerms,
    ...(clipped ? { metadata_truncated: true as const } : {}),
  };
}

/**
 * A match with its server's description, tags and use_when hints taken out (they go to the answer's
 * `servers`, once per server); the tool's own use_when hints stay.
 */
function withoutServer(tool: CatalogTool, match: Match): { match: Match; info: ServerInfo } {
  const { server_description, tags, use_when, ...rest } = match;
  const own = use_when?.slice(0, Math.min(tool.toolUseWhen.length, use_when.length)) ?? [];
  const serverHints = use_when?.slice(own.length) ?? [];
  const info: ServerInfo = {
    ...(server_description ? { description: server_description } : {}),
    ...(tags ? { tags } : {}),
    ...(serverHints.length ? { use_when: serverHints } : {}),
  };
  const ordered: Match = {
    namespaced: rest.namespaced,
    server: rest.server,
    tool: rest.tool,
    ...(rest.title !== undefined ? { title: rest.title } : {}),
    description: rest.description,
    ...(own.length ? { use_when: own } : {}),
    required_arguments: rest.required_arguments,
    score: rest.score,
    matched_terms: rest.matched_terms,
    ...(rest.metadata_truncated ? { metadata_truncated: true as const } : {}),
  };
  return { match: ordered, info };
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

const PAGE_TOKEN_PREFIX = "p1.";

/** A short hash of a query, so a page token is not read against another query. */
function queryHash(query: string): string {
  let h = 0x811c9dc5;
  for (const byte of encoder.encode(query.trim())) h = Math.imul(h ^ byte, 0x01000193) >>> 0;
  return h.toString(36);
}

/** The opaque token of the page that starts at `offset`. */
function pageToken(revision: string, query: string, offset: number): string {
  return `${PAGE_TOKEN_PREFIX}${offset.toString(36)}.${queryHash(query)}.${revision}`;
}

/** The offset a page token starts at; a token of another query or catalog is an error saying what to do. */
function pageOffset(token: unknown, revision: string, query: string): number {
  if (token === undefined || token === null || token === "") return 0;
  const bad = () =>
    new RangeError(
      "page_token is not a next_page_token of this query: pass back the token as it was given, with the same query",
    );
  if (typeof token !== "string" || !token.startsWith(PAGE_TOKEN_PREFIX)) throw bad();
  const [offset, hash, ...rest] = token.slice(PAGE_TOKEN_PREFIX.length).split(".");
  const value = Number.parseInt(offset ?? "", 36);
  if (!Number.isSafeInteger(value) || value < 0 || hash !== queryHash(query)) throw bad();
  if (rest.join(".") !== revision) {
    throw new RangeError(
      "page_token is of an earlier catalog (tools were added, removed or changed since): search again without it",
    );
  }
  return value;
}

/** The byte size of a JSON array of `items` and an object of `servers`. */
function jsonSize(items: readonly unknown[], servers?: Record<string, unknown>): number {
  return utf8Length(JSON.stringify(items)) + (servers ? utf8Length(JSON.stringify(servers)) : 0);
}

/**
 * The page's matches within {@link MATCHES_MAX_BYTES}, each server's description either in every
 * match or once in `servers`, whichever keeps more matches (then fewer bytes).
 */
function fitPage(
  page: { tool: CatalogTool; match: Match }[],
): { kept: Match[]; servers?: Record<string, ServerInfo>; cut: boolean } {
  const flat = fitBytes(page.map((p) => p.match), MATCHES_MAX_BYTES, true);
  const servers: Record<string, ServerInfo> = {};
  const grouped: Match[] = [];
  let size = 2 + 2; // [] and {}
  let cut = false;
  for (const { tool, match } of page) {
    const { match: lean, info } = withoutServer(tool, match);
    const isNew = !Object.hasOwn(servers, tool.server) && Object.keys(info).length > 0;
    let add = utf8Length(JSON.stringify(lean)) + (grouped.length > 0 ? 1 : 0);
    if (isNew) {
      add += utf8Length(JSON.stringify(tool.server)) + 1 + utf8Length(JSON.stringify(info)) +
        (Object.keys(servers).length > 0 ? 1 : 0);
    }
    if (size + add > MATCHES_MAX_BYTES && grouped.length > 0) {
      cut = true;
      break;
    }
    size += add;
    grouped.push(lean);
    if (isNew) servers[tool.server] = info;
  }
  const hasServers = Object.keys(servers).length > 0;
  const groupedWins = hasServers && (grouped.length > flat.kept.length ||
    (grouped.length === flat.kept.length && jsonSize(grouped, servers) < jsonSize(flat.kept)));
  return groupedWins ? { kept: grouped, servers, cut } : flat;
}

/**
 * The search_tools result: one page of the ranked matches, each with its description's first
 * sentence and its required arguments, within {@link MATCHES_MAX_BYTES}. An empty (or blank) query
 * lists the catalog by public name with `count` = every tool. `shape` says whether this is every
 * matching tool or one page of more (`next_page_token` reads on; `byte_limited` when the byte budget
 * left matches of this page out), and `next` says what to do next.
 * @throws {TypeError} when query is not a string
 * @throws {RangeError} when the query exceeds {@link MAX_QUERY_BYTES}, max_hits is below 1 or not
 * an integer, or page_token is not one of this query and catalog
 */
export function searchResponse(
  index: ResolverIndex,
  args: QueryArguments,
  context: ResponseContext,
): SearchResponse {
  const query = checkQuery(args.query);
  const maxHits = searchMaxHits(args.max_hits);
  const offset = pageOffset(args.page_token, context.catalogRevision, query);
  let count: number;
  let page: { tool: CatalogTool; match: Match }[];
  if (query.trim() === "") {
    count = index.tools.length;
    page = index.byName.slice(offset, offset + maxHits).map((i) => {
      const tool = index.tools[i]!;
      return { tool, match: toMatch(tool, 0, [], true) };
    });
  } else {
    const ranked = rankQuery(index, query, { maxHits: offset + maxHits });
    count = ranked.count;
    page = ranked.hits.slice(offset).map((h) => ({
      tool: h.tool,
      match: toMatch(h.tool, h.score, h.matchedTerms, true),
    }));
  }
  const { kept, servers, cut } = fitPage(page);
  const end = offset + kept.length;
  const more = end < count;
  return {
    contract_version: context.contractVersion,
    catalog_revision: context.catalogRevision,
    query,
    count,
    returned: kept.length,
    truncated: more,
    byte_limited: cut,
    shape: more ? "page" : "everything",
    offset,
    next_page_token: more ? pageToken(context.catalogRevision, query, end) : null,
    next: nextStep(count, offset, kept.length, cut, more),
    matches: kept,
    ...(servers ? { servers } : {}),
  };
}

function nextStep(count: number, offset: number, returned: number, cut: boolean, more: boolean): string {
  const call = "call_tool with server, tool and the required_arguments; describe_tool for a tool's full " +
    "description and input schema";
  if (count === 0) return "No tool matched: try other words, or an empty query to list every tool.";
  const shown = offset === 0 ? `${returned} of ${count}` : `${offset + 1}-${offset + returned} of ${count}`;
  if (!more) {
    return `${
      offset === 0 ? `All ${count} matching tools` : `The last matching tools (${shown})`
    } listed: ${call}.`;
  }
  const why = cut ? ", the rest of this page left out to stay within 12 KiB" : "";
  return `Tools ${shown} listed, best first${why}: ${call}; for more, pass next_page_token as ` +
    "page_token with the same query, or narrow the query.";
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
  const rest = found ? ranked.hits.slice(1).map((h) => toMatch(h.tool, h.score, h.matchedTerms, true)) : [];
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
