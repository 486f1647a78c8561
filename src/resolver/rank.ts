/**
 * Query-time ranking: BM25F sums over the postings of the query terms,
 * name-coverage and exact-phrase bonuses on a candidate pool, and fusion of
 * per-clause rankings for multi-step requests.
 *
 * @module
 */
import type { CatalogTool } from "../catalog/mod.ts";
import {
  ACTION,
  ACTION_MAX_WORDS,
  actionMatch,
  asksForNew,
  calledOff,
  instrumentLast,
  isActionStem,
  isGenericVerb,
  isRequestVerbStem,
  namedInstances,
  QUESTION,
  requestAction,
  requestActions,
  withoutToolFrame,
} from "./actions.ts";
import { contentWords, GENERIC_VERBS } from "./clauses.ts";
import { cognates, isEnglishWord, oneEditAway } from "./lexicon.ts";
import { NOUN_MODIFIER_WEIGHT, type ParsedQuery, parseQuery, splitClauses } from "./query.ts";
import { synonymsOf } from "./synonyms.ts";
import { beforeQualifier, splitWords, stem, STOP_WORDS, tokenize } from "./tokenize.ts";
import { senseIn } from "./zh_gloss.ts";
import { compareNames, leadSentence, pairKey, type ResolverIndex, splitName } from "./search_index.ts";
import { TopK } from "./top_k.ts";

/** One ranked tool. */
export interface SearchHit {
  tool: CatalogTool;
  /** Final score, higher is better; on the scale of the whole query's BM25F score. */
  score: number;
  /** Query words (as typed, folded) this tool matched directly or through a synonym. */
  matchedTerms: string[];
  /** Fraction of the query words matched (arguments the catalog does not know, such as "Paris", excluded). */
  coverage: number;
  /** Best {@link coverage} within one clause of a multi-step query (equals coverage for one clause). */
  clauseCoverage: number;
  /**
   * Request words the tool matched within the clause of {@link clauseCoverage}, when that clause covers more
   * than the whole request (0 otherwise).
   */
  clauseHits: number;
  /**
   * {@link clauseCoverage}, or {@link coverage} with the request's action verb counted as matched when the tool
   * performs that action ("remove the row" and `delete_records`): whether the request is answerable at all.
   */
  answerableCoverage: number;
  /** The request's first word is an action verb this tool performs, though the tool does not use the word. */
  actionAgrees: boolean;
  /** The request asks for an action this tool does not perform (it performs only others). */
  actionConflict: boolean;
  /**
   * The tool performs the action asked for and takes the kind of locator the request names (a file path, a
   * web address): the request is answerable by it, whatever its other words.
   */
  located: boolean;
  /** Fraction of the query words matched in this tool's own name, title or use_when hints. */
  toolFieldCoverage: number;
  /** IDF-weighted fraction of the query words matched (unknown words weigh the most). */
  weightedCoverage: number;
  /** IDF-weighted fraction of the tool's name words present in the query. */
  nameCoverage: number;
  /**
   * {@link nameCoverage} by the request's own words: a word only inside a name the request gives ("my Stats 101
   * notebook") names a thing, not this tool.
   */
  ownNameCoverage: number;
  /** Distinct words in the tool's short name. */
  nameWords: number;
  /** The query is exactly the tool's name or title. */
  exactName: boolean;
  /** The tool's short name is one verb that says little on its own (`git__show`, `x__get`). */
  genericName: boolean;
  /** A query word (or its synonym) matched the name, title, a use_when hint, a tag or the server name. */
  strongField: boolean;
  /**
   * A typed request word that names what another tool of the catalog acts on (a word of its name that is no
   * action: "project" of `get_projects`) and that this tool does not match: the request's object may be
   * another tool's ("create a new project" and `create_task`).
   */
  missedObject: boolean;
  /**
   * The tool acts only for the caller (`get_my_tasks`, "the authenticated user's tasks") and the request, with
   * no word of the first person, names someone else ("tasks assigned to Priya").
   */
  otherParty: boolean;
  /**
   * The tool performs every action the request asks for and its name's object is a word of the request ("spin
   * up a dev branch" and `create_branch`, "leave a comment on record …" and `create_comment`): the request's
   * verb and object are both this tool's, so the catalog can do it, however few of the other words match.
   * In a request of several clauses, also a clause asking (no question) for an action the tool performs, with
   * its name's object typed anywhere in the request (only the first hit's).
   */
  actionAndObject: boolean;
  /**
   * The request names this tool's server and half or more of the object words of its name, and asks for no
   * action the tool does not perform ("make an epic for it in shortcut" and `shortcut__epics-create`): the
   * request is about this server's thing, so the catalog can do it (only the first hit's is set).
   */
  serverAndObject: boolean;
  /**
   * Half or more of the object words of the tool's name (at least one) are request words, and the request asks
   * for no action the tool does not perform.
   */
  halfObject: boolean;
  /**
   * The tool performs every action the request asks for and matches a request word that is no action, no
   * generic verb and no argument (anywhere in its text): the action is met on something the request names.
   */
  actionOnMatch: boolean;
  /**
   * The request states a fact ("Ana reports to Marco.", "Omar no longer reports to Priya") and the tool performs
   * every action that statement asks for: the statement is its argument (only the first hit's is set).
   */
  keepsStatement: boolean;
}

/** A ranked query: its terms, how many tools matched, and the top hits. */
export interface RankedQuery {
  query: ParsedQuery;
  /** Clauses the query was split into (1 for a single request). */
  clauses: number;
  /** Tools with a positive score (lexical matches plus lifted companions). */
  count: number;
  /** Best first, at most `maxHits`. */
  hits: SearchHit[];
  /** Score of the second-best tool, even when `maxHits` is 1. */
  runnerUpScore?: number;
  /**
   * The request's one action is asked on a file it names ("delete build/old.log, we don't need it anymore") and
   * no tool of the catalog performs that action on a file: nothing here can do it.
   */
  noFileTool?: boolean;
}

/** Options of {@link search} and {@link rankQuery}. */
export interface SearchOptions {
  /** Hits returned. @default 20 */
  maxHits?: number;
}

/** Least weight of an expansion that counts a query word as matched (coverage, matched terms). */
export const MIN_COVERAGE_WEIGHT = 0.35;

/**
 * IDF mass of the typed words a clause's best tool matches, as a share of the catalog's largest IDF, for it
 * to claim a place in the top (clause diversity): about two uncommon words, or one rare word and another.
 */
export const CLAUSE_MASS = 1;

/** How far a clause's best tool must lead the clause's runner-up to claim a place in the top. */
export const CLAUSE_MARGIN = 1.2;

/** The largest IDF of the catalog: a word in no tool. */
function maxIdfOf(index: ResolverIndex): number {
  return Math.log(1 + (index.tools.length + 0.5) / 0.5);
}

/** Summed IDF (times the word's weight) of the typed query words in `matched`. */
function matchedMass(index: ResolverIndex, matched: ReadonlySet<number>, query: ParsedQuery): number {
  let mass = 0;
  for (const i of matched) {
    const idf = index.postings.get(query.stems[i]!)?.idf;
    if (idf !== undefined) mass += idf * Math.min(1, query.terms[i]!.weight);
  }
  return mass;
}

/**
 * Exponent on a tool's score relative to its clause's best before clause fusion: above 1, each clause's
 * top tools stand out from the clause's long tail of partial matches. Tuned on the LiveMCPBench dev half.
 */
export const CLAUSE_SHARPNESS = 2;

/** Candidates kept per clause. */
const CLAUSE_POOL = 50;

interface Scored {
  /** Raw BM25F sums, per document. */
  scores: Float64Array;
  touched: number[];
  /**
   * Query term -> its credit towards the name bonus: 1 for a typed word, its weight for another expansion
   * (a translation, an implied term, a compound). A synonym adds recall only, never the name bonus (issue
   * #42: hand-picked groups earning it fixed as many requests as they broke).
   */
  credit: Map<string, number>;
  phrase: string;
  /** The action the request (or clause) asks for (`actions.ts`); 0 for none or for several steps. */
  action: number;
  /** The request (or clause) asks to create a new or named thing (`asksForNew`). */
  fresh?: boolean;
  /** The action the request calls off ("don't send it after all"; `calledOff`): never a confident answer. */
  undone?: number;
  /** Stems of the things the request (or clause) names by their identifier (`namedInstances`). */
  instances?: ReadonlySet<string>;
}

/** Weight of an English cognate of a query word the catalog does not know (`repositorio` -> `repository`). */
export const COGNATE_WEIGHT = 0.8;

/** Weight of the catalog's word one edit away from a request word it lacks (a typo: "shedule" -> schedule). */
export const TYPO_WEIGHT = 0.8;

