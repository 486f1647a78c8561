/**
 * UTF-8 helpers for the spool: streaming a JS string into fixed-size byte
 * chunks without materializing its whole encoding, and byte-level measures.
 * Only imported from `src/spool/`.
 *
 * @module
 */

const encoder = new TextEncoder();

function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}

function isLowSurrogate(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff;
}

/**
 * Yields the UTF-8 encoding of `text` as consecutive chunks of exactly
 * `chunkBytes` bytes (the last one may be shorter). A character that straddles
 * a chunk edge is split at the byte level, so chunk `i` always covers bytes
 * `[i * chunkBytes, (i + 1) * chunkBytes)`. The bytes are those of
 * `new TextEncoder().encode(text)` (a lone surrogate becomes U+FFFD).
 *
 * Every yielded view shares one reusable buffer: consume it before resuming.
 */
export function* utf8Chunks(text: string, chunkBytes: number): Generator<Uint8Array, void> {
  const buffer = new Uint8Array(chunkBytes);
  const spill = new Uint8Array(4);
  let filled = 0;
  let position = 0;
  while (position < text.length) {
    // Each UTF-16 unit encodes to at least one byte, so `room` units can never
    // under-fill the buffer by more than the character that does not fit.
    let end = Math.min(text.length, position + (chunkBytes - filled));
    // Never cut a surrogate pair: encodeInto would turn each half into U+FFFD.
    if (
      end < text.length && isHighSurrogate(text.charCodeAt(end - 1)) && isLowSurrogate(text.charCodeAt(end))
    ) {
      end--;
    }
    let stalled = end === position;
    if (!stalled) {
      const { read, written } = encoder.encodeInto(text.substring(position, end), buffer.subarray(filled));
      position += read;
      filled += written;
      stalled = position < end;
    }
    if (stalled && filled < chunkBytes) {
      // The next character does not fit whole: encode it aside, split it over the edge.
      const units = isHighSurrogate(text.charCodeAt(position)) &&
          isLowSurrogate(text.charCodeAt(position + 1))
        ? 2
        : 1;
      const { written } = encoder.encodeInto(text.substring(position, position + units), spill);
      position += units;
      for (let offset = 0; offset < written;) {
        const take = Math.min(written - offset, chunkBytes - filled);
        buffer.set(spill.subarray(offset, offset + take), filled);
        filled += take;
        offset += take;
        if (filled === chunkBytes) {
          yield buffer;
          filled = 0;
        }
      }
    }
    if (filled === chunkBytes) {
      yield buffer;
      filled = 0;
    }
  }
  if (filled > 0) {
    yield buffer.subarray(0, filled);
  }
}

/** The UTF-8 byte length of `text` (as `TextEncoder` would encode it), without encoding it. */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (isHighSurrogate(unit) && isLowSurrogate(text.charCodeAt(i + 1))) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/** The largest index `<= index` that does not split a surrogate pair in `text`. */
export function codePointFloor(text: string, index: number): number {
  if (index <= 0) return 0;
  if (index >= text.length) return text.length;
  return isHighSurrogate(text.charCodeAt(index - 1)) && isLowSurrogate(text.charCodeAt(index))
    ? index - 1
    : index;
}

/** True when `byte` continues a multi-byte UTF-8 sequence (so no character starts there). */
export function isContinuationByte(byte: number): boolean {
  return (byte & 0xc0) === 0x80;
}
