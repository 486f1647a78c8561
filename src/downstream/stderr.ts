/**
 * What a downstream server says on stderr and the gateway repeats of it: the bounded tail of its stderr kept
 * for error reports, and the redaction and clipping of a server's text before it is logged or reported.
 *
 * @module
 */

/** Characters of a non-JSON-RPC stdout line quoted in the log (after redaction). */
export const GARBAGE_QUOTE_CHARS = 120;

/** Bytes of a server's stderr kept for error reports. */
export const STDERR_TAIL_BYTES = 8 * 1024;

/** Keeps the last N bytes of a stream, from the first whole line in them. */
export class Tail {
  /** One buffer of `limit` bytes, written round: the heap never holds more of a server's stderr. */
  #ring: Uint8Array;
  /** Bytes pushed in all. */
  #total = 0;
  constructor(readonly limit: number) {
    this.#ring = new Uint8Array(Math.max(1, limit));
  }

  /** Bytes held (the buffer), whatever was pushed. */
  get retainedBytes(): number {
    return this.#ring.byteLength;
  }

  push(chunk: Uint8Array): void {
    const size = this.#ring.length;
    const keep = chunk.length > size ? chunk.subarray(chunk.length - size) : chunk;
    let at = (this.#total + chunk.length - keep.length) % size;
    let from = 0;
    while (from < keep.length) {
      const n = Math.min(keep.length - from, size - at);
      this.#ring.set(keep.subarray(from, from + n), at);
      from += n;
      at = (at + n) % size;
    }
    this.#total += chunk.length;
  }

  text(): string {
    const size = this.#ring.length;
    const held = Math.min(this.#total, size);
    const start = (this.#total - held) % size;
    const bytes = start + held <= size
      ? this.#ring.subarray(start, start + held)
      : concatTail(this.#ring.subarray(start), this.#ring.subarray(0, start + held - size));
    let text = new TextDecoder().decode(bytes);
    // A cut first line may hold part of a secret that redaction cannot recognise: it is dropped, and when
    // the whole tail is one cut line, so is the tail.
    if (this.#total > size) {
      const nl = text.indexOf("\n");
      text = nl < 0 ? "" : text.slice(nl + 1);
    }
    return text;
  }
}

function concatTail(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** Replaces the values of a server's `env` and `headers` in text. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length >= 4) out = out.split(secret).join("***");
  }
  return out;
}

/** `text` cut to `max` characters with an ellipsis; callers redact first. */
export function clipText(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}
