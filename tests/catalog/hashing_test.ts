import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { nodeCrypto, sha256Hex } from "../../src/catalog/hashing.ts";

const reference = (text: string) => createHash("sha256").update(text).digest("hex");

Deno.test("sha256Hex equals node:crypto's SHA-256 at every padding boundary, for any UTF-8 and past its plain limit", () => {
  assert.equal(sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  assert.equal(sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  const texts: string[] = [];
  // Lengths around one and two 64-byte blocks (the 9 bytes of padding and length decide the block count).
  for (let n = 0; n <= 140; n++) texts.push("a".repeat(n));
  texts.push(
    "é😀中\u0000\uffff",
    "\ud800 lone surrogate",
    JSON.stringify({ command: "npx", args: ["-y", "ü"] }),
  );
  // A seeded generator: the same texts every run.
  let seed = 12345;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (let i = 0; i < 300; i++) {
    let text = "";
    const length = Math.floor(next() * 400);
    for (let j = 0; j < length; j++) text += String.fromCodePoint(Math.floor(next() * 0x1_0000) % 0xd800);
    texts.push(text);
  }
  texts.push("x".repeat(64 * 1024 + 1), "ü".repeat(40_000));
  for (const text of texts) assert.equal(sha256Hex(text), reference(text), `length ${text.length}`);
});

Deno.test("nodeCrypto() is node:crypto, loaded once", async () => {
  const crypto = await import("node:crypto");
  assert.equal(nodeCrypto().createHash, crypto.createHash);
  assert.equal(nodeCrypto(), nodeCrypto());
});
