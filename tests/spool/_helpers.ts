/** Shared fixtures for the spool tests: seeded text generators and temp stores. */
import { type DatabaseSync, openStore } from "../../src/store/mod.ts";
import { Spool, spoolMigrations, type SpoolOptions } from "../../src/spool/mod.ts";

/** A small seeded PRNG (mulberry32), so failures reproduce. */
export function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PIECES = [
  "a",
  "hello ",
  '{"k":"v"}',
  '\\"',
  "\n",
  "\t",
  "\u0001",
  "é",
  "e\u0301", // combining acute accent
  "ñ",
  "中文",
  "日本語",
  "한",
  "😀",
  "👩‍💻", // ZWJ sequence
  "🇯🇵",
  "\u2028",
  "\ufeff",
  "𝄞",
];

/** A string of about `units` UTF-16 units mixing ASCII, escapes, accents, CJK and astral emoji. */
export function mixedText(units: number, random: () => number): string {
  const parts: string[] = [];
  let length = 0;
  while (length < units) {
    const piece = PIECES[Math.floor(random() * PIECES.length)];
    parts.push(piece);
    length += piece.length;
  }
  return parts.join("");
}

/** A temp directory holding a migrated store; `close()` closes it and removes the directory. */
export interface TempStore extends Disposable {
  dir: string;
  path: string;
  db: DatabaseSync;
  spool(options?: SpoolOptions): Spool;
  close(): void;
}

/** Opens a migrated store in a fresh temp directory. */
export function tempStore(options: { busyTimeoutMs?: number } = {}): TempStore {
  const dir = Deno.makeTempDirSync({ prefix: "mcphub_spool_" });
  const path = `${dir}/mcphub.db`;
  const db = openStore(path, { migrations: spoolMigrations, busyTimeoutMs: options.busyTimeoutMs });
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    try {
      db.close();
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  };
  return {
    dir,
    path,
    db,
    spool: (spoolOptions) => new Spool(db, spoolOptions),
    close,
    [Symbol.dispose]: close,
  };
}

/** Concatenates byte arrays. */
export function concatBytes(parts: Uint8Array[]): Uint8Array {
  const total = parts.reduce((sum, part) => sum + part.length, 0);
  const out = new Uint8Array(total);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/** The size of `response` as the gateway returns it: structured, plus the same JSON as one text block. */
export function wrappedBytes(response: Record<string, unknown>): number {
  const wrapped = {
    content: [{ type: "text", text: JSON.stringify(response) }],
    structuredContent: response,
  };
  return new TextEncoder().encode(JSON.stringify(wrapped)).length;
}
