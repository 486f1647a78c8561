/**
 * "Did you mean …?" for misspelled keys and names.
 *
 * @module
 */

/** Levenshtein distance, stopping early once it exceeds `limit`. */
function distance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost);
      best = Math.min(best, current[j]);
    }
    if (best > limit) return limit + 1;
    previous = current;
  }
  return previous[b.length];
}

/**
 * The closest candidate to `word`: same up to case, `-`/`_` spelling, a prefix of at least 3 characters,
 * or within edit distance 2 (1 for words of 3-5 characters, 0 for shorter ones, where any guess is noise).
 * Undefined when nothing is close.
 */
export function closest(word: string, candidates: Iterable<string>): string | undefined {
  const normal = (text: string) => text.toLowerCase().replaceAll("-", "_");
  const wanted = normal(word);
  const limit = wanted.length <= 2 ? 0 : wanted.length <= 5 ? 1 : 2;
  let best: string | undefined;
  let bestScore = Infinity;
  for (const candidate of candidates) {
    const other = normal(candidate);
    let score: number;
    if (wanted === other) score = 0;
    else if (wanted.length >= 3 && (other.startsWith(wanted) || wanted.startsWith(other))) score = 0.5;
    else score = distance(wanted, other, limit);
    if (score <= Math.max(limit, 0.5) && score < bestScore) {
      best = candidate;
      bestScore = score;
    }
  }
  return best;
}

/** `; did you mean "x"?` or the empty string. */
export function didYouMean(word: string, candidates: Iterable<string>): string {
  const match = closest(word, candidates);
  return match === undefined ? "" : `; did you mean "${match}"?`;
}
