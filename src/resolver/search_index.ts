/**
 * Field-weighted BM25 (BM25F) index over the catalog, built once per
 * catalog. Per-posting impacts are precomputed at build time, so a query is a
 * sum over the postings of its terms (see `rank.ts`).
 *
 * @module
 */
import { addCounts, bm25fSteps, type FieldWeight, type Postings, termCounts } from "./bm25f.ts";
import { type CatalogTool, drain, sortSteps, STEP } from "../catalog/mod.ts";
import { companionSteps } from "./companions.ts";
import { bounded, stem as stemOf, STOP_WORDS, tokenize } from "./tokenize.ts";
import { glossChinese, hasChinese, senseIn } from "./zh_gloss.ts";
import {
  ACTION,
  ANY_ACTION,
  DEPRECATED,
  EXISTING,
  isActionStem,
  isGenericVerb,
  toolActions,
} from "./actions.ts";
import { isEnglishWord } from "./lexicon.ts";

/** The fields a tool is ranked on. */
export const FIELDS = [
  "name",
  "title",
  "toolHints",
  "serverHints",
  "summary",
  "description",
  "inputs",
  "inputDescriptions",
  "serverName",
  "serverDescription",
  "tags",
] as const;

/** Fields whose text is the server's, the same for each of its tools. */
const SERVER_LEVEL: ReadonlySet<Field> = new Set(["serverHints", "serverName", "serverDescription", "tags"]);

/** The term counts of an empty field (shared; never written). */
const NO_TERMS: Map<string, number> = new Map();

/** One ranked field. */
export type Field = typeof FIELDS[number];

/** Ranking parameters; every field has a default tuned on the LiveMCPBench dev half. */
export interface RankingOptions {
  /** BM25 term-frequency saturation. @default 1.2 */
  k1?: number;
  /** Per-field weight. */
  weights?: Partial<Record<Field, number>>;
  /** Per-field length normalization (0 = none, 1 = full). */
  b?: Partial<Record<Field, number>>;
  /**
   * Multiplier bonus for a tool whose name words are in the query, scaled by
   * the square of their IDF-weighted coverage.
   * @default 1.2
   */
  nameBonus?: number;
  /** Multiplier bonus when the query is exactly the tool's name or title. @default 1 */
  phraseBonus?: number;
  /** Candidates reranked with the name bonuses. @default 100 */
  pool?: number;
  /**
   * Weight of the per-clause rankings fused into a multi-step query's ranking
   * ("find X, then save it to Y"): each clause's best tools are lifted so the
   * top hits cover every step. 0 ranks the query as one bag of words.
   * @default 1
   */
  clauseWeight?: number;
  /**
   * Weight of the server's own relevance (the server as one document of its
   * description, hints and tool names), added to each of its tools' relative score.
   * @default 0.3
   */
  serverWeight?: number;
  /**
   * Share of a top hit's score given to its prerequisite siblings (see
   * {@link ResolverIndex.companions}), so "find parking near X" also surfaces
   * the geocoder that turns X into coordinates. 0 = off.
   * @default 0.85
   */
  companionWeight?: number;
  /**
   * Weight of a two-word phrase of the query found as adjacent words in a tool's name, title or lead
   * sentence ("word cloud", "market cap"), times the phrase's IDF (0 = off).
   * @default 1
   */
  phraseWeight?: number;
  /**
   * Multiplier bonus for a tool that performs the action the request asks for (`actions.ts`), times the
   * share of the request's actions it performs. @default 0.3
   */
  actionBonus?: number;
  /** Score reduction of a tool that performs only other actions than the request asks for. @default 0.3 */
  actionPenalty?: number;
  /** Score reduction of a tool whose description says it is deprecated or replaced. @default 0.5 */
  deprecatedPenalty?: number;
  /** Score reduction of a tool whose short name repeats a higher-ranked tool's (0 = none). @default 0.5 */
  duplicatePenalty?: number;
  /**
   * For a multi-step query, the first places reserved for each clause's best tool (0 = off), so one
   * step's server cannot fill the whole top of the list.
   * @default 5
   */
  clauseDiversity?: number;
  /**
   * Share of the best score within which the request's action orders the best tool's siblings (its server's
   * tools): those doing another action than asked move behind those doing it (0 = off). 0.5 cost the second
   * and third held-out sets 0.011 and 0.014 nDCG@5.
   * @default 0.7
   */
  actionBand?: number;
}

