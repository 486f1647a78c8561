/**
 * Query expansion vocabulary. Query words expand to related index terms at a lower weight; the
 * original word always stays, so an expansion can add recall but never replace an exact match.
 *
 * Three sources, in order of trust:
 * - {@link DOMAIN_TERMS}: spellings of the same thing that WordNet lacks (abbreviations, file
 *   extensions, product names of a format), each with its reason;
 * - {@link INTENTS}: retrieval verbs ("retrieve", "inspect", "look up") mean the read side of a
 *   catalog: `get`, `read`, `info`, `list` tools;
 * - related words derived from WordNet 3.1 (see `lexicon.ts`): same-sense synonyms and
 *   near-synonyms (verb group, derivation, verb hypernym), weaker than both of the above.
 *
 * @module
 */
import { relatedTerms } from "./lexicon.ts";
import { stem } from "./tokenize.ts";

/** Weight of an equivalent spelling (abbreviation, file extension, product name of the format). */
export const EQUIVALENT_WEIGHT = 0.85;

/** Weight of an intent term (a retrieval verb's `get`/`read`/`info`/`list`, a web word's `web`). */
export const SYNONYM_WEIGHT = 0.4;

/** Weight of the read-side terms a retrieval verb implies: a hint, weaker than the object named. */
export const RETRIEVAL_WEIGHT = 0.25;

/** Weights of WordNet relations relative to the query word; tuned on the LiveMCPBench dev half. */
export const WORDNET_WEIGHTS = { synonym: 0.3, near: 0.15 };

/**
 * Domain terms WordNet lacks: every member expands to every other member at
 * {@link EQUIVALENT_WEIGHT}. Each line says why it is here.
 */
export const DOMAIN_TERMS: readonly [string, string][] = [
  ["repository repo", "repo: the usual short form in git hosting"],
  ["pull pr", "PR: pull request"],
  ["ci pipeline workflow", "CI: continuous integration runs as pipelines/workflows"],
  ["kubernetes k8s kubectl", "k8s: numeronym; kubectl: its command line"],
  ["directory dir folder", "dir: shell abbreviation; folder: the desktop word for a directory"],
  ["database db sql", "db: abbreviation; SQL: the language tools take"],
  ["document doc docx", "doc/docx: word-processor file extensions"],
  ["presentation ppt pptx powerpoint slide", "ppt/pptx: slide deck file extensions and product"],
  ["spreadsheet xlsx xls excel csv", "xls/xlsx/csv: tabular file formats"],
  ["markdown md", "md: file extension"],
  ["javascript js node", "js: abbreviation and runtime"],
  ["typescript ts", "ts: abbreviation"],
  ["python py pip", "py: file extension; pip: its package tool"],
  ["configuration config cfg", "config/cfg: abbreviations"],
  ["environment env", "env: abbreviation"],
  ["message msg", "msg: abbreviation"],
  ["information info metadata", "info: abbreviation; metadata: information about an item"],
  ["application app", "app: abbreviation"],
  ["statistics stats", "stats: abbreviation"],
  ["identifier id uuid", "id/uuid: abbreviations"],
  ["url link uri href", "web addresses"],
  ["email mail inbox smtp", "e-mail spellings and protocol"],
  ["image img png jpg jpeg svg", "image file extensions"],
  ["pdf acrobat", "PDF: document format"],
  ["cryptocurrency crypto bitcoin btc ethereum eth", "crypto: abbreviation; coins and tickers"],
  ["youtube yt", "yt: abbreviation"],
  ["npm pypi package", "package registries"],
  ["calculate calculator calc", "calc: abbreviation"],
  ["summarize summarise summary tldr", "tl;dr: summary"],
  [
    "difference different diff",
    "diff: short for the differences between two texts; the stemmer keeps different apart",
  ],
  ["issue bug ticket", "issue trackers file a bug report or a ticket as an issue"],
  ["documentation docs", "docs: short for documentation (and a database's documents, so recall only)"],
  ["authentication auth", "auth: abbreviation"],
  ["authorization auth", "auth: abbreviation"],
  ["organization org", "org: abbreviation"],
  ["administrator admin", "admin: abbreviation"],
  ["parameter param", "param: abbreviation"],
  ["specification spec", "spec: abbreviation"],
  ["transaction txn", "txn: abbreviation"],
  ["certificate cert", "cert: abbreviation"],
  ["temporary temp tmp", "temp/tmp: abbreviations"],
  ["previous prev", "prev: abbreviation"],
  ["library lib", "lib: abbreviation"],
  ["notification notif", "notif: abbreviation"],
  ["description desc", "desc: abbreviation"],
  ["attribute attr", "attr: abbreviation"],
  ["reference ref", "ref: abbreviation"],
];

/**
 * Directed intents: a word on the left also searches for the words on the right at
 * {@link SYNONYM_WEIGHT}. Retrieval verbs mean reading an existing thing, not saving it.
 */
