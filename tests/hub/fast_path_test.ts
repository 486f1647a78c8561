/**
 * The fast path (a tools/call of a mounted tool relayed as bytes over stdio) is invisible: what the host
 * receives is what the downstream sent, ids aside; a bad answer is still that server's failure; an
 * oversized one is stored from its bytes, whole.
 */
import assert from "node:assert/strict";
import {
  connectDirect,
  connectGateway,
  DENO,
  HOSTILE,
  pageAll,
  rawGatewaySession,
  structured,
  tempDir,
  writeConfig,
} from "../helpers.ts";
import { RawBytes, scan } from "../../src/json/raw_json.ts";

/** A copy of the fixture's WIRE_RESULT (tests/fixtures/hostile_server.ts): the bytes tool `wire` answers. */
const WIRE_RESULT =
  '{ "_meta" : {"n": 1.50, "e": 1e2}, "content":[ {"text":"caf\\u00e9 \\"q\\" \\ud83d\\ude00 é",' +
  ' "type":"text"} ] , "isError" :false }';

function wireConfig(extra = "", bytes = 1000): string {
  return `servers:\n  wire:\n    command: ${DENO}\n    args: ${
    JSON.stringify(["run", "-A", HOSTILE, "--mode", "wire", "--bytes", String(bytes)])
  }\n${extra}`;
}

Deno.test("a mounted tool's result reaches the host as the bytes the downstream sent, ids aside", async () => {
  await using dir = await tempDir();
  const path = await writeConfig(dir.path, wireConfig());
  const host = await rawGatewaySession(path, `${dir.path}/store.db`);
  try {
    await host.send({ jsonrpc: "2.0", id: 1, method: "tools/list" });
    await host.answer(1);
    await host.send({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "wire__wire", arguments: {} },
    });
    const line = await host.answer(2);
    const raw = new RawBytes([new TextEncoder().encode(line)]);
    const result = scan(raw)!.members.find((m) => m.key === "result")!;
    assert.equal(raw.text(result.start, result.end), WIRE_RESULT);
    assert.deepEqual(JSON.parse(line), { jsonrpc: "2.0", id: 2, result: JSON.parse(WIRE_RESULT) });
  } finally {
    await host.close();
  }
});

Deno.test("lazy: call_tool's result reaches the host as the bytes the downstream sent, ids aside", async () => {
  await using dir = await tempDir();
  const path = await writeConfig(dir.path, wireConfig("expose: lazy\n"));
  const host = await rawGatewaySession(path, `${dir.path}/store.db`);
  try {
    await host.send({ jsonrpc: "2.0", id: 1, method: "tools/list" });
    const listed = JSON.parse(await host.answer(1)).result.tools.map((t: { name: string }) => t.name);
    assert.ok(listed.includes("call_tool") && !listed.includes("wire__wire"), listed.join(" "));
    for (
      const [id, params] of [
        [2, { tool: "wire__wire", arguments: {} }],
        [3, { server: "wire", tool: "wire" }],
      ] as const
    ) {
      await host.send({
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: { name: "call_tool", arguments: params },
      });
      const line = await host.answer(id);
      const raw = new RawBytes([new TextEncoder().encode(line)]);
      const result = scan(raw)!.members.find((m) => m.key === "result")!;
      assert.equal(raw.text(result.start, result.end), WIRE_RESULT);
    }
    // Detached and invalid calls answer as before: a receipt, and the protocol's error.
    await host.send({
      jsonrpc: "2.0",
      id: 4,
      method: "tools/call",
      params: { name: "call_tool", arguments: { tool: "wire__wire", detach: true } },
    });
    const receipt = JSON.parse(await host.answer(4)).result;
    assert.equal(JSON.parse(receipt.content[0].text).status, "accepted");
    await host.send({
      jsonrpc: "2.0",
      id: 5,
      method: "tools/call",
      params: { name: "call_tool", arguments: { tool: "wire__wire", arguments: [] } },
    });
    assert.deepEqual(JSON.parse(await host.answer(5)).error, {
      code: -32602,
      message: 'call_tool: "arguments" must be an object',
    });
  } finally {
    await host.close();
  }
});

Deno.test("through the SDK client a relayed result equals a direct call's", async () => {
  await using dir = await tempDir();
  await using gw = await connectGateway(await writeConfig(dir.path, wireConfig()), { allowAll: true });
  const direct = await connectDirect(DENO, ["run", "-A", HOSTILE, "--mode", "wire", "--bytes", "1000"]);
  try {
    for (const tool of ["wire", "ok", "big"]) {
      const expected = await direct.callTool({ name: tool, arguments: {} });
      assert.deepEqual(await gw.client.callTool({ name: `wire__${tool}`, arguments: {} }), expected);
    }
  } finally {
    await direct.close();
  }
});

Deno.test("an invalid result on the fast path fails that call as the server's, and the server stays usable", async () => {
  await using dir = await tempDir();
  await using gw = await connectGateway(await writeConfig(dir.path, wireConfig()), { allowAll: true });
  const direct = await connectDirect(DENO, ["run", "-A", HOSTILE, "--mode", "wire"]);
  try {
    // A direct SDK client rejects it too (by its schema).
    await assert.rejects(direct.callTool({ name: "invalid", arguments: {} }));
    await assert.rejects(
      gw.client.callTool({ name: "wire__invalid", arguments: {} }),
      (error: Error) => {
        assert.match(
          error.message,
          /server "wire" sent an invalid tools\/call result: "content" is not an array/,
        );
        return true;
      },
    );
    assert.deepEqual(await gw.client.callTool({ name: "wire__ok", arguments: {} }), {
      content: [{ type: "text", text: "ok" }],
    });
    const { servers } = structured<{ servers: { name: string; state: string }[] }>(
      await gw.client.callTool({ name: "list_servers", arguments: {} }),
    );
    assert.equal(servers.find((s) => s.name === "wire")?.state, "connected");
  } finally {
    await direct.close();
  }
});

Deno.test("an oversized result on the fast path is stored from its bytes and pages back whole", async () => {
  await using dir = await tempDir();
  const bytes = 3 * 1024 * 1024;
  const config = await writeConfig(dir.path, wireConfig("response_budget: 4096\n", bytes));
  await using gw = await connectGateway(config, { allowAll: true });
  const direct = await connectDirect(DENO, [
    "run",
    "-A",
    HOSTILE,
    "--mode",
    "wire",
    "--bytes",
    String(bytes),
  ]);
  try {
    const expected = await direct.callTool({ name: "big", arguments: {} });
    const receipt = await gw.client.callTool({ name: "wire__big", arguments: {} });
    const stored = receipt.structuredContent as { status: string; callId: string; preview: string };
    assert.equal(stored.status, "stored");
    assert.ok(stored.preview.startsWith("0123456789abcdef0123"), stored.preview.slice(0, 40));
    const text = await pageAll(gw.client, stored.callId);
    assert.deepEqual(JSON.parse(text), expected);
    // Byte for byte what the fixture wrote (3 MiB: past 1 MiB, so written into the spool as it arrived).
    const sent = JSON.stringify({ content: [{ type: "text", text: "0123456789abcdef".repeat(bytes / 16) }] });
    assert.equal(text, sent);
  } finally {
    await direct.close();
  }
});
