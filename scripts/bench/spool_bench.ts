/**
 * Spool benchmark: page reads at the start, middle and end of a 1 MB and a
 * 100 MB stored result (chunked, and the single-BLOB + substr() reference
 * design), the time and peak RSS of spooling 100 MB, paging throughput, and how long `putBytes` of
 * 100 MB (as the gateway's fast path stores it: 64 KiB parts) holds the event loop at most, with
 * today's slices ({@linkcode PUT_SLICE_BYTES}) against 1 MiB slices (before 2026-12-02), alternating.
 *
 * Usage: deno run -A --v8-flags=--expose-gc scripts/bench/spool_bench.ts (the flag is optional: it
 * settles the heap before the RSS baseline)
 *
 * @module
 */
import { openStore } from "../../src/store/mod.ts";
import {
  CHUNK_BYTES,
  getResultResponse,
  PUT_SLICE_BYTES,
  Spool,
  spoolMigrations,
} from "../../src/spool/mod.ts";

const MB = 1024 * 1024;
const PAGE = 8192;

/** What one run measured. Times in ms, sizes in bytes. */
export interface SpoolBenchReport {
  pageReadMs: Record<"1MB" | "100MB", { start: number; middle: number; end: number }>;
  ratio100To1: { start: number; middle: number; end: number };
  referenceSubstrMs: { start: number; middle: number; end: number };
  /** The same 100 MB reads with 64 KiB chunks (the first design), for comparison. */
  chunks64KiB100MBMs: { start: number; middle: number; end: number };
  put100MB: { ms: number; rssBeforeBytes: number; peakRssBytes: number; payloadBytes: number };
  referencePut100MBMs: number;
  paging10MB: { base64MBps: number; utf8MBps: number; pages: number };
  /** Longest the event loop was held during `putBytes` of 100 MB (median of rounds), per slice size. */
  putBytesHoldMs: { sliceBytes: number; maxMs: number; totalMs: number }[];
}

/**
 * Stores 100 MB with `putBytes` (64 KiB parts) while a 1 ms timer runs; returns the longest gap between
 * its ticks beyond the 1 ms (what a concurrent call would wait) and the time of the put.
 */
async function putBytesHold(spool: Spool): Promise<{ maxMs: number; totalMs: number }> {
  const part = new TextEncoder().encode(payload(64 * 1024));
  const parts = Array.from({ length: 1600 }, () => part);
  let last = performance.now();
  let maxMs = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    maxMs = Math.max(maxMs, now - last - 1);
    last = now;
  }, 1);
  const start = performance.now();
  last = start;
  try {
    await spool.putBytes(parts, { server: "bench", tool: "dump", namespaced: "bench__dump" });
  } finally {
    clearInterval(timer);
  }
  return { maxMs: Math.max(maxMs, performance.now() - last - 1), totalMs: performance.now() - start };
}

/**
 * A JSON-ish ASCII payload of exactly `bytes` UTF-8 bytes, as one flat string
 * (like the `JSON.stringify` output the gateway spools; a lazy concatenation
 * would be flattened inside put() and blur its memory figure).
 */
function payload(bytes: number): string {
  const line =
    '{"file":"internal/hub/hub.go","line":1234,"text":"func (h *Hub) finalize(ctx context.Context)"},';
  const head = '{"content":[{"type":"text","text":"[';
  const tail = ']"}]}';
  const room = bytes - head.length - tail.length;
  const lines = new Array<string>(Math.floor(room / line.length)).fill(line);
  lines.unshift(head);
  lines.push("x".repeat(room % line.length), tail);
  return lines.join("");
}

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function timeMedian(runs: number, fn: () => void): number {
  fn(); // warm the statement and the page cache
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    fn();
    samples.push(performance.now() - start);
  }
  return median(samples);
}

function positions(total: number, chunkBytes = CHUNK_BYTES): { start: number; middle: number; end: number } {
  // The middle page straddles a chunk edge on purpose: the worst case for the chunked design.
  const middle = Math.floor(total / 2 / chunkBytes) * chunkBytes - PAGE / 2;
  return { start: 0, middle, end: total - PAGE };
}

