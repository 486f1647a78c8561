/**
 * A tool with an `outputSchema` takes the fast path: its result reaches the host as the bytes the
 * downstream sent, after the gateway made the SDK client's own check of `structuredContent` (same
 * validator, same errors); over budget it is stored from those bytes. A tool that requires task-based
 * execution keeps the SDK path (whose client refuses the call).
 */
import assert from "node:assert/strict";
import {
  connectDirect,
  connectGateway,
  DENO,
  FIXTURE,
  HOSTILE,
  pageAll,
  q,
  rawGatewaySession,
  rawSession,
  REAL,
  structured,
  tempDir,
  writeConfig,
} from "../helpers.ts";
import { RawBytes, scan } from "../../src/json/raw_json.ts";

const FIXTURE_ARGS = ["run", "-A", FIXTURE, "--output-schema"];
/** A copy of the hostile fixture's WIRE_STRUCTURED: the bytes tool `wire_structured` answers. */
const WIRE_STRUCTURED =
  '{ "structuredContent" : {"n": 1.50, "s":"caf\\u00e9"}, "content":[ {"type":"text","text":"x"} ] }';

/** A raw session (see tests/helpers.ts) that also reads a tools/call answer's `result` as its bytes. */
async function rawCaller(opened: ReturnType<typeof rawSession>) {
  const session = await opened;
  return {
    ...session,
    /** The `result` value of a tools/call answer as the bytes that came (text), or the error's JSON. */
    async call(name: string, args: Record<string, unknown>): Promise<string> {
      const line = await session.request("tools/call", { name, arguments: args });
      const raw = new RawBytes([new TextEncoder().encode(line)]);
      const span = scan(raw)!.members.find((m) => m.key === "result" || m.key === "error")!;
      return `${span.key}:${raw.text(span.start, span.end)}`;
    },
  };
}

function gatewaySession(config: string, db: string) {
  return rawCaller(rawGatewaySession(config, db));
}

function fixtureConfig(extra = "", fixtureArgs: string[] = FIXTURE_ARGS): string {
  return `${extra}servers:
  fx:
    command: ${q(DENO)}
    args: ${JSON.stringify(fixtureArgs)}
  everything:
    command: node
    args: [${q(REAL.everything)}]
`;
}

Deno.test("a structured result is relayed as it was written (spacing, key order, escapes), not re-serialised", async () => {
  await using dir = await tempDir();
  const config = await writeConfig(
    dir.path,
    `servers:\n  wire:\n    command: ${q(DENO)}\n    args: ${
      JSON.stringify(["run", "-A", HOSTILE, "--mode", "wire"])
    }\n`,
  );
  await using gw = await gatewaySession(config, `${dir.path}/store.db`);
  assert.equal(await gw.call("wire__wire_structured", {}), `result:${WIRE_STRUCTURED}`);
  // structuredContent that is not an object: the SDK's parse of the result refuses it, as before.
  const refused = await gw.call("wire__wire_null", {});
  assert.equal(
    refused,
    String
      .raw`error:{"code":-32603,"message":"[\n  {\n    \"expected\": \"record\",\n    \"code\": \"invalid_type\",\n    \"path\": [\n      \"structuredContent\"\n    ],\n    \"message\": \"Invalid input: expected record, received null\"\n  }\n]"}`,
  );
  assert.equal(await gw.call("wire__ok", {}), 'result:{"content":[{"type":"text","text":"ok"}]}');
});

const CASES: [server: string, tool: string, args: Record<string, unknown>][] = [
  ["fx", "structured", { mode: "valid" }],
  ["fx", "structured", { mode: "error" }],
  ["fx", "big", { bytes: 100 }],
  ["everything", "get-structured-content", { location: "Chicago" }],
  ["everything", "get-structured-content", { location: "New York" }],
];

Deno.test("a result of a tool with an outputSchema reaches the host as the bytes the downstream sent", async () => {
  await using dir = await tempDir();
  const config = await writeConfig(dir.path, fixtureConfig());
  await using gw = await gatewaySession(config, `${dir.path}/store.db`);
  await using fx = await rawCaller(rawSession(DENO, FIXTURE_ARGS));
  await using everything = await rawCaller(rawSession("node", [REAL.everything]));
  const direct = { fx, everything };
  for (const [server, tool, args] of CASES) {
    const want = await direct[server as keyof typeof direct].call(tool, args);
    assert.ok(want.startsWith("result:"), want);
    assert.equal(await gw.call(`${server}__${tool}`, args), want, `${server} ${tool}`);
  }
});