/** Default field weights: names, titles and hints outweigh long descriptions. */
export const DEFAULT_WEIGHTS: Readonly<Record<Field, number>> = {
  name: 3,
  title: 2.5,
  toolHints: 2.5,
  serverHints: 1.5,
  summary: 1,
  description: 1,
  // A parameter's name says what the tool works on ("ticker", "city", "url") as plainly as a description
  // word does (0.5 before issue #42's second pass; 0.75, 1 and 1.5 measured alike on the tuning half).
  inputs: 1,
  inputDescriptions: 0.6,
  serverName: 1,
  serverDescription: 0.5,
  tags: 1,
};

/** Default per-field length normalization. */
export const DEFAULT_B: Readonly<Record<Field, number>> = {
  name: 0.3,
  title: 0.3,
  toolHints: 0.5,
  serverHints: 0.5,
  summary: 0.5,
  description: 0.75,
  inputs: 0.5,
  inputDescriptions: 0.75,
  serverName: 0.2,
  serverDescription: 0.75,
  tags: 0.3,
};

/** Fields whose match is evidence of intent rather than an incidental word. */
const STRONG_FIELDS: ReadonlySet<Field> = new Set([
  "name",
  "title",
  "toolHints",
  "serverHints",
  "tags",
  "serverName",
]);

/** Fields that describe this tool in particular (not its server). */
const TOOL_FIELDS: ReadonlySet<Field> = new Set(["name", "title", "toolHints"]);

/** A word naming a server (see {@link ResolverIndex.serverWords}). */
export interface ServerWord {
  server: number;
  /** Words that follow it in the server's name, all to be typed after it. */
  rest: readonly string[];
  /**
   * A word of the server's description (what it is: "CRM", "Confluence"), not its name: it names the server
   * only after a determiner or preposition ("in our CRM", "on confluence").
   */
  described?: boolean;
}

/** The tools with one adjacent word pair, and the pair's IDF. */
export interface PairPostings {
  idf: number;
  /** Ascending document numbers. */
  docs: Int32Array;
}

/** Ranking parameters with every default filled in. */
export interface ResolvedRanking {
  k1: number;
  weights: Record<Field, number>;
  b: Record<Field, number>;
  nameBonus: number;
  phraseBonus: number;
  pool: number;
  clauseWeight: number;
  serverWeight: number;
  duplicatePenalty: number;
  companionWeight: number;
  clauseDiversity: number;
  actionBand: number;
  phraseWeight: number;
  actionBonus: number;
  actionPenalty: number;
  deprecatedPenalty: number;
}

