/**
 * Query text to weighted terms: the words the caller typed (deduplicated by
 * stem, bounded), the joined form of identifiers they pasted, and synonym
 * expansions at a lower weight.
 *
 * @module
 */
import {
  DIRECTORY_INTENT,
  extractLocators,
  hasPastedIdentifier,
  IDENTIFIER_WEIGHT,
  PATH_INTENT_WEIGHT,
  PATH_INTENTS,
} from "./locators.ts";
import { isForeignStopWord, PARTICLES, phrasalKey, relatedTerms } from "./lexicon.ts";
import { contentWords, GENERIC_VERBS, splitClauses } from "./clauses.ts";
export { MAX_CLAUSES, splitClauses } from "./clauses.ts";
import { synonymsOf } from "./synonyms.ts";
import { bounded, CJK, splitWords, stem, STOP_WORDS, type Word } from "./tokenize.ts";
import { chineseWords } from "./zh_gloss.ts";
import {
  aboutPhrases,
  ACTION,
  ACTION_MAX_WORDS,
  actionTerms,
  ARITHMETIC,
  ARITHMETIC_TERMS,
  arithmeticTerms,
  idiomWords,
  isActionStem,
  KNOWN_ABOUT,
  namesLink,
  OPERATOR_WORDS,
  requestActions,
  STATED_VALUE,
} from "./actions.ts";

/** Weight of the terms {@link ARITHMETIC} implies: the request names the need outright. */
export const ARITHMETIC_WEIGHT = 1;

/** Weight of the words a request's action looks for in tools (`actions.ts`): a synonym's. */
export const ACTION_TERM_WEIGHT = 0.3;

/** What a request calling an action off ("don't send it after all") looks for in tools (recall only). */
const CANCEL_TERMS: readonly string[] = "cancel undo revert unschedule unsubscribe abort".split(" ").map(
  stem,
);

/** At most this many distinct query words are kept; the rest are ignored. */
export const MAX_QUERY_TERMS = 64;

/** Weight of the joined form of a pasted identifier (`getFileInfo` -> `getfileinfo`). */
const COMPOUND_WEIGHT = 0.6;

/** One term looked up in the index. */
export interface QueryTerm {
  /** Stemmed index term. */
  term: string;
  /** Multiplier on the term's BM25F contribution. */
  weight: number;
  /** Indexes into {@link ParsedQuery.words} of the query words this term stands for. */
  origins: number[];
  /** True for a synonym or compound, false for a word the caller typed. */
  expansion: boolean;
  /**
   * A general-knowledge expansion (WordNet): used only when the word it came from is rare in the
   * catalog (see `rank.ts`), where a vocabulary mismatch is likely.
   */
  general?: boolean;
  /**
   * A related word (`synonyms.ts`: a domain term, a retrieval verb's read-side words, WordNet; a phrasal
   * verb's synonyms): it adds recall, never the name bonus (see `rank.ts`).
   */
  synonym?: boolean;
  /**
   * A word of a stated value ("…: deadline moved to March 14", "note that Falcon is written in Go"): given to
   * the tool, it names the tool no more than its weight says (its name credit is its weight, see `rank.ts`).
   */
  given?: boolean;
}

/** A parsed query. */
export interface ParsedQuery {
  /** Distinct query words as typed (folded, unstemmed), in order; the unit of `matched_fraction`. */
  words: string[];
  /** Stems of {@link words}, same order. */
  stems: string[];
  /**
   * Per word: it looks like an argument rather than a capability (a number,
   * quoted text, or a capitalized name inside a sentence: "weather in Paris").
   */
  argumentLike: boolean[];
  /** Every term to look up: the words' stems first, then compounds and synonyms. */
  terms: QueryTerm[];
  /**
   * Stems of the prose's content words in typed order, repeats kept (paths and URLs left out), with `""`
   * where a sentence or step ends or a number or generic verb stands: the adjacent pairs of non-empty stems
   * are the query's two-word phrases ("word cloud", "market cap").
   */
  sequence: string[];
  /**
   * Per word: it counts towards coverage only where a tool matches it. The gloss of a single Chinese character
   * left by segmentation (`里` "lining", `号` "roar"): mostly a function or measure word.
   */
  optional?: boolean[];
  /**
   * Per word: the word it is part of (its own index when none). The English words of one Chinese word's
   * gloss ("notice or announcement") are one word of the request: matched when any of them is.
   */
  unitOf?: number[];
  /**
   * Per word of a short single-step request: the head noun it modifies in one noun phrase (its index), or -1
   * ("the Tasks table": `tasks` -> `table`). `rank.ts` weighs a modifier down where it and its head name
   * different tools.
   */
  headOf?: number[];
  /**
   * Per word: it belongs to a value the request states ("saying I'm in", "called orders", "that Bob likes
   * tea"): no capability a tool doing the asked action has to match.
   */
  stated?: boolean[];
  /** Index of the request's verb when it is not its first word: the imperative after a statement. */
  verbAt?: number;
  /** The request asks what is known about a thing ("what do you know about Ana?"): a search for it. */
  asksAbout?: boolean;
  /** The kinds of locator the request names: a file path, a web address (`url`). */
  locators?: { path: boolean; url: boolean };
  /** The request uses an English function word no Romance language shares: it is written in English. */
  english?: boolean;
}

/**
 * Request verbs that say little about which tool: "find the painting",
 * "get me the weather", "show me". They still count, at this weight.
 */
const GENERIC_WEIGHT = 0.5;

/** The light verb whose action is its object's ("make a list" lists, "make a folder named x" creates). */
const LIGHT_VERB = stem("make");

/**
 * Weight of a phrasal verb's WordNet synonym ("add up" -> `sum`, "find out" -> `discover`), relative to
 * the verb: above a single word's synonym, since the verb and its particle together pin down the sense.
 */
export const PHRASAL_WEIGHT = 0.5;

/** Multiplier on the weight of an argument-like word (a capitalized name inside a sentence, quoted text). */
export const ARGUMENT_WEIGHT = 0.75;

/**
 * Multiplier on the weight of a word inside quotes ("find the painting \"Corridor in the Asylum\""): a
 * title or pasted value, rarely the capability. Capitalized names are not down-weighted: measured, that
 * cost R@5 on LiveMCPBench and on the held-out set, since they are as often a product or service the
 * request is about ("on Slack", "in GitLab").
 */
export const QUOTED_WEIGHT = 0.5;

/** Weight of a word only in what a request says not to do or need ("dont need the messages"). */
export const REFUSED_WEIGHT = 0.5;

/**
 * "Don't", "dont", "do not" and what follows it to the end of its clause (a comma, a full stop, "but", "just",
 * "only"): what the request says not to do or need. "Don't forget" asks to remember and "don't send it yet"
 * puts the action off, so neither refuses anything.
 */
