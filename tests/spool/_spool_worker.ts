/**
 * A separate OS process for the concurrency test: opens the shared store, says `ready` (a line on
 * stdout) and waits for `go` (a line on stdin), then puts results and pages them back (its own and the
 * other worker's) while the other process does the same: after its first result it waits until the
 * other's first is committed, so both really overlap whatever the machine's load. Prints one JSON summary
 * line last.
 *
 * Usage: deno run -A tests/spool/_spool_worker.ts DB_PATH LABEL COUNT
 */
import { openStore } from "../../src/store/mod.ts";
import { getResultResponse, Spool, spoolMigrations } from "../../src/spool/mod.ts";
import { mixedText, seeded } from "./_helpers.ts";
import { readyThenGo } from "../_handshake.ts";

export async function sha256(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** Pages a stored result to the end; returns its bytes. */
export async function readAll(
  spool: Spool,
  callId: string,
  encoding: "base64" | "utf8",
): Promise<Uint8Array<ArrayBuffer>> {
  const parts: Uint8Array[] = [];
  let cursor = 0;
  for (;;) {
    const response = await getResultResponse(spool, { callId, cursor, encoding }, { budget: 32 * 1024 });
    if (response.status !== "ok") throw new Error(`${callId} at ${cursor}: ${JSON.stringify(response)}`);
    parts.push(
      encoding === "utf8"
        ? new TextEncoder().encode(response.text as string)
        : Uint8Array.fromBase64(response.data as string),
    );
    if (response.done) break;
    cursor = response.nextCursor as number;
  }
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/** Resolves once the other worker's first result is committed (polled: only the store can tell); throws after 60 s. */
async function otherCommitted(db: ReturnType<typeof openStore>, label: string): Promise<void> {
  const end = Date.now() + 60_000;
  const query = db.prepare("SELECT count(*) AS n FROM spool_results WHERE server <> ?");
  while ((query.get(label) as { n: number }).n === 0) {
    if (Date.now() > end) throw new Error(`${label}: the other worker committed nothing in 60 s`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function main(): Promise<void> {
  const [path, label, countText] = Deno.args;
  const count = Number(countText);
  const db = openStore(path, { migrations: spoolMigrations, busyTimeoutMs: 10_000 });
  try {
    // Line both processes up: ready once the store is open, then wait for the test's go.
    await readyThenGo();
    const spool = new Spool(db);
    const random = seeded(label.length * 7919 + label.charCodeAt(0));
    const stored: { callId: string; sha256: string; totalBytes: number }[] = [];
    let othersRead = 0;
    for (let i = 0; i < count; i++) {
      const text = `${label}:${i}:` + mixedText(Math.floor(random() * 300_000), random);
      const bytes = new TextEncoder().encode(text);
      const meta = spool.put(text, { server: label, tool: "t", namespaced: `${label}__t` });
      if (meta.totalBytes !== bytes.length) throw new Error(`size mismatch for ${meta.callId}`);
      const back = await readAll(spool, meta.callId, i % 2 === 0 ? "base64" : "utf8");
      const digest = await sha256(bytes);
      if (await sha256(back) !== digest) throw new Error(`content mismatch for ${meta.callId}`);
      stored.push({ callId: meta.callId, sha256: digest, totalBytes: meta.totalBytes });
      if (i === 0) await otherCommitted(db, label);
      // Read whatever the other process has committed so far.
      const others = db.prepare("SELECT call_id FROM spool_results WHERE server <> ?").all(label);
      for (const row of others.slice(-2)) {
        await readAll(spool, row.call_id as string, "base64");
        othersRead++;
      }
      spool.prune();
    }
    console.log(JSON.stringify({ label, stored, othersRead }));
  } finally {
    db.close();
  }
}

if (import.meta.main) await main();