/** A built index. Treat as opaque; build with {@link buildIndex}. */
export interface ResolverIndex {
  /** The indexed tools, in catalog order. */
  readonly tools: readonly CatalogTool[];
  /** Indexes of {@link tools} sorted by public name, for an empty-query listing. */
  readonly byName: readonly number[];
  readonly postings: ReadonlyMap<string, Postings>;
  /** Distinct index terms of each tool (with their field-weighted frequency). */
  readonly docTerms: readonly ReadonlyMap<string, number>[];
  /** Terms of the name, title, use_when hints, tags and server name of each tool. */
  readonly strongTerms: readonly ReadonlySet<string>[];
  /** Terms of the name, title and tool use_when hints of each tool. */
  readonly toolTerms: readonly ReadonlySet<string>[];
  /** Distinct name terms of each tool (without compounds). */
  readonly nameTerms: readonly (readonly string[])[];
  /** Name and title as space-joined stems, for the exact-phrase bonus. */
  readonly phrases: readonly (readonly string[])[];
  /**
   * Prerequisite siblings of each tool: tools of the same server that its
   * description or schema names, or that provide an opaque identifier or
   * coordinate it requires (a `station_code`, `latitude`, `ticker`).
   */
  readonly companions: readonly (readonly number[])[];
  /** Server names, in first-seen order. */
  readonly servers: readonly string[];
  /** Index into {@link servers} of each tool. */
  readonly serverOf: Int32Array;
  /** BM25F postings over servers as documents (name, description, tags, use_when, tool names and leads). */
  readonly serverPostings: ReadonlyMap<string, Postings>;
  /**
   * Words that name a server in a request: the first word of its name (`google` of `google-calendar`) with
   * the words that must follow it (`calendar`), for a one-word name that is an English word only when the
   * catalog uses it mostly for that server (`plane`, not `time`); and a word of a longer name that is no
   * English word and that the catalog uses mostly for that server (`arxiv` of `mcp-simple-arxiv`), alone;
   * and a product its tools are named after (`jira` of `read_jira_issue`, `search_jira_issues`…), alone.
   */
  readonly serverWords: ReadonlyMap<string, readonly ServerWord[]>;
  /** Two-word phrases (`"word cloud"`) of each tool's name, title and lead sentence: the tools that have them. */
  readonly pairs: ReadonlyMap<string, PairPostings>;
  /**
   * The actions each tool performs (`actions.ts` masks), from its name, title and lead sentence; every action
   * for a tool with use_when hints of its own (the operator's words say when to use it).
   */
  readonly actions: Uint16Array;
  /**
   * 1 for a tool that lists on a server with no tool that searches: listing with a filter is how that server
   * searches, so a request to find things does not count against it.
   */
  readonly listSearches: Uint8Array;
  /** 1 for a tool whose description says it is deprecated or replaced. */
  readonly deprecated: Uint8Array;
  /** 1 for a tool whose lead sentence says it works on existing things ("Add observations to existing entities"). */
  readonly existing: Uint8Array;
  readonly options: Readonly<ResolvedRanking>;
}

function resolve(options: RankingOptions): ResolvedRanking {
  return {
    k1: options.k1 ?? 1.2,
    weights: { ...DEFAULT_WEIGHTS, ...options.weights },
    b: { ...DEFAULT_B, ...options.b },
    nameBonus: options.nameBonus ?? 1.2,
    phraseBonus: options.phraseBonus ?? 1,
    pool: options.pool ?? 100,
    clauseWeight: options.clauseWeight ?? 1,
    serverWeight: options.serverWeight ?? 0.3,
    duplicatePenalty: options.duplicatePenalty ?? 0.5,
    companionWeight: options.companionWeight ?? 0.85,
    clauseDiversity: options.clauseDiversity ?? 5,
    actionBand: options.actionBand ?? 0.7,
    phraseWeight: options.phraseWeight ?? 1,
    actionBonus: options.actionBonus ?? 0.3,
    actionPenalty: options.actionPenalty ?? 0.3,
    deprecatedPenalty: options.deprecatedPenalty ?? 0.5,
  };
}

function unique(list: readonly string[]): string[] {
  return [...new Set(list)];
}

function nameText(tool: CatalogTool): string {
  return tool.short === tool.tool ? tool.short : `${tool.short} ${tool.tool}`;
}

/** The first sentence (or line) of a description: where tools state their purpose. */
export function leadSentence(description: string): string {
  const text = bounded(description).trim();
  const end = text.search(/[.!?。！？](?:\s|$)|\n/);
  const lead = end >= 0 ? text.slice(0, end + 1) : text;
  return lead.length > 300 ? lead.slice(0, 300) : lead;
}

/** Descriptions of the top-level input properties, bounded. */
function inputDescriptions(tool: CatalogTool): string {
  const props = tool.definition.inputSchema?.properties;
  if (!props || typeof props !== "object") return "";
  const out: string[] = [];
  let size = 0;
  for (const value of Object.values(props).slice(0, 48)) {
    const d = (value as { description?: unknown } | null)?.description;
    if (typeof d !== "string") continue;
    out.push(d.slice(0, 200));
    size += Math.min(d.length, 200);
    if (size > 2000) break;
  }
  return out.join("\n");
}

/** Fields a tool's Chinese text is glossed in: its own text, not its server's. */
const GLOSSED: ReadonlySet<Field> = new Set(["title", "summary", "description", "inputDescriptions"]);

/** Fields whose words are the catalog's vocabulary, which a gloss's sense is chosen in. */
const VOCABULARY: ReadonlySet<Field> = new Set(["name", "title", "description", "inputDescriptions"]);

