/**
 * The resolver: tokenize, index, rank, assess routes, build argument
 * templates and the search_tools / resolve_tool results. Pure functions, no
 * I/O; build an index once per catalog with {@link buildIndex}.
 *
 * @example
 * ```ts
 * import { buildIndex, catalogRevision, resolveResponse } from "./mod.ts";
 * const index = buildIndex(tools);
 * const answer = resolveResponse(index, { query: "read a text file" }, {
 *   contractVersion: "1",
 *   catalogRevision: catalogRevision(tools),
 * });
 * ```
 *
 * @module
 */
export {
  fold,
  isStopWord,
  MAX_INDEXED_CHARS,
  MAX_PART_CHARS,
  splitWords,
  stem,
  STOP_WORDS,
  tokenize,
  type Word,
} from "./tokenize.ts";
export { EQUIVALENT_WEIGHT, type Synonym, SYNONYM_WEIGHT, synonymsOf } from "./synonyms.ts";
export {
  MAX_CLAUSES,
  MAX_QUERY_TERMS,
  MODIFIER_WEIGHT,
  type ParsedQuery,
  parseQuery,
  type QueryTerm,
  QUOTED_WEIGHT,
  splitClauses,
} from "./query.ts";
export {
  BUILD_SLICE_MS,
  buildIndex,
  buildIndexAsync,
  DEFAULT_B,
  DEFAULT_WEIGHTS,
  type Field,
  FIELDS,
  leadSentence,
  type RankingOptions,
  type ResolvedRanking,
  type ResolverIndex,
} from "./search_index.ts";
export { type FieldWeight, type Postings } from "./bm25f.ts";
export { type CompanionTerms, MAX_COMPANIONS } from "./companions.ts";
export {
  LARGE_CATALOG,
  ONE_WORD_FACTOR,
  type RankedQuery,
  rankQuery,
  search,
  type SearchHit,
  type SearchOptions,
} from "./rank.ts";
export {
  assess,
  ASSESS_THRESHOLDS,
  type Confidence,
  HINTS,
  type ReasonCode,
  type RouteAssessment,
  type RouteStatus,
} from "./assess.ts";
export {
  type ArgumentTemplate,
  argumentTemplate,
  REQUIRED_PLACEHOLDER,
  TEMPLATE_MAX_FIELDS,
  TEMPLATE_MAX_NAME_BYTES,
} from "./template.ts";
export { canonicalJson, catalogRevision, catalogRevisionAsync, REVISION_LENGTH } from "./revision.ts";
export {
  ALTERNATIVES_MAX_BYTES,
  clipText,
  DESCRIPTION_MAX_BYTES,
  type Match,
  MATCHES_MAX_BYTES,
  MAX_QUERY_BYTES,
  type QueryArguments,
  type Recommendation,
  REQUIRED_ARGUMENTS_MAX,
  RESOLVE_DEFAULT_HITS,
  RESOLVE_MAX_HITS,
  RESOLVE_MIN_HITS,
  resolveMaxHits,
  type ResolveResponse,
  resolveResponse,
  type ResponseContext,
  SEARCH_DEFAULT_HITS,
  SEARCH_MAX_HITS,
  searchMaxHits,
  type SearchResponse,
  searchResponse,
  type SearchShape,
  SERVER_DESCRIPTION_MAX_BYTES,
  type ServerInfo,
  summaryOf,
  TAG_MAX_BYTES,
  TAGS_MAX,
  TITLE_MAX_BYTES,
  USE_WHEN_MAX_BYTES,
  USE_WHEN_MAX_HINTS,
  utf8Length,
} from "./response.ts";