/**
 * Fewest letters of a request word read as a typo of a catalog word: shorter ones are too often a name or a
 * technical word ("redis", "login", "repro").
 */
export const TYPO_MIN_LENGTH = 6;

/**
 * The catalog's term a misspelt request word stands for: the stem of a word one edit away that the most
 * tools use ("shedule" -> `schedul`, "deploymnet" -> `deploy`), or undefined. Only for a lowercase word of
 * letters, at least {@link TYPO_MIN_LENGTH} long, that is no English word ("stored", "table" are words).
 */
export function typoTerm(word: string, df: (term: string) => number): string | undefined {
  if (word.length < TYPO_MIN_LENGTH || !/^[a-z]+$/.test(word) || isEnglishWord(word, stem)) return undefined;
  let best: string | undefined, most = 0;
  for (const edit of oneEditAway(word)) {
    // A typo seldom changes a word's first letter.
    if (edit[0] !== word[0]) continue;
    const term = stem(edit);
    const n = df(term);
    if (n > most) [best, most] = [term, n];
  }
  return best;
}

/**
 * Whether a word stands alone in the text: not part of a name joined by `-`, `_`, `.` or `/` to other letters
 * or digits (`react-chartjs-2`, `deploymnet.yaml`), which is an identifier, not a misspelling.
 */
function standsAlone(text: string, word: string): boolean {
  return new RegExp(`(?<![\\p{L}\\p{N}_./-])${word}(?![\\p{L}\\p{N}_/-]|\\.[\\p{L}\\p{N}])`, "iu").test(text);
}

/** Most tools a word may occur in for its WordNet expansions to be used (a rare or unknown word). */
export const GENERAL_MAX_DF = 5;

/**
 * Fits a parsed query to the catalog: a word the catalog does not know gets its English cognates
 * that it does know; WordNet expansions are kept only for words the catalog rarely or never uses,
 * where a vocabulary mismatch is likely ("add" for a `get-sum` tool); a Chinese word's other senses
 * are hints only where the catalog uses them.
 */
function fitQuery(index: ResolverIndex, text: string, step = false): ParsedQuery {
  // A Chinese word's sense the catalog uses: every word of it is indexed.
  const query = parseQuery(text, senseIn((t) => index.postings.has(t)), step);
  const df = (term: string) => index.postings.get(term)?.docs.length ?? 0;
  const rareWord = query.stems.map((s) => df(s) <= GENERAL_MAX_DF);
  const terms = query.terms.filter((t) => !t.general || t.origins.some((o) => rareWord[o]));
  const have = new Set(terms.map((t) => t.term));
  query.stems.forEach((s, i) => {
    if (df(s) > 0) return;
    const typed = query.terms[i]?.weight ?? 1;
    let fitted = false;
    for (const candidate of cognates(query.words[i]!)) {
      // The English word itself, else a curated equivalent the catalog uses (`cartella` -> folder -> directory).
      let term = stem(candidate), weight = COGNATE_WEIGHT;
      if (df(term) === 0) {
        const equivalent = synonymsOf(term).find((syn) => !syn.general && df(syn.term) > 0);
        if (!equivalent) continue;
        [term, weight] = [equivalent.term, COGNATE_WEIGHT * equivalent.weight];
      }
      // The word's action may have added its English verb already, as a hint ("borra": delete): the
      // translation is the word typed, and weighs as a cognate.
      const hint = terms.find((t) => t.term === term && t.expansion && !t.general);
      if (hint && hint.weight < weight * typed) {
        [hint.weight, hint.origins] = [weight * typed, [...new Set([...hint.origins, i])]];
        delete hint.synonym;
        fitted = true;
        break;
      }
      if (have.has(term)) continue;
      have.add(term);
      terms.push({ term, weight: weight * typed, origins: [i], expansion: true });
      fitted = true;
      break;
    }
    // A misspelt word of an English request ("shedule", "calender"): the catalog's word one edit away. Names
    // and numbers are arguments, not words to correct.
    if (fitted || !query.english || query.argumentLike[i] || !standsAlone(text, query.words[i]!)) return;
    const term = typoTerm(query.words[i]!, df);
    if (term === undefined || have.has(term)) return;
    have.add(term);
    terms.push({ term, weight: TYPO_WEIGHT * typed, origins: [i], expansion: true });
  });
  query.terms = terms;
  weighModifiers(index, query);
  return query;
}

/**
 * A noun phrase's modifier that names other tools than its head does ("the Tasks table": `task` for a to-do
 * tool, `table` for a database's) weighs {@link NOUN_MODIFIER_WEIGHT}: the head names the thing acted on. A
 * modifier found with its head in one tool ("pull request", "trending topics" where topics are rare) keeps
 * its weight.
 */
function weighModifiers(index: ResolverIndex, query: ParsedQuery): void {
  const headOf = query.headOf;
  if (!headOf) return;
  const docsOf = (s: string) => index.postings.get(s)?.docs;
  headOf.forEach((h, i) => {
    if (h < 0 || h === i) return;
    const mine = docsOf(query.stems[i]!), theirs = docsOf(query.stems[h]!);
    if (!mine || !theirs) return;
    const together = new Set(theirs);
    if (mine.some((d) => together.has(d))) return;
    for (const t of query.terms) {
      if (t.origins.length === 1 && t.origins[0] === i) t.weight *= NOUN_MODIFIER_WEIGHT;
    }
  });
}

/**
 * Word proximity: each distinct adjacent pair of the query's content words within one sentence or step
 * found as adjacent words in a tool's name, title or lead sentence adds {@link ResolvedRanking.phraseWeight}
 * times the pair's IDF, at most the weaker word's own weight, so "generate a word cloud" prefers the
 * word-cloud tool to one that mentions "word" and "cloud" apart, and two generic words pair for little.
 */
function addPairs(index: ResolverIndex, query: ParsedQuery, scores: Float64Array, touched: number[]): void {
  const weight = index.options.phraseWeight;
  if (weight <= 0) return;
  const seq = query.sequence;
  const done = new Set<string>();
  const typed = new Map<string, number>();
  for (const t of query.terms) if (!t.expansion) typed.set(t.term, t.weight);
  /** A word's own weight in the score: a pair is worth at most its weaker word's. */
  const own = (s: string) => (typed.get(s) ?? 0) * (index.postings.get(s)?.idf ?? 0);
  for (let i = 0; i + 1 < seq.length; i++) {
    if (seq[i] === seq[i + 1] || seq[i] === "" || seq[i + 1] === "") continue;
    const key = pairKey(seq[i]!, seq[i + 1]!);
    if (done.has(key)) continue;
    done.add(key);
    const p = index.pairs.get(key);
    if (!p) continue;
    const w = Math.min(weight * p.idf, (index.options.k1 + 1) * Math.min(own(seq[i]!), own(seq[i + 1]!)));
    for (const d of p.docs) {
      if (scores[d] === 0) touched.push(d);
      scores[d]! += w;
    }
  }
}

function accumulate(index: ResolverIndex, query: ParsedQuery): Scored {
  const scores = new Float64Array(index.tools.length);
  const touched: number[] = [];
  const credit = new Map<string, number>();
  for (const qt of query.terms) {
    if (!qt.synonym) {
      credit.set(qt.term, Math.max(credit.get(qt.term) ?? 0, qt.expansion || qt.given ? qt.weight : 1));
    }
    const p = index.postings.get(qt.term);
    if (!p) continue;
    const w = qt.weight * p.idf;
    const { docs, impacts } = p;
    for (let i = 0; i < docs.length; i++) {
      const d = docs[i]!;
      if (scores[d] === 0) touched.push(d);
      scores[d]! += w * impacts[i]!;
    }
  }
  addPairs(index, query, scores, touched);
  return { scores, touched, credit, phrase: query.stems.join(" "), action: 0 };
}

/** IDF-weighted share of a tool's name words that the query names. */
/**
 * `credit` without the stems the request uses only inside a name it gives (argument-like words), unless the
 * word names a server or the product its tools are named after ("look into Sentry error 9182736").
 */
function ownCredit(
  index: ResolverIndex,
  query: ParsedQuery,
  credit: ReadonlyMap<string, number>,
): ReadonlyMap<string, number> {
  const named = new Set<string>();
  query.stems.forEach((s, i) => {
    if (query.argumentLike[i] && !index.serverWords.has(query.words[i]!)) named.add(s);
  });
  query.stems.forEach((s, i) => {
    if (!query.argumentLike[i]) named.delete(s);
  });
  if (named.size === 0) return credit;
  return new Map([...credit].filter(([t]) => !named.has(t)));
}

function nameCoverageOf(index: ResolverIndex, doc: number, credit: ReadonlyMap<string, number>): number {
  let got = 0, total = 0;
  for (const t of index.nameTerms[doc]!) {
    const idf = index.postings.get(t)?.idf ?? 0;
    got += (credit.get(t) ?? 0) * idf;
    total += idf;
  }
  return total > 0 ? got / total : 0;
}

