/**
 * Whether a stem is an English word's: a Bloom filter of the stems of WordNet's lemmas
 * (`scripts/gen_english_words.ts`). Its own module so that both `lexicon.ts` and `foreign_words.ts` read it.
 *
 * @module
 */
import { bloomPositions } from "./bloom.ts";
import { ENGLISH_BLOOM, ENGLISH_BLOOM_SHAPE } from "./english_data.ts";

let english: Uint8Array | undefined;

/**
 * True for the stem of an English word (a WordNet lemma), and for about 0.1% of other strings (a Bloom
 * filter: `scripts/gen_english_words.ts`). Decoded on first use.
 */
export function isEnglishStem(term: string): boolean {
  english ??= Uint8Array.from(atob(ENGLISH_BLOOM), (c) => c.charCodeAt(0));
  const bits = english;
  return bloomPositions(term, ENGLISH_BLOOM_SHAPE.bits, ENGLISH_BLOOM_SHAPE.hashes).every((p) =>
    (bits[p >>> 3]! & (1 << (p & 7))) !== 0
  );
}
