/**
 * A separate OS process for the concurrency test: opens the shared store,
 * then puts results and pages them back (its own and the other worker's)
 * while the other process does the same. Prints one JSON summary line.
 *
 * Usage: deno run -A tests/spool/_spool_worker.ts DB_PATH LABEL COUNT START_AT_MS
 */
import { openStore } from "../../src/store/mod.ts";
import { getResultResponse, Spool, spoolMigrations } from "../../src/spool/mod.ts";
import { mixedText, seeded } from "./_helpers.ts";

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

async function main(): Promise<void> {
  const [path, label, countText, startAtText] = Deno.args;
  const count = Number(countText);
  const db = openStore(path, { migrations: spoolMigrations, busyTimeoutMs: 10_000 });
  try {
    // Line both processes up, so their writes and reads really overlap.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Number(startAtText) - Date.now())));
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
