/**
 * A long fast-path result is written into the spool as its chunks arrive (LineSplitter.spill), so the
 * gateway holds a slice of it, not all of it: stored byte for byte, whole again when passed after all,
 * and never cut short when the store fails.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { type FinalizeOptions, finalizeRawResult } from "../../src/hub/finalize.ts";
import { member, type RawBytes, RawResult } from "../../src/json/raw_json.ts";
import { LineSplitter, LostMessage, OversizedMessage } from "../../src/json/lines.ts";
import { Spool, type SpoolWriter } from "../../src/spool/mod.ts";
import { mixedText, seeded, tempStore } from "../spool/_helpers.ts";

const enc = new TextEncoder();
const RESULT_PATH = ["result", "content", "*"];

/** A JSON-RPC answer whose result holds `units` UTF-16 units of mixed text; its bytes and the result's. */
function answer(units: number, seed: number): { line: Uint8Array; result: Uint8Array } {
  const text = mixedText(units, seeded(seed));
  const result = `{"content":[{"type":"text","text":${JSON.stringify(text)}}], "isError" : false}`;
  const line = enc.encode(`{"result":${result},"jsonrpc":"2.0","id":"mcphub-7"}`);
  return { line, result: enc.encode(result) };
}

/** Feeds `line` and a newline to a spilling splitter in chunks of random sizes, settling after each. */
async function feed(spool: Spool | undefined, line: Uint8Array, seed: number): Promise<RawBytes> {
  const splitter = new LineSplitter();
  splitter.scanPath = RESULT_PATH;
  splitter.spill = { threshold: () => 64 * 1024, open: () => spool?.writer() };
  const random = seeded(seed);
  const bytes = new Uint8Array(line.length + 1);
  bytes.set(line);
  bytes[line.length] = 0x0a;
  let out: (RawBytes | OversizedMessage)[] = [];
  for (let at = 0; at < bytes.length;) {
    const size = 1 + Math.floor(random() * 70_000);
    out = out.concat(splitter.pushRaw(bytes.slice(at, at + size)));
    at += size;
    // As the transport does after each chunk.
    await splitter.settle();
  }
  assert.equal(out.length, 1);
  assert.ok(!(out[0] instanceof OversizedMessage));
  return out[0] as RawBytes;
}

function rawResult(raw: RawBytes): RawResult {
  const members = raw.scanned!.members;
  const span = member(members, "result")!;
  return new RawResult(raw, span, span.children!.members, false);
}

function options(spool: Spool | undefined, extra: Partial<FinalizeOptions> = {}): FinalizeOptions {
  return {
    budget: 4096,
    verbatim: false,
    spool: () => spool,
    server: "s",
    tool: "t",
    namespaced: "s__t",
    ...extra,
  };
}

function join(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) out.set(p, at), at += p.length;
  return out;
}

function readAll(spool: Spool, callId: string): Uint8Array {
  const parts: Uint8Array[] = [];
  for (let cursor = 0;;) {
    const page = spool.readPage(callId, cursor, 100_000);
    assert.ok(typeof page === "object", String(page));
    parts.push(page.bytes);
    cursor += page.bytes.length;
    if (cursor >= page.totalBytes) break;
  }
  return join(parts);
}

function chunkRows(db: DatabaseSync): number {
  return Number((db.prepare("SELECT count(*) AS n FROM spool_chunks").get() as { n: number }).n);
}

Deno.test("a spilled result is stored byte for byte while the splitter holds a slice of it", async () => {
  using store = tempStore();
  const spool = store.spool({ sliceBytes: 64 * 1024 });
  for (const seed of [1, 2, 3]) {
    const { line, result } = answer(1_500_000, seed);
    const raw = await feed(spool, line, seed);
    assert.ok(raw.spill, "the result was spilled");
    const inMemory = raw.parts.reduce((n, p) => n + p.length, 0);
    assert.ok(inMemory < line.length / 4, `${inMemory} of ${line.length} bytes still in memory`);
    // Reads of the line go to the spool where it let go: the whole line reads back as it came.
    assert.deepEqual(raw.bytes(), line);
    const warnings: string[] = [];
    const finalized = await finalizeRawResult(
      rawResult(raw),
      options(spool, { warn: (w) => warnings.push(w) }),
    );
    assert.deepEqual(warnings, []);
    assert.equal(finalized.spooled, true);
    assert.equal(finalized.originalBytes, result.length);
    const receipt = finalized.result as unknown as { structuredContent: { callId: string; preview: string } };
    const stored = readAll(spool, receipt.structuredContent.callId);
    assert.deepEqual(stored, result);
    const text = (JSON.parse(new TextDecoder().decode(result)) as { content: { text: string }[] }).content[0]!
      .text;
    assert.ok(receipt.structuredContent.preview.length > 1000);
    assert.ok(text.startsWith(receipt.structuredContent.preview));
  }
});

