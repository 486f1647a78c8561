/**
 * Detached calls with shared rows (src/gateway/detached.ts over the store's detached_calls): a call
 * started in one process is polled from another on the same store (pending, then its result or its
 * error), only by the agent that started it.
 */
import assert from "node:assert/strict";
import { DetachedCalls } from "../../src/gateway/detached.ts";
import { DetachedRows, openStore, rendezvousMigrations, sqliteReader } from "../../src/store/mod.ts";
import { tempDir } from "../helpers.ts";

Deno.test("poll_result from another process on the store: pending, then the result or the error, for its agent only", async () => {
  await using dir = await tempDir();
  const path = `${dir.path}/store.db`;
  const one = openStore(path, { migrations: rendezvousMigrations });
  const two = openStore(path, { migrations: rendezvousMigrations });
  try {
    const runner = new DetachedCalls({ shared: new DetachedRows(sqliteReader(one)) });
    const other = new DetachedCalls({ shared: new DetachedRows(sqliteReader(two)) });
    const release = Promise.withResolvers<void>();
    const done = Promise.withResolvers<void>();
    const ok = runner.start({ namespaced: "fx__echo", agent: "alpha" }, async () => {
      await release.promise;
      return { content: [{ type: "text", text: "hi" }] };
    });
    const bad = runner.start({ namespaced: "fx__fail", agent: "alpha" }, async () => {
      await done.promise;
      throw new Error("it broke");
    });
    await runner.stored(ok);
    await runner.stored(bad);
    const pending = await other.pollAnywhere(ok, "alpha");
    assert.equal(pending.status, "pending");
    assert.equal(pending.namespaced, "fx__echo");
    // Another agent, or the unscoped view, does not see it.
    assert.equal((await other.pollAnywhere(ok, "beta")).status, "unknown");
    assert.equal((await other.pollAnywhere(ok, undefined)).status, "unknown");
    release.resolve();
    done.resolve();
    await runner.settled(ok);
    await runner.settled(bad);
    assert.deepEqual(await other.pollAnywhere(ok, "alpha"), { content: [{ type: "text", text: "hi" }] });
    const failed = await other.pollAnywhere(bad, "alpha");
    assert.equal(failed.status, "failed");
    assert.equal(failed.error, "it broke");
    assert.equal(failed.namespaced, "fx__fail");
    // Without shared rows, as before: unknown.
    assert.equal((await new DetachedCalls().pollAnywhere(ok, "alpha")).status, "unknown");
  } finally {
    one.close();
    two.close();
  }
});
