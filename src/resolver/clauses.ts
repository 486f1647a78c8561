/**
 * A request's text split into the clauses ranked one by one (`splitClauses`): at sentence ends and step
 * markers, with back-references, argument fragments and coordinated nouns merged into their neighbours; and
 * what the split shares with query.ts (the generic request verbs, the count of a text's content words).
 *
 * @module
 */
import { bounded, splitWords, stem, STOP_WORDS } from "./tokenize.ts";
import {
  ACTION,
  ACTION_MAX_WORDS,
  keepsOrEnds,
  pointsBack,
  requestAction,
  statesRelation,
} from "./actions.ts";

/** Request verbs that say little about which tool ("find the painting", "get me the weather", "show me"). */
export const GENERIC_VERBS: ReadonlySet<string> = new Set(
  [
    "get find show make provide do use go take put see look try check",
    // Work the agent does itself once it has the data: weak evidence for which tool fetches it.
    "summarize summarise summary analyze analyse analysis compare explain describe recommend suggest",
    "identify introduce organize discuss estimate",
    // Recency is a property of almost any data source.
    "latest recent recently newest",
  ].join(" ").split(" ").map(stem),
);

/** The words of `text` that are not stop words (of two letters or more). */
export function contentWords(text: string): number {
  let n = 0;
  for (const w of splitWords(text)) for (const p of w.parts) if (!STOP_WORDS.has(p) && p.length > 1) n++;
  return n;
}

/**
 * First words of a clause that begins a new request: a question word, a modal, a request verb or a
 * subject ("and what's nearby", "and can you…", "and my son doesn't…").
 */
const CLAUSE_OPENERS: ReadonlySet<string> = new Set(
  "what how when where who which why whether can could would will should please tell give let i we you my our"
    .split(" "),
);

/** Words that follow a verb, not a noun: its object's determiner or a pronoun ("and commit them"). */
const OBJECT_OPENERS: ReadonlySet<string> = new Set(
  "the a an it them this these that those its their my our your his her each all some every me us him".split(
    " ",
  ),
);

/**
 * A piece after a bare "and" that reads as a new step: it opens like a clause, starts with a generic
 * request verb, or its second word opens the first word's object ("and merge the approved one").
 */
