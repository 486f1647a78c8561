/**
 * A 2026-07-28 host gets `resultType` on every result, whichever path produced it: a `tools/call` of a
 * legacy stdio server answered by the fast path (the result relayed as the bytes the server sent) gets
 * `"resultType":"complete"` as its first member and every other byte as sent; the SDK's path (parsed)
 * gets it as well, and the two answers are the same JSON. The v2 client pinned to 2026-07-28 sees both
 * as a direct call's result.
 */
import assert from "node:assert/strict";
import { Client as ModernClient } from "npm:@modelcontextprotocol/client@2.4.0";
import { StdioClientTransport as ModernStdio } from "npm:@modelcontextprotocol/client@2.4.0/stdio";
import { connectDirect, DENO, HOSTILE, rawGatewaySession, ROOT, tempDir, writeConfig } from "../helpers.ts";
import { RawBytes, scan } from "../../src/json/raw_json.ts";

/** A copy of the fixture's WIRE_RESULT (tests/fixtures/hostile_server.ts): the bytes tool `wire` answers. */
const WIRE_RESULT =
  '{ "_meta" : {"n": 1.50, "e": 1e2}, "content":[ {"text":"caf\\u00e9 \\"q\\" \\ud83d\\ude00 é",' +
  ' "type":"text"} ] , "isError" :false }';

const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "raw-modern", version: "1" },
};

function wireConfig(): string {
  return `servers:\n  wire:\n    command: ${DENO}\n    args: ${
    JSON.stringify(["run", "-A", HOSTILE, "--mode", "wire"])
  }\n`;
}

/** The result member of an answer line, as its bytes. */
function resultText(line: string): string {
  const raw = new RawBytes([new TextEncoder().encode(line)]);
  const result = scan(raw)!.members.find((m) => m.key === "result")!;
  return raw.text(result.start, result.end);
}

Deno.test("a 2026-07-28 host: the fast path's bytes get resultType first, the rest as sent; as the SDK path's", async () => {
  await using dir = await tempDir();
  const path = await writeConfig(dir.path, wireConfig());
  await using host = await rawGatewaySession(path, `${dir.path}/store.db`, { handshake: false });
  const call = (id: number) =>
    host.send({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "wire__wire", arguments: {}, _meta: META },
    });
  // The first message of a modern host opens the gateway's server with it, in the same turn: that call
  // cannot take the fast path (the server is not open yet when it is looked at) and takes the SDK's.
  await call(1);
  const sdk = await host.answer(1);
  await call(2);
  const fast = await host.answer(2);
  // The SDK's path re-serialized the result (1.50 -> 1.5); the fast path kept the server's bytes.
  assert.match(resultText(sdk), /"n":1\.5,/);
  assert.equal(resultText(fast), `{"resultType":"complete",${WIRE_RESULT.slice(1)}`);
  // The same answer either way, resultType and all.
  const expected = { resultType: "complete", ...JSON.parse(WIRE_RESULT) };
  assert.deepEqual(JSON.parse(sdk), { jsonrpc: "2.0", id: 1, result: expected });
  assert.deepEqual(JSON.parse(fast), { jsonrpc: "2.0", id: 2, result: expected });
  // call_tool's result is the downstream's too: the fast path, with resultType.
  await host.send({
    jsonrpc: "2.0",
    id: 3,
    method: "tools/call",
    params: { name: "call_tool", arguments: { tool: "wire__wire", arguments: {} }, _meta: META },
  });
  assert.equal(resultText(await host.answer(3)), `{"resultType":"complete",${WIRE_RESULT.slice(1)}`);
});

Deno.test("a legacy host on the same fast path: the bytes as the server sent them, no resultType", async () => {
  await using dir = await tempDir();
  const path = await writeConfig(dir.path, wireConfig());
  await using host = await rawGatewaySession(path, `${dir.path}/store.db`);
  await host.send({
    jsonrpc: "2.0",
    id: 7,
    method: "tools/call",
    params: { name: "wire__wire", arguments: {} },
  });
  assert.equal(resultText(await host.answer(7)), WIRE_RESULT);
});

Deno.test("the v2 client pinned to 2026-07-28: resultType on every result on the wire, results as direct", async () => {
  await using dir = await tempDir();
  const path = await writeConfig(dir.path, wireConfig());
  const transport = new ModernStdio({
    command: DENO,
    args: ["run", "-A", `${ROOT}main.ts`, "--config", path, "--db", `${dir.path}/store.db`, "mcp", "serve"],
    env: Deno.env.toObject(),
    stderr: "ignore",
  });
  const host = new ModernClient(
    { name: "modern-host", version: "2.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await host.connect(transport);
  const direct = await connectDirect(DENO, ["run", "-A", HOSTILE, "--mode", "wire"]);
  try {
    const raw: { id?: unknown; method?: string; result?: Record<string, unknown> }[] = [];
    const onmessage = transport.onmessage!;
    transport.onmessage = (message) => {
      raw.push(structuredClone(message) as (typeof raw)[number]);
      onmessage(message);
    };
    await host.listTools();
    const results = [];
    for (let i = 0; i < 3; i++) results.push(await host.callTool({ name: "wire__wire", arguments: {} }));
    const straight = await direct.callTool({ name: "wire", arguments: {} });
    for (const result of results) assert.deepEqual(result, straight);
    const answers = raw.filter((m) => m.method === undefined && m.result);
    assert.equal(answers.length, 4);
    for (const answer of answers) assert.equal(answer.result!.resultType, "complete", JSON.stringify(answer));
  } finally {
    await host.close().catch(() => {});
    await direct.close();
  }
});