/**
 * Share of its name coverage a tool named by one word keeps (its name bonus ×0.64): 0.7 cost the Chinese set
 * 0.016 nDCG@5; 0.8 and 0.85 measured alike.
 */
export const ONE_WORD_NAME = 0.8;

/**
 * {@link actionMatch} for ordering siblings ({@link actionFirst}): a listing tool of a server that has no
 * searching one is how that server searches (its filters), so a request to find things does not count against
 * it (0, not -1).
 */
function rankedActionMatch(index: ResolverIndex, request: number, doc: number): number {
  const match = actionMatch(request, index.actions[doc]!);
  return match < 0 && (request & ACTION.search) !== 0 && index.listSearches[doc] === 1 ? 0 : match;
}

function bonusOf(index: ResolverIndex, doc: number, scored: Scored): number {
  const o = index.options;
  // A one-word name (`log`, `checkout`, `post`) is named in full by any request using the word: less evidence
  // than two or three name words all used.
  const cov = nameCoverageOf(index, doc, scored.credit) *
    (index.nameTerms[doc]!.length === 1 ? ONE_WORD_NAME : 1);
  const exact = index.phrases[doc]!.includes(scored.phrase);
  const match = actionMatch(scored.action, index.actions[doc]!);
  const action = match > 0 ? 1 + o.actionBonus * match : match < 0 ? 1 - o.actionPenalty : 1;
  const deprecated = index.deprecated[doc] ? 1 - o.deprecatedPenalty : 1;
  // A new thing is not made by a tool that adds to existing ones: it does something else than asked.
  const added = scored.fresh && index.existing[doc] ? 1 - o.actionPenalty : 1;
  // A thing named by its identifier ("ticket 51877") exists: a tool that only makes things of its kind does
  // something else than asked, whatever fields of it its schema names.
  const made = madeAgain(index, doc, scored.instances) || listedInstead(index, doc, scored)
    ? 1 - o.actionPenalty
    : 1;
  return (1 + o.nameBonus * cov * cov + (exact ? o.phraseBonus : 0)) * action * deprecated * added * made;
}

/**
 * Whether a tool only creates things of a kind the request names by an identifier (`namedInstances`): its
 * name's head, the last word that is no action before any preposition (`comment` of `stories-create-comment`,
 * `bookmark` of `add-bookmark-to-list`).
 */
function madeAgain(index: ResolverIndex, doc: number, instances: ReadonlySet<string> | undefined): boolean {
  if (instances === undefined || instances.size === 0 || index.actions[doc] !== ACTION.create) return false;
  const made = madeObject(index, doc);
  return made !== undefined && instances.has(made);
}

/**
 * Whether a tool lists things of a kind the request names one of by its identifier ("what's on onenote page
 * 1-a1b2…": `list-onenote-pages`), when the request asks for no list: the thing is there and one, and listing
 * its kind does something else than asked.
 */
function listedInstead(index: ResolverIndex, doc: number, scored: Scored): boolean {
  const instances = scored.instances;
  if (instances === undefined || instances.size === 0 || scored.action === 0) return false;
  if ((scored.action & (ACTION.list | ACTION.search)) !== 0 || (index.actions[doc]! & ACTION.list) === 0) {
    return false;
  }
  const listed = madeObject(index, doc);
  return listed !== undefined && instances.has(listed);
}

const MADE = new WeakMap<ResolverIndex, (string | undefined)[]>();

/** The stem of what a tool's name says it makes: its head noun (see {@link madeAgain}). */
function madeObject(index: ResolverIndex, doc: number): string | undefined {
  let all = MADE.get(index);
  if (!all) MADE.set(index, all = []);
  if (doc in all) return all[doc];
  const words = splitName(index.tools[doc]!.short).toLowerCase().split(/[^\p{L}\d]+/u).filter((w) =>
    w !== ""
  );
  // A tool adding a thing to another (`add-bookmark-to-list`) puts an existing one there: it makes none.
  if (words.some((w) => w === "to" || w === "into")) return all[doc] = undefined;
  const before = beforeQualifier(words).map(stem).filter((w) => !isActionStem(w));
  return all[doc] = before.at(-1);
}

/** The best `size` tools by BM25F with name bonuses: doc -> final score. */
function topScores(index: ResolverIndex, scored: Scored, size: number): Map<number, number> {
  const tools = index.tools;
  const worse = (a: number, sa: number, b: number, sb: number) =>
    sa < sb || (sa === sb && compareNames(tools[a]!, tools[b]!) > 0);
  // Bonuses at most multiply a score by 1 + nameBonus + phraseBonus; a wider raw pool keeps that exact enough.
  const heap = new TopK(size, worse);
  for (const d of scored.touched) heap.push(d, scored.scores[d]!);
  const out = new Map<number, number>();
  for (const { doc, score } of heap.drain()) out.set(doc, score * bonusOf(index, doc, scored));
  return out;
}

/** Which query words a tool matches, and what share of the query's capability words that is. */
function coverageOf(index: ResolverIndex, doc: number, query: ParsedQuery, action = 0) {
  const terms = index.docTerms[doc]!;
  const strong = index.strongTerms[doc]!;
  const own = index.toolTerms[doc]!;
  const matched = new Set<number>();
  const matchedOwn = new Set<number>();
  let strongField = false;
  for (const qt of query.terms) {
    if (!terms.has(qt.term)) continue;
    // A weak expansion (a WordNet near-synonym) helps ranking but is not evidence that the word matched.
    if (qt.expansion && qt.weight < MIN_COVERAGE_WEIGHT) continue;
    for (const o of qt.origins) matched.add(o);
    if (strong.has(qt.term) && qt.origins.length > 0) strongField = true;
    if (own.has(qt.term)) { for (const o of qt.origins) matchedOwn.add(o); }
  }
  const unitOf = query.unitOf;
  if (unitOf) {
    for (const o of [...matched]) matched.add(unitOf[o]!);
    for (const o of [...matchedOwn]) matchedOwn.add(unitOf[o]!);
  }
  // Coverage counts capability words: an argument the catalog cannot know ("Paris") is not a miss,
  // unless the query has nothing else.
  const maxIdf = Math.log(1 + (index.tools.length + 0.5) / 0.5);
  const known = query.stems.map((s) => index.postings.get(s)?.idf);
  let counts = query.words.map((_, i) =>
    (unitOf === undefined || unitOf[i] === i) && !(query.argumentLike[i] && known[i] === undefined) &&
    !(query.optional?.[i] && !matched.has(i))
  );
  if (!counts.includes(true)) counts = counts.map(() => true);
  let matchedIdf = 0, idfTotal = 0, counted = 0, hit = 0, hitOwn = 0;
  query.words.forEach((_, i) => {
    if (!counts[i]) return;
    if (matchedOwn.has(i)) hitOwn++;
    // A word the catalog never uses weighs like the rarest possible term.
    const idf = known[i] ?? maxIdf;
    counted++;
    idfTotal += idf;
    if (matched.has(i)) {
      hit++;
      matchedIdf += idf;
    }
  });
  // The request's verb is met by a tool doing that action, whatever its words ("remove the row" and
  // `delete_records`): evidence that the request is answerable, not that this tool is the one.
  // The verb is the imperative after a statement when there is one ("…, keep that in mind").
  const verbAt = query.verbAt ?? 0;
  const acted = action !== 0 && counts[verbAt] === true && !matched.has(verbAt) &&
    (query.verbAt !== undefined || isRequestVerbStem(query.stems[0]!)) &&
    actionMatch(action, index.actions[doc]!) > 0;
  // A stated value's words ("make a table called orders") are given to the tool, not matched by it: for a
  // tool doing the action asked for by the request's verb, the request is answerable without them.
  let statedCoverage = 0;
  const stated = query.stated;
  // The request's verb: its first word, or the imperative after a statement ("Dana works for Initech, add
  // that link"); a tool performing its action meets it.
  const verb = query.verbAt ?? 0;
  if (
    stated && action !== 0 && (query.verbAt !== undefined || isRequestVerbStem(query.stems[0]!)) &&
    actionMatch(action, index.actions[doc]!) > 0
  ) {
    let n = 0, h = 0;
    query.words.forEach((_, i) => {
      if (!counts[i] || (stated[i] && !matched.has(i))) return;
      n++;
      if (matched.has(i) || i === verb) h++;
    });
    statedCoverage = n > 0 ? h / n : 0;
  }
  // A tool doing the action asked for that takes the kind of locator the request names ("fix the typo in
  // README.md" and `edit_file(path)`): its argument is there, the request is answerable by it.
  // So does a tool searching for what the request asks about ("what do you know about Ana?"): its argument.
  const located = action !== 0 && actionMatch(action, index.actions[doc]!) > 0 &&
    (takesLocator(index.tools[doc]!.inputFields, query.locators) ||
      (query.asksAbout === true && (index.actions[doc]! & ACTION.search) !== 0));
  return {
    located,
    matched,
    strongField,
    coverage: counted > 0 ? hit / counted : 0,
    hit,
    actionCoverage: Math.max(counted > 0 ? (hit + (acted ? 1 : 0)) / counted : 0, statedCoverage),
    acted,
    toolFieldCoverage: counted > 0 ? hitOwn / counted : 0,
    weightedCoverage: idfTotal > 0 ? matchedIdf / idfTotal : 0,
  };
}

