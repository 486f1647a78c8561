/**
 * A separate OS process for the durability test: stores `MB` MiB of a known pattern with
 * `Spool.putBytes()` (many slice transactions), prints the callId the moment the put resolves (what the
 * gateway would put in a receipt), then kills itself with SIGKILL: no close, no final checkpoint.
 *
 * Usage: deno run -A tests/spool/_crash_writer.ts DB_PATH MB
 */
import { openStore } from "../../src/store/mod.ts";
import { Spool, spoolMigrations } from "../../src/spool/mod.ts";

/** Byte `i` of the pattern the test checks. */
export function patternByte(i: number): number {
  return 0x41 + (i * 7 + (i >> 13)) % 26;
}

/** `size` bytes of the pattern from offset `start`. */
export function pattern(start: number, size: number): Uint8Array {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i++) bytes[i] = patternByte(start + i);
  return bytes;
}

if (import.meta.main) {
  const [path, mb] = Deno.args;
  const db = openStore(path!, { migrations: spoolMigrations });
  const spool = new Spool(db);
  const partBytes = 64 * 1024;
  const parts: Uint8Array[] = [];
  for (let at = 0; at < Number(mb) * 1024 * 1024; at += partBytes) parts.push(pattern(at, partBytes));
  const stored = await spool.putBytes(parts, { server: "s", tool: "t", namespaced: "s__t" });
  Deno.stdout.writeSync(new TextEncoder().encode(`${stored.callId} ${stored.totalBytes}\n`));
  Deno.kill(Deno.pid, "SIGKILL");
}