const REFUSAL =
  /\b(?:don[’']?t|do\s+not)\s+(?!forget\b)([^,;:.!?]*?)(?=[,;:.!?]|\s+(?:but|just|only|instead)\b|$)/giu;

/** The words (folded) of a request said only in what it refuses ({@link REFUSAL}), not elsewhere in it. */
export function refusedWords(text: string): Set<string> {
  const inside = new Set<string>();
  let outside = text;
  for (const m of text.matchAll(REFUSAL)) {
    // "Don't send it yet" puts the action off; it will be done.
    if (/\byet\b/i.test(m[1]!)) continue;
    for (const w of splitWords(m[1]!)) for (const part of w.parts) inside.add(part);
    outside = outside.replace(m[0], " ");
  }
  if (inside.size === 0) return inside;
  for (const w of splitWords(outside)) for (const part of w.parts) inside.delete(part);
  return inside;
}

/**
 * Multiplier on the content word right after a number: a unit or counted thing of an argument
 * ("3 days", "2 adults"), weak evidence of which tool. Tuned on the LiveMCPBench dev half.
 */
export const UNIT_WEIGHT = 0.5;

/**
 * The second half of a hyphenated adjective ("LLM-related", "cloud-based", "AI-powered") says how the
 * first half applies, not what to do: it weighs {@link MODIFIER_WEIGHT}.
 */
const MODIFIER_SUFFIXES: ReadonlySet<string> = new Set(
  "related based powered driven friendly specific like style oriented centric free aware ready level wide"
    .split(" "),
);

/** Multiplier on the weight of a hyphenated adjective's second half (see {@link MODIFIER_SUFFIXES}). */
export const MODIFIER_WEIGHT = 0.25;

/** English function words no Romance language shares: a request using one is written in English. */
const ENGLISH_FUNCTION_WORDS =
  /\b(?:the|my|your|our|their|this|these|those|of|and|is|are|was|with|from|for|please|it)\b/i;

/** A word of two to five capitals standing alone: an acronym. */
const ACRONYM = /(?<![\p{L}\p{N}])\p{Lu}{2,5}(?![\p{L}\p{N}])/gu;

/** Weight of a number typed in the query (`2008`, `300km` stays a word). */
const NUMBER_WEIGHT = 0.3;

const QUOTED =
  /["“”«»「」]([^"“”«»「」]{1,120})["“”«»「」]|(?<![\p{L}\p{N}])'([^']{1,120})'(?![\p{L}\p{N}])/gu;

/** A quoted identifier (`"get_file_info"`, `'read-file'`, `"getFileInfo"`): likely a pasted tool name. */
const IDENTIFIER = /^\s*(?:[\p{L}\p{N}]+(?:[_\-.:/][\p{L}\p{N}]+)+|\p{Ll}+\p{Lu}[\p{L}\p{N}]*)\s*$/u;

/**
 * The words inside quotes (double, typographic, guillemets, corner brackets, or single quotes); with
 * `prose`, only quoted text that is not a lone identifier.
 */
function quotedWords(text: string, prose = false): Set<string> {
  const out = new Set<string>();
  for (const m of text.matchAll(QUOTED)) {
    const inside = m[1] ?? m[2] ?? "";
    if (prose && IDENTIFIER.test(inside)) continue;
    for (const w of splitWords(inside)) for (const p of w.parts) out.add(p);
  }
  return out;
}

/**
 * An email address, or an @handle not inside one. The address starts where its run of letters starts: tried
 * from every letter of a long run, the match took time quadratic in the run (7 s for 16,384 letters).
 */
const ADDRESSEE =
  /(?<![\p{L}\p{N}._%+-])[\p{L}\p{N}._%+-]+@[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)+|(?<![\p{L}\p{N}@])@[\p{L}][\p{L}\p{N}._-]*/gu;

/**
 * Words that name things rather than capabilities: quoted text, capitalized words inside a sentence, email
 * addresses and @handles.
 */
function argumentWords(text: string): Set<string> {
  const out = quotedWords(text);
  const addAll = (t: string) => {
    for (const w of splitWords(t)) for (const p of w.parts) out.add(p);
  };
  // A capitalized word not at the start of a sentence ("flights to Tokyo"), including CamelCase brands.
  for (const m of text.matchAll(/(?<=[\p{L}\p{N},;)]\s+)\p{Lu}[\p{L}\p{N}]*/gu)) addAll(m[0]);
  // An email address or an @handle names someone ("email sara@acme.io", "DM @priya"): a value, not a word.
  if (text.includes("@")) { for (const m of text.matchAll(ADDRESSEE)) addAll(m[0]); }
  return out;
}

/**
 * A question of how to reach a place: "how do I get to", "how can we get there", "how to walk from", "how
 * should we travel from". Not "how do I get the logs" (no to/there/from after the verb).
 */
export const ROUTE_QUESTION =
  /\bhow (?:(?:do|can|should|would) (?:i|we|you) |to )?(get|go|travel|walk|drive) (?:to|there|from)\b/i;

/** What a {@link ROUTE_QUESTION} asks for. */
export const ROUTE_TERMS: readonly string[] = ["direction", "route"].map(stem);

/**
 * Weight of {@link ROUTE_TERMS} for a route question: the phrase names the need outright, so its terms weigh
 * like typed words (LiveMCPBench dev half: 0.3 and 0.5 changed nothing, 0.7 to 1.5 the same ranks).
 */
export const ROUTE_WEIGHT = 1;

/**
 * A request to buy something ("I want to buy", "where can I purchase", "best selling", "on sale"): shops, prices
 * and buying links are on the web, though the request names neither the web nor a browser.
 */
export const SHOPPING =
  /\b(buy|buying|purchase|purchasing|shop|shopping|best[- ]selling|bestsellers?|for sale|on sale|discount(?:s|ed)?)\b/i;

/**
 * Phrases that name what a request wants without its word, and the words they imply (general English):
 * several things at once ("several files", "read a.txt and b.txt at once") are multiple; "how big" or "how
 * large" asks for a size. The first group, when present, is the word the implied terms stand for. (Keeping a
 * stated fact, "remember that…", as knowledge in a memory was measured and dropped: the relative-date set
 * lost 0.021 R@5.)
 */
export const PHRASE_INTENTS: readonly [RegExp, readonly string[]][] = [
  [/\b(several|multiple|many|both)\s+files?\b|\bfiles?\b.{0,80}\b(?:at once|together|in one go)\b/i, [
    "multiple",
  ]],
  [/\bhow (big|large|heavy)\b|\bwhat (size)\b/i, ["size"]],
  // "How far", "how fast", "how old", "how tall" ask for a distance, a speed, an age, a height.
  [/\bhow (far)\b/i, ["distance"]],
  [/\bhow (fast|quick|quickly)\b/i, ["speed"]],
  [/\bhow (old)\b/i, ["age"]],
  [/\bhow (tall|high)\b/i, ["height"]],
  // "How many" asks for a count ("how many docs have status active", "how many tasks are still open").
  [/\bhow many\b/i, ["count"]],
  // Asking what columns or fields a thing has asks for its schema ("what columns does the orders table have").
  [/\bwhat (columns|fields|properties|attributes)\b/i, ["schema", "describe"]],
  // Asking what changed or happened asks for a thing's activity or history ("what changed on the board?").
  [/\bwhat(?:'s|’s| has| have)? (changed|happened)\b/i, ["activity", "history"]],
  // How much money there is in an account is its balance ("how much money is in my stripe account?").
  [/\bhow much (money|cash|funds)\b/i, ["balance"]],
  // A thing wanted in a format ("the runbook page as markdown", "the report as a PDF") is exported or converted.
  [/\bas (?:a |an )?(markdown|md|pdf|csv|json|html|docx|xlsx|plain text)\b/i, ["export", "convert"]],
  // Changing or removing all or every one of many things at once is a batch ("delete all 40 of those emails",
  // "set verified=true on every user whose…", "remove all sessions older than 30 days").
  [/\b(?:delete|remove|erase|purge|update|set|mark|archive|move|send)\b.{0,40}\b(?:all|every)\b/i, [
    "many",
    "batch",
    "bulk",
    "multiple",
  ]],
  // Doing many things in one go is a batch ("each should get a welcome mail in one go").
  [/\b(?:in one go|in a single (?:call|request|batch)|all at once|in bulk|in a batch)\b/i, [
    "batch",
    "bulk",
    "many",
  ]],
  // What people said or wrote are their messages ("what did people say in #general today?").
  [
    /\bwhat (?:did|have|has|do|does|was|were) (?:people|they|everyone|everybody|anyone|anybody|the team|folks)(?: been)? (say|saying|said|write|writing|wrote|talk|talking|discuss|discussing)\b/i,
    ["message"],
  ],
  // Bouncing a machine or a service, as a command, restarts it ("bounce droplet 38119204", "just bounce it"); a
  // bounce of mail is no command ("did it bounce?", "the bounced emails").
  [
    /(?:^|[.;:!?]\s+|\b(?:just|please|pls|plz|then|and|so|can you|could you|would you)\s+)(bounce)\s+(?!back\b|rate\b|off\b)/i,
    [
      "restart",
      "reboot",
    ],
  ],
  // A picture taken of what a screen or a page shows is a screenshot ("snap a picture of what the browser shows").
  [
    /\b(?:snap|take|grab|get)\s+(?:a\s+|me\s+a\s+)?(picture|photo|pic|shot|image)\s+of\s+(?:what|the|this|that)\b/i,
    ["screenshot"],
  ],
  // What one can use instead of a thing is a substitute for it ("out of buttermilk, what can I use instead?").
  [/\bwhat\s+(?:can|could|should|do)\s+(?:i|we|you)\s+(use)\s+instead\b|\b(instead)\s*\?/i, [
    "substitute",
    "alternative",
  ]],
  // Putting a thing in a folder moves it there: "put report.csv in the done folder".
  [
    /\b(put|place|drop|stick)\s+(?:[^\s]+\s+){0,6}?(?:in|into|inside|under)\s+(?:the\s+|my\s+|our\s+|a\s+)?(?:[\p{L}\p{N}_-]+\s+)?(?:folder|directory|dir)\b/iu,
    ["move"],
  ],
  // Room taken is size: "take up the most space", "how much disk (space)", "the largest files".
  [
    /\b(?:take|takes|taking|took|use|uses|using|occupy|occupies|occupying|eat|eats|eating)\s+(?:up\s+)?(?:all\s+(?:of\s+)?)?(?:the\s+|a\s+lot\s+of\s+)?(?:most\s+|more\s+|much\s+|least\s+|less\s+)?(?:disk\s+)?(space)\b|\bhow much (?:disk |storage )?(space)\b|\bhow much (disk|storage)\b|\b(largest|biggest|heaviest|smallest) files?\b/i,
    ["size"],
  ],
  // "What do you know about Ana?" asks for what is known: knowledge, searched for.
  // So does "what do I have (stored) about Ana?", "what have we saved on Acme?", "tell me everything about Ana".
  [
    /\bwhat (?:do|does|did|have|has) (?:you|it|we|they|i) (know|remember|have|got|stored|saved|recorded|kept|noted)(?: (?:stored|saved|recorded|kept|noted|got))? (?:about|on)\b|\btell me (?:everything |all |more |what you know )?about\b|\bwho (?:do|did) (?:i|we) (know)\b|^\s*(?:do|did|have) (?:you|we|i) (have|got|know|remember) (?:anything|something)(?: (?:stored|saved|recorded|kept|noted|remembered))? (?:about|on)\b/i,
    ["knowledge", "search"],
  ],
  // "Everything you've memorized", "all we have stored so far": the whole of what was kept, not a part.
  [
    /\b(?:everything|all)\s+(?:that\s+)?(?:you|we|i)(?:['’]ve|\s+have|\s+had)?\s+(?:\p{L}+ed|memori[sz]ed|known|kept|got|written)\b(?!\s+(?:about|on|regarding|for)\b)/iu,
    ["entire"],
  ],
  // What the user told before is recalled, searched for in what was kept: "did I ever tell you my wife's
  // birthday?", "who did I tell you my landlord was?".
  [
    /\b(?:did|have|had)\s+i\s+(?:ever\s+|already\s+)?(tell|told|mention|mentioned|give|gave)\s+(?:to\s+)?you\b|\b(?:who|what|when|where|which)\s+did\s+(?:i|we)\s+(say|mention)\b/i,
    ["knowledge", "search"],
  ],
  // "Anything (stored) about X?": whatever concerns a thing, searched for.
  [/\b(?:anything|something)\b[^.?!;]{0,40}?\b(about|regarding|concerning)\b/i, ["search"]],
  // Things picked by what they say are searched for: "anything saved that mentions kubernetes", "notes
  // containing the word budget".
  [
    /\b(?:that|which|who)\s+(mention|mentions|mentioned|contain|contains|reference|references)\b|\b(mentioning|containing|referencing)\b/i,
    ["search"],
  ],
  // "Where can you read files?", "where am I allowed to write?": the places one may act in, what is allowed.
  [
    /\bwhere\s+(?:can|could|may|are|am)\s+(?:you|i|we)\s+(?:actually\s+|even\s+|really\s+)?(?:allowed\s+to\s+|able\s+to\s+)?(read|write|access|save|edit|go|look)\b/i,
    ["allowed", "access"],
  ],
  // A thing whose place is unknown is searched for: "where did I put the invoice?", "I can't find package.json",
  // "it's somewhere under /srv", "is there a file named X anywhere?".
  [
    /\bwhere (?:did|have|do|does|would|had) (?:i|we|you|they) (put|leave|left|save|saved|store|stored|keep|kept|place|placed|move|moved)\b|\b(?:can'?t|can’t|cannot|couldn'?t|couldn’t) (?:seem to )?(find|locate)\b|\b(?:somewhere|anywhere)\b|\b(forgot) where\b/i,
    ["search", "find"],
  ],
  // So is what one wrote or saw somewhere and cannot place: "where in my notes did I write about ingress?", "I
  // can't remember which file", "I don't recall where I saw it".
  [
    /\bwhere\b[^.?!;]{0,30}?\b(?:did|have|had) (?:i|we) (?:write|wrote|written|mention|mentioned|note|noted|jot|jotted|see|saw|seen|read)\b|\b(?:can'?t|can’t|cannot|couldn'?t|couldn’t|don'?t|don’t|do not) (?:remember|recall) (?:where|which|what file|what note|what page)\b|\bforgot (?:which|in which)\b/i,
    ["search", "find"],
  ],
  // "When was it last modified?" asks for a time.
  [/^\s*when (?:was|were|did|is|are|does|do|has|had|will)\b/i, ["time"]],
].map(([p, t]) => [p as RegExp, (t as string[]).map(stem)]);

/** Verbs that make what a path without a file name names: a directory. */
const MAKE_DIRECTORY: ReadonlySet<string> = new Set("create make mkdir".split(" ").map(stem));
const DIRECTORY_MADE: readonly string[] = ["create", "directory"].map(stem);
const MAKE = stem("make");
/** A question for what a named file holds. */
const CONTENT_QUESTION =
  /^\s*what(?:'s|’s|\s+is|\s+was)\s+(?:inside|in)\b|^\s*what\s+(?:does|do|did)\b.{0,60}\b(?:say|contain|hold)\b/i;
const FILE_READ: readonly string[] = ["read", "file"].map(stem);
/** Looking at a thing: "look at", "take a look at", "have a look at". */
const LOOK_AT = /\blook\s+at\b/i;
const DIRECTORY_LISTED: readonly string[] = ["list", "directory"].map(stem);
/** "Make" right before the path it makes (the path itself is blanked out of the text by then). */
const MAKE_PATH = /\bmake\s+(?:(?:a|an|the|new|empty|directory|folder|dir)\s+)*(?=\s|$)/i;

/**
 * A request whose verb's object is a named thing as a whole: the verb, then a capitalized name or
 * "everything / all (you know) about" a name ("erase Carlos from memory", "remove everything about Initech"),
 * or the records kept of it ("pull up the entries for Alice and Bob"); not a part of it ("delete Bob's note").
 */
const WHOLE_NAMED =
  /^\s*(?:[Pp]lease\s+)?[A-Za-z][a-z]+\s+(?:(?:rid\s+of|away|out|up)\s+)?(?:(?:(?:everything|anything|all)\s+(?:(?:you|we|i)\s+(?:know|have)\s+)?(?:about|on|of)|about)\s+(?:(?:the|my|our|his|her|their)\s+)?|(?:the\s+|my\s+|our\s+)?(?:(?:saved|stored)\s+)?(entries|entry|records?|details|profiles?|facts)\s+(?:for|on|about|of)\s+['"‘“]?)?(\p{Lu}[\p{L}\p{N}]*|(?<=(?:the|my|our|his|her|their)\s+)\p{Ll}+)\b(?!['’]s\b)/u;

/** What a named thing is. */
const ENTITY = stem("entity");

/** Weight of the terms a {@link PHRASE_INTENTS} phrase implies: an implied path intent's half, chosen before measuring. */
export const PHRASE_INTENT_WEIGHT = 0.5;

/** What a {@link SHOPPING} request implies. */
export const SHOPPING_TERMS: readonly string[] = ["web", "browser"].map(stem);

/**
 * Weight of {@link SHOPPING_TERMS}: the weight a URL's implied `web` has, chosen before measuring (LiveMCPBench
 * tuning half: no request buys anything; 1 gave the same ranks there).
 */
export const SHOPPING_WEIGHT = 0.5;

/**
 * A date relative to now written as a phrase ("next Friday", "the past 3 days", "last 24h", "two weeks from
 * now", "90 days ago"): like `today` (`INTENTS` in `synonyms.ts`), it needs today's date first, which an agent
 * does not know. "The last commit", "the next page" name no time unit and do not count; nor does "this week",
 * which mostly scopes a source's current data ("trending this week") rather than shifting a date from now
 * (measured with it: two of the Chinese-tool set's and one of the shopping set's answers lost a place).
 */
export const RELATIVE_DATE = new RegExp(
  String.raw`\b(?:(?:next|last|past|previous|coming|upcoming)\s+(?:(?:few|couple(?:\s+of)?|several|\d+|` +
    String.raw`one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty)\s*)?` +
    String.raw`(?<unit>${
      "hours?|hrs?|h|days?|nights?|weeks?|weekends?|fortnight|months?|quarters?|years?|" +
      "mondays?|tuesdays?|wednesdays?|thursdays?|fridays?|saturdays?|sundays?"
    })|` +
    String.raw`(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|twelve|twenty|thirty)\s*` +
    String.raw`(?<unit2>hours?|hrs?|h|days?|weeks?|months?|years?)\s+(?:ago|from\s+now|later))\b`,
  "i",
);

/** What a {@link RELATIVE_DATE} implies: the terms `today` implies. */
export const RELATIVE_DATE_TERMS: readonly string[] = ["current", "date", "time"].map(stem);

/**
 * Weight of {@link RELATIVE_DATE_TERMS}: what `today` gives them (an intent term's weight), chosen before
 * measuring.
 */
export const RELATIVE_DATE_WEIGHT = 0.4;

/**
 * Weight of the English gloss of a Chinese word in a request (`天气` -> weather): a translation, weighted
 * like a Romance cognate (`COGNATE_WEIGHT` in `rank.ts`), chosen before it was measured.
 */
export const ZH_GLOSS_WEIGHT = 0.8;

/**
 * Weight of a Chinese word's other senses that the catalog uses (`频道` "frequency", also "channel"),
 * relative to its gloss: a WordNet synonym's (`WORDNET_WEIGHTS.synonym`), chosen before measuring. Below
 * what counts as a match (`MIN_COVERAGE_WEIGHT` in `rank.ts`), so they order the tools a request matches
 * but never make an off-topic request look answered (at 1, one of the third held-out set's three Chinese
 * off-topic requests was no longer declined: `放` "put", also "place").
 */
export const ZH_SENSE_WEIGHT = 0.3;

/** A participle after a form of "be" or "last" ("was last modified", "is deleted"): a state, not a request. */
const STATE_PARTICIPLE =
  /\b(?:was|were|is|are|been|being|last|recently)\s+(?:last\s+|recently\s+)?([a-z]+ed)\b/gi;

/** Where a sentence or step ends ("…, then", "; ", ". "): two-word phrases never span it. */
const PAIR_BREAK =
  /(?<![.!?;:])(?<!\b(?:Mr|Mrs|Ms|Dr|Prof|St|Mt|Jr|Sr|vs|etc|approx|e\.g|i\.e|No))[.!?;:]+(?=\s|$)|[。！？；，、]+|\n+|,(?=\s)|(?<!\s)\s+(?:and then|then|after that|afterwards|finally)\s+/i;

/** Marks a {@link PAIR_BREAK} among the words of {@link clauseWords}. */
const PAIR_BREAK_MARK: Word = { parts: [] };

/** The words of a text, with {@link PAIR_BREAK_MARK} between its sentences and steps. */
function* clauseWords(text: string): Generator<Word> {
  let first = true;
  for (const piece of text.split(new RegExp(PAIR_BREAK.source, "gi"))) {
    if (!first) yield PAIR_BREAK_MARK;
    first = false;
    yield* splitWords(piece);
  }
}

/**
 * Multiplier on a word that modifies a noun after it in one noun phrase ("the Tasks table", "a new customer",
 * "John's email"): English noun phrases put their head last, and the head names the thing acted on; the words
 * before it narrow it down and say less about which tool.
 */
export const NOUN_MODIFIER_WEIGHT = 0.7;

/**
 * The words of a text that modify a later word of the same noun phrase: runs of plain content words (no
 * function word, number, identifier, action or generic verb between them), each run's last word its head.
 * A sentence's or step's first content word is its verb (an imperative), never part of a phrase.
 */
/** Participles that end a noun phrase and give its name or content ("a label called Taxes"). */
const NAMING: ReadonlySet<string> = new Set("called named titled entitled saying".split(" "));

/** Words that label the number after them ("resource number 7", "ticket no 5"). */
const NUMBER_LABELS: ReadonlySet<string> = new Set("number no num nr id".split(" "));

export function nounModifiers(text: string): Map<string, string> {
  const modifiers = new Map<string, string>();
  const heads = new Set<string>();
  const names = argumentWords(text);
  let run: string[] = [];
  let first = true;
  const end = () => {
    const head = run.at(-1);
    if (head !== undefined) heads.add(head);
    for (const w of run.slice(0, -1)) if (w !== head) modifiers.set(w, head!);
    run = [];
  };
  for (const word of clauseWords(text)) {
    if (word === PAIR_BREAK_MARK) {
      end();
      first = true;
      continue;
    }
    const part = word.parts[0];
    // "Resource number 7": a number's label is part of the identifier, not the phrase's head.
    if (/^\d/.test(part ?? "") && NUMBER_LABELS.has(run.at(-1) ?? "")) run.pop();
    if (word.parts.length !== 1 || part === undefined || STOP_WORDS.has(part) || part.length < 2) {
      end();
      continue;
    }
    const s = stem(part);
    if (first || /\d/.test(part) || isActionStem(s) || GENERIC_VERBS.has(s) || NAMING.has(part)) {
      first = false;
      end();
      continue;
    }
    // A name after a common noun is its apposition ("the table Tasks"), not its head.
    const last = run.at(-1);
    if (last !== undefined && names.has(part) && !names.has(last)) {
      end();
      continue;
    }
    run.push(part);
  }
  end();
  for (const h of heads) modifiers.delete(h);
  return modifiers;
}

/** A key (`PAY-481`, `redis-0`, `sc_1042`) or a channel (`#random`): a name, not a capability. */
const KEY =
  /(?<![\p{L}\p{N}#@/._-])([\p{L}]+)[-_]\d+(?![\p{L}\p{N}._-])|(?<![\p{L}\p{N}&])#([\p{L}][\p{L}\p{N}_-]*)/gu;

/** The words of the keys and channels of a text ({@link KEY}) that it does not also use outside them. */
function keyWords(text: string): Set<string> {
  const inside = new Set<string>();
  for (const m of text.matchAll(KEY)) {
    for (const w of splitWords(m[1] ?? m[2]!)) for (const part of w.parts) inside.add(part);
  }
  if (inside.size === 0) return inside;
  for (const w of splitWords(text.replace(KEY, " "))) for (const part of w.parts) inside.delete(part);
  return inside;
}

/**
 * "One" standing for a noun named before it: after a determiner ("the one", "that one", "which one", "the
 * new one") and before a preposition, a relative word, a subject pronoun or the end of a clause.
 */
const PRONOUN_ONE =
  /\b((?:the|that|this|which|each|every|any|another|other|same|new|old|last|first|right|wrong)\s+)one\b(?=\s+(?:on|in|at|from|with|by|for|of|near|under|about|that|who|which|where|i|you|we|he|she|they)\b|\s*(?:[,.;:!?)]|$))/giu;

/** The content words of a gloss, as typed: "notice or announcement" -> notice, announcement. */
function contentParts(gloss: string): string[] {
  return splitWords(gloss).flatMap((w) => w.parts).filter((p) => p.length > 1 && !STOP_WORDS.has(p));
}

/**
 * Splits, stems and expands a query. Deterministic; bounded by {@link MAX_QUERY_TERMS}. `known` tells which
 * senses of a Chinese word the catalog uses (none are used without it).
 */
export function parseQuery(text: string, known?: (sense: string) => boolean, step = false): ParsedQuery {
  text = bounded(text);
  const words: string[] = [];
  const stems: string[] = [];
  const counts: number[] = [];
  const weights: number[] = [];
  const byStem = new Map<string, number>();
  const compounds: { term: string; origins: number[] }[] = [];
  const addWord = (part: string, weight: number): number | undefined => {
    const s = stem(part);
    let at = byStem.get(s);
    if (at === undefined) {
      if (words.length >= MAX_QUERY_TERMS) return undefined;
      at = words.length;
      byStem.set(s, at);
      words.push(part);
      stems.push(s);
      counts.push(0);
      weights.push(weight);
    } else {
      weights[at] = Math.max(weights[at]!, weight);
    }
    counts[at]!++;
    return at;
  };
  const located = extractLocators(text);
  const spans = located.spans;
  // "The one on Elm Street", "that one", "which one I saved": a pronoun, not the number one.
  const rest = aboutPhrases(located.rest).replace(PRONOUN_ONE, "$1");
  const sequence: string[] = [];
  let afterNumber = false;
  // A word typed in capitals ("EV", "AR", "EU") is a term, even where another language's stop list has it.
  const acronyms = new Set((rest.match(ACRONYM) ?? []).map((a) => a.toLowerCase()));
  // Another language's stop word is an English word in an English request ("delete the pod": Polish "under").
  const english = ENGLISH_FUNCTION_WORDS.test(rest);
  /** The last content word right before this part, for phrasal verbs ("add up"). */
  let previous: { stem: string; at: number } | undefined;
  const phrasal: { key: string; at: number }[] = [];
  for (const word of clauseWords(rest)) {
    if (word === PAIR_BREAK_MARK) {
      if (sequence.length > 0 && sequence.at(-1) !== "") sequence.push("");
      continue;
    }
    const origins: number[] = [];
    for (const [j, part] of word.parts.entries()) {
      if (
        STOP_WORDS.has(part) || (isForeignStopWord(part) && !acronyms.has(part) && !english) ||
        (part.length === 1 && /[a-z]/.test(part))
      ) {
        if (previous && PARTICLES.includes(part)) {
          phrasal.push({ key: phrasalKey(previous.stem, part), at: previous.at });
          // A phrasal verb written as one word is its noun ("checked out" -> checkout, "log in" -> login).
          compounds.push({ term: stem(previous.stem + part), origins: [previous.at] });
        }
        previous = undefined;
        continue;
      }
      const s = stem(part);
      const isNumber = /^\d+$/.test(part);
      // A pair is of content words: a number or a generic request verb ends one ("list one", "get data").
      if (sequence.length < MAX_QUERY_TERMS * 4) sequence.push(isNumber || GENERIC_VERBS.has(s) ? "" : s);
      const modifier = j > 0 && j === word.parts.length - 1 && MODIFIER_SUFFIXES.has(part);
      const at = addWord(
        part,
        (isNumber ? NUMBER_WEIGHT : GENERIC_VERBS.has(s) ? GENERIC_WEIGHT : 1) *
          (afterNumber && !isNumber ? UNIT_WEIGHT : 1) * (modifier ? MODIFIER_WEIGHT : 1),
      );
      afterNumber = isNumber;
      previous = at === undefined ? undefined : { stem: s, at };
      if (at !== undefined) origins.push(at);
    }
    if (word.compound !== undefined && origins.length > 0) {
      compounds.push({ term: stem(word.compound), origins });
    }
  }
  // A request written in Chinese: each word's gloss (the dictionary's first sense) joins it as words of
  // its own, at a translation's weight (a Romance cognate's), so it reaches English tool text; its
  // characters still match Chinese tool text as bigrams. The gloss's words are one word of the request
  // ("notice or announcement": matched when either is); the word's other senses that the catalog uses are
  // weak hints; a single character left by segmentation (`里` "lining", `号` "roar") is mostly a function
  // or measure word: it counts where a tool matches it, never as a miss.
  const otherSenses: { term: string; weight: number; at: number }[] = [];
  const optionalAt = new Set<number>();
  const unitAt = new Map<number, number>();
  const glossWeight = (s: string) => ZH_GLOSS_WEIGHT * (GENERIC_VERBS.has(s) ? GENERIC_WEIGHT : 1);
  for (const { word: chinese, senses } of chineseWords(rest)) {
    let at: number | undefined, fresh = false;
    for (const part of contentParts(senses[0]!)) {
      const s = stem(part);
      if (sequence.length < MAX_QUERY_TERMS * 4) sequence.push(s);
      const isNew = !byStem.has(s);
      const added = addWord(part, glossWeight(s));
      if (added === undefined) continue;
      if (at === undefined) [at, fresh] = [added, isNew];
      else if (isNew) unitAt.set(added, at);
    }
    if (at === undefined) continue;
    if (fresh && chinese.length === 1) optionalAt.add(at);
    for (const sense of known ? senses.slice(1).filter(known) : []) {
      for (const part of contentParts(sense)) {
        const s = stem(part);
        otherSenses.push({ term: s, weight: ZH_SENSE_WEIGHT * glossWeight(s), at });
      }
    }
  }
  const implied: { term: string; weight: number }[] = [];
  for (const span of spans) {
    for (const w of span.words) if (!STOP_WORDS.has(w.word)) addWord(w.word, w.weight);
    implied.push(...span.extras);
  }
  const names = argumentWords(rest);
  // Quoted prose is an argument (a title, a name, a value), not the capability asked for; so is the name in
  // a key ("PAY-481", "redis-0") or a channel ("#random") the request does not use elsewhere.
  const quoted = quotedWords(rest, true);
  for (const w of keyWords(rest)) quoted.add(w);
  words.forEach((w, i) => {
    if (quoted.has(w) && !/^\d/.test(w)) weights[i]! *= QUOTED_WEIGHT;
  });
  // What a request says not to do or not to need ("…but DON'T delete it", "just the numbers, dont need the
  // messages") names no thing asked for: those words weigh less, unless the request also uses them elsewhere.
  const refused = refusedWords(rest);
  words.forEach((w, i) => {
    if (refused.has(w)) weights[i]! *= REFUSED_WEIGHT;
  });

  const terms: QueryTerm[] = stems.map((term, i) => ({
    term,
    // Repeating a word in the query counts, with diminishing returns.
    weight: weights[i]! * Math.min(2, 1 + 0.3 * (counts[i]! - 1)),
    origins: [i],
    expansion: false,
  }));
  const extra = new Map<string, QueryTerm>();
  const addExtra = (term: string, weight: number, origins: number[], general = false, synonym = false) => {
    if (byStem.has(term)) return;
    const seen = extra.get(term);
    if (seen) {
      if (!general) delete seen.general;
      if (!synonym) delete seen.synonym;
      seen.weight = Math.max(seen.weight, weight);
      for (const o of origins) if (!seen.origins.includes(o)) seen.origins.push(o);
      return;
    }
    const t: QueryTerm = { term, weight, origins: [...origins], expansion: true };
    if (general) t.general = true;
    if (synonym) t.synonym = true;
    extra.set(term, t);
  };
  for (const c of compounds) addExtra(c.term, COMPOUND_WEIGHT, c.origins);
  for (const o of otherSenses) addExtra(o.term, o.weight, [o.at]);
  // An idiom's words name its action, not an object: its verb no spelling of the word ("pull" -> `pr`), its
  // other words no synonyms ("mind" -> `head`); the verb's own synonyms stay ("keep" -> `retain`).
  const idiom = idiomWords(rest);
  for (let i = 0; i < stems.length; i++) {
    if (idiom.others.has(stems[i]!)) continue;
    for (const syn of synonymsOf(stems[i]!)) {
      if (syn.spelling && idiom.verbs.has(stems[i]!)) continue;
      addExtra(syn.term, syn.weight * weights[i]!, [i], syn.general, !syn.spelling);
    }
  }
  // A phrasal verb is evidence in itself: its synonyms are used however common the verb is ("add up" -> sum).
  for (const p of phrasal) {
    for (const r of relatedTerms(p.key)) {
      if (r.synonym) addExtra(r.term, PHRASAL_WEIGHT * weights[p.at]!, [p.at], false, true);
    }
  }
  if (spans.some((s) => s.path)) {
    // A file path plus a verb is a file operation: "save it to /tmp/a.md" means write a file. A participle
    // that says what was done to it ("when was config.yaml last modified") asks for no operation.
    const directory = spans.some((s) => s.directory);
    const states = new Set([...rest.matchAll(STATE_PARTICIPLE)].map((m) => m[1]!.toLowerCase()));
    // Creating a path with no file name makes a directory ("create /tmp/out"), not a file.
    const fileNamed = spans.some((s) => s.path && !s.directory);
    for (const [verbs, targets] of PATH_INTENTS) {
      // Showing a directory lists it; showing a file reads it.
      if (targets.includes(stem("directory")) && !directory) continue;
      const writes = targets.includes(stem("write"));
      const origins = stems.flatMap((s, i) =>
        verbs.has(s) && !states.has(words[i]!) &&
          !(writes && !fileNamed && MAKE_DIRECTORY.has(s) && (s !== MAKE || MAKE_PATH.test(rest)))
          ? [i]
          : []
      );
      if (origins.length > 0) { for (const t of targets) addExtra(t, PATH_INTENT_WEIGHT, origins); }
    }
    // Looking at a file ("look at screenshot.png", "take a look at it") reads it, as "show" and "view" do.
    if (fileNamed && LOOK_AT.test(rest)) {
      for (const t of FILE_READ) addExtra(t, PHRASE_INTENT_WEIGHT, []);
    }
    // "What's in notes.txt?", "what does app.log contain?": its content, read.
    if (fileNamed && CONTENT_QUESTION.test(rest)) {
      for (const t of FILE_READ) addExtra(t, PATH_INTENT_WEIGHT, []);
    }
    // "What's in src/utils?", "whats inside the db/migrations folder": a directory's content, listed.
    if (!fileNamed && directory && CONTENT_QUESTION.test(rest)) {
      for (const t of DIRECTORY_LISTED) addExtra(t, PATH_INTENT_WEIGHT, []);
    }
    if (!fileNamed) {
      // "Make" is a light verb: it makes the directory only when the path is what it makes ("make /tmp/out",
      // "make a new folder /tmp/out"), not "make a copy of /tmp/out".
      const makes = MAKE_PATH.test(rest);
      const origins = stems.flatMap((s, i) => (MAKE_DIRECTORY.has(s) && (s !== MAKE || makes) ? [i] : []));
      if (origins.length > 0) { for (const t of DIRECTORY_MADE) addExtra(t, PATH_INTENT_WEIGHT, origins); }
    }
  }
  if (spans.some((s) => s.directory)) {
    // Reading what is in a directory ("read the articles in /a/papers") starts by listing it.
    const [verbs, targets] = DIRECTORY_INTENT;
    const origins = stems.flatMap((s, i) => (verbs.has(s) ? [i] : []));
    if (origins.length > 0) { for (const t of targets) addExtra(t, PATH_INTENT_WEIGHT, origins); }
  }
  for (const x of implied) addExtra(x.term, x.weight, []);
  // "How do I get to X?" asks for directions, though it names neither directions nor a route.
  const route = ROUTE_QUESTION.exec(rest);
  if (route) {
    const at = byStem.get(stem(route[1]!.toLowerCase()));
    for (const t of ROUTE_TERMS) addExtra(t, ROUTE_WEIGHT, at === undefined ? [] : [at]);
  }
  // Phrases that name what is wanted without its word: several files at once are multiple files, "how big"
  // asks for a size; two file names are multiple files outright (a path intent's weight).
  for (const [pattern, targets] of PHRASE_INTENTS) {
    const m = pattern.exec(rest);
    if (!m) continue;
    const at = byStem.get(stem((m.slice(1).find((g) => g !== undefined) ?? "").toLowerCase()));
    for (const t of targets) addExtra(t, PHRASE_INTENT_WEIGHT, at === undefined ? [] : [at]);
  }
  if (spans.filter((s) => s.path && !s.directory).length >= 2) {
    addExtra(stem("multiple"), PATH_INTENT_WEIGHT, []);
  }
  // "I want to buy a standing desk" looks for shops and prices on the web.
  const shopping = SHOPPING.exec(rest);
  if (shopping) {
    const at = byStem.get(stem(shopping[1]!.toLowerCase().split(/[- ]/)[0]!));
    for (const t of SHOPPING_TERMS) addExtra(t, SHOPPING_WEIGHT, at === undefined ? [] : [at]);
  }
  // "Over the past 3 days", "next Friday": the current date first, as for "today".
  const relative = RELATIVE_DATE.exec(rest);
  if (relative) {
    const unit = (relative.groups?.unit ?? relative.groups?.unit2 ?? "").toLowerCase();
    const at = byStem.get(stem(unit));
    for (const t of RELATIVE_DATE_TERMS) addExtra(t, RELATIVE_DATE_WEIGHT, at === undefined ? [] : [at]);
  }
  let statementWords: boolean[] | undefined, statementVerb: number | undefined;
  // Arithmetic ("17 plus 25", "add 3 and 4") asks for a calculation, whatever its verb.
  const arithmetic = ARITHMETIC.exec(rest);
  if (arithmetic) {
    // The words of the calculation ("add", and its numbers: its operands) are what a sum tool answers.
    const within = new Set(splitWords(arithmetic[0].toLowerCase()).flatMap((w) => w.parts));
    const origins = words.flatMap((w, i) => within.has(w) ? [i] : []);
    const operation = arithmeticTerms(arithmetic[0]);
    for (const t of operation) addExtra(t, ARITHMETIC_WEIGHT, origins);
    // Its operator word names the operation, not its other senses: "37 times 48" asks for no time. (A sum's
    // "plus" is left as it was read.)
    words.forEach((w, i) => {
      if (operation === ARITHMETIC_TERMS || !within.has(w) || !OPERATOR_WORDS.has(w)) return;
      terms[i]!.term = operation[0]!;
      for (const [k, t] of extra) {
        if (k === operation[0] || (t.origins.length === 1 && t.origins[0] === i)) extra.delete(k);
      }
    });
  } // The action asked for finds the tools that perform it: "remember" -> create/add, "forget" -> delete.
  // A request of several steps asks for several: each clause's own is looked for when it is ranked.
  else if (splitClauses(rest).length <= 1) {
    const asked = requestActions(rest);
    const action = asked.recall;
    // A statement the request's imperative points back at ("Ana moved to Lisbon, keep that in mind") is the
    // value it acts on: its words ("moved") weigh like quoted text, not like the capability asked for.
    let statement: boolean[] | undefined;
    if (asked.statement !== undefined) {
      const later = splitWords(rest.slice(asked.statement.length)).flatMap((w) => w.parts);
      const after = new Set(later);
      const stated = new Set(splitWords(asked.statement).flatMap((w) => w.parts));
      statement = words.map((w) => stated.has(w) && !after.has(w));
      words.forEach((_, i) => {
        if (statement![i]) terms[i]!.weight *= QUOTED_WEIGHT;
      });
      // The imperative's verb: its first word the request keeps ("add that link", "keep that in mind").
      const verb = later.find((w) => byStem.has(stem(w)));
      if (verb !== undefined) statementVerb = byStem.get(stem(verb));
    }
    statementWords = statement;
    // The action's words stand for the verb, the first word; a question about a thing has none.
    const origin = words.length > 0 && !KNOWN_ABOUT.test(rest) ? [0] : [];
    for (const t of actionTerms(action)) addExtra(t, ACTION_TERM_WEIGHT, origin, false, true);
    // An action called off ("dont send it after all") asks for the tools that cancel or undo it; its verb
    // names what is not to be done, and weighs like a generic verb.
    const negated = asked.negated === undefined ? undefined : stem(asked.negated);
    if (negated !== undefined) {
      const at = words.flatMap((_, i) => stems[i] === negated ? [i] : []);
      if (action & ACTION.delete) {
        for (const t of CANCEL_TERMS) addExtra(t, ACTION_TERM_WEIGHT, at, false, true);
      }
      for (const i of at) terms[i]!.weight *= GENERIC_WEIGHT;
    }
    // A verb acting on a named thing as a whole ("erase Carlos", "forget everything about Bob") acts on the
    // thing itself, an entity (WordNet's root of every thing), not on a part of it; (un)linking acts on a relation.
    const whole = action !== 0 && !(action & ACTION.link) ? WHOLE_NAMED.exec(rest) : null;
    if (whole) {
      const name = stem(whole[2]!.toLowerCase());
      addExtra(ENTITY, ACTION_TERM_WEIGHT, byStem.has(name) ? [byStem.get(name)!] : [], false, true);
      // "The entries for Alice": a word for what is kept of a thing says no more than a generic verb does.
      const kept = whole[1] === undefined ? undefined : byStem.get(stem(whole[1].toLowerCase()));
      if (kept !== undefined) terms[kept]!.weight *= GENERIC_WEIGHT;
    }
    // The action verb is matched as an action (`rank.ts`); as a word it mostly meets tools that name it as
    // their object ("link Ana to Acme" vs `get_resource_links`).
    // It weighs a generic verb's weight (0.5 and 0.7 measured the same but for the plain set's top-1).
    // A statement that a state ended ("Omar no longer reports to Priya") has no verb first.
    if (action !== 0 && terms[0] && !GENERIC_VERBS.has(terms[0].term) && !asked.stated && !negated) {
      terms[0].weight *= GENERIC_WEIGHT;
    }
    // A light verb ("make a file called todo.txt") says nothing its object does not: the action is read from
    // what it makes, and as a word it meets tools whose text opens on it ("Make line-based edits").
    if (action !== 0 && terms[0] && terms[0].term === LIGHT_VERB && !asked.stated && !negated) {
      terms[0].weight *= GENERIC_WEIGHT;
    }
    // Linking or unlinking two things ("remove that link between them", "link them", "connect the two"): the
    // link is the action's object, matched as the action; as a word it meets tools about web links.
    if (asked.action & ACTION.link) {
      words.forEach((_, i) => {
        if (i > 0 && namesLink(stems[i]!)) terms[i]!.weight *= GENERIC_WEIGHT;
      });
      // Its synonyms say the link again, which the action's own words look for: "connection" is no
      // "associated" of a tool's description.
      const links = new Set(words.flatMap((_, i) => i > 0 && namesLink(stems[i]!) ? [i] : []));
      for (const [k, t] of extra) {
        if (t.origins.length > 0 && t.origins.every((o) => links.has(o))) extra.delete(k);
      }
    }
  }
  // An idiom's other words weigh at most a generic verb's: "keep in mind" finds no mind map.
  stems.forEach((s, i) => {
    if (idiom.others.has(s)) terms[i]!.weight = Math.min(terms[i]!.weight, GENERIC_WEIGHT);
  });
  // A pasted identifier ("arxiv 2203.12277") asks for one item by its id: the tools that take one.
  if (hasPastedIdentifier(rest)) addExtra(stem("id"), IDENTIFIER_WEIGHT, []);
  terms.push(...extra.values());
  // A character bigram of CJK text the catalog lacks is no miss: most bigrams straddle two words.
  const argumentLike = words.map((w) => /^\d/.test(w) || names.has(w) || CJK.test(w));
  const parsed: ParsedQuery = { words, stems, argumentLike, terms, sequence };
  if (english) parsed.english = true;
  if (statementWords && statementVerb !== undefined) {
    parsed.stated = statementWords;
    parsed.verbAt = statementVerb;
  }
  if (KNOWN_ABOUT.test(rest)) parsed.asksAbout = true;
  if (spans.length > 0) {
    // A directory asked what is in it ("what's in src/utils?") is the path a listing takes, as a file is.
    const listed = spans.some((x) => x.directory) && CONTENT_QUESTION.test(rest);
    parsed.locators = {
      path: spans.some((x) => x.path && !x.directory) || listed,
      url: spans.some((x) => !x.path),
    };
  }
  // A noun phrase's head names what is acted on, the words before it narrow it ("the Tasks table"): read in a
  // short request of one step only (a long one describes a task whose modifiers often name other steps' tools).
  if (!step && contentWords(rest) <= ACTION_MAX_WORDS && splitClauses(rest).length <= 1) {
    const modifiers = nounModifiers(rest);
    if (modifiers.size > 0) {
      parsed.headOf = words.map((w) => {
        const head = modifiers.get(w);
        return head === undefined ? -1 : (byStem.get(stem(head)) ?? -1);
      });
    }
  }
  // A stated value ("… saying I'm in", "a table called orders", "note that Bob likes tea", "ENG-88: steps
  // attached") is what the tool is given, not what it does (`rank.ts`: not missed by a tool doing the action).
  const stated = STATED_VALUE.exec(rest);
  if (stated) {
    const before = new Set(splitWords(rest.slice(0, stated.index)).flatMap((w) => w.parts));
    const value = new Set(splitWords(rest.slice(stated.index)).flatMap((w) => w.parts));
    const at = words.map((w) => value.has(w) && !before.has(w));
    // The value's words are what the tool is given: they weigh like quoted text ("overwrite .gitignore with:
    // node_modules, dist (one per line)" asks for no line edit).
    at.forEach((x, i) => {
      if (!x || !terms[i]) return;
      terms[i]!.weight *= QUOTED_WEIGHT;
      terms[i]!.given = true;
    });
    const known = parsed.stated;
    if (at.includes(true)) parsed.stated = known ? at.map((x, i) => x || known[i]!) : at;
  }
  if (optionalAt.size > 0) parsed.optional = words.map((_, i) => optionalAt.has(i));
  if (unitAt.size > 0) parsed.unitOf = words.map((_, i) => unitAt.get(i) ?? i);
  return parsed;
}