export const INTENTS: readonly [string, string][] = [
  ["retrieve fetch inspect lookup obtain view display show", "get read info list"],
  ["open load", "read"],
  ["enumerate browse", "list"],
  // Words for web content mean a web fetch/browse tool.
  ["download webpage website internet online http https", "web"],
  // A README is a file of a repository: reading one is reading a file's contents.
  ["readme", "file content"],
  // Remembering and forgetting are done to a memory (WordNet relates remember and memory only weakly).
  ["remember remembering memorize memorise forget", "memory"],
  // To echo is to repeat back what was said (WordNet has echo → repeat, not the way a request asks).
  ["repeat", "echo"],
  // To clone a thing is to make a copy of it: a copy or a duplicate ("clone the Template tab").
  ["clone", "copy duplicate"],
  // A date relative to now needs today's date first: an agent does not know it.
  ["today tomorrow yesterday tonight", "current date time"],
];

/** A related term and its weight. */
export interface Synonym {
  term: string;
  weight: number;
  /** From WordNet (general knowledge) rather than the curated lists. */
  general?: boolean;
  /**
   * Another spelling of the same word (an abbreviation, a short form: `repo`, `k8s`, `ppt`): it counts like
   * the word typed, name bonus included. Other related terms add recall only.
   */
  spelling?: boolean;
}

/**
 * Words of {@link DOMAIN_TERMS} that are spellings of one word (an abbreviation, a short form, a file
 * extension of one format): each counts like the other typed, name bonus included. The groups' other members
 * relate different things ("csv" and "xls", "inbox" and "email", "png" and "svg", a bug and a ticket, "sql"
 * and a database): each finds the other, but never earns its name bonus (issue #42).
 */
const SPELLINGS: readonly string[] = [
  "repository repo",
  "pull pr",
  "kubernetes k8s",
  "directory dir folder",
  "database db",
  "document doc docx",
  "presentation ppt pptx powerpoint",
  "markdown md",
  "javascript js",
  "typescript ts",
  "python py",
  "configuration config cfg",
  "environment env",
  "message msg",
  "information info",
  "application app",
  "statistics stats",
  "identifier id",
  "url uri",
  "youtube yt",
  "calculate calc",
  "authentication auth",
  "authorization auth",
  "organization org",
  "administrator admin",
  "parameter param",
  "specification spec",
  "transaction txn",
  "certificate cert",
  "temporary temp tmp",
  "previous prev",
  "library lib",
  "notification notif",
  "description desc",
  "attribute attr",
  "reference ref",
];

function stems(words: string): string[] {
  return words.split(/\s+/).filter(Boolean).map(stem);
}

/** Stem -> stems it is another spelling of (see {@link SPELLINGS}). */
let spellings: Map<string, Set<string>> | undefined;

function build(): Map<string, Map<string, number>> {
  const map = new Map<string, Map<string, number>>();
  spellings = new Map();
  const add = (from: string, to: string, weight: number) => {
    if (from === to) return;
    let m = map.get(from);
    if (!m) map.set(from, m = new Map());
    m.set(to, Math.max(m.get(to) ?? 0, weight));
  };
  for (const [group] of DOMAIN_TERMS) {
    const members = stems(group);
    for (const a of members) for (const b of members) add(a, b, EQUIVALENT_WEIGHT);
  }
  for (const words of SPELLINGS) {
    const members = stems(words);
    for (const a of members) {
      let set = spellings.get(a);
      if (!set) spellings.set(a, set = new Set());
      for (const b of members) if (b !== a) set.add(b);
    }
  }
  INTENTS.forEach(([left, right], i) => {
    const weight = i === 0 ? RETRIEVAL_WEIGHT : SYNONYM_WEIGHT;
    for (const a of stems(left)) for (const b of stems(right)) add(a, b, weight);
  });
  return map;
}

let curated: Map<string, Map<string, number>> | undefined;

/** Terms related to a stemmed query term, with their relative weights (empty when none). */
export function synonymsOf(term: string): readonly Synonym[] {
  curated ??= build();
  const out = new Map<string, Synonym>();
  const same = spellings!.get(term);
  for (const [t, weight] of curated.get(term) ?? []) {
    out.set(t, same?.has(t) ? { term: t, weight, spelling: true } : { term: t, weight });
  }
  const w = WORDNET_WEIGHTS;
  const put = (t: string, weight: number) => {
    if (t !== term && weight > 0 && (out.get(t)?.weight ?? 0) < weight) {
      out.set(t, { term: t, weight, general: true });
    }
  };
  if (w.synonym > 0 || w.near > 0) {
    for (const r of relatedTerms(term)) {
      const weight = r.synonym ? w.synonym : w.near;
      put(r.term, weight);
      // A related verb's "-ation" noun is the same word ("note" -> observe -> observation).
      for (const f of family(r.term)) put(f, weight);
    }
  }
  for (const f of family(term)) put(f, FAMILY_WEIGHT);
  return [...out.values()];
}

/** Weight of a word's own "-ation" noun or verb (`observ` <-> `observat`): the same word, as recall. */
export const FAMILY_WEIGHT = 0.85;

/**
 * The stems of a stem's "-ation" family the stemmer keeps apart (it cuts "observation" to `observat`,
 * "observe" to `observ`; "creation" and "create" already meet at `creat`): the verb and its noun, when
 * WordNet derives one from the other.
 */
function family(term: string): string[] {
  const out: string[] = [];
  const related = relatedTerms(term);
  if (term.length < 3) return out;
  if (related.some((r) => r.term === `${term}at`)) out.push(`${term}at`);
  const base = term.slice(0, -2);
  if (term.endsWith("at") && base.length >= 4 && related.some((r) => r.term === base)) out.push(base);
  return out;
}
