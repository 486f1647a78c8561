/**
 * English glosses of Chinese text, so a tool described in Chinese (`获取当前日期`, "get the current date")
 * is found by an English request, and a request written in Chinese reaches English tools. The glossary is
 * derived from CC-CEDICT by `scripts/gen_zh_glossary.ts` (`zh_gloss_data.json`, CC BY-SA 4.0, its licence
 * and attribution inside); words are found by greedy longest match, the usual first cut at segmenting
 * Chinese (bidirectional maximum matching gave the same ranks). Kanji in Japanese text are glossed with
 * their Chinese senses, which are not always the Japanese ones.
 *
 * @module
 */
import { tokenize } from "./tokenize.ts";
import data from "./zh_gloss_data.json" with { type: "json" };

const ZH_GLOSSARY: string = data.glossary;
/** Longest rest of a headword after its first character, in UTF-16 units (all its characters are BMP). */
const MAX_REST: number = data.maxChars - 1;

const HAN_RUN = /\p{Script=Han}+/gu;
const HAN = /\p{Script=Han}/u;

/** The glossary's line of each first character; a line is parsed the first time its character is met. */
let lines: Map<string, string> | undefined;
const parsed = new Map<string, Map<string, string[]>>();

/** The senses of the words that start with `head` (the rest of the word -> senses), parsed on first use. */
function wordsOf(head: string): Map<string, string[]> | undefined {
  const known = parsed.get(head);
  if (known) return known;
  if (!lines) {
    // Splitting the 1.6 MB text costs ~1 ms; parsing all 68k entries up front would cost ~35 ms at once.
    lines = new Map();
    for (const line of ZH_GLOSSARY.split("\n")) lines.set(String.fromCodePoint(line.codePointAt(0)!), line);
  }
  const line = lines.get(head);
  if (line === undefined) return undefined;
  const words = new Map<string, string[]>();
  for (const entry of line.slice(head.length).split("|")) {
    const at = entry.indexOf("=");
    words.set(entry.slice(0, at), entry.slice(at + 1).split("/"));
  }
  parsed.set(head, words);
  return words;
}

/** Whether the text has a Han character: only such text is glossed. */
export function hasChinese(text: string): boolean {
  return HAN.test(text);
}

/**
 * The English glosses of the Chinese words in `text`, in order, space-separated ("" when it has none).
 * Characters the glossary lacks (stop words such as `的`, `和` among them) and all other text are
 * skipped. Each word's gloss is its first sense that `known` accepts (the catalog's English uses its
 * words: `频道` "frequency", else "channel"), else its first sense.
 */
export function glossChinese(text: string, known?: (sense: string) => boolean): string {
  return chineseWords(text).map((w) => (known && w.senses.find(known)) ?? w.senses[0]!).join(" ");
}

/** A test of senses for {@link glossChinese}: the sense's every word is a term that `has` knows. */
export function senseIn(has: (term: string) => boolean): (sense: string) => boolean {
  return (sense) => {
    const terms = tokenize(sense);
    return terms.length > 0 && terms.every(has);
  };
}

/** A Chinese word of a text and its English senses, the dictionary's first sense first. */
export interface ChineseWord {
  /** The word as written. */
  word: string;
  /** At least one. */
  senses: string[];
}

/** The Chinese words of `text` that the glossary has, in order, by greedy longest match. */
export function chineseWords(text: string): ChineseWord[] {
  if (!hasChinese(text)) return [];
  const out: ChineseWord[] = [];
  for (const [run] of text.matchAll(HAN_RUN)) {
    for (let i = 0; i < run.length;) {
      const head = String.fromCodePoint(run.codePointAt(i)!);
      const words = wordsOf(head);
      let step = head.length;
      if (words) {
        // The longest word at i: the rest of the word after its first character, longest first.
        for (let n = Math.min(MAX_REST, run.length - i - head.length); n >= 0; n--) {
          const senses = words.get(run.slice(i + head.length, i + head.length + n));
          if (senses !== undefined) {
            step = head.length + n;
            out.push({ word: run.slice(i, i + step), senses });
            break;
          }
        }
      }
      i += step;
    }
  }
  return out;
}
