/**
 * Stepwise work: a generator that yields between small pieces, so a caller can pause between
 * slices (the hub builds a 100,000-tool catalog without holding the event loop) or run it whole.
 *
 * @module
 */

/** Items per piece of work between yields. */
export const STEP = 512;

/** Runs a stepwise builder to completion. */
export function drain<T>(steps: Generator<void, T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/**
 * `items` sorted by `compare` (stable), yielding between pieces: runs of {@link STEP} sorted
 * whole, then merged pairwise, yielding every few thousand comparisons.
 */
export function* sortSteps<T>(items: readonly T[], compare: (a: T, b: T) => number): Generator<void, T[]> {
  let runs: T[][] = [];
  for (let at = 0; at < items.length; at += STEP) {
    runs.push(items.slice(at, at + STEP).sort(compare));
    yield;
  }
  let work = 0;
  while (runs.length > 1) {
    const next: T[][] = [];
    for (let r = 0; r < runs.length; r += 2) {
      const a = runs[r]!, b = runs[r + 1];
      if (!b) {
        next.push(a);
        continue;
      }
      const merged: T[] = new Array(a.length + b.length);
      let i = 0, j = 0, k = 0;
      while (i < a.length && j < b.length) {
        merged[k++] = compare(b[j]!, a[i]!) < 0 ? b[j++]! : a[i++]!;
        if (++work % (8 * STEP) === 0) yield;
      }
      while (i < a.length) merged[k++] = a[i++]!;
      while (j < b.length) merged[k++] = b[j++]!;
      next.push(merged);
    }
    runs = next;
    yield;
  }
  return runs[0] ?? [];
}
