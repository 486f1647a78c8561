import assert from "node:assert/strict";
import { fullCollection, QuietCollector } from "../../src/http/settle.ts";

Deno.test("V8's full collection is given at run time, with no permission and no flag on the command line", () => {
  // A Deno upgrade that takes it away fails here, not silently in the listener's memory (issue 41).
  const collect = fullCollection();
  assert.equal(typeof collect, "function");
  collect!();
});

Deno.test("one collection after minBytes and a quiet spell; none below the threshold; bytes during the spell put it off", async () => {
  let done!: () => void;
  let collectedAt = 0;
  const collected = new Promise<void>((resolve) => done = resolve);
  const quiet = new QuietCollector(() => {
    collectedAt = performance.now();
    done();
  }, { quietMs: 30, minBytes: 100 });
  quiet.note(60);
  assert.equal(quiet.armed, false, "under minBytes nothing waits");
  quiet.note(60);
  assert.equal(quiet.armed, true);
  // Traffic goes on: each write puts the collection off to quietMs after it.
  let lastNote = 0;
  for (let i = 0; i < 5; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    quiet.note(1);
    lastNote = performance.now();
  }
  // The collector's timer is unref'd (it never keeps a process alive): this test's own keeps the loop up.
  const keep = setInterval(() => {}, 1000);
  await collected.finally(() => clearInterval(keep));
  assert.equal(quiet.collections, 1);
  assert.ok(collectedAt - lastNote >= 30 - 1, `collected ${collectedAt - lastNote} ms after the last write`);
  // The count starts again: a small write after a collection arms nothing.
  quiet.note(10);
  assert.equal(quiet.armed, false);
  quiet.note(200);
  assert.equal(quiet.armed, true);
  quiet.stop();
  assert.equal(quiet.armed, false);
  quiet.note(500);
  assert.equal(quiet.armed, false, "stopped: nothing is armed again");
  assert.equal(quiet.collections, 1);
});
