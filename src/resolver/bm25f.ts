/**
 * BM25F postings: per-field term counts in, per-term posting lists with
 * precomputed impacts out. Used for tools and for servers as documents.
 *
 * @module
 */
import { drain, STEP } from "../catalog/mod.ts";
import { tokenize } from "./tokenize.ts";

/** The documents containing one term, with precomputed BM25F impacts. */
export interface Postings {
  idf: number;
  /** Ascending document numbers. */
  docs: Int32Array;
  /** Saturated, field-weighted term frequency per document: tf~ (k1 + 1) / (tf~ + k1). */
  impacts: Float32Array;
}

/** A field's weight and length normalization (0 = none, 1 = full). */
export interface FieldWeight {
  weight: number;
  b: number;
}

/** Term counts of a text. */
export function termCounts(text: string): Map<string, number> {
  return addCounts(new Map(), text);
}

/** Adds a text's term counts to `counts`. */
export function addCounts(counts: Map<string, number>, text: string): Map<string, number> {
  for (const t of tokenize(text)) counts.set(t, (counts.get(t) ?? 0) + 1);
  return counts;
}

/**
 * BM25F postings of documents given as per-field term counts: per document
 * and term, tf~ = sum over fields of weight * tf / (1 - b + b * len / avglen),
 * stored as the saturated impact tf~ (k1 + 1) / (tf~ + k1); idf =
 * ln(1 + (N - df + 0.5) / (df + 0.5)). `docTerms` holds each document's
 * terms with their field-weighted frequency tf~.
 */
export function bm25f(
  docs: readonly (readonly ReadonlyMap<string, number>[])[],
  fields: readonly FieldWeight[],
  k1: number,
): { postings: Map<string, Postings>; docTerms: Map<string, number>[] } {
  return drain(bm25fSteps(docs, fields, k1));
}

/** {@link bm25f}, yielding every {@link STEP} documents or terms so a caller can pause between slices. */
export function* bm25fSteps(
  docs: readonly (readonly ReadonlyMap<string, number>[])[],
  fields: readonly FieldWeight[],
  k1: number,
  extraDf?: ReadonlyMap<string, number>,
): Generator<void, { postings: Map<string, Postings>; docTerms: Map<string, number>[] }> {
  const n = docs.length;
  const lengths: number[][] = [];
  const sums = fields.map(() => 0);
  // Work is counted in terms, not documents: a few documents (servers) can hold most of the terms.
  let work = 0;
  for (let d = 0; d < n; d++) {
    if (work >= STEP) work = 0, yield;
    lengths.push(docs[d]!.map((tf, f) => {
      let len = 0;
      for (const x of tf.values()) len += x;
      sums[f] = (sums[f] ?? 0) + len;
      work += tf.size;
      return len;
    }));
  }
  yield;
  const avg = fields.map((_, f) => (n > 0 ? sums[f]! / n : 0));
  const build = new Map<string, { docs: number[]; impacts: number[] }>();
  const docTerms: Map<string, number>[] = [];
  for (let d = 0; d < n; d++) {
    if (work >= STEP) work = 0, yield;
    const pseudo = new Map<string, number>();
    fields.forEach(({ weight, b }, f) => {
      if (weight <= 0) return;
      const norm = avg[f]! > 0 ? 1 - b + b * (lengths[d]![f]! / avg[f]!) : 1;
      for (const [term, tf] of docs[d]![f]!) pseudo.set(term, (pseudo.get(term) ?? 0) + (weight * tf) / norm);
    });
    docTerms.push(pseudo);
    work += pseudo.size;
    for (const [term, tf] of pseudo) {
      let list = build.get(term);
      if (!list) build.set(term, list = { docs: [], impacts: [] });
      list.docs.push(d);
      list.impacts.push((tf * (k1 + 1)) / (tf + k1));
    }
  }
  const postings = new Map<string, Postings>();
  work = 0;
  for (const [term, list] of build) {
    // Counted in postings: a term in every document is as much work as thousands of rare ones.
    if ((work += 16 + list.docs.length) >= 64 * STEP) work = 0, yield;
    // Documents that hold the term only in text kept out of their own terms (boilerplate) still count.
    const df = list.docs.length + (extraDf?.get(term) ?? 0);
    postings.set(term, {
      idf: Math.log(1 + (n - df + 0.5) / (df + 0.5)),
      docs: Int32Array.from(list.docs),
      impacts: Float32Array.from(list.impacts),
    });
  }
  return { postings, docTerms };
}
