import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { utf8Chunks } from "../../src/spool/_utf8.ts";
import {
  CHUNK_BYTES,
  getResultResponse,
  PRUNE_INTERVAL_MS,
  RETENTION_MS,
  Spool,
  SpoolWriteError,
} from "../../src/spool/mod.ts";
import { concatBytes, mixedText, seeded, tempStore } from "./_helpers.ts";
import { pattern } from "./_crash_writer.ts";

const encoder = new TextEncoder();
const strictDecoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const META = { server: "vecgrep", tool: "search", namespaced: "vecgrep__search" };

Deno.test("utf8Chunks() yields exact fixed-size chunks of the UTF-8 bytes at any chunk size", async (t) => {
  const random = seeded(7);
  const samples = [
    "",
    "a",
    "😀",
    "a😀",
    "ab😀",
    "abc😀",
    "é😀中",
    "\ud800", // lone high surrogate
    "x\udc00y", // lone low surrogate
    "a\ud83d", // lone high surrogate at the very end
    ...Array.from({ length: 40 }, () => mixedText(Math.floor(random() * 300), random)),
  ];
  for (const chunkBytes of [1, 2, 3, 4, 5, 7, 13, 64]) {
    await t.step(`chunkBytes ${chunkBytes}`, () => {
      for (const text of samples) {
        // Copy as we go: every yielded chunk is a view of one reused buffer.
        const chunks = Array.from(utf8Chunks(text, chunkBytes), (chunk) => chunk.slice());
        const expected = encoder.encode(text);
        assert.deepEqual(concatBytes(chunks), expected, JSON.stringify(text));
        for (const chunk of chunks.slice(0, -1)) assert.equal(chunk.length, chunkBytes);
        assert.ok(chunks.every((chunk) => chunk.length > 0));
      }
    });
  }
});

Deno.test("Spool.put() round-trips a multi-MB unicode result through every page, losslessly", async () => {
  using store = tempStore();
  const spool = store.spool();
  const text = mixedText(2_000_000, seeded(42));
  const expected = encoder.encode(text);
  assert.ok(expected.length > 3 * 1024 * 1024, `payload is ${expected.length} bytes`);
  const stored = spool.put(text, META);
  assert.match(stored.callId, /^[0-9a-f]{32}$/);
  assert.equal(stored.totalBytes, expected.length);
  assert.deepEqual(spool.meta(stored.callId), stored);

  const chunkRows = store.db.prepare("SELECT count(*) AS n FROM spool_chunks WHERE call_id = ?")
    .get(stored.callId) as { n: number };
  assert.equal(chunkRows.n, Math.ceil(expected.length / CHUNK_BYTES));

  for (const pageBytes of [8192, 7919]) {
    const pages: Uint8Array[] = [];
    for (let cursor = 0; cursor < expected.length;) {
      const page = spool.readPage(stored.callId, cursor, pageBytes);
      assert.ok(typeof page === "object");
      assert.equal(page.totalBytes, expected.length);
      assert.equal(page.bytes.length, Math.min(pageBytes, expected.length - cursor));
      pages.push(page.bytes);
      cursor += page.bytes.length;
    }
    assert.deepEqual(concatBytes(pages), expected);
  }

  // utf8 pages: each one valid UTF-8 on its own, together the original string.
  const texts: string[] = [];
  let cursor = 0;
  let done = false;
  while (!done) {
    const response = await getResultResponse(spool, { callId: stored.callId, cursor, encoding: "utf8" }, {
      budget: 32 * 1024,
    });
    assert.equal(response.status, "ok");
    assert.equal(response.cursor, cursor);
    const page = response.text as string;
    const next = response.nextCursor as number;
    assert.ok(next > cursor, "every page makes progress");
    assert.ok(next - cursor <= 8192);
    assert.equal(strictDecoder.decode(expected.subarray(cursor, next)), page);
    texts.push(page);
    cursor = next;
    done = response.done as boolean;
    assert.equal(done, cursor === expected.length);
  }
  assert.equal(texts.join(""), text);

  // base64 pages decode to the exact bytes.
  const decoded: Uint8Array[] = [];
  cursor = 0;
  done = false;
  while (!done) {
    const response = await getResultResponse(spool, { callId: stored.callId, cursor }, { budget: 0 });
    decoded.push(Uint8Array.fromBase64(response.data as string));
    cursor = response.nextCursor as number;
    done = response.done as boolean;
  }
  assert.deepEqual(concatBytes(decoded), expected);
});