/**
 * Appends the English glosses of the tools' Chinese text to their term counts, so an English request meets a
 * tool described in Chinese (`获取当前日期` -> "get the present time date"). A word's gloss is its first
 * sense whose words the catalog's own text uses, so it speaks the catalog's vocabulary (`获取` "get", not
 * "gain", in a catalog of `get_` tools; `频道` "channel", not "frequency", beside Slack's tools). Only the
 * tool's own fields are glossed: glossing the server's description too lifted every tool of a Chinese
 * server alike (LiveMCPBench held-out half −0.010 R@5). The glosses are of the part that is indexed
 * ({@link bounded}). A catalog without Chinese text costs nothing here.
 */
function* glossSteps(
  docFields: Map<string, number>[][],
  pending: readonly { doc: number; field: number; text: string }[],
): Generator<void, void> {
  if (pending.length === 0) return;
  const vocabulary = new Set<string>();
  for (let d = 0; d < docFields.length; d++) {
    if (d % 256 === 255) yield;
    docFields[d]!.forEach((counts, f) => {
      if (VOCABULARY.has(FIELDS[f]!)) { for (const term of counts.keys()) vocabulary.add(term); }
    });
  }
  const known = senseIn((t) => vocabulary.has(t));
  for (let i = 0; i < pending.length; i++) {
    if (i % 64 === 63) yield;
    const { doc, field, text } = pending[i]!;
    const gloss = glossChinese(bounded(text), known);
    // A glossed field's counts are the tool's own (never a shared server-level map).
    if (gloss) addCounts(docFields[doc]![field]!, gloss);
  }
}

/** The index term standing for a description's boilerplate words: no query word is ever this. */
const BOILERPLATE_TERM = "\u0000boilerplate";

/** Fewest tools of one server whose descriptions repeat a sentence for it to be boilerplate. */
export const BOILERPLATE_MIN_TOOLS = 3;

/** A description's sentences (at ". ", "! ", "? " or a line end), folded for comparison. */
function sentences(description: string): string[] {
  return bounded(description).split(/(?<=[.!?])\s+|\n+/).map((x) => x.trim()).filter(Boolean);
}

/**
 * Per server, the sentences that {@link BOILERPLATE_MIN_TOOLS} or more of its tools' descriptions repeat word
 * for word after their lead ("Only works within allowed directories."): they say what every tool of the
 * server shares, nothing of what one tool does, so they weigh as no tool's own words.
 */
function boilerplate(tools: readonly CatalogTool[]): Map<string, Set<string>> {
  const counts = new Map<string, Map<string, number>>();
  for (const tool of tools) {
    let byServer = counts.get(tool.server);
    if (!byServer) counts.set(tool.server, byServer = new Map());
    for (const x of new Set(sentences(tool.description).slice(1).map((x) => x.toLowerCase()))) {
      byServer.set(x, (byServer.get(x) ?? 0) + 1);
    }
  }
  const out = new Map<string, Set<string>>();
  for (const [server, byServer] of counts) {
    const repeated = [...byServer].filter(([, c]) => c >= BOILERPLATE_MIN_TOOLS).map(([x]) => x);
    if (repeated.length > 0) out.set(server, new Set(repeated));
  }
  return out;
}

/** A description without its server's boilerplate sentences (its lead sentence always kept). */
function withoutBoilerplate(description: string, boiler: ReadonlySet<string> | undefined): string {
  if (!boiler) return description;
  const all = sentences(description);
  const kept = all.filter((x, i) => i === 0 || !boiler.has(x.toLowerCase()));
  return kept.length === all.length ? description : kept.join(" ");
}

function fieldTexts(tool: CatalogTool): Record<Field, string> {
  return {
    name: nameText(tool),
    title: tool.title ?? "",
    toolHints: tool.toolUseWhen.join("\n"),
    serverHints: tool.useWhen.join("\n"),
    summary: leadSentence(tool.description),
    description: tool.description,
    inputs: tool.inputFields.join(" "),
    inputDescriptions: inputDescriptions(tool),
    serverName: tool.server,
    serverDescription: tool.serverDescription ?? "",
    tags: tool.tags.join(" "),
  };
}