/** Parameter names of a file path and of a web address. */
const PATH_PARAMETER = /^(?:path|paths|file|files|filename|filepath|file_path)$/i;
const URL_PARAMETER = /^(?:url|urls|uri|link|href)$/i;

/**
 * A parameter or name word of a tool acting on files or stored objects, however it calls them (`path`,
 * `source_file`, `folder`, an object store's `key`, a drive's `document`).
 */
const FILE_WORD = /path|file|dir|folder|key|object|blob|document|attachment|media/i;

/**
 * Whether the request's one action is asked, in a clause naming a file path (not refused: "don't overwrite
 * log.txt"), of a catalog where no tool performs that action on a file: its parameters name no path, file,
 * folder or stored object, nor does its name. Only a tool doing the action could act on the file; none can.
 */
function noFileTool(
  index: ResolverIndex,
  clauses: readonly string[],
  parsed: readonly ParsedQuery[],
  actions: readonly number[],
): boolean {
  const acting = actions.flatMap((a, i) => a !== 0 ? [i] : []);
  if (acting.length !== 1) return false;
  const [clause, action] = [clauses[acting[0]!]!, actions[acting[0]!]!];
  if (!parsed[acting[0]!]!.locators?.path || requestActions(clause).negated !== undefined) return false;
  return (action & fileActionsOf(index)) === 0;
}

const FILE_ACTIONS = new WeakMap<ResolverIndex, number>();

/** The actions the catalog's tools on files perform, all of them in one mask (computed once per index). */
function fileActionsOf(index: ResolverIndex): number {
  let mask = FILE_ACTIONS.get(index);
  if (mask === undefined) {
    mask = 0;
    index.tools.forEach((t, d) => {
      if (t.inputFields.some((f) => FILE_WORD.test(f)) || FILE_WORD.test(t.short)) mask! |= index.actions[d]!;
    });
    FILE_ACTIONS.set(index, mask);
  }
  return mask;
}

/** Whether a tool's parameters take the kind of locator a request names (a file path, a web address). */
function takesLocator(fields: readonly string[], locators: ParsedQuery["locators"]): boolean {
  if (!locators) return false;
  return fields.some((f) =>
    (locators.path && PATH_PARAMETER.test(f)) || (locators.url && URL_PARAMETER.test(f))
  );
}

/** The words of what a tool is about: its name, title, use_when hints and lead sentence. */
function aboutTerms(index: ResolverIndex, doc: number): Set<string> {
  const tool = index.tools[doc]!;
  return new Set([
    ...index.nameTerms[doc]!,
    ...index.toolTerms[doc]!,
    ...tokenize(leadSentence(tool.description)),
  ]);
}

/**
 * Marks the first hit when the request leaves its object open: a typed request word (no action, no generic
 * verb) that another of the first hits has as its name's head and this hit's name, title, hints and lead
 * sentence lack
 * ("create a new project" for `create_task`, which takes a project only as a parameter, with `get_projects`
 * close by).
 */
function markMissedObjects(
  index: ResolverIndex,
  text: string,
  query: ParsedQuery,
  hits: SearchHit[],
  docs: number[],
): void {
  // Only the first hit's is read (`assess.ts`): the others keep `false`.
  const first = hits[0];
  if (!first || docs.length < 2) return;
  // A noun phrase's head the catalog knows and this tool lacks altogether ("… to the Tasks table" and
  // `create_task`): the request acts on something else, or on more than this tool names.
  const own = index.docTerms[docs[0]!]!;
  for (const h of new Set(query.headOf ?? [])) {
    const s = h >= 0 ? query.stems[h]! : undefined;
    if (s !== undefined && !query.argumentLike[h] && index.postings.has(s) && !own.has(s)) {
      first.missedObject = true;
    }
  }
  const object = objectStems(text);
  const words = query.stems.filter((s, i) =>
    object.has(s) && !query.argumentLike[i] && !isActionStem(s) && !isGenericVerb(s)
  );
  if (words.length === 0) return;
  const heads = new Set(docs.slice(1, OBJECT_RIVALS).map((d) => headNoun(index, d)));
  const about = aboutTerms(index, docs[0]!);
  if (words.some((s) => !about.has(s) && heads.has(s))) first.missedObject = true;
}

/**
 * The head noun of a tool's name, what the tool acts on: its last word that is no action (English compounds
 * put the head last: `read_text_file` acts on a file, `get_projects` on projects, `browser_tab_list` on tabs).
 */
function headNoun(index: ResolverIndex, doc: number): string | undefined {
  const words = tokenize(splitName(index.tools[doc]!.short));
  for (let i = words.length - 1; i >= 0; i--) if (!isActionStem(words[i]!)) return words[i];
  return undefined;
}

/** Words that end a request's object and open a complement ("a price for the product", "text to a file"). */
const COMPLEMENT = new Set(
  "for to of from in on into onto with by at about under over via within without per as than".split(" "),
);

/** Stems of a request's object: its words before the first preposition ("create a new project" in Todoist). */
function objectStems(text: string): Set<string> {
  const out = new Set<string>();
  for (const w of splitWords(text)) {
    for (const part of w.parts) {
      if (COMPLEMENT.has(part)) return out;
      out.add(stem(part));
    }
  }
  return out;
}

/** A tool acting only for the caller: "my"/"me" in its name, or the current user in its lead sentence. */
function callerScoped(tool: CatalogTool): boolean {
  if (
    splitName(tool.short).toLowerCase().split(/[^a-z]+/).some((w) => w === "my" || w === "me" || w === "mine")
  ) {
    return true;
  }
  const lead = leadSentence(tool.description);
  return CALLER.test(lead) && !ANY_USER.test(lead);
}

/** Factor of a tool acting for the caller when the request speaks in the first person. */
export const CALLER_BONUS = 1.2;

const callerCache = new WeakMap<ResolverIndex, Uint8Array>();

/** {@link callerScoped} of every tool, once per index. */
function callerTools(index: ResolverIndex): Uint8Array {
  let out = callerCache.get(index);
  if (!out) {
    out = Uint8Array.from(index.tools, (t) => (callerScoped(t) ? 1 : 0));
    callerCache.set(index, out);
  }
  return out;
}

