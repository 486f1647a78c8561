/**
 * The host side and the CLI of the hostile-downstream defences, as users run them: a host that sends an
 * oversized message to `mcp serve` gets a clear error and the gateway neither buffers it nor stops
 * answering; `--db` pointed at a file that is not a store is refused and left as it was; `mcphub approve
 * SERVER` and `mcphub approve --all` accept every held definition of one server, of all servers.
 */
import assert from "node:assert/strict";
import { toolPinMigrations, ToolPins } from "../../src/trust/mod.ts";
import { MAX_HOST_MESSAGE_BYTES } from "../../src/json/lines.ts";
import { openStore } from "../../src/store/mod.ts";
import { DENO, FIXTURE, gatewayFlags, q, RawGateway, runMcphub, tempDir, writeConfig } from "../helpers.ts";

const enc = new TextEncoder();

/** Peak resident memory of a process, in bytes (Linux). */
function peakRss(pid: number): number {
  const kb = Deno.readTextFileSync(`/proc/${pid}/status`).match(/VmHWM:\s+(\d+) kB/)?.[1];
  return Number(kb) * 1024;
}

Deno.test({
  name:
    "a 64 MiB message from the host is refused with -32600 unread, not buffered, and the gateway keeps answering",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    await using dir = await tempDir();
    const path = await writeConfig(
      dir.path,
      `servers:\n  good:\n    command: ${q(DENO)}\n    args: [run, -A, ${q(FIXTURE)}]\n`,
    );
    const db = `${dir.path}/mcphub.db`;
    const gw = new RawGateway(path, db, await gatewayFlags(path, db));
    try {
      await gw.send({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
      });
      await gw.response(1);
      await gw.send({ jsonrpc: "2.0", method: "notifications/initialized" });
      await gw.send({
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "good__echo", arguments: { text: "before" } },
      });
      assert.deepEqual((await gw.response(2) as { result: { content: unknown } }).result.content, [
        { type: "text", text: "before" },
      ]);
      const before = peakRss(gw.child.pid);
      // 64 MiB (four times the limit) of one request, written 1 MiB at a time.
      const size = 4 * MAX_HOST_MESSAGE_BYTES;
      const piece = enc.encode("x".repeat(1 << 20));
      await gw.write(enc.encode('{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"'));
      for (let sent = 0; sent < size; sent += piece.length) await gw.write(piece);
      await gw.write(enc.encode('"}}\n'));
      const refused = await gw.response(null) as { error: { code: number; message: string } };
      assert.equal(refused.error.code, -32600);
      assert.equal(
        refused.error.message,
        `Request too large: a message exceeded the gateway's ${MAX_HOST_MESSAGE_BYTES}-byte limit for ` +
          "messages from the host and was discarded unread",
      );
      await gw.send({
        jsonrpc: "2.0",
        id: 4,
        method: "tools/call",
        params: { name: "good__echo", arguments: { text: "after" } },
      });
      assert.deepEqual((await gw.response(4) as { result: { content: unknown } }).result.content, [
        { type: "text", text: "after" },
      ]);
      // Not buffered: what the gateway keeps of the line stops at the limit (16 MiB); a buffered line would
      // be held at least twice (its chunks, then the text decoded from them), as before (a 200 MB line
      // peaked at 1.7 GB). What it grows by is read chunks let go but not yet collected, which V8 frees on
      // its external-memory schedule (measured: 47-71 MiB for 64 MiB, 162 MiB for 256 MiB).
      const grew = peakRss(gw.child.pid) - before;
      assert.ok(grew < 1.5 * size, `peak RSS grew by ${(grew / 2 ** 20).toFixed(1)} MiB`);
      assert.equal(
        gw.lines.some((line) => JSON.parse(line).id === 3),
        false,
        "the oversized request is never answered as a call",
      );
    } finally {
      await gw.closeStdin().catch(() => {});
      const status = await gw.child.status;
      await gw.stdoutDone;
      assert.equal(status.code, 0);
    }
  },
});

Deno.test("--db pointed at a file that is not a store is refused, and the file keeps its mode and bytes", async () => {
  await using dir = await tempDir();
  const path = await writeConfig(dir.path, "servers: {}\n");
  Deno.chmodSync(path, 0o644);
  const bytes = await Deno.readFile(path);
  for (const args of [["mcp", "serve"], ["stats", "--json"], ["approve", "--all"], ["tools", "changes"]]) {
    const out = await runMcphub(["--config", path, "--db", path, ...args]);
    // The gateway serves without the store (and says so); the store commands fail.
    if (args[0] !== "mcp") assert.notEqual(out.code, 0, args.join(" "));
    assert.match(
      out.stderr,
      /Cannot open the store ".*mcphub\.yaml": the file exists and is not an SQLite database; its mode and contents were not changed/,
      args.join(" "),
    );
    assert.equal(Deno.statSync(path).mode! & 0o777, 0o644, args.join(" "));
    assert.deepEqual(await Deno.readFile(path), bytes, args.join(" "));
  }
});

Deno.test("mcphub approve SERVER accepts that server's held tools; approve --all every server's", async () => {
  await using dir = await tempDir();
  const db = `${dir.path}/mcphub.db`;
  const tool = (name: string, description: string) => ({
    name,
    description,
    inputSchema: { type: "object" },
  });
  {
    const store = openStore(db, { migrations: toolPinMigrations });
    const pins = new ToolPins(store);
    for (const server of ["a", "b"]) pins.check(server, "changes", [tool("x", "one"), tool("y", "one")]);
    for (const server of ["a", "b"]) {
      assert.equal(pins.check(server, "changes", [tool("x", "two"), tool("y", "two")]).held.length, 2);
    }
    pins.check("c", "pin", [tool("z", "new")]); // trust: pin holds a new tool
    store.close();
  }
  const run = (...args: string[]) => runMcphub(["--db", db, ...args]);
  const held = async () =>
    (JSON.parse((await run("tools", "changes", "--json")).stdout) as { server: string; tool: string }[])
      .map((c) => `${c.server}__${c.tool}`).sort();
  assert.deepEqual(await held(), ["a__x", "a__y", "b__x", "b__y", "c__z"]);
  const one = await run("approve", "a");
  assert.equal(one.code, 0, one.stderr);
  assert.equal(one.stdout, "approved a__x\napproved a__y\n");
  assert.deepEqual(await held(), ["b__x", "b__y", "c__z"]);
  const all = await run("approve", "--all");
  assert.equal(all.code, 0, all.stderr);
  assert.equal(
    all.stdout.split("\n").filter(Boolean).sort().join(","),
    "approved b__x,approved b__y,approved c__z",
  );
  assert.deepEqual(await held(), []);
  const nothing = await run("approve", "--all");
  assert.equal(nothing.code, 1);
});