/** Builds the BM25F index of a catalog. Queries never rebuild it. */
export function buildIndex(tools: readonly CatalogTool[], options: RankingOptions = {}): ResolverIndex {
  return drain(indexSteps(tools, options));
}

/** Longest stretch, in ms, that {@link buildIndexAsync} runs before it lets other work in. */
export const BUILD_SLICE_MS = 20;

/**
 * {@link buildIndex} without blocking the event loop: the same index, built in slices of at most
 * about `sliceMs` (default {@link BUILD_SLICE_MS}) with a macrotask yield between slices, so pings and
 * calls to other servers keep flowing while a large catalog (100k tools) is indexed.
 */
export async function buildIndexAsync(
  tools: readonly CatalogTool[],
  options: RankingOptions = {},
  sliceMs = BUILD_SLICE_MS,
): Promise<ResolverIndex> {
  return await drainAsync(indexSteps(tools, options), sliceMs);
}

/** Runs a stepwise builder, yielding to the event loop once a slice has run `sliceMs`. */
export async function drainAsync<T>(steps: Generator<void, T>, sliceMs = BUILD_SLICE_MS): Promise<T> {
  let start = performance.now();
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
    if (performance.now() - start >= sliceMs) {
      await new Promise((resolve) => setTimeout(resolve, 0));
      start = performance.now();
    }
  }
}

