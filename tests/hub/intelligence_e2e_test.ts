/**
 * Every proxied call becomes one record: through the real gateway (mounted and
 * call_tool, failing, spooled), checked in the store, the stats meta-tool and
 * the `mcphub stats` formats.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import {
  connectGateway,
  DENO,
  FIXTURE,
  q,
  REAL,
  runMcphub,
  serversReady,
  structured,
  tempDir,
  writeConfig,
} from "../helpers.ts";

const bytes = (v: unknown) => new TextEncoder().encode(JSON.stringify(v)).length;

Deno.test("calls through the gateway are recorded exactly, and stats reports them", async () => {
  await using dir = await tempDir();
  const config = await writeConfig(
    dir.path,
    `response_budget: "4KB"
servers:
  everything:
    command: node
    args: [${q(REAL.everything)}, stdio]
  fx:
    command: ${q(DENO)}
    args: [run, -A, ${q(FIXTURE)}]
`,
  );
  const db = `${dir.path}/store.db`;
  const results: Record<string, unknown> = {};
  {
    await using gw = await connectGateway(config, { db });
    await serversReady(gw.client, { state: "connected" });
    results.echo = await gw.client.callTool({ name: "everything__echo", arguments: { message: "hi" } });
    results.sum = await gw.client.callTool({
      name: "call_tool",
      arguments: { server: "everything", tool: "get-sum", arguments: { a: 1, b: 2 } },
    });
    results.fail = await gw.client.callTool({ name: "fx__fail", arguments: { text: "nope" } });
    results.big = await gw.client.callTool({ name: "fx__big", arguments: { bytes: 20_000 } });
    const stats = structured<{ totals: Record<string, number>; servers: Record<string, unknown>[] }>(
      await gw.client.callTool({ name: "stats", arguments: {} }),
    );
    assert.equal(stats.totals.calls, 4);
    assert.equal(stats.totals.errors, 1);
    assert.equal(stats.totals.spooled_results, 1);
    assert.deepEqual(stats.servers.map((s) => [s.server, s.calls, s.errors]), [["everything", 2, 0], [
      "fx",
      2,
      1,
    ]]);
  }
  const store = new DatabaseSync(db, { readOnly: true });
  const rows = store.prepare(
    "SELECT server, tool, namespaced, ok, error, args_bytes, result_bytes, est_tokens, agent, via, spooled, returned_bytes FROM calls ORDER BY id",
  ).all().map((r) => ({ ...r }));
  store.close();
  const bigBytes = bytes({ content: [{ type: "text", text: "x".repeat(20_000) }] });
  assert.deepEqual(rows, [
    {
      server: "everything",
      tool: "echo",
      namespaced: "everything__echo",
      ok: 1,
      error: null,
      args_bytes: bytes({ message: "hi" }),
      result_bytes: bytes(results.echo),
      est_tokens: Math.floor((bytes({ message: "hi" }) + bytes(results.echo)) / 4),
      agent: null,
      via: "mount",
      spooled: 0,
      returned_bytes: bytes(results.echo),
    },
    {
      server: "everything",
      tool: "get-sum",
      namespaced: "everything__get-sum",
      ok: 1,
      error: null,
      args_bytes: bytes({ a: 1, b: 2 }),
      result_bytes: bytes(results.sum),
      est_tokens: Math.floor((bytes({ a: 1, b: 2 }) + bytes(results.sum)) / 4),
      agent: null,
      via: "call_tool",
      spooled: 0,
      returned_bytes: bytes(results.sum),
    },
    {
      server: "fx",
      tool: "fail",
      namespaced: "fx__fail",
      ok: 0,
      error: "nope",
      args_bytes: bytes({ text: "nope" }),
      result_bytes: bytes(results.fail),
      est_tokens: Math.floor((bytes({ text: "nope" }) + bytes(results.fail)) / 4),
      agent: null,
      via: "mount",
      spooled: 0,
      returned_bytes: bytes(results.fail),
    },
    {
      server: "fx",
      tool: "big",
      namespaced: "fx__big",
      ok: 1,
      error: null,
      args_bytes: bytes({ bytes: 20_000 }),
      result_bytes: bigBytes,
      // What reached the agent: the arguments and the receipt, not the stored result.
      est_tokens: Math.floor((bytes({ bytes: 20_000 }) + bytes(results.big)) / 4),
      agent: null,
      via: "mount",
      spooled: 1,
      returned_bytes: bytes(results.big),
    },
  ]);

  const out = await runMcphub(["--db", db, "stats", "--tools", "--json"]);
  assert.equal(out.code, 0, out.stderr);
  const report = JSON.parse(out.stdout);
  assert.equal(report.totals.calls, 4);
  assert.equal(report.totals.errors, 1);
  assert.deepEqual(
    report.tools.map((t: { namespaced: string; calls: number }) => [t.namespaced, t.calls]).sort(),
    [["everything__echo", 1], ["everything__get-sum", 1], ["fx__big", 1], ["fx__fail", 1]],
  );
  const md = await runMcphub(["--db", db, "stats", "--markdown"]);
  const text = md.stdout;
  assert.match(text, /^# mcphub stats\n/);
  assert.match(text, /\*\*mcphub stats \(all time\):\*\* 4 calls, 1 error \(25\.0%\)/);
});

Deno.test("every call of a burst on the fast path is recorded, even when the host leaves right after it", async () => {
  await using dir = await tempDir();
  const config = await writeConfig(
    dir.path,
    `servers:\n  everything:\n    command: node\n    args: [${q(REAL.everything)}, stdio]\n`,
  );
  const db = `${dir.path}/store.db`;
  const calls = 300;
  {
    await using gw = await connectGateway(config, { db });
    await serversReady(gw.client, { state: "connected" });
    // 8 at a time, then the host closes the connection at once: the last records are still queued.
    let next = 0;
    await Promise.all(Array.from({ length: 8 }, async () => {
      while (next < calls) {
        next++;
        const result = await gw.client.callTool({ name: "everything__echo", arguments: { message: "m" } });
        assert.equal(result.isError, undefined);
      }
    }));
  }
  const store = new DatabaseSync(db, { readOnly: true });
  const rows = store.prepare("SELECT namespaced, ok, via, COUNT(*) AS n FROM calls GROUP BY 1, 2, 3").all()
    .map((r) => ({ ...r }));
  store.close();
  assert.deepEqual(rows, [{ namespaced: "everything__echo", ok: 1, via: "mount", n: calls }]);
});