/** Samples this process's RSS from a worker thread while the main thread is busy in a synchronous call. */
async function rssSampler(): Promise<{ stop(): Promise<number> }> {
  const code = `let max = Deno.memoryUsage().rss;
    const id = setInterval(() => { max = Math.max(max, Deno.memoryUsage().rss); }, 1);
    self.onmessage = () => { clearInterval(id); self.postMessage(Math.max(max, Deno.memoryUsage().rss)); self.close(); };
    self.postMessage("ready");`;
  const url = URL.createObjectURL(new Blob([code], { type: "application/javascript" }));
  const worker = new Worker(url, { type: "module" });
  await new Promise((resolve) => worker.onmessage = resolve);
  return {
    stop: () =>
      new Promise<number>((resolve) => {
        worker.onmessage = (event) => {
          URL.revokeObjectURL(url);
          resolve(event.data as number);
        };
        worker.postMessage("stop");
      }),
  };
}

function fmt(ms: number): string {
  return ms < 1 ? `${(ms * 1000).toFixed(1)} µs` : `${ms.toFixed(2)} ms`;
}

/** Runs the benchmark in a temp directory, prints a report, and returns the figures. */
export async function main(): Promise<SpoolBenchReport> {
  const dir = await Deno.makeTempDir({ prefix: "mcphub_spool_bench_" });
  const db = openStore(`${dir}/mcphub.db`, { migrations: spoolMigrations });
  try {
    const spool = new Spool(db);
    const meta = { server: "bench", tool: "dump", namespaced: "bench__dump" };

    // Spool 100 MB: time and peak RSS (sampled from a worker thread, started first so it is in the baseline).
    let big: string | undefined = payload(100 * MB);
    const sampler = await rssSampler();
    (globalThis as { gc?: () => void }).gc?.();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const rssBefore = Deno.memoryUsage().rss;
    let start = performance.now();
    const stored100 = spool.put(big, meta);
    const putMs = performance.now() - start;
    const peakRss = await sampler.stop();
    const stored1 = spool.put(payload(MB), meta);

    const pageReadMs = { "1MB": { start: 0, middle: 0, end: 0 }, "100MB": { start: 0, middle: 0, end: 0 } };
    for (const [label, stored] of [["1MB", stored1], ["100MB", stored100]] as const) {
      const at = positions(stored.totalBytes);
      for (const where of ["start", "middle", "end"] as const) {
        pageReadMs[label][where] = timeMedian(500, () => {
          const page = spool.readPage(stored.callId, at[where], PAGE);
          if (typeof page !== "object" || page.bytes.length !== PAGE) throw new Error("bad page");
        });
      }
    }
    const ratio = {
      start: pageReadMs["100MB"].start / pageReadMs["1MB"].start,
      middle: pageReadMs["100MB"].middle / pageReadMs["1MB"].middle,
      end: pageReadMs["100MB"].end / pageReadMs["1MB"].end,
    };

    // The reference design: one BLOB per result, pages cut with substr().
    db.exec("CREATE TABLE bench_reference (call_id TEXT PRIMARY KEY, data BLOB NOT NULL)");
    let blob: Uint8Array | undefined = new TextEncoder().encode(big);
    big = undefined;
    start = performance.now();
    db.prepare("INSERT INTO bench_reference VALUES (?, ?)").run("ref", blob);
    const referencePutMs = performance.now() - start;
    const total = blob.length;
    blob = undefined;
    const substr = db.prepare("SELECT substr(data, ?, ?) AS page FROM bench_reference WHERE call_id = ?");
    const at = positions(total);
    const referenceSubstrMs = { start: 0, middle: 0, end: 0 };
    for (const where of ["start", "middle", "end"] as const) {
      referenceSubstrMs[where] = timeMedian(15, () => {
        const row = substr.get(at[where] + 1, PAGE, "ref") as { page: Uint8Array };
        if (row.page.length !== PAGE) throw new Error("bad reference page");
      });
    }
    db.exec("DROP TABLE bench_reference");

    // The same reads with 64 KiB chunks: each 8 KiB page then reads 64-128 KiB.
    const wide = new Spool(db, { chunkBytes: 64 * 1024 });
    const stored64 = wide.put(payload(100 * MB), meta);
    const at64 = positions(stored64.totalBytes, 64 * 1024);
    const chunks64KiB100MBMs = { start: 0, middle: 0, end: 0 };
    for (const where of ["start", "middle", "end"] as const) {
      chunks64KiB100MBMs[where] = timeMedian(500, () => {
        if (typeof wide.readPage(stored64.callId, at64[where], PAGE) !== "object") {
          throw new Error("bad page");
        }
      });
    }

    // Page a whole 10 MB result through get_result, as an agent would at the default budget.
    const stored10 = spool.put(payload(10 * MB), meta);
    const pageAll = async (encoding: "base64" | "utf8") => {
      let cursor = 0;
      let pages = 0;
      const begin = performance.now();
      for (;;) {
        const response = await getResultResponse(spool, { callId: stored10.callId, cursor, encoding }, {
          budget: 32 * 1024,
        });
        pages++;
        if (response.done) break;
        cursor = response.nextCursor as number;
      }
      return { mbps: stored10.totalBytes / MB / ((performance.now() - begin) / 1000), pages };
    };
    await pageAll("base64"); // warm up
    const base64 = await pageAll("base64");
    const utf8 = await pageAll("utf8");

    // putBytes of 100 MB, today's slices against 1 MiB ones, alternating; median of 3 each.
    const sizes = [PUT_SLICE_BYTES, MB];
    const holds = sizes.map(() => [] as { maxMs: number; totalMs: number }[]);
    for (let round = 0; round < 3; round++) {
      for (const [i, sliceBytes] of sizes.entries()) {
        holds[i]!.push(await putBytesHold(new Spool(db, { sliceBytes })));
      }
    }
    const putBytesHoldMs = sizes.map((sliceBytes, i) => ({
      sliceBytes,
      maxMs: median(holds[i]!.map((h) => h.maxMs)),
      totalMs: median(holds[i]!.map((h) => h.totalMs)),
    }));

    const report: SpoolBenchReport = {
      pageReadMs,
      ratio100To1: ratio,
      referenceSubstrMs,
      chunks64KiB100MBMs,
      put100MB: {
        ms: putMs,
        rssBeforeBytes: rssBefore,
        peakRssBytes: peakRss,
        payloadBytes: stored100.totalBytes,
      },
      referencePut100MBMs: referencePutMs,
      paging10MB: { base64MBps: base64.mbps, utf8MBps: utf8.mbps, pages: base64.pages },
      putBytesHoldMs,
    };

    console.log(`spool bench (8 KiB pages, ${CHUNK_BYTES / 1024} KiB chunks, median per page)`);
    for (const where of ["start", "middle", "end"] as const) {
      console.log(
        `  ${where.padEnd(6)} 1MB ${fmt(pageReadMs["1MB"][where]).padStart(9)}   100MB ${
          fmt(pageReadMs["100MB"][where]).padStart(9)
        }   ratio ${ratio[where].toFixed(2)}   reference substr() 100MB ${
          fmt(referenceSubstrMs[where]).padStart(9)
        }   64 KiB chunks 100MB ${fmt(chunks64KiB100MBMs[where])}`,
      );
    }
    console.log(
      `  put 100 MB: ${fmt(putMs)}; RSS ${(rssBefore / MB).toFixed(0)} MB before (payload string held), ` +
        `peak ${(peakRss / MB).toFixed(0)} MB during (+${((peakRss - rssBefore) / MB).toFixed(1)} MB); ` +
        `reference single-BLOB insert ${fmt(referencePutMs)}`,
    );
    console.log(
      `  page all of 10 MB via get_result at a 32 KB budget: base64 ${base64.mbps.toFixed(1)} MB/s ` +
        `(${base64.pages} pages), utf8 ${utf8.mbps.toFixed(1)} MB/s (${utf8.pages} pages)`,
    );
    console.log(
      `  putBytes 100 MB (64 KiB parts), longest event-loop hold, median of 3: ${
        putBytesHoldMs.map((h) => `${h.sliceBytes / 1024} KiB slices ${fmt(h.maxMs)} (put ${fmt(h.totalMs)})`)
          .join(", ")
      }; ratio ${(putBytesHoldMs[0]!.maxMs / putBytesHoldMs[1]!.maxMs).toFixed(2)}`,
    );
    return report;
  } finally {
    db.close();
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) await main();