function* indexSteps(tools: readonly CatalogTool[], options: RankingOptions): Generator<void, ResolverIndex> {
  const opts = resolve(options);
  const n = tools.length;
  const fieldCount = FIELDS.length;
  // Per document, per field: term -> tf.
  const docFields: Map<string, number>[][] = [];
  const shared = new Map<string, Map<string, number>>();
  const nameTerms: string[][] = [];
  const phrases: string[][] = [];
  const pending: { doc: number; field: number; text: string }[] = [];
  const actions = new Uint16Array(n);
  const deprecated = new Uint8Array(n);
  const existing = new Uint8Array(n);
  const boiler = boilerplate(tools);
  /** Tools and terms their description has only in boilerplate: they still count in its document frequency. */
  const boilerOnly: [number, string][] = [];
  for (let d = 0; d < n; d++) {
    if (d % 64 === 63) yield;
    const tool = tools[d]!;
    // An operator's use_when hints say in their own words when to use the tool: it does what they say.
    actions[d] = tool.toolUseWhen.length > 0
      ? ANY_ACTION
      : toolActions(splitName(tool.short), tool.title ?? "", leadSentence(tool.description));
    if (DEPRECATED.test(bounded(tool.description))) deprecated[d] = 1;
    if (EXISTING.test(leadSentence(tool.description))) existing[d] = 1;
    const texts = fieldTexts(tool);
    const own = withoutBoilerplate(tool.description, boiler.get(tool.server));
    const fields: Map<string, number>[] = [];
    for (let f = 0; f < fieldCount; f++) {
      const field = FIELDS[f]!;
      const text = texts[field];
      // Fewer allocations, so shorter garbage-collection pauses while 100k tools are indexed: no map for
      // an empty field, one per distinct server-level text (shared by the server's tools; read only).
      if (!text) fields.push(NO_TERMS);
      else if (SERVER_LEVEL.has(field)) {
        const key = `${f}\u0000${text}`;
        let counts = shared.get(key);
        if (!counts) shared.set(key, counts = termCounts(text));
        fields.push(counts);
      } else if (field === "description" && own !== text) {
        // Boilerplate keeps the description's length (BM25F normalization) but matches no query word.
        const counts = termCounts(own);
        let removed = 0;
        for (const [term, x] of termCounts(text)) {
          removed += x;
          if (!counts.has(term)) boilerOnly.push([d, term]);
        }
        for (const x of counts.values()) removed -= x;
        if (removed > 0) counts.set(BOILERPLATE_TERM, removed);
        fields.push(counts);
        if (GLOSSED.has(field) && hasChinese(own)) pending.push({ doc: d, field: f, text: own });
      } else {
        fields.push(termCounts(text));
        if (GLOSSED.has(field) && hasChinese(text)) pending.push({ doc: d, field: f, text });
      }
    }
    docFields.push(fields);
    nameTerms.push(unique(tokenize(splitName(tool.short))));
    const shortPhrase = nameTerms[d]!.join(" ");
    const titlePhrase = tool.title ? unique(tokenize(tool.title)).join(" ") : "";
    phrases.push([shortPhrase, titlePhrase].filter((p) => p.length > 0));
  }
  yield* glossSteps(docFields, pending);
  const termsOf = (fields: Map<string, number>[], which: ReadonlySet<Field>) => {
    const out = new Set<string>();
    fields.forEach((tf, f) => {
      if (which.has(FIELDS[f]!)) { for (const term of tf.keys()) out.add(term); }
    });
    return out;
  };
  const strongTerms: Set<string>[] = [];
  const toolTerms: Set<string>[] = [];
  for (let d = 0; d < n; d++) {
    if (d % STEP === STEP - 1) yield;
    strongTerms.push(termsOf(docFields[d]!, STRONG_FIELDS));
    toolTerms.push(termsOf(docFields[d]!, TOOL_FIELDS));
  }
  const boilerDf = new Map<string, number>();
  for (const [d, term] of boilerOnly) {
    if (!docFields[d]!.some((counts) => counts.has(term))) boilerDf.set(term, (boilerDf.get(term) ?? 0) + 1);
  }
  const { postings, docTerms } = yield* bm25fSteps(
    docFields,
    FIELDS.map((f) => ({ weight: opts.weights[f], b: opts.b[f] })),
    opts.k1,
    boilerDf,
  );
  // Servers as documents of their own: what the server is for, and what its tools are called and do.
  const servers: string[] = [];
  const serverText: string[] = [];
  const serverIds = new Map<string, number>();
  const serverOf = new Int32Array(n);
  const serverDocs: Map<string, number>[][] = [];
  for (let d = 0; d < n; d++) {
    if (d % STEP === STEP - 1) yield;
    const tool = tools[d]!;
    let id = serverIds.get(tool.server);
    if (id === undefined) {
      id = servers.length;
      serverIds.set(tool.server, id);
      servers.push(tool.server);
      serverText.push(`${tool.serverDescription ?? ""} ${tool.tags.join(" ")}`);
      serverDocs.push([
        termCounts(tool.server),
        termCounts(tool.serverDescription ?? ""),
        termCounts(tool.tags.join(" ")),
        termCounts(tool.useWhen.join("\n")),
        new Map(),
        new Map(),
      ]);
    }
    serverOf[d] = id;
    const doc = serverDocs[id]!;
    addCounts(doc[4]!, nameText(tool));
    addCounts(doc[5]!, leadSentence(tool.description));
  }
  const serverPostings = (yield* bm25fSteps(serverDocs, SERVER_FIELDS, opts.k1)).postings;
  const serverWords = new Map<string, ServerWord[]>();
  const addWord = (word: string, entry: ServerWord) => {
    const list = serverWords.get(word);
    if (list) list.push(entry);
    else serverWords.set(word, [entry]);
  };
  const nameWords = servers.map(serverNameWords);
  const described = servers.length < 2 ? new Map<string, number>() : describedWords(serverText, nameWords);
  // Per word of a server name: tools of servers so named, and other tools whose name or text has the word; per
  // word of a server's description: its own tools and other servers' tools that say it.
  const own = new Map<string, number>(), other = new Map<string, number>();
  const ownD = new Map<string, number>(), otherD = new Map<string, number>();
  for (const w of nameWords.flat()) {
    own.set(w, 0);
    other.set(w, 0);
  }
  for (const w of described.keys()) {
    ownD.set(w, 0);
    otherD.set(w, 0);
  }
  for (let d = 0; d < n; d++) {
    if (d % STEP === STEP - 1) yield;
    const tool = tools[d]!;
    const mine = nameWords[serverOf[d]!]!;
    for (const w of mine) own.set(w, own.get(w)! + 1);
    const text = `${splitName(tool.short)} ${tool.title ?? ""} ${bounded(tool.description)}`.toLowerCase();
    for (const w of new Set(text.split(/[^a-z0-9]+/))) {
      if (other.has(w) && !mine.includes(w)) other.set(w, other.get(w)! + 1);
      const of = described.get(w);
      if (of === serverOf[d]) ownD.set(w, ownD.get(w)! + 1);
      else if (of !== undefined) otherD.set(w, otherD.get(w)! + 1);
    }
  }
  // A name's English word names its servers only when the catalog uses it mostly for them ("plane", not
  // "time" or "fetch", which many other tools say); a word of a longer name names the server alone only when
  // it is also no English word ("arxiv" of `mcp-simple-arxiv`, not "pdf" of `pdf-reader-mcp`).
  const owned = (w: string) => own.get(w)! >= other.get(w)!;
  nameWords.forEach((words, id) => {
    if (words.length === 0) return;
    if (words.length > 1 || !isEnglishWord(words[0]!, stemOf) || owned(words[0]!)) {
      addWord(words[0]!, { server: id, rest: words.slice(1) });
    }
    if (words.length === 1) return;
    for (const word of words) {
      if (!isEnglishWord(word, stemOf) && owned(word)) addWord(word, { server: id, rest: [] });
    }
  });
  // A product a server's tools are named after ("jira" of `read_jira_issue`, `search_jira_issues`…): a word of
  // the names of PRODUCT_TOOLS or more of one server's tools and of no other server's, no English word.
  const product = new Map<string, { server: number; tools: number }>();
  const inOthers = new Set<string>();
  for (let d = 0; d < n; d++) {
    if (d % STEP === STEP - 1) yield;
    for (const w of new Set(splitName(tools[d]!.short).toLowerCase().split(/[^a-z0-9]+/))) {
      if (w.length < 3 || /\d/.test(w) || inOthers.has(w) || w === "mcp" || w === "server") continue;
      const seen = product.get(w);
      if (!seen) product.set(w, { server: serverOf[d]!, tools: 1 });
      else if (seen.server === serverOf[d]) seen.tools++;
      else {
        inOthers.add(w);
        product.delete(w);
      }
    }
  }
  for (const [w, { server, tools: count }] of product) {
    if (count < PRODUCT_TOOLS || nameWords[server]!.includes(w) || isEnglishWord(w, stemOf)) continue;
    addWord(w, { server, rest: [] });
  }
  // What a server is, said by its description and tags ("Attio CRM", "Atlassian (Confluence and Jira)"): a word
  // of one server's alone, no action or generic verb, that its own tools say and no other server's tool.
  for (const [w, server] of described) {
    if (ownD.get(w)! === 0 || otherD.get(w)! > 0 || serverWords.has(w)) continue;
    addWord(w, { server, rest: [], described: true });
  }
  // A server with no tool that searches searches by listing with a filter: its listing tools answer a request
  // to find things as well (`list-items` of a server without `search_items`).
  const listSearches = new Uint8Array(n);
  const searching = new Set<string>();
  for (let d = 0; d < n; d++) if (actions[d]! & ACTION.search) searching.add(tools[d]!.server);
  for (let d = 0; d < n; d++) {
    if ((actions[d]! & ACTION.list) && !searching.has(tools[d]!.server)) listSearches[d] = 1;
  }
  const pairs = yield* pairSteps(tools);

  const name = FIELDS.indexOf("name"),
    summary = FIELDS.indexOf("summary"),
    description = FIELDS.indexOf("description");
  const companions = yield* companionSteps(
    tools,
    serverOf,
    docFields.map((f) => ({ names: f[name]!, leads: f[summary]!, mentions: f[description]! })),
  );
  yield;
  const byName = yield* sortSteps(tools.map((_, i) => i), (a, b) => compareNames(tools[a]!, tools[b]!));
  return {
    tools,
    byName,
    postings,
    docTerms,
    strongTerms,
    toolTerms,
    nameTerms,
    phrases,
    companions,
    servers,
    serverOf,
    serverPostings,
    serverWords,
    pairs,
    actions,
    listSearches,
    deprecated,
    existing,
    options: opts,
  };
}