function startsStep(piece: string): boolean {
  const words = piece.trim().toLowerCase().split(/\s+/, 2);
  if (words.length < 2) return false;
  const first = words[0]!.replace(/['’].*/, "");
  return CLAUSE_OPENERS.has(first) || GENERIC_VERBS.has(stem(first)) || OBJECT_OPENERS.has(words[1]!);
}

/**
 * Pieces of a split that kept its separators (piece, separator, piece, …), with a bare "and" or a bare comma
 * between the parts of one step mended: "show the columns and types of the users table" and "a document with
 * headings, tables and footnotes" are one step, "stage the files and commit them" two. Sentence ends, "then"
 * and the other step markers always split.
 */
function joinCoordinatedNouns(parts: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < parts.length; i += 2) {
    const piece = parts[i]!;
    const separator = parts[i - 1];
    const soft = separator !== undefined && (/^\s+and\s+$/i.test(separator) || /^,$/.test(separator));
    const mend = soft && out.length > 0 && parts[i - 2]!.trim() !== "" && piece.trim() !== "" &&
      !startsStep(piece);
    if (mend) out[out.length - 1] += `${separator === "," ? "," : " and"} ${piece.trimStart()}`;
    else out.push(piece);
  }
  return out;
}

/**
 * Opens a clause that only sets up the next one ("once you have the id, …", "if it fails, …"): it joins the
 * clause after it.
 */
const SETUP_OPENER =
  /^(?:once|when|whenever|after|before|if|unless|as soon as|so that|because|since|while)\b/i;

/**
 * A clause that points back at an earlier one and adds little of its own ("fetch all its details"): at most
 * this many content words. It joins the clause before it.
 */
const BACK_REFERENCE_WORDS = 2;

/**
 * Words pointing back at what an earlier clause named, as the owner of what this one asks ("its details",
 * "their prices"). An object pronoun does not count: "and commit them" is a step of its own.
 */
const BACK_REFERENCE = /\b(?:its|their|the same|the results?)\b/i;

/** "The best one", "that one", "the first one": a pronoun for something an earlier clause named. */
const ONE_ANAPHOR = /\b(?:the|that|this|which)\s+(?:[\p{L}-]+\s+)?one\b/iu;

/** Verbs of choosing among what an earlier step found: the agent's own work, no tool's. */
const CHOOSING_VERBS: ReadonlySet<string> = new Set("pick choose select".split(" ").map(stem));

/**
 * A clause that only chooses among what an earlier one found ("identify the best one", "pick the oldest
 * one"): its first word is a generic or choosing verb. "Book the cheapest one" is a step of its own.
 */
function choosesOnly(piece: string): boolean {
  const first = splitWords(piece).flatMap((w) => w.parts).find((p) => !STOP_WORDS.has(p));
  return first !== undefined && (GENERIC_VERBS.has(stem(first)) || CHOOSING_VERBS.has(stem(first)));
}

/**
 * A clause that states a value rather than a step ("my email is a@b.c", "the budget is 300 dollars"): a
 * possessive or article, a noun, then a copula. It joins the clause before it (or after it, when first).
 */
const ARGUMENT_CLAUSE =
  /^(?:my|our|your|his|her|their|the)\s+[\p{L}\p{N}' -]{1,40}?\s+(?:is|are|was|were)\b/iu;

/**
 * Whether `piece` of `text` follows a comma, semicolon or dash of its sentence, or the full stop of a
 * `before` that states a relation or a state that ended ("alice doesnt manage bob anymore. remove that
 * connection"); not a question's end.
 */
function afterStatement(text: string, piece: string, before: string): boolean {
  const at = text.indexOf(piece);
  const gap = text.slice(Math.max(0, at - 4), at);
  return at > 0 && (/[,;\-–—]\s*$/.test(gap) || (/[.!]\s*$/.test(gap) && keepsOrEnds(before)));
}

/**
 * A state said to have ended, then an imperative (un)linking ("alice doesnt manage bob anymore. remove that
 * connection"): the link to remove is the relation the statement names.
 */
function unlinksEnded(before: string, piece: string): boolean {
  return keepsOrEnds(before) && (requestAction(piece) & ACTION.link) !== 0;
}

/** Most clauses a query is split into; the rest stays in the last clause. */
export const MAX_CLAUSES = 8;

// Each repeated class starts only where its run starts (the lookbehinds), so a failed match backtracks
// over one run once: linear, however long the run of spaces or dots. A title's or a common abbreviation's
// dot ("Mr. Lu", "Dr. Smith", "vs.") ends no sentence.
const CLAUSE_BREAK =
  /(?<![.!?;:])(?<!\b(?:Mr|Mrs|Ms|Dr|Prof|St|Mt|Jr|Sr|vs|etc|approx|e\.g|i\.e|No))[.!?;:]+(?=\s|$)|[。！？；，、]+|\n+|,(?=\s)|(?<!\s)\s+(?:and then|then|and also|also|after that|afterwards|finally|next|and|plus|including|as well as|along with)\s+/i;

/** A request's opening label of a new thing, before its colon or dash: "new person", "a new task". */
const NEW_LABEL = /^(?:a\s+)?new\s+\p{L}+(?:\s+\p{L}+)?$/iu;

/**
 * Splits a multi-step request into clauses ("find X, then save it to Y" ->
 * "find X", "save it to Y") at sentence ends, step markers and a comma or "and"
 * that starts a new step. A clause with fewer than two content words joins
 * its neighbour, so "similarities and differences" stays whole; a setup clause
 * ("once you have the id") joins the next, a back-reference ("fetch all its
 * details") or a stated value ("my email is …") the one before. Paths and URLs
 * are never split (their dots are not followed by a space).
 */
export function splitClauses(text: string): string[] {
  const pieces = joinCoordinatedNouns(bounded(text).split(new RegExp(`(${CLAUSE_BREAK.source})`, "gi")))
    .map((p) => p.trim()).filter((p) => p.length > 0);
  const clauses: string[] = [];
  let pending = "";
  let pendingWords = 0;
  for (const piece of pieces) {
    const joined = pending ? `${pending} ${piece}` : piece;
    // Counted piece by piece: recounting the joined text would be quadratic in the number of pieces.
    const own = contentWords(piece);
    const words = pendingWords + own;
    // A label of a new thing ("new person: Lena, a designer") opens the value after it: one step.
    if (
      words < 2 || SETUP_OPENER.test(piece) || (clauses.length === 0 && !pending && NEW_LABEL.test(piece))
    ) {
      pending = joined;
      pendingWords = words;
      continue;
    }
    const pronounOne = ONE_ANAPHOR.test(piece) && choosesOnly(piece) ? 1 : 0;
    const leans = ARGUMENT_CLAUSE.test(piece) ||
      (own - pronounOne <= BACK_REFERENCE_WORDS && (BACK_REFERENCE.test(piece) || pronounOne > 0));
    if (leans && !pending && clauses.length > 0) {
      clauses[clauses.length - 1] += ` ${piece}`;
      continue;
    }
    if (leans && !pending) {
      pending = joined;
      pendingWords = words;
      continue;
    }
    // An imperative about a statement before it ("Ana moved to Lisbon, keep that in mind") acts on it.
    // A long clause names no action of its own (`requestAction`): only a short one is read as a statement.
    const before = clauses.at(-1);
    if (
      !pending && before !== undefined && pointsBack(piece) && contentWords(before) <= ACTION_MAX_WORDS &&
      (requestAction(before) === 0 || statesRelation(before) || unlinksEnded(before, piece)) &&
      afterStatement(text, piece, before)
    ) {
      clauses[clauses.length - 1] += `, ${piece}`;
      continue;
    }
    clauses.push(joined);
    pending = "";
    pendingWords = 0;
  }
  if (pending) {
    if (clauses.length > 0) clauses[clauses.length - 1] += ` ${pending}`;
    else clauses.push(pending);
  }
  if (clauses.length > MAX_CLAUSES) {
    clauses.splice(MAX_CLAUSES - 1, Infinity, clauses.slice(MAX_CLAUSES - 1).join(" "));
  }
  return clauses;
}
