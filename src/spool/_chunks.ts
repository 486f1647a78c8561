/**
 * Bytes given in parts of any size, cut into the spool's chunks of a fixed size.
 *
 * @module
 */

/**
 * Cuts bytes given in parts of any size into chunks of `size` bytes. A chunk that lies within one part
 * is a view of it; one that spans parts is copied into the chunker's own buffer, valid until the next
 * chunk is asked for (use or copy each before going on). Bytes that do not fill a chunk wait for the next
 * {@linkcode Chunker.push}; {@linkcode Chunker.rest} gives them.
 */
export class Chunker {
  readonly #size: number;
  readonly #carry: Uint8Array;
  #carried = 0;

  constructor(size: number) {
    this.#size = size;
    this.#carry = new Uint8Array(size);
  }

  /** The whole chunks `parts` complete, in order. */
  *push(parts: Iterable<Uint8Array>): Generator<Uint8Array> {
    const size = this.#size;
    const carry = this.#carry;
    for (const part of parts) {
      let at = 0;
      while (at < part.length) {
        if (this.#carried === 0 && part.length - at >= size) {
          yield part.subarray(at, at + size);
          at += size;
          continue;
        }
        const n = Math.min(size - this.#carried, part.length - at);
        carry.set(part.subarray(at, at + n), this.#carried);
        this.#carried += n;
        at += n;
        if (this.#carried === size) {
          this.#carried = 0;
          yield carry;
        }
      }
    }
  }

  /** The bytes waiting for a chunk to fill (a view, as a chunk is), then none; undefined when none. */
  rest(): Uint8Array | undefined {
    if (this.#carried === 0) return undefined;
    const rest = this.#carry.subarray(0, this.#carried);
    this.#carried = 0;
    return rest;
  }
}

/** `parts` cut into chunks of `size` bytes, the last one shorter when need be (see {@linkcode Chunker}). */
export function* rechunk(parts: Iterable<Uint8Array>, size: number): Generator<Uint8Array> {
  const chunker = new Chunker(size);
  yield* chunker.push(parts);
  const rest = chunker.rest();
  if (rest) yield rest;
}