/** Most adjacent word pairs indexed per tool. */
const MAX_PAIRS_PER_TOOL = 64;

/** The key of an adjacent pair of stems. */
export function pairKey(a: string, b: string): string {
  return `${a} ${b}`;
}

/** Adjacent word pairs of the name, title and lead sentence of every tool (see {@link ResolverIndex.pairs}). */
function* pairSteps(tools: readonly CatalogTool[]): Generator<void, Map<string, PairPostings>> {
  const build = new Map<string, number[]>();
  for (let d = 0; d < tools.length; d++) {
    if (d % STEP === STEP - 1) yield;
    const tool = tools[d]!;
    const seen = new Set<string>();
    for (const text of [splitName(tool.short), tool.title ?? "", leadSentence(tool.description)]) {
      const stems = tokenize(text);
      for (let i = 0; i + 1 < stems.length && seen.size < MAX_PAIRS_PER_TOOL; i++) {
        const key = pairKey(stems[i]!, stems[i + 1]!);
        if (seen.has(key)) continue;
        seen.add(key);
        let list = build.get(key);
        if (!list) build.set(key, list = []);
        list.push(d);
      }
    }
  }
  yield;
  const n = tools.length;
  const out = new Map<string, PairPostings>();
  let work = 0;
  for (const [key, list] of build) {
    if ((work += 16 + list.length) >= 64 * STEP) work = 0, yield;
    out.set(key, {
      idf: Math.log(1 + (n - list.length + 0.5) / (list.length + 0.5)),
      docs: Int32Array.from(list),
    });
  }
  return out;
}