Deno.test("the splitter recycles the buffers a spill lets go, so memory stays flat, and yields between slices", async () => {
  using store = tempStore();
  const spool = store.spool({ sliceBytes: 128 * 1024 });
  const splitter = new LineSplitter();
  splitter.scanPath = RESULT_PATH;
  splitter.spill = { threshold: () => 0, open: () => spool.writer() };
  splitter.pushRaw(enc.encode('{"result":{"content":[{"type":"text","text":"'));
  const buffers = new Set<ArrayBufferLike>();
  // The event loop keeps turning while the slices are written: a timer's callbacks run in between. (How
  // long the loop is held is timed by `deno task bench bounds`, as a ratio against an idle loop.)
  let ticks = 0;
  const timer = setInterval(() => ticks++, 1);
  try {
    for (let i = 0; i < 400; i++) {
      const chunk = splitter.alloc(64 * 1024).fill(0x61);
      buffers.add(chunk.buffer);
      assert.deepEqual(splitter.pushRaw(chunk), []);
      await splitter.settle();
    }
  } finally {
    clearInterval(timer);
  }
  assert.ok(ticks > 0, "a timer ran while the slices were written");
  const [line] = splitter.pushRaw(enc.encode('"}]},"jsonrpc":"2.0","id":"mcphub-1"}\n')) as RawBytes[];
  assert.ok(buffers.size < 40, `${buffers.size} buffers for 400 chunks`);
  const finalized = await finalizeRawResult(rawResult(line!), options(spool));
  assert.equal(finalized.spooled, true);
  const receipt = finalized.result as unknown as { structuredContent: { callId: string } };
  const stored = readAll(spool, receipt.structuredContent.callId);
  const head = enc.encode('{"content":[{"type":"text","text":"').length;
  assert.equal(stored.length, head + 400 * 64 * 1024 + 4);
  assert.ok(stored.subarray(head, stored.length - 4).every((b) => b === 0x61));
});

Deno.test("a spilled result passed after all (verbatim, under a new budget) is whole again, nothing left stored", async () => {
  using store = tempStore();
  const spool = store.spool({ sliceBytes: 64 * 1024 });
  const { line, result } = answer(800_000, 4);
  for (const extra of [{ verbatim: true }, { budget: 0 }, { budget: 1 << 30 }]) {
    const raw = await feed(spool, line, 4);
    assert.ok(raw.spill);
    const finalized = await finalizeRawResult(rawResult(raw), options(spool, extra));
    assert.equal(finalized.spooled, false);
    assert.deepEqual(join((finalized.result as RawResult).parts()), result);
    assert.equal(raw.spill, undefined);
    assert.equal(chunkRows(store.db), 0);
  }
  // Not a fast-path answer (the SDK's parse takes it): made whole the same way.
  const raw = await feed(spool, line, 5);
  raw.unspill();
  assert.deepEqual(raw.bytes(), line);
  assert.equal(chunkRows(store.db), 0);
});

Deno.test("a store that cannot be written: the spill stops, the line is kept whole and passes whole", async () => {
  using store = tempStore();
  const readOnly = new DatabaseSync(store.path, { readOnly: true });
  try {
    const spool = new Spool(readOnly, { sliceBytes: 64 * 1024 });
    const { line, result } = answer(800_000, 6);
    const raw = await feed(spool, line, 6);
    assert.equal(raw.spill, undefined, "the failed write ended the spill");
    const warnings: string[] = [];
    const finalized = await finalizeRawResult(
      rawResult(raw),
      options(spool, { warn: (w) => warnings.push(w) }),
    );
    assert.equal(finalized.spooled, false);
    assert.deepEqual(join((finalized.result as RawResult).parts()), result);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /passes through whole/);
  } finally {
    readOnly.close();
  }
});

Deno.test("a spill whose store fails and cannot read back: the line is reported lost, never passed short", async () => {
  // A writer that commits what it is given, then fails, and cannot read anything back.
  let given = 0;
  let committed = 0;
  let drains = 0;
  let aborted = false;
  const writer = {
    get given() {
      return given;
    },
    get committed() {
      return committed;
    },
    queue(parts: Iterable<Uint8Array>) {
      for (const p of parts) given += p.length;
    },
    drain() {
      if (++drains > 3) return Promise.reject(new Error("disk full"));
      committed = given - (given % 8192);
      return Promise.resolve();
    },
    read(): Uint8Array {
      throw new Error("cannot read");
    },
    abort() {
      aborted = true;
    },
  } as unknown as SpoolWriter;
  const splitter = new LineSplitter();
  splitter.scanPath = RESULT_PATH;
  splitter.spill = { threshold: () => 0, open: () => writer };
  const out: (RawBytes | OversizedMessage)[] = [];
  out.push(...splitter.pushRaw(enc.encode('{"result":{"content":[{"type":"text","text":"')));
  for (let i = 0; i < 6; i++) {
    out.push(...splitter.pushRaw(new Uint8Array(64 * 1024).fill(0x61)));
    await splitter.settle();
  }
  out.push(
    ...splitter.pushRaw(enc.encode('"}]},"jsonrpc":"2.0","id":"mcphub-1"}\n{"jsonrpc":"2.0","id":2}\n')),
  );
  assert.equal(out.length, 2);
  assert.ok(out[0] instanceof LostMessage, String(out[0]));
  assert.match((out[0] as LostMessage).message, /could not be read back \(cannot read\)/);
  assert.ok(aborted, "the writer's chunks were deleted");
  assert.equal((out[1] as RawBytes).text(), '{"jsonrpc":"2.0","id":2}');
});