Deno.test("Spool.readPage() returns the exact byte range at any cursor, across chunk edges", () => {
  using store = tempStore();
  const random = seeded(3);
  for (const chunkBytes of [1, 3, 5, 64]) {
    const spool = store.spool({ chunkBytes });
    const text = mixedText(500, random);
    const expected = encoder.encode(text);
    const { callId } = spool.put(text, META);
    // A spool with another chunk size reads it too: the row records its own.
    const reader = store.spool();
    for (let i = 0; i < 200; i++) {
      const cursor = Math.floor(random() * expected.length);
      const pageBytes = 1 + Math.floor(random() * 150);
      const page = reader.readPage(callId, cursor, pageBytes);
      assert.ok(typeof page === "object");
      assert.deepEqual(page.bytes, expected.slice(cursor, cursor + pageBytes));
    }
  }
});

Deno.test("Spool.readPage() reports unavailable and cursor_out_of_range", async (t) => {
  using store = tempStore();
  const spool = store.spool();
  const { callId, totalBytes } = spool.put("0123456789", META);
  const empty = spool.put("", META);

  await t.step("unknown and malformed ids are unavailable", () => {
    assert.equal(spool.readPage("0".repeat(32), 0, 10), "unavailable");
    assert.equal(spool.readPage("not-an-id", 0, 10), "unavailable");
    assert.equal(spool.readPage(callId.toUpperCase(), 0, 10), "unavailable");
    assert.equal(spool.meta("0".repeat(32)), undefined);
  });
  await t.step("the last byte reads; the end and past it are out of range", () => {
    assert.deepEqual(spool.readPage(callId, totalBytes - 1, 10), {
      bytes: encoder.encode("9"),
      totalBytes,
    });
    assert.equal(spool.readPage(callId, totalBytes, 10), "cursor_out_of_range");
    assert.equal(spool.readPage(callId, totalBytes + 5, 10), "cursor_out_of_range");
  });
  await t.step("an empty result has one empty page at cursor 0", () => {
    assert.deepEqual(spool.readPage(empty.callId, 0, 10), { bytes: new Uint8Array(0), totalBytes: 0 });
    assert.equal(spool.readPage(empty.callId, 1, 10), "cursor_out_of_range");
  });
  await t.step("bad cursors and page sizes are RangeErrors", () => {
    assert.throws(() => spool.readPage(callId, -1, 10), RangeError);
    assert.throws(() => spool.readPage(callId, 1.5, 10), RangeError);
    assert.throws(() => spool.readPage(callId, 0, 0), RangeError);
  });
});

Deno.test("Spool treats expired results as unavailable before and after pruning", () => {
  using store = tempStore();
  let now = 1_000_000;
  const spool = store.spool({ clock: () => now });
  const old = spool.put("x".repeat(200_000), { ...META, agent: "claude" });
  assert.equal(old.expiresAt, now + RETENTION_MS);
  assert.equal(spool.meta(old.callId)?.agent, "claude");

  now += RETENTION_MS - 1;
  assert.ok(spool.meta(old.callId), "still there one ms before expiry");
  now += 1;
  assert.equal(spool.meta(old.callId), undefined);
  assert.equal(spool.readPage(old.callId, 0, 10), "unavailable");
  const rows = store.db.prepare("SELECT count(*) AS n FROM spool_chunks").get() as { n: number };
  assert.ok(rows.n > 0, "not yet pruned");

  // put prunes on insert, chunks included.
  const fresh = spool.put("y", META);
  assert.deepEqual(
    store.db.prepare("SELECT call_id FROM spool_results").all().map((row) => row.call_id),
    [fresh.callId],
  );
  assert.deepEqual(
    store.db.prepare("SELECT DISTINCT call_id FROM spool_chunks").all().map((row) => row.call_id),
    [fresh.callId],
  );
});