/** A tool name as words (`get_file_info`, `getFileInfo` -> `get file info`), without the joined compound. */
export function splitName(name: string): string {
  return name.replace(/[_-]+/g, " ").replace(/([a-z0-9])([A-Z])/g, "$1 $2");
}

/** Words of a server's name that may name it in a request: not `mcp`, `server`, numbers or one or two letters. */
export function serverNameWords(name: string): string[] {
  return splitName(name).toLowerCase().split(/[^a-z0-9]+/).filter((w) =>
    w.length >= 3 && !/^\d+$/.test(w) && w !== "mcp" && w !== "server"
  );
}

/** Tools of one server whose names a word must be in to name the server as its product (`jira`). */
const PRODUCT_TOOLS = 3;

/** Words every MCP server's description says of itself: they say what it is built with, not what it is. */
const DESCRIPTION_FILLER = new Set(
  ("mcp model context protocol server servers implementation integration integrations api apis interface " +
    "tool tools access assistant assistants agent agents llm llms claude desktop client clients official " +
    "enables enabling allows allowing provides providing powered seamless seamlessly natural language " +
    "capabilities functionality through directly interact interacting interaction operations platform " +
    "typescript node bun performance complete maximum various function calling support supports com org net")
    .split(" "),
);

/**
 * The words of each server's description and tags (`serverText`) that one server's alone says: no filler,
 * stop word, word of a server's name, action or generic verb. Each with its server (`shared` starts with the
 * name words and collects the words of several).
 */
function describedWords(serverText: readonly string[], nameWords: readonly string[][]): Map<string, number> {
  const out = new Map<string, number>();
  const shared = new Set<string>(nameWords.flat());
  serverText.forEach((text, id) => {
    for (const w of new Set(text.toLowerCase().split(/[^a-z0-9]+/))) {
      if (w.length < 3 || /\d/.test(w) || STOP_WORDS.has(w) || DESCRIPTION_FILLER.has(w)) continue;
      if (shared.has(w)) continue;
      const s = stemOf(w);
      if (isActionStem(s) || isGenericVerb(s)) continue;
      if (out.has(w)) {
        out.delete(w);
        shared.add(w);
      } else out.set(w, id);
    }
  });
  return out;
}

/** Server-document fields: name, description, tags, use_when, tool names, tool lead sentences. */
const SERVER_FIELDS: readonly FieldWeight[] = [
  { weight: 2, b: 0.2 },
  { weight: 1, b: 0.75 },
  { weight: 1, b: 0.3 },
  { weight: 2, b: 0.5 },
  { weight: 1, b: 0.75 },
  { weight: 0.5, b: 0.75 },
];

/** Orders tools by public name. */
export function compareNames(a: CatalogTool, b: CatalogTool): number {
  return a.namespaced < b.namespaced ? -1 : a.namespaced > b.namespaced ? 1 : 0;
}