Deno.test("through the SDK client, results of tools with an outputSchema equal a direct call's", async () => {
  await using dir = await tempDir();
  await using gw = await connectGateway(await writeConfig(dir.path, fixtureConfig()), { allowAll: true });
  const fx = await connectDirect(DENO, FIXTURE_ARGS);
  const everything = await connectDirect("node", [REAL.everything]);
  try {
    await fx.listTools();
    await everything.listTools();
    await gw.client.listTools();
    const direct = { fx, everything };
    for (const [server, tool, args] of CASES) {
      const want = await direct[server as keyof typeof direct].callTool({ name: tool, arguments: args });
      assert.deepEqual(await gw.client.callTool({ name: `${server}__${tool}`, arguments: args }), want);
    }
  } finally {
    await fx.close();
    await everything.close();
  }
});

/** The JSON-RPC errors the SDK path gave before this fast path (the SDK client's own texts and codes). */
const INVALID =
  `error:{"code":-32602,"message":"Structured content does not match the tool's output schema: data/n must be integer"}`;
const MISSING =
  `error:{"code":-32600,"message":"Tool structured has an output schema but did not return structured content"}`;

Deno.test("invalid or missing structuredContent is the same error as on the SDK path; the server stays usable", async (t) => {
  await using dir = await tempDir();
  for (const budget of ["", "response_budget: 4096\n"]) {
    await t.step(budget ? "over the budget" : "under the budget", async () => {
      const config = await writeConfig(dir.path, fixtureConfig(budget), `c${budget.length}.yaml`);
      await using gw = await gatewaySession(config, `${dir.path}/store${budget.length}.db`);
      // 3 MB: past 1 MiB and the budget, written into the spool as it arrives, then discarded.
      const bytes = budget ? 3 * 1024 * 1024 : 10;
      assert.equal(await gw.call("fx__structured", { mode: "invalid", bytes }), INVALID);
      assert.equal(await gw.call("fx__structured", { mode: "missing" }), MISSING);
      const ok = await gw.call("fx__structured", { mode: "valid" });
      assert.ok(
        ok.startsWith('result:{"content":[{"type":"text","text":"{\\"n\\":1}"}],"structuredContent":'),
        ok,
      );
    });
  }
  // The direct SDK client refuses both with the same texts.
  const direct = await connectDirect(DENO, FIXTURE_ARGS);
  try {
    await direct.listTools();
    await assert.rejects(direct.callTool({ name: "structured", arguments: { mode: "invalid" } }), {
      code: -32602,
      message: `MCP error -32602: ${JSON.parse(INVALID.slice(6)).message}`,
    });
    await assert.rejects(direct.callTool({ name: "structured", arguments: { mode: "missing" } }), {
      code: -32600,
      message: `MCP error -32600: ${JSON.parse(MISSING.slice(6)).message}`,
    });
  } finally {
    await direct.close();
  }
});

Deno.test("a tool that requires task-based execution keeps the SDK path: refused, never sent", async () => {
  await using dir = await tempDir();
  const state = `${dir.path}/state`;
  await Deno.mkdir(state);
  const config = await writeConfig(dir.path, fixtureConfig("", [...FIXTURE_ARGS, "--state", state]));
  await using gw = await gatewaySession(config, `${dir.path}/store.db`);
  assert.equal(
    await gw.call("fx__structured_task", {}),
    `error:{"code":-32600,"message":"Tool \\"structured_task\\" requires task-based execution. ` +
      `Use client.experimental.tasks.callToolStream() instead."}`,
  );
  await gw.call("fx__structured", { mode: "valid" });
  assert.equal(await Deno.readTextFile(`${state}/calls-structured`), "1");
  await assert.rejects(Deno.stat(`${state}/calls-structured_task`), Deno.errors.NotFound);
});

Deno.test("an oversized result of a tool with an outputSchema is a receipt; get_result pages the exact bytes", async () => {
  await using dir = await tempDir();
  const config = await writeConfig(dir.path, fixtureConfig("response_budget: 4096\n"));
  await using gw = await connectGateway(config, { allowAll: true });
  await using fx = await rawCaller(rawSession(DENO, FIXTURE_ARGS));
  for (const bytes of [20_000, 3 * 1024 * 1024]) {
    const args = { mode: "valid", bytes };
    const want = (await fx.call("structured", args)).slice("result:".length);
    const receipt = structured<{ status: string; callId: string; originalBytes: number }>(
      await gw.client.callTool({ name: "fx__structured", arguments: args }),
    );
    assert.equal(receipt.status, "stored");
    assert.equal(receipt.originalBytes, new TextEncoder().encode(want).length);
    const text = await pageAll(gw.client, receipt.callId);
    assert.equal(text, want, `${bytes} bytes`);
  }
});
