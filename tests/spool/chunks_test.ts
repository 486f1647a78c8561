/** Chunker and rechunk (src/spool/_chunks.ts): parts of any size cut into fixed-size chunks, byte for byte. */
import assert from "node:assert/strict";
import { Chunker, rechunk } from "../../src/spool/_chunks.ts";
import { concatBytes, prng } from "../helpers.ts";

Deno.test("rechunk: uneven parts come out as chunks of the size, the last shorter, the same bytes", () => {
  const random = prng(7);
  for (const size of [1, 3, 8, 4096]) {
    const bytes = Uint8Array.from({ length: 50 * size + 3 }, () => Math.floor(random() * 256));
    const parts: Uint8Array[] = [];
    for (let at = 0; at < bytes.length;) {
      const n = Math.min(bytes.length - at, Math.floor(random() * 3 * size));
      parts.push(bytes.subarray(at, at + n)); // some parts are empty
      at += n;
    }
    // Each chunk is copied as it comes: a spanning chunk's buffer is reused for the next.
    const chunks = Array.from(rechunk(parts, size), (c) => c.slice());
    assert.ok(chunks.slice(0, -1).every((c) => c.length === size), `size ${size}`);
    assert.ok(chunks.at(-1)!.length > 0 && chunks.at(-1)!.length <= size);
    assert.deepEqual(concatBytes(chunks), bytes);
  }
  assert.deepEqual([...rechunk([], 8)], []);
});

Deno.test("Chunker: a chunk within one part is a view of it; the rest waits for the next push", () => {
  const chunker = new Chunker(4);
  const part = new Uint8Array([1, 2, 3, 4, 5, 6]);
  const first = [...chunker.push([part])];
  assert.equal(first.length, 1);
  assert.equal(first[0]!.buffer, part.buffer, "a view, not a copy");
  assert.deepEqual([...chunker.push([new Uint8Array([7])])], []);
  assert.deepEqual(Array.from(chunker.push([new Uint8Array([8, 9])]), (c) => [...c]), [[5, 6, 7, 8]]);
  assert.deepEqual([...chunker.rest()!], [9]);
  assert.equal(chunker.rest(), undefined);
});