Deno.test("Spool.maybePrune() prunes at most hourly by the clock; prune() counts", () => {
  using store = tempStore();
  const count = () => (store.db.prepare("SELECT count(*) AS n FROM spool_results").get() as { n: number }).n;
  const writerNow = 0;
  let now = RETENTION_MS + 1;
  const writer = store.spool({ clock: () => writerNow });
  const pruner = store.spool({ clock: () => now });
  writer.put("a", META);
  writer.put("b", META);
  assert.equal(pruner.prune(), 2);

  writer.put("c", META); // expired by the pruner's clock
  now += PRUNE_INTERVAL_MS - 1;
  pruner.maybePrune();
  assert.equal(count(), 1, "skipped: the last prune was less than an hour ago");
  now += 1;
  pruner.maybePrune();
  assert.equal(count(), 0);

  writer.put("d", META);
  store.spool({ clock: () => now }).maybePrune();
  assert.equal(count(), 0, "a new instance prunes on its first call");
});

Deno.test("Spool.put() throws SpoolWriteError on a read-only store and leaves it intact", () => {
  using store = tempStore();
  const before = store.spool().put("kept ".repeat(30_000), META);
  const readOnly = new DatabaseSync(store.path, { readOnly: true });
  try {
    const spool = new Spool(readOnly);
    assert.throws(
      () => spool.put("lost? no: the gateway returns it in full", META),
      (error: unknown) =>
        error instanceof SpoolWriteError && /^Cannot store the vecgrep__search result in the spool: /.test(
          error.message,
        ) && /readonly/.test(error.message) && error.cause instanceof Error,
    );
    assert.equal(readOnly.isTransaction, false, "the failed write rolled back");
    // Reading still works on the read-only handle.
    assert.equal(spool.meta(before.callId)?.totalBytes, before.totalBytes);
  } finally {
    readOnly.close();
  }
  const rows = store.db.prepare("SELECT count(*) AS n FROM spool_results").get() as { n: number };
  assert.equal(rows.n, 1);
  const page = store.spool().readPage(before.callId, 0, 10);
  assert.ok(typeof page === "object");
  assert.equal(new TextDecoder().decode(page.bytes), "kept kept ");
  assert.equal(store.db.prepare("PRAGMA integrity_check").get()?.integrity_check, "ok");
});

Deno.test("Spool.put() throws SpoolWriteError when another connection holds the lock past the timeout", () => {
  using store = tempStore({ busyTimeoutMs: 50 });
  const other = new DatabaseSync(store.path, { timeout: 50 });
  try {
    other.exec("BEGIN IMMEDIATE");
    const spool = store.spool();
    assert.throws(() => spool.put("x", META), (error: unknown) => {
      return error instanceof SpoolWriteError && /locked|busy/i.test(error.message);
    });
    assert.equal(store.db.isTransaction, false);
    other.exec("ROLLBACK");
    assert.ok(spool.put("x", META).callId, "works again once the lock is released");
  } finally {
    other.close();
  }
});

Deno.test("new Spool() fails clearly on a store opened without spoolMigrations", () => {
  const db = new DatabaseSync(":memory:");
  try {
    assert.throws(() => new Spool(db), /no such table: spool_/);
  } finally {
    db.close();
  }
});

Deno.test("Spool.maybePrune() throws a failed prune once, then waits an hour before retrying", () => {
  using store = tempStore();
  let now = 0;
  store.spool({ clock: () => now }).put("old", META);
  now = RETENTION_MS;
  const readOnly = new DatabaseSync(store.path, { readOnly: true });
  try {
    const spool = new Spool(readOnly, { clock: () => now });
    assert.throws(() => spool.maybePrune(), /readonly/);
    spool.maybePrune(); // within the hour: no second attempt, no throw
    now += PRUNE_INTERVAL_MS;
    assert.throws(() => spool.maybePrune(), /readonly/);
  } finally {
    readOnly.close();
  }
});

