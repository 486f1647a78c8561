/**
 * Bit positions of a Bloom filter: double hashing of two FNV-1a hashes, shared by the generator
 * (`scripts/gen_english_words.ts`) and the reader (`lexicon.ts`).
 *
 * @module
 */

/** The `hashes` bit positions of a string in a filter of `bits` bits (a power of two). */
export function bloomPositions(text: string, bits: number, hashes: number): number[] {
  let h1 = 2166136261, h2 = 16777619;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 16777619) >>> 0;
    h2 = Math.imul(h2 ^ c, 2246822519) >>> 0;
  }
  h2 |= 1;
  const out: number[] = [];
  for (let i = 0; i < hashes; i++) out.push(((h1 + Math.imul(i, h2)) >>> 0) & (bits - 1));
  return out;
}
