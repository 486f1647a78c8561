/**
 * A server's stderr is kept as a bounded tail without heap growth (issue 41): 10 MB written in 64 KiB
 * chunks leave the tail holding at most its limit in bytes (one fixed buffer), and its text is the last
 * whole lines.
 */
import assert from "node:assert/strict";
import { Tail } from "../../src/downstream/stderr.ts";

Deno.test("the stderr tail holds at most its limit in bytes, whatever the chunk size; its text is the last whole lines", () => {
  const limit = 8 * 1024;
  const enc = new TextEncoder();
  const line = (i: number) => `line ${String(i).padStart(8, "0")} ${"x".repeat(40)}\n`;
  const tail = new Tail(limit);
  let i = 0;
  let written = 0;
  while (written < 10 * 1024 * 1024) {
    let chunk = "";
    while (chunk.length < 64 * 1024) chunk += line(i++);
    written += chunk.length;
    tail.push(enc.encode(chunk));
    assert.ok(tail.retainedBytes <= limit, `${tail.retainedBytes} bytes held`);
  }
  const text = tail.text();
  assert.ok(text.endsWith(line(i - 1)));
  assert.ok(text.startsWith("line "), text.slice(0, 80));
  assert.ok(text.length <= limit);
  // Small pushes wrap around the same buffer.
  const small = new Tail(16);
  for (const piece of ["ab\n", "cdefgh\n", "ijklmnop\n", "q"]) small.push(enc.encode(piece));
  assert.equal(small.text(), "ijklmnop\nq");
  assert.equal(small.retainedBytes, 16);
});
