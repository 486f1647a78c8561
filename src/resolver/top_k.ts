/**
 * Bounded top-k selection, so ranking a large catalog never sorts every match.
 *
 * @module
 */

/** Keeps the k best (doc, score) pairs seen; `worse(a, sa, b, sb)` orders them. */
export class TopK {
  #k: number;
  #docs: number[] = [];
  #scores: number[] = [];
  #worse: (a: number, sa: number, b: number, sb: number) => boolean;

  constructor(k: number, worse: (a: number, sa: number, b: number, sb: number) => boolean) {
    this.#k = k;
    this.#worse = worse;
  }

  push(doc: number, score: number): void {
    const docs = this.#docs;
    const scores = this.#scores;
    if (docs.length < this.#k) {
      docs.push(doc);
      scores.push(score);
      let i = docs.length - 1;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (!this.#worse(docs[i]!, scores[i]!, docs[p]!, scores[p]!)) break;
        this.#swap(i, p);
        i = p;
      }
      return;
    }
    if (this.#k === 0 || !this.#worse(docs[0]!, scores[0]!, doc, score)) return;
    docs[0] = doc;
    scores[0] = score;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < docs.length && this.#worse(docs[l]!, scores[l]!, docs[m]!, scores[m]!)) m = l;
      if (r < docs.length && this.#worse(docs[r]!, scores[r]!, docs[m]!, scores[m]!)) m = r;
      if (m === i) break;
      this.#swap(i, m);
      i = m;
    }
  }

  #swap(i: number, j: number): void {
    [this.#docs[i], this.#docs[j]] = [this.#docs[j]!, this.#docs[i]!];
    [this.#scores[i], this.#scores[j]] = [this.#scores[j]!, this.#scores[i]!];
  }

  /** Entries, best first. */
  drain(): { doc: number; score: number }[] {
    const out = this.#docs.map((doc, i) => ({ doc, score: this.#scores[i]! }));
    return out.sort((a, b) => (this.#worse(a.doc, a.score, b.doc, b.score) ? 1 : -1));
  }
}