/** The caller in a tool's lead sentence ("the authenticated user's 'My Tasks' list", "the current user"). */
const CALLER = /\b(?:authenticated|current|calling|logged[- ]in|signed[- ]in)\s+user\b|\bthe caller\b/i;
/** A lead sentence that also takes anyone's ("a specific user or the authenticated user"). */
const ANY_USER = /\b(?:specific|given|any|another|other|each|every)\s+(?:user|member|person)\b/i;
/** The first person in a request: it may well be about the caller. */
const FIRST_PERSON = /\b(?:i|me|my|mine|myself|i'm|i've|i'd)\b/i;
/** Someone else: a name after a preposition ("assigned to Priya"), a possessive name, or a third person. */
const OTHER_PARTY = new RegExp(
  String
    .raw`\b(?:to|by|for|from|with|of|cc)\s+(?!(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|` +
    String.raw`January|February|March|April|May|June|July|August|September|October|November|December)\b)` +
    String
      .raw`[A-Z][a-z]+\b(?![-_.\d])|\b[A-Z][a-z]+['’]s\b|\b(?:him|her|his|hers|someone else|somebody else|` +
    String.raw`everyone|everybody|another user|other users|other people)\b`,
);

/** Whether a request names someone other than the caller, with no word of the first person. */
function namesOtherParty(text: string): boolean {
  return !FIRST_PERSON.test(text) && OTHER_PARTY.test(text);
}

/** Hits whose names may hold a request's object that the first hit lacks (see {@link markMissedObjects}). */
const OBJECT_RIVALS = 5;

function evidence(
  index: ResolverIndex,
  doc: number,
  query: ParsedQuery,
  clauses: readonly ParsedQuery[],
  scored: Scored,
) {
  const c = coverageOf(index, doc, query, scored.action);
  let clauseCoverage = c.coverage;
  let clauseHits = 0;
  for (const cq of clauses) {
    const cc = coverageOf(index, doc, cq);
    if (cc.coverage > clauseCoverage || (cc.coverage === clauseCoverage && cc.hit > clauseHits)) {
      clauseHits = cc.hit;
    }
    clauseCoverage = Math.max(clauseCoverage, cc.coverage);
  }
  const exactName = index.phrases[doc]!.includes(scored.phrase);
  return {
    matchedTerms: [...c.matched].sort((a, b) => a - b).map((o) => query.words[o]!),
    coverage: c.coverage,
    clauseCoverage,
    clauseHits,
    answerableCoverage: Math.max(clauseCoverage, c.actionCoverage),
    actionAgrees: c.acted,
    located: c.located,
    // …or it performs the very action the request calls off ("do not delete the backup" and a delete tool).
    actionConflict: (scored.action !== 0 && actionMatch(scored.action, index.actions[doc]!) < 0) ||
      ((scored.undone ?? 0) & index.actions[doc]! & ~scored.action) !== 0,
    toolFieldCoverage: c.toolFieldCoverage,
    weightedCoverage: c.weightedCoverage,
    nameCoverage: nameCoverageOf(index, doc, scored.credit),
    ownNameCoverage: nameCoverageOf(index, doc, ownCredit(index, query, scored.credit)),
    nameWords: index.nameTerms[doc]!.length,
    exactName,
    genericName: index.nameTerms[doc]!.length === 1 && isGenericVerb(index.nameTerms[doc]![0]!),
    strongField: c.strongField || exactName,
    missedObject: false,
    otherParty: false,
    actionAndObject: actionMatch(scored.action, index.actions[doc]!) === 1 &&
      (namesObject(index.nameTerms[doc]!, query) || creditsObject(index.nameTerms[doc]!, scored.credit)),
    serverAndObject: false,
    keepsStatement: false,
    actionOnMatch: actionMatch(scored.action, index.actions[doc]!) === 1 &&
      [...c.matched].some((o) =>
        !query.argumentLike[o] && !isActionStem(query.stems[o]!) && !isGenericVerb(query.stems[o]!)
      ),
    halfObject: actionMatch(scored.action, index.actions[doc]!) >= 0 &&
      namesHalfTheObject(index.nameTerms[doc]!, query),
  };
}

/** Whether a word of a tool's name that is no action is met through a synonym ("folder" and `directory`). */
function creditsObject(nameTerms: readonly string[], credit: ReadonlyMap<string, number>): boolean {
  return nameTerms.some((n) => !isActionStem(n) && (credit.get(n) ?? 0) > 0);
}

/** Whether half or more of the words of a tool's name that are no action (at least one) are request words. */
function namesHalfTheObject(nameTerms: readonly string[], query: ParsedQuery): boolean {
  const object = nameTerms.filter((n) => !isActionStem(n));
  const typed = object.filter((n) => query.stems.some((s, i) => s === n && !query.argumentLike[i])).length;
  return typed >= 1 && typed * 2 >= object.length;
}

/** Whether a word of a tool's name that is no action (its object: `branch` of `create_branch`) is a request word. */
function namesObject(nameTerms: readonly string[], query: ParsedQuery): boolean {
  return nameTerms.some((n) =>
    !isActionStem(n) && query.stems.some((s, i) => s === n && !query.argumentLike[i])
  );
}

const HUBS = new WeakMap<ResolverIndex, Set<number>>();

/** Share of a server's other tools a companion must be the prerequisite of to be a hub (`connect`). */
const HUB_SHARE = 0.5;

/**
 * Companions that most of their server's other tools need first (`connect`, `list-connections`): a step
 * before nearly anything, not a step of a short request.
 */
function hubCompanions(index: ResolverIndex): Set<number> {
  let hubs = HUBS.get(index);
  if (hubs) return hubs;
  hubs = new Set();
  const needed = new Map<number, number>();
  const size = new Map<number, number>();
  index.tools.forEach((_, d) => {
    const s = index.serverOf[d]!;
    size.set(s, (size.get(s) ?? 0) + 1);
    for (const c of index.companions[d]!) needed.set(c, (needed.get(c) ?? 0) + 1);
  });
  for (const [c, n] of needed) {
    const others = size.get(index.serverOf[c]!)! - 1;
    if (others >= 4 && n >= others * HUB_SHARE) hubs.add(c);
  }
  HUBS.set(index, hubs);
  return hubs;
}

/** Hits whose prerequisite siblings are lifted. */
const COMPANION_SOURCES = 3;

/**
 * Lifts the prerequisite siblings of the top hits to a share of that hit's
 * score (never lowers a tool), then re-sorts.
 */
function addCompanions(
  index: ResolverIndex,
  order: [number, number][],
  weight: number,
  tie: (a: number, b: number) => number,
  short = false,
): void {
  const at = new Map(order.map((entry, i) => [entry[0], i]));
  let changed = false;
  const hubs = short ? hubCompanions(index) : undefined;
  for (const [doc, score] of order.slice(0, COMPANION_SOURCES)) {
    for (const c of index.companions[doc]!) {
      if (hubs?.has(c)) continue;
      const lifted = score * weight;
      const i = at.get(c);
      if (i === undefined) {
        at.set(c, order.length);
        order.push([c, lifted]);
        changed = true;
      } else if (order[i]![1] < lifted) {
        order[i]![1] = lifted;
        changed = true;
      }
    }
  }
  if (changed) order.sort((a, b) => b[1] - a[1] || tie(a[0], b[0]));
}

/**
 * Near-duplicate collapsing: a tool with the same short name as a
 * higher-ranked tool (two servers' `read_file`) adds little to a result list,
 * so its score is scaled down and the list re-sorted. Stable and bounded:
 * only the first 100 entries are considered.
 */
function demoteDuplicates(
  order: [number, number][],
  penalty: number,
  tools: readonly CatalogTool[],
  tie: (a: number, b: number) => number,
): void {
  const seen = new Set<string>();
  const head = order.slice(0, 100);
  for (const entry of head) {
    const key = tools[entry[0]]!.short.toLowerCase();
    if (seen.has(key)) entry[1] *= 1 - penalty;
    else seen.add(key);
  }
  head.sort((a, b) => b[1] - a[1] || tie(a[0], b[0]));
  order.splice(0, head.length, ...head);
}

/** A near-duplicate's share of name words with the tool above it (of the two names' words together). */
const NEAR_SHARE = 0.5;
/** How close a step's next tool must score to the near-duplicate whose place it takes. */
const NEAR_EVIDENCE = 0.7;
/** The places a request's steps share: the first five, as `search_tools` shows them. */
const FIRST_PLACES = 5;

/** The object a tool's name acts on: its last word before a qualifier (`price` of `get_stock_price_by_date`). */
function headOf(index: ResolverIndex, d: number): string {
  const words = splitName(index.tools[d]!.short).toLowerCase().split(/[^a-z0-9]+/).filter((w) => w !== "");
  const head = beforeQualifier(words, 1).at(-1) ?? "";
  return stem(head);
}

/** Two tools of one server, doing one action, whose names are mostly the same words. */
function nearDuplicate(index: ResolverIndex, a: number, b: number): boolean {
  if (index.serverOf[a] !== index.serverOf[b] || index.actions[a] !== index.actions[b]) return false;
  if (headOf(index, a) !== headOf(index, b)) return false;
  const x = new Set(index.nameTerms[a]), y = new Set(index.nameTerms[b]);
  let shared = 0;
  for (const t of x) if (y.has(t)) shared++;
  return shared / (x.size + y.size - shared) >= NEAR_SHARE;
}

/**
 * Steps share the first places: in a request of several steps, a tool of the first five that nearly repeats
 * one above it yields its place to the best tool below that repeats none of the first five.
 */
function yieldNearDuplicates(index: ResolverIndex, order: [number, number][], slots: number): void {
  for (let i = 1; i < Math.min(slots, order.length); i++) {
    const d = order[i]![0];
    let dup = false;
    for (let j = 0; j < i && !dup; j++) dup = nearDuplicate(index, order[j]![0], d);
    if (!dup) continue;
    for (let k = slots; k < order.length; k++) {
      const c = order[k]!;
      if (c[1] < NEAR_EVIDENCE * order[i]![1]) break;
      let repeats = false;
      for (let j = 0; j < slots && !repeats; j++) repeats = nearDuplicate(index, order[j]![0], c[0]);
      if (repeats) continue;
      const [yielded] = order.splice(i, 1, [c[0], Math.max(c[1], order[i]![1])]);
      order.splice(k, 1);
      order.splice(slots, 0, yielded!);
      break;
    }
  }
}

/**
 * Orders tools of equal score by evidence, not alphabet: more distinct query terms matched (typed
 * words count double), then the shorter description (a focused tool), then the public name so the
 * order is deterministic.
 */
export function tieBreaker(index: ResolverIndex, query: ParsedQuery): (a: number, b: number) => number {
  const evidence = new Map<number, number>();
  const of = (d: number) => {
    let e = evidence.get(d);
    if (e === undefined) {
      e = 0;
      const terms = index.docTerms[d]!;
      for (const qt of query.terms) if (terms.has(qt.term)) e += qt.expansion ? 1 : 2;
      evidence.set(d, e);
    }
    return e;
  };
  return (a, b) =>
    of(b) - of(a) ||
    index.tools[a]!.description.length - index.tools[b]!.description.length ||
    compareNames(index.tools[a]!, index.tools[b]!);
}

/**
 * Clause diversity: every clause's best tool is moved into the first `slots` places (keeping score
 * order among them), so a multi-step request's second step is not pushed out by five tools of the
 * first step's server. A winner already within the first `slots` stays where it is.
 */
export function diversify(order: [number, number][], winners: readonly number[], slots: number): void {
  const head = order.slice(0, slots);
  const inHead = new Set(head.map(([d]) => d));
  const missing = order.filter(([d]) => winners.includes(d) && !inHead.has(d));
  if (missing.length === 0) return;
  // Make room: drop the lowest non-winners of the head.
  const keep = head.length - Math.min(missing.length, head.filter(([d]) => !winners.includes(d)).length);
  const kept: [number, number][] = [];
  let dropped: [number, number][] = [];
  let room = head.length - keep;
  for (let i = head.length - 1; i >= 0; i--) {
    if (room > 0 && !winners.includes(head[i]![0])) {
      dropped.unshift(head[i]!);
      room--;
    } else kept.unshift(head[i]!);
  }
  const lifted = missing.slice(0, head.length - kept.length);
  const newHead = [...kept, ...lifted].sort((a, b) => b[1] - a[1]);
  const liftedSet = new Set(lifted.map(([d]) => d));
  const rest = order.slice(slots).filter(([d]) => !liftedSet.has(d));
  dropped = dropped.concat(rest).sort((a, b) => b[1] - a[1]);
  order.splice(0, order.length, ...newHead, ...dropped);
}

/** Score factor of a tool whose server the request names by a word of its name ("in asana", "on trello"). */
export const NAMED_SERVER_BONUS = 0.5;

/** A day's or month's name after a word that makes it a date ("on Monday", "next Friday"): no server's name. */
const DATE_NAME =
  /^(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|april|may|june|july|august|september|october|november|december)$/;
const DATE_BEFORE = new Set("on next last this every by until till from before after since".split(" "));

/** Words after which a server's name is the topic asked about ("pages about the kubernetes upgrade"). */
const TOPIC_BEFORE = new Set(
  "about mentions mentioning mention regarding concerning related relating".split(" "),
);

/** How many words back a {@link TOPIC_BEFORE} word makes a name a topic. */
const TOPIC_REACH = 3;

/**
 * The servers the request names: the whole of a server's name (`trello`, `google-calendar` as "google
 * calendar"; `mcp` and `server` left out) as words of its own, not inside an identifier ("redis-0"), not a
 * stop word, not a date ("on Monday").
 */
function namedServers(index: ResolverIndex, text: string): Set<number> {
  const named = new Set<number>();
  if (index.serverWords.size === 0) return named;
  const words = splitWords(text).map((w) => w.parts.length === 1 ? w.parts[0]!.toLowerCase() : "");
  words.forEach((w, i) => {
    if (w === "" || STOP_WORDS.has(w)) return;
    if (DATE_NAME.test(w) && DATE_BEFORE.has(words[i - 1] ?? "")) return;
    if (words.slice(Math.max(0, i - TOPIC_REACH), i).some((b) => TOPIC_BEFORE.has(b))) return;
    for (const { server, rest, described } of index.serverWords.get(w) ?? []) {
      if (described && !namesCategory(index, words, i)) continue;
      if (rest.every((n, k) => words[i + 1 + k] === n)) named.add(server);
    }
  });
  return named;
}

/** Words before a service named by what it is ("in our CRM", "on the wiki", "from confluence"). */
const CATEGORY_BEFORE = new Set("the our my your in on from into to at via".split(" "));

/**
 * The word at `i` is a noun phrase's head after a determiner or preposition ("our CRM", "on confluence"), not
 * a modifier of a word the catalog has ("the local repository").
 */
function namesCategory(index: ResolverIndex, words: readonly string[], i: number): boolean {
  if (!CATEGORY_BEFORE.has(words[i - 1] ?? "")) return false;
  const next = words[i + 1];
  return !next || STOP_WORDS.has(next) || !index.postings.has(stem(next));
}

/** The tools of a server the request names rank {@link NAMED_SERVER_BONUS} higher. */
function namedServerFirst(index: ResolverIndex, text: string, final: Map<number, number>): void {
  const named = namedServers(index, text);
  if (named.size === 0) return;
  // Only when the best tool is of no server named: the name is then what the ranking missed.
  let best = -1, top = -Infinity;
  for (const [d, s] of final) if (s > top) [best, top] = [d, s];
  if (best >= 0 && named.has(index.serverOf[best]!)) return;
  for (const [d, s] of final) if (named.has(index.serverOf[d]!)) final.set(d, s * (1 + NAMED_SERVER_BONUS));
}

/** The second score, or the best score before a named server moved others down (see `rankQuery`). */
function runnerUp(order: [number, number][], unnamed?: Map<number, number>): number | undefined {
  let out = order[1]?.[1];
  if (!unnamed || order.length === 0) return out;
  for (const [d, v] of unnamed) if (d !== order[0]![0] && v > (out ?? -Infinity)) out = v;
  return out;
}

/** Factor of the other servers' tools when a request names a server of the catalog by its name. */
export const NAMED_SERVER_OTHERS = 0.8;

/**
 * The servers a request names: every word of the server's name is a word of the request ("plane", "monday"
 * of "monday.com", "google calendar"), and the name is no action or generic verb ("fetch", "run"), in a
 * catalog of several servers. An ordinary use of the word moves only a catalog that has a server so named.
 */
function serversNamedWhole(index: ResolverIndex, query: ParsedQuery): Set<number> {
  const out = new Set<number>();
  if (index.servers.length < 2) return out;
  const words = new Set(query.stems);
  for (const [i, stems] of serverNameStems(index).entries()) {
    if (stems.length > 0 && stems.every((s) => words.has(s))) out.add(i);
  }
  return out;
}

const serverNames = new WeakMap<ResolverIndex, string[][]>();

/**
 * Each server's name as stems, once per index; empty for a name a request cannot name by it: a part of under
 * three letters, or an action or generic verb.
 */
function serverNameStems(index: ResolverIndex): string[][] {
  let out = serverNames.get(index);
  if (out) return out;
  out = index.servers.map((name) => {
    const parts = splitWords(name).flatMap((w) => w.parts).filter((p) => !STOP_WORDS.has(p));
    if (parts.some((p) => p.length < 3)) return [];
    const stems = parts.map(stem);
    return stems.some((s) => isActionStem(s) || isGenericVerb(s)) ? [] : stems;
  });
  serverNames.set(index, out);
  return out;
}

/** BM25F relevance of each server as a whole, relative to the best server (0..1). */
function serverRelevance(index: ResolverIndex, query: ParsedQuery): Float64Array {
  const scores = new Float64Array(index.servers.length);
  if (index.options.serverWeight <= 0) return scores;
  for (const qt of query.terms) {
    const p = index.serverPostings.get(qt.term);
    if (!p) continue;
    const w = qt.weight * p.idf;
    for (let i = 0; i < p.docs.length; i++) scores[p.docs[i]!]! += w * p.impacts[i]!;
  }
  let max = 0;
  for (const s of scores) max = Math.max(max, s);
  if (max > 0) { for (let i = 0; i < scores.length; i++) scores[i]! /= max; }
  return scores;
}

/**
 * Sibling tools (the best tool's server's) close to the best, within `actionBand` of its score: the
 * request's object has picked the family, the action picks among them. Those doing another action than the
 * one asked for move behind those doing it (a tool whose verb is unknown stays where it is).
 */
function actionFirst(
  index: ResolverIndex,
  order: [number, number][],
  action: number,
  tie: (a: number, b: number) => number,
): void {
  if (order.length < 2) return;
  const floor = order[0]![1] * index.options.actionBand;
  let end = 0;
  while (end < order.length && order[end]![1] >= floor) end++;
  // Siblings: the best tool's server's tools.
  const family = index.serverOf[order[0]![0]]!;
  const band = order.slice(0, end).filter(([d]) => index.serverOf[d] === family);
  const agree = band.filter(([d]) => actionMatch(action, index.actions[d]!) > 0);
  const others = band.filter(([d]) => rankedActionMatch(index, action, d) < 0);
  if (agree.length === 0 || others.length === 0) return;
  const lowest = agree[agree.length - 1]![1];
  const highest = others[0]![1];
  if (highest < lowest) return;
  const scale = (lowest / highest) * 0.95;
  for (const entry of others) entry[1] *= scale;
  order.sort((a, b) => b[1] - a[1] || tie(a[0], b[0]));
}

/**
 * The request's object picks the server: when the first tool does the action asked for (a shared verb put it
 * first) and the object's head noun ("delete the pod x": `pod`) is a word of some
 * servers (their tools' names and lead sentences, their descriptions) and neither of the first tool nor of
 * its server, the tools of servers without it move behind by the action penalty (`delete_task` of a to-do
 * server behind `kubectl_delete`, whose server has `exec_in_pod`).
 */
function objectServerFirst(
  index: ResolverIndex,
  text: string,
  query: ParsedQuery,
  order: [number, number][],
  action: number,
  tie: (a: number, b: number) => number,
): void {
  // The first tool does the action asked for: only the object can tell it is the wrong one.
  if (order.length < 2 || actionMatch(action, index.actions[order[0]![0]]!) <= 0) return;
  const head = objectHead(text, query);
  if (head === undefined) return;
  const servers = index.serverPostings.get(head)?.docs;
  if (!servers || servers.length === 0 || servers.length === index.servers.length) return;
  const top = order[0]![0];
  const has = new Set(servers);
  if (has.has(index.serverOf[top]!) || index.docTerms[top]!.has(head)) return;
  const factor = 1 - index.options.actionPenalty;
  for (const entry of order) {
    if (!has.has(index.serverOf[entry[0]]!) && !index.docTerms[entry[0]]!.has(head)) entry[1] *= factor;
  }
  order.sort((a, b) => b[1] - a[1] || tie(a[0], b[0]));
}

/** Words that end a noun phrase and open a clause ("the fact that…", "a table called…", "the server is…"). */
const OBJECT_END = new Set(
  "that which who whom whose where when if whether is are was were be saying called named titled".split(" "),
);

/**
 * The stem of an imperative's object's head noun: after its verb, the last word of the object (up to a
 * preposition; past one when none came before it: "reply to John's email") that is no action, function word,
 * name, quoted text, number or identifier. None for a request that does not open with a verb.
 */
function objectHead(text: string, query: ParsedQuery): string | undefined {
  const argument = new Set(query.words.filter((_, i) => query.argumentLike[i]));
  let head: string | undefined;
  let first = true;
  for (const w of splitWords(text)) {
    const part = w.parts[0]!;
    if (w.parts.length === 1 && !first && (COMPLEMENT.has(part) || OBJECT_END.has(part))) {
      if (head !== undefined || OBJECT_END.has(part)) break;
      continue;
    }
    if (w.parts.length !== 1 || STOP_WORDS.has(part) || part.length < 2) continue;
    const s = stem(part);
    if (first) {
      // The request opens with its verb.
      if (!isActionStem(s) && !isGenericVerb(s)) return undefined;
      first = false;
      continue;
    }
    if (argument.has(part) || /\d/.test(part) || isActionStem(s) || isGenericVerb(s)) continue;
    head = s;
  }
  return head;
}

/** Words of asking before a clause's verb: "please", "can you", "just". */
const POLITE =
  /^\s*(?:(?:please|pls|plz|can|could|would|will|you|u|just|also|then|and|so|now|ok|okay)\b[\s,]*)*/i;

/** A clause that opens on a verb, after any words of asking ("please save it…", "can you summarize…"): a step. */
function opensOnVerb(clause: string): boolean {
  const first = splitWords(clause.replace(POLITE, "")).flatMap((w) => w.parts)[0];
  if (first === undefined) return false;
  const s = stem(first);
  return isActionStem(s) || isGenericVerb(s) || GENERIC_VERBS.has(s);
}

/** A clause asking a question ("whats going on with…", "which pages changed"): it asks to read what it names. */
const ASKS_WHAT = /^\s*(?:what|what's|whats|when|where|who|which|how|did|do|does|is|are|any)\b/i;

/**
 * Ranks the catalog for a query. The whole query is scored with BM25F and
 * name bonuses; a multi-step query ("find X, then save it to Y") is also
 * scored clause by clause, and each tool's best clause score (relative to
 * that clause's best) is fused in with `clauseWeight`, so every step's best
 * tools reach the top.
 */
export function rankQuery(index: ResolverIndex, text: string, options: SearchOptions = {}): RankedQuery {
  // "Find a tool that reads file contents": the task is what the tool should do.
  text = instrumentLast(withoutToolFrame(text));
  const maxHits = Math.max(1, options.maxHits ?? 20);
  const query = fitQuery(index, text);
  const o = index.options;
  const empty: RankedQuery = { query, clauses: 1, count: 0, hits: [] };
  if (query.terms.length === 0 || index.tools.length === 0) return empty;
  const full = accumulate(index, query);
  if (full.touched.length === 0) return empty;
  full.instances = namedInstances(text);
  const poolSize = Math.max(o.pool, maxHits);
  const clauseTexts = o.clauseWeight > 0 ? splitClauses(text) : [];
  /** Each clause's action, read once (`requestAction`), when there are several. */
  const clauseActions = clauseTexts.length > 1 ? clauseTexts.map((c) => requestAction(c)) : [];
  // One step's action shapes the whole ranking; several steps' each shape their clause's.
  if (clauseTexts.length <= 1) {
    [full.action, full.fresh, full.undone] = [requestAction(text), asksForNew(text), calledOff(text)];
  } else {
    // Clauses of which one asks an action and the rest only say things ("whats going on with ticket 48213? I
    // need the whole back-and-forth before I call them back"): one step, whose action shapes the ranking.
    // …asked by its opening verb or question word: "tell me when something changes" changes nothing.
    const acting = clauseActions.flatMap((a, i) => a !== 0 ? [i] : []);
    const opens = (c: string) => {
      const first = splitWords(c.replace(POLITE, "")).flatMap((w) => w.parts)[0];
      return first !== undefined &&
        (isActionStem(stem(first)) || isGenericVerb(stem(first)) || ASKS_WHAT.test(c));
    };
    if (acting.length === 1 && opens(clauseTexts[acting[0]!]!)) {
      const c = clauseTexts[acting[0]!]!;
      [full.action, full.fresh, full.undone] = [clauseActions[acting[0]!]!, asksForNew(c), calledOff(c)];
    }
  }
  const fullTop = topScores(index, full, poolSize);
  const clauseQueries = clauseTexts.length > 1 ? clauseTexts.map((c) => fitQuery(index, c, true)) : [];
  const final = new Map<number, number>();
  let fullMax = 0;
  for (const s of fullTop.values()) fullMax = Math.max(fullMax, s);
  const server = serverRelevance(index, query);
  const withServer = (d: number, relative: number) => relative + o.serverWeight * server[index.serverOf[d]!]!;
  /** Each clause's best tool, in clause order. */
  const winners: number[] = [];
  if (clauseTexts.length <= 1) {
    for (const [d, s] of fullTop) final.set(d, withServer(d, s / fullMax) * fullMax);
  } else {
    const clauseBest = new Map<number, number>();
    for (const [c, cq] of clauseQueries.entries()) {
      if (cq.terms.length === 0) continue;
      const scored = accumulate(index, cq);
      [scored.action, scored.fresh] = [clauseActions[c]!, asksForNew(clauseTexts[c]!)];
      scored.undone = calledOff(clauseTexts[c]!);
      scored.instances = namedInstances(clauseTexts[c]!);
      const top = topScores(index, scored, Math.min(poolSize, CLAUSE_POOL));
      let max = 0, best = -1;
      for (const [d, s] of top) {
        if (s > max) [max, best] = [s, d];
      }
      if (max <= 0) continue;
      // Only a clause match with real evidence claims a place: rare words matched, in the tool's own
      // fields, and a clear lead over the clause's runner-up (a short clause's share covered is no evidence).
      if (best >= 0 && !winners.includes(best)) {
        let second = 0;
        for (const [d, s] of top) if (d !== best && s > second) second = s;
        const c = coverageOf(index, best, cq);
        if (
          c.toolFieldCoverage > 0 && matchedMass(index, c.matched, cq) >= CLAUSE_MASS * maxIdfOf(index) &&
          max >= CLAUSE_MARGIN * second
        ) winners.push(best);
      }
      const clauseServer = serverRelevance(index, cq);
      for (const [d, s] of top) {
        const relative = Math.pow(s / max, CLAUSE_SHARPNESS) +
          o.serverWeight * clauseServer[index.serverOf[d]!]!;
        clauseBest.set(d, Math.max(clauseBest.get(d) ?? 0, relative));
      }
    }
    for (const d of new Set([...fullTop.keys(), ...clauseBest.keys()])) {
      const f = fullTop.get(d) ?? full.scores[d]! * bonusOf(index, d, full);
      const fused = (withServer(d, f / fullMax) + o.clauseWeight * (clauseBest.get(d) ?? 0)) /
        (1 + o.clauseWeight);
      final.set(d, fused * fullMax);
    }
  }
  oneWordEvidence(index, query, final);
  // A request naming a server ("make a new issue in plane", "on monday.com") asks for that server's tools.
  const named = serversNamedWhole(index, query);
  // The scores before it: the tools the server's name moved down still bound how clear the first one's lead
  // is (a tool first among its server's is no confident answer for being of the server named).
  const unnamed = named.size > 0 ? new Map(final) : undefined;
  if (named.size > 0) {
    for (const [d, v] of final) if (!named.has(index.serverOf[d]!)) final.set(d, v * NAMED_SERVER_OTHERS);
  }
  namedServerFirst(index, text, final);
  // A request about the caller ("what's my username", "what's on my plate") asks for the tools that act for
  // the caller (`get_me`, `get_my_tasks`).
  if (FIRST_PERSON.test(text)) {
    const own = callerTools(index);
    for (const [d, v] of final) if (own[d]) final.set(d, v * CALLER_BONUS);
  }
  const tools = index.tools;
  const tie = tieBreaker(index, query);
  const order = [...final].sort((a, b) => b[1] - a[1] || tie(a[0], b[0]));
  if (o.companionWeight > 0) {
    const short = clauseTexts.length <= 1 && contentWords(text) <= ACTION_MAX_WORDS;
    addCompanions(index, order, o.companionWeight, tie, short);
  }
  if (o.duplicatePenalty > 0) demoteDuplicates(order, o.duplicatePenalty, tools, tie);
  if (o.clauseDiversity > 0 && winners.length > 1) diversify(order, winners, o.clauseDiversity);
  // Several steps share the first five places: a step's near-duplicates yield to the next step's tools.
  if (clauseTexts.filter(opensOnVerb).length >= 2) yieldNearDuplicates(index, order, FIRST_PLACES);
  if (o.actionPenalty > 0 && full.action !== 0) {
    objectServerFirst(index, text, query, order, full.action, tie);
  }
  if (o.actionBand > 0 && full.action !== 0) actionFirst(index, order, full.action, tie);
  const hits = order.slice(0, maxHits).map(([doc, score]) => ({
    tool: tools[doc]!,
    score,
    ...evidence(index, doc, query, clauseQueries, full),
  }));
  markMissedObjects(
    index,
    text,
    query,
    hits,
    order.slice(0, Math.max(maxHits, OBJECT_RIVALS)).map(([d]) => d),
  );
  if (hits[0] && callerScoped(hits[0].tool) && namesOtherParty(text)) hits[0].otherParty = true;
  // A request of several steps has no one action: its first step's, on a locator that step names, is what the
  // first tool is asked to do ("fix the typo in README.md: 'recieve' should be …" and `edit_file(path)`).
  if (hits[0] && !hits[0].located && clauseQueries.length > 1) {
    const d = order[0]![0];
    const first = clauseActions[0]!;
    hits[0].located = first !== 0 && actionMatch(first, index.actions[d]!) > 0 &&
      takesLocator(index.tools[d]!.inputFields, clauseQueries[0]!.locators);
  }
  // A long request is mostly story: a clause of it asking for an action the first tool performs (or one of
  // the actions a generic verb may mean), with a word of the tool's name that is no action typed anywhere in the
  // request, is 150's evidence read in that clause ("… I think reviews got stuck in moderation. show me the ones
  // that are still pending?" and `woo_products_reviews_list`). Only a way past `no_match`: never confident.
  if (hits[0] && !hits[0].actionAndObject && clauseQueries.length > 1) {
    const d = order[0]![0];
    hits[0].actionAndObject = namesObject(index.nameTerms[d]!, query) && clauseTexts.some((t, i) => {
      // A question's reading ("which of them mention …?") is no action asked for.
      if (QUESTION.test(t)) return false;
      return actionMatch(clauseActions[i]!, index.actions[d]!) > 0;
    });
  }
  if (hits[0]) {
    const stated = requestActions(text);
    hits[0].keepsStatement = stated.stated === true &&
      actionMatch(stated.action, index.actions[order[0]![0]]!) === 1;
  }
  if (hits[0]) {
    const d = order[0]![0];
    const server = index.serverOf[d]!;
    hits[0].serverAndObject = (named.has(server) || namedServers(index, text).has(server)) &&
      hits[0].halfObject;
  }
  // Companions lifted without a lexical match of their own count as matches too.
  let lifted = 0;
  for (const [doc] of order) if (full.scores[doc] === 0) lifted++;
  const ranked: RankedQuery = {
    query,
    clauses: Math.max(1, clauseTexts.length),
    count: full.touched.length + lifted,
    hits,
    runnerUpScore: runnerUp(order, unnamed),
  };
  const single = clauseTexts.length <= 1;
  if (
    noFileTool(
      index,
      single ? [text] : clauseTexts,
      single ? [query] : clauseQueries,
      single ? [full.action] : clauseActions,
    )
  ) {
    ranked.noFileTool = true;
  }
  return ranked;
}

/**
 * Tools from which a catalog is large: a word many of them share is met by tools of unrelated servers, so one
 * such word alone is no evidence ("price" in a stock quote, a Stripe price and a product page).
 */
export const LARGE_CATALOG = 1000;

/** Score factor of a tool matching a single common request word in a large catalog ({@link oneWordEvidence}). */
export const ONE_WORD_FACTOR = 0.85;

/** Below this share of the catalog's largest IDF a word is common: many tools use it. */
const COMMON_WORD_SHARE = 0.5;

/** The best tools read for {@link oneWordEvidence}. */
const ONE_WORD_RIVALS = 30;

/** Fewest request words for {@link oneWordEvidence}: a shorter request has no second word to meet. */
const ONE_WORD_MIN_WORDS = 3;

/**
 * In a large catalog, a tool meeting at most one word of a request of three or more, a word many tools use,
 * moves behind by {@link ONE_WORD_FACTOR} when another of the best tools meets two or more of its words: at 2,000
 * tools a generic tool of an unrelated server (a converter, `drop-database`, a `search`) reaches the first five
 * through one surface word.
 */
function oneWordEvidence(index: ResolverIndex, query: ParsedQuery, final: Map<number, number>): void {
  const n = query.words.length;
  if (index.tools.length < LARGE_CATALOG || n < ONE_WORD_MIN_WORDS) return;
  const ranked = [...final].sort((a, b) => b[1] - a[1]).slice(0, ONE_WORD_RIVALS);
  const maxIdf = maxIdfOf(index);
  const idfs = query.stems.map((s) => index.postings.get(s)?.idf);
  // As `coverageOf` counts words: a compound's unit once, no unknown argument ("Paris"), an optional word only
  // when met; the terms that meet a word are the typed words and their strong expansions.
  const unitOf = query.unitOf;
  const counted = query.words.map((_, i) =>
    (unitOf === undefined || unitOf[i] === i) && !(query.argumentLike[i] && idfs[i] === undefined)
  );
  const terms = query.terms.filter((qt) => !(qt.expansion && qt.weight < MIN_COVERAGE_WEIGHT));
  const met = new Uint8Array(n);
  const hits = new Int32Array(ranked.length);
  /** The IDF of the rarest word each tool meets (0: it meets none, only synonyms or implied words). */
  const rarest = new Float64Array(ranked.length);
  ranked.forEach(([d], k) => {
    met.fill(0);
    const own = index.docTerms[d]!;
    for (const qt of terms) {
      if (own.has(qt.term)) { for (const o of qt.origins) met[unitOf ? unitOf[o]! : o] = met[o] = 1; }
    }
    let hit = 0, any = false, all = 0;
    for (let i = 0; i < n; i++) {
      if (!met[i]) continue;
      all++;
      rarest[k] = Math.max(rarest[k]!, idfs[i] ?? maxIdf);
    }
    for (let i = 0; i < n; i++) {
      if (!counted[i] || (query.optional?.[i] && !met[i])) continue;
      any = true;
      if (met[i]) hit++;
    }
    hits[k] = any ? hit : all;
  });
  if (!hits.some((h) => h >= 2)) return;
  ranked.forEach(([d, v], k) => {
    if (hits[k]! <= 1 && rarest[k]! < COMMON_WORD_SHARE * maxIdf) final.set(d, v * ONE_WORD_FACTOR);
  });
}

/** Ranked hits for a query, best first. */
export function search(index: ResolverIndex, query: string, options: SearchOptions = {}): SearchHit[] {
  return rankQuery(index, query, options).hits;
}
