/**
 * Test helper, run as its own process: records `COUNT` calls to the store at `PATH`,
 * starting at `START_AT` (ms epoch) so that several workers write at the same time.
 *
 * Usage: deno run -A tests/intelligence/record_worker.ts PATH WORKER COUNT START_AT
 *
 * @module
 */
import { intelligenceMigrations, Recorder } from "../../src/intelligence/mod.ts";
import { openStore } from "../../src/store/mod.ts";

const [path, worker, countText, startAtText] = Deno.args;
const count = Number(countText);
const db = openStore(path, { migrations: intelligenceMigrations });
const recorder = new Recorder(db, { warn: (message) => console.error(`warning: ${message}`) });
const wait = Number(startAtText) - Date.now();
if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
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
  // Yield now and then so flushes from the four processes interleave.
  if (i % 7 === 0) await new Promise((resolve) => setTimeout(resolve, 0));
}
await recorder.close();
db.close();
