/**
 * Test helper, run as its own process: records `COUNT` calls to the store at `PATH`, started by the test's
 * ready/go handshake (tests/_handshake.ts) so that several workers write at the same time; after its first
 * flushed call it waits until `WORKERS` workers have each committed one, so the writes really overlap
 * whatever the machine's load.
 *
 * Usage: deno run -A tests/intelligence/record_worker.ts PATH WORKER COUNT WORKERS
 *
 * @module
 */
import { intelligenceMigrations, Recorder } from "../../src/intelligence/mod.ts";
import { openStore } from "../../src/store/mod.ts";
import { readyThenGo } from "../_handshake.ts";

const [path, worker, countText, workersText] = Deno.args;
const count = Number(countText);
const db = openStore(path, { migrations: intelligenceMigrations });
const recorder = new Recorder(db, { warn: (message) => console.error(`warning: ${message}`) });
await readyThenGo();

/** Resolves once every worker has committed a call (polled: only the store can tell); throws after 60 s. */
async function allStarted(): Promise<void> {
  const end = Date.now() + 60_000;
  const query = db.prepare("SELECT COUNT(DISTINCT server) AS n FROM calls");
  while ((query.get() as { n: number }).n < Number(workersText)) {
    if (Date.now() > end) throw new Error(`worker ${worker}: not every worker committed a call in 60 s`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

for (let i = 0; i < count; i++) {
  recorder.record({
    ts: Date.now(),
    server: `worker${worker}`,
    tool: "echo",
    namespaced: `worker${worker}__echo`,
    durationMs: i % 50,
    ok: i % 10 !== 0,
    error: i % 10 === 0 ? "failed on purpose" : undefined,
    argsBytes: 16,
    resultBytes: 64,
    agent: `agent${worker}`,
    via: "mount",
    spooled: false,
    returnedBytes: 64,
  });
  if (i === 0) await recorder.flush(), await allStarted();
  // Yield now and then so flushes from the four processes interleave.
  if (i % 7 === 0) await new Promise((resolve) => setTimeout(resolve, 0));
}
await recorder.close();
db.close();
