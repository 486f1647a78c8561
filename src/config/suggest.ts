/**
 * "Did you mean …?" for misspelled keys and names. Bounded whatever the input: the word is read up
 * to {@link SUGGEST_MAX_CHARS} and the edit distance only fills a band of width `2 * limit + 1`, so a
 * 3,000-character unknown name against 100k candidates costs a few milliseconds, not a minute.
 *
 * @module
 */

/** Longest word, in UTF-16 code units, that gets a suggestion; a longer one is nobody's typo. */
export const SUGGEST_MAX_CHARS = 256;

/**
 * Levenshtein distance, or `limit + 1` once it exceeds `limit`. Only the diagonal band
 * `|i - j| <= limit` is computed: O(min(|a|, |b|) * limit) time.
 */
export function boundedDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  if (a.length > b.length) [a, b] = [b, a];
  const over = limit + 1;
  let previous = new Array<number>(b.length + 1);
  let current = new Array<number>(b.length + 1);
  for (let j = 0; j <= b.length; j++) previous[j] = j <= limit ? j : over;
  for (let i = 1; i <= a.length; i++) {
    const from = Math.max(1, i - limit), to = Math.min(b.length, i + limit);
    current[from - 1] = from - 1 === 0 ? i : over;
    let best = current[from - 1]!;
    for (let j = from; j <= to; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const up = j <= i - 1 + limit ? previous[j]! : over;
      const value = Math.min(up + 1, current[j - 1]! + 1, previous[j - 1]! + cost, over);
      current[j] = value;
      if (value < best) best = value;
    }
    if (to < b.length) current[to + 1] = over;
    if (best > limit) return over;
    [previous, current] = [current, previous];
  }
  return Math.min(previous[b.length]!, over);
}

/**
 * The closest candidate to `word`: same up to case, `-`/`_` spelling, a prefix of at least 3 characters,
 * or within edit distance 2 (1 for words of 3-5 characters, 0 for shorter ones, where any guess is noise).
 * Undefined when nothing is close, and for words over {@link SUGGEST_MAX_CHARS}.
 */
export function closest(word: string, candidates: Iterable<string>): string | undefined {
  if (word.length > SUGGEST_MAX_CHARS) return undefined;
  const normal = (text: string) => text.toLowerCase().replaceAll("-", "_");
  const wanted = normal(word);
  const limit = wanted.length <= 2 ? 0 : wanted.length <= 5 ? 1 : 2;
  let best: string | undefined;
  let bestScore = Infinity;
  for (const candidate of candidates) {
    if (candidate.length > SUGGEST_MAX_CHARS) continue;
    const other = normal(candidate);
    let score: number;
    if (wanted === other) score = 0;
    else if (wanted.length >= 3 && (other.startsWith(wanted) || wanted.startsWith(other))) score = 0.5;
    else score = boundedDistance(wanted, other, limit);
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

/**
 * Up to `count` candidates within edit distance `max(2, floor(length / 4))` of `name` (case-folded;
 * the band is capped at 16), nearest first, ties by name. For tool names in an "unknown tool" error:
 * bounded by {@link SUGGEST_MAX_CHARS} and the band, so a hostile name cannot stall the caller.
 */
export function nearest(name: string, candidates: Iterable<string>, count = 3): string[] {
  if (name.length > SUGGEST_MAX_CHARS) return [];
  const target = name.toLowerCase();
  const limit = Math.min(16, Math.max(2, Math.floor(target.length / 4)));
  const found: { n: string; d: number }[] = [];
  for (const n of candidates) {
    const d = boundedDistance(target, n.toLowerCase(), limit);
    if (d <= limit) found.push({ n, d });
  }
  return found.sort((a, b) => a.d - b.d || (a.n < b.n ? -1 : a.n > b.n ? 1 : 0)).slice(0, count).map((x) =>
    x.n
  );
}