Deno.test("Spool.putBytes() stores the parts' bytes exactly, at any split, pageable like put()", async () => {
  using store = tempStore();
  const spool = store.spool({ chunkBytes: 7 });
  const random = seeded(11);
  const text = mixedText(500, random);
  const bytes = encoder.encode(text);
  for (const splits of [[], [1], [3, 9, 10, 30], [7, 14], [bytes.length - 1]]) {
    const parts: Uint8Array[] = [];
    let at = 0;
    for (const s of [...splits, bytes.length]) parts.push(bytes.subarray(at, s)), at = s;
    const stored = await spool.putBytes(parts, META);
    assert.equal(stored.totalBytes, bytes.length);
    assert.deepEqual(spool.meta(stored.callId)?.totalBytes, bytes.length);
    const page = spool.readPage(stored.callId, 0, bytes.length);
    assert.ok(typeof page === "object");
    assert.deepEqual(page.bytes, bytes);
    // The same rows as put() writes for the same text.
    const again = spool.put(text, META);
    assert.deepEqual(spool.readPage(again.callId, 5, 20), spool.readPage(stored.callId, 5, 20));
  }
});

Deno.test("Spool.putBytes() lets the event loop run while it stores 100 MB", async () => {
  using store = tempStore();
  const spool = store.spool();
  const part = new Uint8Array(64 * 1024).fill(0x61);
  const parts = Array.from({ length: 1600 }, () => part);
  let ticks = 0;
  let done = false;
  const tick = () => {
    if (done) return;
    ticks++;
    setTimeout(tick, 0);
  };
  setTimeout(tick, 0);
  const stored = await spool.putBytes(parts, META);
  done = true;
  assert.equal(stored.totalBytes, 1600 * 64 * 1024);
  // A synchronous write of the whole would let no timer fire before it ends.
  assert.ok(ticks >= 10, `timers fired ${ticks} times during the write`);
  const page = spool.readPage(stored.callId, stored.totalBytes - 10, 100);
  assert.ok(typeof page === "object");
  assert.equal(page.bytes.length, 10);
});

Deno.test("Spool.putBytes(): a stored result survives the writer's crash right after the put", async () => {
  // What the gateway acknowledges (a receipt) is written after putBytes resolves: every slice is
  // committed by then (WAL, synchronous=NORMAL: a commit survives the process, not a power loss).
  using store = tempStore();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL("./_crash_writer.ts", import.meta.url).pathname, store.path, "3"],
    stdout: "piped",
    stderr: "piped",
  });
  const { stdout, signal } = await child.output();
  assert.equal(signal, "SIGKILL");
  const [callId, total] = new TextDecoder().decode(stdout).trim().split(" ");
  assert.equal(Number(total), 3 * 1024 * 1024);
  const spool = store.spool();
  assert.equal(spool.meta(callId!)?.totalBytes, 3 * 1024 * 1024);
  for (const cursor of [0, 1024 * 1024 + 5, 3 * 1024 * 1024 - 100]) {
    const page = spool.readPage(callId!, cursor, 8192);
    assert.ok(typeof page === "object", `page at ${cursor}`);
    assert.deepEqual(page.bytes, pattern(cursor, Math.min(8192, 3 * 1024 * 1024 - cursor)));
  }
});

Deno.test("Spool.putBytes() commits per sliceBytes and stores the same bytes at any slice size", async () => {
  using store = tempStore();
  assert.throws(() => store.spool({ sliceBytes: 0 }), RangeError);
  const part = pattern(0, 100_000);
  for (const sliceBytes of [1, 8192, 50_000, 1 << 30]) {
    const spool = store.spool({ chunkBytes: 4096, sliceBytes });
    const stored = await spool.putBytes([part, part.subarray(1)], META);
    assert.equal(stored.totalBytes, 199_999);
    const page = spool.readPage(stored.callId, 99_990, 20);
    assert.ok(typeof page === "object");
    assert.deepEqual(page.bytes, new Uint8Array([...part.subarray(99_990), ...part.subarray(1, 11)]));
  }
});

Deno.test("Spool.putBytes() on a failed write leaves no result and no chunks behind", async () => {
  using store = tempStore();
  const spool = store.spool({ chunkBytes: 1024 });
  const part = new Uint8Array(512 * 1024).fill(0x62);
  function* failing(): Generator<Uint8Array> {
    for (let i = 0; i < 6; i++) yield part;
    throw new Error("the source broke");
  }
  await assert.rejects(spool.putBytes(failing(), META), SpoolWriteError);
  const rows = store.db.prepare("SELECT count(*) AS n FROM spool_chunks").get() as { n: number };
  assert.equal(rows.n, 0);
  const results = store.db.prepare("SELECT count(*) AS n FROM spool_results").get() as { n: number };
  assert.equal(results.n, 0);
});
