import assert from "node:assert/strict";
import { Readable } from "node:stream";
import { CoalescingWriter, SYNC_CREDIT_BYTES, SYNC_WRITE_BYTES } from "../../src/json/pipe.ts";
import { Deadlines } from "../../src/downstream/deadline.ts";
import { readChunks, readSocket } from "../../src/json/lines.ts";
import { concatBytes, DENO, ROOT } from "../helpers.ts";
import { withResultType } from "../../src/gateway/stdio_server.ts";

/** A pipe stand-in: what went through the synchronous and the asynchronous write, in order. */
function fakePipe() {
  const log: { how: "sync" | "async"; bytes: number[] }[] = [];
  const writable = new WritableStream<Uint8Array>({
    write(chunk) {
      log.push({ how: "async", bytes: [...chunk] });
    },
  });
  const writeSync = (bytes: Uint8Array) => {
    log.push({ how: "sync", bytes: [...bytes] });
    return bytes.length;
  };
  return { log, writer: new CoalescingWriter(writable.getWriter(), writeSync) };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

Deno.test("CoalescingWriter writes synchronously only within the credit the reader renews", async () => {
  const { log, writer } = fakePipe();
  const message = new Uint8Array(1024).fill(0x61);
  const perCredit = SYNC_CREDIT_BYTES / message.length;
  for (let i = 0; i < perCredit + 2; i++) {
    await writer.writeBytes([message]);
    await tick();
  }
  assert.deepEqual(
    log.map((w) => w.how),
    [...Array(perCredit).fill("sync"), "async", "async"],
  );
  assert.equal(writer.synchronous, false);
  writer.readerAlive();
  assert.equal(writer.synchronous, true);
  await writer.writeBytes([message]);
  assert.equal(log.at(-1)!.how, "sync");
});

Deno.test("CoalescingWriter keeps the order across synchronous and asynchronous batches", async () => {
  const { log, writer } = fakePipe();
  const sent: number[] = [];
  const writes: Promise<void>[] = [];
  for (let i = 0; i < 80; i++) {
    // Mostly small batches, and now and then one too big for the synchronous write.
    const size = i % 9 === 0 ? SYNC_WRITE_BYTES + 1 : 900;
    const bytes = new Uint8Array(size).fill(i);
    sent.push(...bytes);
    writes.push(writer.writeBytes([bytes]));
    if (i % 3 === 0) await tick();
    if (i % 20 === 0) writer.readerAlive();
  }
  await Promise.all(writes);
  assert.ok(log.some((w) => w.how === "sync") && log.some((w) => w.how === "async"));
  assert.deepEqual(log.flatMap((w) => w.bytes), sent);
});

Deno.test("a host that stops reading stdout does not block the writer's event loop, and loses no byte", async () => {
  const child = new Deno.Command(DENO, {
    args: ["run", "--no-prompt", `${ROOT}tests/fixtures/stalled_reader_writer.ts`],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let said = "";
  const waitFor = async (text: string) => {
    while (!said.includes(text)) {
      const { value, done } = await stderr.read();
      if (done) throw new Error(`the writer ended without "${text}": ${said}`);
      said += value;
    }
  };
  // Nobody reads stdout yet: 256 KiB cannot fit the pipe, yet the writer's timers keep firing.
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stuck = new Promise<"stuck">((resolve) => timer = setTimeout(() => resolve("stuck"), 20_000));
  const outcome = await Promise.race([waitFor("loop alive"), stuck]);
  clearTimeout(timer);
  const out = await new Response(child.stdout).text();
  assert.notEqual(outcome, "stuck", "the writer's event loop was blocked by a full pipe for 20 s");
  assert.ok(!said.includes("drained"), said);
  await waitFor("drained");
  await stderr.cancel();
  assert.equal((await child.status).code, 0);
  const lines = out.split("\n");
  assert.equal(lines.pop(), "");
  assert.deepEqual(lines.map((l) => JSON.parse(l).seq), Array.from({ length: 256 }, (_, i) => i));
  assert.ok(lines.every((l) => JSON.parse(l).pad === "x".repeat(1000)));
});

Deno.test("Deadlines fire each entry once at its time, in deadline order, and never a deleted one", async () => {
  const deadlines = new Deadlines();
  const fired: string[] = [];
  const done = Promise.withResolvers<void>();
  // Taken before the entries are added: an entry fires only once performance.now() has reached its time, so
  // 80 ms have passed since here when the last one fires (a pause between the adds and this read, as a GC
  // on a loaded machine makes, can no longer make it look early; load only makes it later).
  const t0 = performance.now();
  deadlines.add(60, () => fired.push("60"));
  const gone = deadlines.add(20, () => fired.push("deleted"));
  deadlines.add(40, () => {
    fired.push("40");
  });
  deadlines.add(80, () => (fired.push("80"), done.resolve()));
  deadlines.add(10, () => fired.push("10"));
  deadlines.delete(gone);
  await done.promise;
  assert.ok(performance.now() - t0 >= 80, "the 80 ms entry fired before its time");
  assert.deepEqual(fired, ["10", "40", "60", "80"]);
  deadlines.clear();
});

for (const kind of ["byte", "default"] as const) {
  Deno.test(`readChunks hands the event loop a turn while a ${kind} stream always has data, every byte kept`, async () => {
    // Each read resolves at once (as a pipe's do while a 100 MB answer arrives): without a turn, the
    // timer below would wait until the stream ends.
    // Chunks that fill the reader's 64 KiB buffer, as a pipe's do when more is waiting.
    const SIZE = 64 * 1024;
    const CAP = 20_000;
    let fired = false;
    let sent = 0;
    const expected: number[] = [];
    const pull = (controller: ReadableStreamDefaultController<Uint8Array> | ReadableByteStreamController) => {
      if (fired || sent === CAP) {
        controller.close();
        // A byte stream's pending read into the reader's buffer ends with an empty answer.
        if ("byobRequest" in controller) controller.byobRequest?.respond(0);
        return;
      }
      const chunk = new Uint8Array(SIZE).fill(sent % 251);
      expected.push(sent % 251);
      sent++;
      controller.enqueue(chunk);
    };
    const stream = kind === "byte"
      ? new ReadableStream({ type: "bytes", pull })
      : new ReadableStream<Uint8Array>({ pull });
    const timer = setTimeout(() => fired = true, 0);
    const got: number[] = [];
    let bytes = 0;
    try {
      await readChunks(stream, (chunk) => {
        for (let at = 0; at < chunk.length; at += SIZE) got.push(chunk[at]!);
        bytes += chunk.length;
      });
    } finally {
      clearTimeout(timer);
    }
    assert.equal(fired, true);
    assert.ok(sent < CAP, `the timer waited for all ${CAP} chunks`);
    assert.equal(bytes, sent * SIZE);
    assert.deepEqual(got, expected);
  });
}

Deno.test("readSocket keeps every byte in order past chunks handled later, and timers run while a stream always has data", async () => {
  // A stream whose every read has data at once: without a turn, the timer below would wait until it ends.
  const SIZE = 64 * 1024;
  const CAP = 20_000;
  let fired = false;
  let sent = 0;
  const expected: number[] = [];
  const stream = new Readable({
    read() {
      if (fired || sent === CAP) return void this.push(null);
      expected.push(sent % 251);
      this.push(new Uint8Array(SIZE).fill(sent++ % 251));
    },
  });
  const timer = setTimeout(() => fired = true, 0);
  const got: number[] = [];
  let bytes = 0;
  let n = 0;
  try {
    await readSocket(stream, (chunk) => {
      for (let at = 0; at < chunk.length; at += SIZE) got.push(chunk[at]!);
      bytes += chunk.length;
      // Now and then a chunk handled later: the stream pauses, and what still comes waits its turn.
      return ++n % 7 === 0 ? new Promise((resolve) => queueMicrotask(resolve)) : undefined;
    });
  } finally {
    clearTimeout(timer);
  }
  assert.equal(fired, true);
  assert.ok(sent < CAP, `the timer waited for all ${CAP} chunks`);
  assert.equal(bytes, sent * SIZE);
  assert.deepEqual(got, expected);
});

Deno.test("withResultType: the member goes first, after the brace; every byte of the object kept", () => {
  const enc = new TextEncoder();
  const dec = (parts: Uint8Array[]) => new TextDecoder().decode(concatBytes(parts));
  const cases: [string[], string][] = [
    [['{"content":[]}'], '{"resultType":"complete","content":[]}'],
    [
      ['{ "_meta" : {"n": 1.50}, "content":[] }'],
      '{"resultType":"complete", "_meta" : {"n": 1.50}, "content":[] }',
    ],
    [["{}"], '{"resultType":"complete"}'],
    [["{ \n }"], '{"resultType":"complete" \n }'],
    // Split anywhere: before the brace, after it, inside the whitespace.
    [["  ", "{", "  ", ' "a":1}'], '  {"resultType":"complete",   "a":1}'],
    [['{ "a"', ":1}"], '{"resultType":"complete", "a":1}'],
    [["{", "", "}"], '{"resultType":"complete"}'],
    // Not an object: unchanged.
    [["[1]"], "[1]"],
  ];
  for (const [parts, want] of cases) {
    assert.equal(dec(withResultType(parts.map((p) => enc.encode(p)))), want, JSON.stringify(parts));
  }
});
