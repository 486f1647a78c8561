/**
 * "Did you mean …?" for mistyped commands and flags: the closest known word by
 * optimal string alignment distance (a swapped pair of letters counts as one edit).
 *
 * @module
 */

/** Edits between `a` and `b`: insertions, deletions, substitutions and adjacent swaps. */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i]);
  for (let j = 1; j <= b.length; j++) rows[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      }
      rows[i]![j] = best;
    }
  }
  return rows[a.length]![b.length]!;
}

/**
 * The known word closest to `word`, or undefined when none is close enough: at most one edit for
 * words of up to 4 letters, two for longer ones; a unique prefix of 3 or more letters also counts.
 */
export function suggest(word: string, known: Iterable<string>): string | undefined {
  const wanted = word.toLowerCase();
  const bare = wanted.replace(/^-+/, "");
  const limit = bare.length <= 4 ? 1 : 2;
  let best: string | undefined;
  let bestScore = Infinity;
  for (const candidate of known) {
    const score = editDistance(wanted, candidate.toLowerCase());
    if (score <= limit && score < bestScore) [best, bestScore] = [candidate, score];
  }
  if (best !== undefined) return best;
  const prefixed = [...known].filter((k) => bare.length >= 3 && k.replace(/^-+/, "").startsWith(bare));
  return prefixed.length === 1 ? prefixed[0] : undefined;
}
