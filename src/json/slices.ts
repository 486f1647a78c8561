/**
 * A stepwise build (a generator that yields between small pieces of work) that can be finished in
 * slices, yielding to the event loop between them, or at once by a caller that cannot wait; both ways
 * share the one run, so the work is never done twice.
 *
 * @module
 */

/**
 * Longest stretch, in ms, a sliced build runs before it lets other work in. Short, because a young-
 * generation collection of what the build keeps (a 100,000-tool catalog survives whole) can come on top.
 */
export const SLICE_MS = 10;

/** One stepwise build, finished in slices ({@link Stepper.finishAsync}) or at once ({@link Stepper.finish}). */
export class Stepper<T> {
  #steps: Generator<void, T>;
  #done = false;
  #value?: T;
  #running?: Promise<T>;
  #gate?: Promise<unknown>;

  constructor(steps: Generator<void, T>) {
    this.#steps = steps;
  }

  /** Runs up to `ms`; true when the build is done. */
  #run(ms: number): boolean {
    if (this.#done) return true;
    const start = performance.now();
    for (;;) {
      const r = this.#steps.next();
      if (r.done) {
        this.#done = true;
        this.#value = r.value;
        return true;
      }
      if (performance.now() - start >= ms) return false;
    }
  }

  /** Finishes the build now, holding the event loop for what is left of it. */
  finish(): T {
    this.#run(Infinity);
    return this.#value!;
  }

  /**
   * The rest of the build as steps of an enclosing stepwise build (one of this build's steps each), so
   * the enclosing one's slices cover it; shares the one run with {@link Stepper.finish} and the others.
   */
  *steps(): Generator<void, T> {
    while (!this.#run(0)) yield;
    return this.#value!;
  }

  /**
   * The slices of {@link Stepper.finishAsync} begin only once `gate` settles (a caller of
   * {@link Stepper.finish} still finishes at once). Set before the first `finishAsync`.
   */
  after(gate: Promise<unknown> | undefined): this {
    this.#gate = gate;
    return this;
  }

  /** Finishes the build in slices of about `sliceMs`, a macrotask apart. */
  finishAsync(sliceMs = SLICE_MS): Promise<T> {
    this.#running ??= (async () => {
      if (this.#gate) await this.#gate.catch(() => {});
      while (!this.#run(sliceMs)) await new Promise((resolve) => setTimeout(resolve, 0));
      return this.#value!;
    })();
    return this.#running;
  }
}
