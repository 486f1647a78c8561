/**
 * Text to index terms: case and accent folding, identifier splitting
 * (camelCase, snake_case, kebab-case), CJK bigrams, stop words and a light
 * Porter-ish stemmer. Index and query go through the same functions, so a
 * stem only has to be consistent, not a dictionary word.
 *
 * @module
 */

/** One word of the input: its identifier parts and, for a multi-part identifier, the joined form. */
export interface Word {
  /** Folded, unstemmed parts (`getFileInfo` -> `get`, `file`, `info`). */
  parts: string[];
  /** The parts joined (`getfileinfo`, `github` for `GitHub`) when there is more than one part. */
  compound?: string;
}

/**
 * English function words and request filler that carry no capability. Kept
 * small on purpose: verbs such as `get`, `list` or `find` are signal for tool
 * routing, and IDF already discounts words that occur everywhere.
 */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  ("a about above after again all also am an and any are as at be been before being below between both but " +
    "by can could did do does doing down during each either etc few for from further had has have having " +
    "he her here hers herself him himself his how i if in into is it its itself just let me more most my " +
    "myself no nor not now of off on once only or other our ours ourselves out over own please same she " +
    "should so some such than that the their theirs them themselves then there these they this those " +
    "through to too under until up upon us very via was we were what when where which while who whom why " +
    "will with within without would you your yours yourself yourselves want wants wanted need needs like " +
    "help kindly give tell know let thanks thank able sure ok okay hi hello everything anything something " +
    "nothing everyone anyone someone").split(" "),
);

/** Irregular forms mapped to a base form before stemming. */
const IRREGULAR: ReadonlyMap<string, string> = new Map([
  ["using", "use"],
  ["used", "use"],
  ["uses", "use"],
  ["written", "write"],
  ["wrote", "write"],
  ["ran", "run"],
  ["got", "get"],
  ["gotten", "get"],
  ["found", "find"],
  ["made", "make"],
  ["sent", "send"],
  ["took", "take"],
  ["taken", "take"],
  ["saw", "see"],
  ["seen", "see"],
  ["chose", "choose"],
  ["chosen", "choose"],
  ["built", "build"],
  ["kept", "keep"],
  ["bought", "buy"],
  ["children", "child"],
  ["people", "person"],
  ["conversion", "convert"],
  ["conversions", "convert"],
  ["analyses", "analysis"],
  ["indices", "index"],
  ["queries", "query"],
]);

/** Words the suffix rules would damage. */
const KEEP: ReadonlySet<string> = new Set([
  "news",
  "series",
  "species",
  "analysis",
  "status",
  "embed",
  "canvas",
  "always",
  "alias",
  "basis",
  "thesis",
  "axis",
  "data",
  "media",
  "process",
  "access",
  "address",
  "class",
]);

const VOWEL = /[aeiouy]/;
/** A character of a CJK script: such text is split into character bigrams. */
export const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
const CJK_RUN = /([\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+)/u;
const CHUNK = /[\p{L}\p{N}_-]+/gu;
const MARKS = /\p{M}+/gu;

/** Lowercases and folds accents (`Café` -> `cafe`, `ﬁle` -> `file`). */
export function fold(text: string): string {
  return text.normalize("NFKD").replace(MARKS, "").toLowerCase();
}

const PLAIN = /^[a-z0-9]+$/;
const PLAIN_CAPITALIZED = /^[A-Z]?[a-z0-9]+$/;
const NON_ASCII = /[^\u0020-\u007e\t\n\r]/;

/**
 * Longest text, in UTF-16 code units, that {@link tokenize} and {@link splitWords} read; the rest is
 * ignored for ranking (the full text still reaches the agent through describe_tool). Real tool
 * descriptions are a few KiB at most; the bound keeps a hostile 50 MB description from costing more
 * than a normal one.
 */
export const MAX_INDEXED_CHARS = 16_384;

/** Longest identifier part, in UTF-16 code units; longer runs (hashes, base64, `DDDD…`) are cut to it. */
export const MAX_PART_CHARS = 64;

/** The first {@link MAX_INDEXED_CHARS} characters of a text: the part the resolver reads. */
export function bounded(text: string): string {
  return text.length > MAX_INDEXED_CHARS ? text.slice(0, MAX_INDEXED_CHARS) : text;
}

const UPPER = /^\p{Lu}$/u;
const LOWER = /^\p{Ll}$/u;
const NUMBER = /^\p{N}$/u;

/** Character class for identifier splitting: upper, lower, number, separator, other. */
const enum Kind {
  Upper,
  Lower,
  Number,
  Separator,
  Other,
}

function kindOf(ch: string): Kind {
  const c = ch.charCodeAt(0);
  if (c < 128) {
    if (c >= 65 && c <= 90) return Kind.Upper;
    if (c >= 97 && c <= 122) return Kind.Lower;
    if (c >= 48 && c <= 57) return Kind.Number;
    return c === 95 || c === 45 ? Kind.Separator : Kind.Other;
  }
  if (/\s/.test(ch)) return Kind.Separator;
  return UPPER.test(ch)
    ? Kind.Upper
    : LOWER.test(ch)
    ? Kind.Lower
    : NUMBER.test(ch)
    ? Kind.Number
    : Kind.Other;
}

/**
 * Splits one identifier-like chunk on `_`, `-`, camelCase and acronym boundaries (`HTTPRequest` ->
 * `HTTP`, `Request`). One linear pass over the code points: no backtracking regex on untrusted text.
 * Parts are cut to {@link MAX_PART_CHARS}.
 */
function splitIdentifier(chunk: string): string[] {
  // Most words are plain or merely capitalized: skip the scan.
  if (PLAIN_CAPITALIZED.test(chunk)) return [cut(chunk)];
  const chars = Array.from(chunk);
  const kinds = chars.map(kindOf);
  const out: string[] = [];
  let start = -1;
  const close = (end: number) => {
    if (start >= 0 && end > start) {
      out.push(cut(chars.slice(start, Math.min(end, start + MAX_PART_CHARS)).join("")));
    }
    start = -1;
  };
  for (let i = 0; i < chars.length; i++) {
    const k = kinds[i]!;
    if (k === Kind.Separator) {
      close(i);
      continue;
    }
    if (start >= 0 && k === Kind.Upper) {
      const prev = kinds[i - 1]!;
      // lower|digit -> Upper ("getFile"), or the last capital of a run before a lowercase letter ("HTTPRequest").
      if (
        prev === Kind.Lower || prev === Kind.Number || (prev === Kind.Upper && kinds[i + 1] === Kind.Lower)
      ) {
        close(i);
      }
    }
    if (start < 0) start = i;
  }
  close(chars.length);
  return out;
}

function cut(part: string): string {
  return part.length > MAX_PART_CHARS ? part.slice(0, MAX_PART_CHARS) : part;
}

function cjkBigrams(run: string): string[] {
  const chars = [...run];
  if (chars.length === 1) return chars;
  const out: string[] = [];
  for (let i = 0; i + 1 < chars.length; i++) out.push(chars[i]! + chars[i + 1]!);
  return out;
}

/**
 * Splits text into words. Case boundaries are read before folding, so
 * `HTTPRequest` gives `http` + `request`; parts are lowercased and accent-free.
 * CJK runs become overlapping character bigrams.
 */
export function splitWords(text: string): Word[] {
  const out: Word[] = [];
  for (const chunk of chunks(bounded(text))) chunkWords(chunk, out);
  return out;
}

/** Identifier-like chunks of a text after NFKD folding of accents (case kept for the camelCase split). */
function chunks(text: string): string[] {
  const normalized = NON_ASCII.test(text) ? text.normalize("NFKD").replace(MARKS, "") : text;
  return normalized.match(CHUNK) ?? [];
}

function chunkWords(chunk: string, out: Word[]): void {
  if (PLAIN.test(chunk)) {
    out.push({ parts: [cut(chunk)] });
    return;
  }
  if (CJK.test(chunk)) {
    for (const piece of chunk.split(CJK_RUN)) {
      if (!piece) continue;
      if (CJK.test(piece)) {
        for (const gram of cjkBigrams(piece)) out.push({ parts: [gram] });
      } else {
        pushIdentifier(out, piece);
      }
    }
    return;
  }
  pushIdentifier(out, chunk);
}

function pushIdentifier(out: Word[], chunk: string): void {
  const parts = splitIdentifier(chunk).map((p) => p.toLowerCase());
  if (parts.length === 0) return;
  if (parts.length === 1) out.push({ parts });
  else out.push({ parts, compound: cut(parts.join("")) });
}

function undouble(word: string): string {
  const n = word.length;
  if (n >= 2 && word[n - 1] === word[n - 2] && !"lsz".includes(word[n - 1]!) && !VOWEL.test(word[n - 1]!)) {
    return word.slice(0, -1);
  }
  return word;
}

/**
 * A light Porter-ish stemmer: plurals, `-ing`/`-ed`/`-ied`, a few
 * derivational suffixes (`-ization`, `-ation`, `-ator`, `-izer`, `-tion`) and
 * a final `-e`, so `create`, `creates`, `creating`, `created`, `creation` and
 * `creator` share the stem `creat`. Words of three letters or fewer, numbers
 * and a short keep-list are returned unchanged.
 */
export function stem(word: string): string {
  let cached = STEMS.get(word);
  if (cached === undefined) {
    cached = computeStem(word);
    // Bounded: a flood of distinct words (hashes, ids) must not grow memory without limit.
    if (STEMS.size >= STEM_CACHE_SIZE) STEMS.clear();
    STEMS.set(word, cached);
  }
  return cached;
}

const STEM_CACHE_SIZE = 100_000;
const STEMS = new Map<string, string>();

function computeStem(word: string): string {
  const irregular = IRREGULAR.get(word);
  if (irregular !== undefined) word = irregular;
  if (word.length <= 3 || KEEP.has(word) || !/^[a-z]+$/.test(word)) return word;
  let w = word;
  // Plurals and third person.
  if (w.endsWith("ies") && w.length > 4) w = w.slice(0, -3) + "y";
  else if (w.endsWith("sses")) w = w.slice(0, -2);
  else if (/(?:[sxz]|ch|sh)es$/.test(w) && w.length > 4) w = w.slice(0, -2);
  else if (w.endsWith("s") && !/(?:ss|us|is)$/.test(w)) w = w.slice(0, -1);
  // Inflections.
  if (w.endsWith("ied") && w.length > 4) {
    w = w.slice(0, -3) + "y";
  } else if (w.endsWith("ing") && w.length - 3 >= 3 && VOWEL.test(w.slice(0, -3))) {
    w = undouble(w.slice(0, -3));
  } else if (w.endsWith("ed") && !w.endsWith("eed") && w.length - 2 >= 3 && VOWEL.test(w.slice(0, -2))) {
    w = undouble(w.slice(0, -2));
  }
  // Derivational suffixes that name the same action.
  if (/[iy][sz]ation$/.test(w)) w = w.slice(0, -6) + "z";
  else if (w.endsWith("ation") && w.length > 7) w = w.slice(0, -3);
  else if (w.endsWith("ator") && w.length > 6) w = w.slice(0, -2);
  else if (/[iy][sz]er$/.test(w) && w.length > 5) w = w.slice(0, -3) + "z";
  else if (/[ts]ion$/.test(w) && w.length >= 8) w = w.slice(0, -3);
  if (w.endsWith("e") && w.length > 3) w = w.slice(0, -1);
  // British -ise spellings meet the -ize stem.
  if (w.endsWith("is") && w.length > 5 && /is(?:e|es|ed|ing)$/.test(word)) w = w.slice(0, -1) + "z";
  return w;
}

/** True when `term` is a stop word (pass the folded, unstemmed word). */
export function isStopWord(word: string): boolean {
  return STOP_WORDS.has(word);
}

/**
 * Index terms of a text, in order: stemmed parts without stop words, plus the
 * stemmed compound of every multi-part identifier (`list_directory` ->
 * `list`, `directory`, `listdirectory`).
 */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  const words: Word[] = [];
  for (const chunk of chunks(bounded(text))) {
    // Fast path for plain words: no Word objects, no identifier splitting.
    if (PLAIN_CAPITALIZED.test(chunk)) {
      const part = cut(chunk).toLowerCase();
      if (indexable(part)) out.push(stem(part));
      continue;
    }
    words.length = 0;
    chunkWords(chunk, words);
    for (const word of words) {
      for (const part of word.parts) if (indexable(part)) out.push(stem(part));
      if (word.compound !== undefined) out.push(stem(word.compound));
    }
  }
  return out;
}

/** Not a stop word and not a lone Latin letter. */
function indexable(part: string): boolean {
  return !STOP_WORDS.has(part) && !(part.length === 1 && part >= "a" && part <= "z");
}

/**
 * Words after which a tool's name qualifies its object instead of naming it: `get_station_code_by_names` reads a
 * code, `get_stock_price_by_date` a price, `create_comment_on_issue` makes a comment.
 */
export const NAME_QUALIFIERS: ReadonlySet<string> = new Set(
  "by for of in from with to on at per via under".split(" "),
);

/** The words of a name (lower case) before its first qualifier ({@link NAME_QUALIFIERS}) at or after `from`. */
export function beforeQualifier(words: readonly string[], from = 0): readonly string[] {
  const at = words.findIndex((w, i) => i >= from && NAME_QUALIFIERS.has(w));
  return at < 0 ? words : words.slice(0, at);
}
