/**
 * A server that serves only MCP 2026-07-28 (tests/fixtures/modern_server.ts: the v2 server package,
 * `legacy: 'reject'`) behind mcphub, beside a legacy one: the gateway's downstream connection becomes
 * modern at the server's refusal of the 2025 opening, and a v1 host lists and calls its tools. A server
 * that refuses every revision mcphub speaks is named for what it is in list_servers.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client";
// @ts-types="@modelcontextprotocol/sdk/types"
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import {
  connectGateway,
  DENO,
  FIXTURE,
  q,
  ROOT,
  structured,
  tempDir,
  until,
  writeConfig,
} from "../helpers.ts";

const MODERN = `${ROOT}tests/fixtures/modern_server.ts`;

const text = (result: unknown) =>
  (result as { content: { text: string }[] }).content.map((c) => c.text).join("");

interface ServerRow {
  name: string;
  state: string;
  error?: string;
  tools?: number;
}

async function servers(client: Client) {
  const result = await client.callTool({ name: "list_servers", arguments: {} });
  return structured<{ servers: ServerRow[] }>(result).servers;
}

Deno.test("a 2026-07-28-only server behind mcphub: listed and called by a v1 host, beside a legacy one", async () => {
  await using dir = await tempDir();
  const path = await writeConfig(
    dir.path,
    `servers:
  modern:
    command: ${q(DENO)}
    args: [run, -A, ${q(MODERN)}]
  legacy:
    command: ${q(DENO)}
    args: [run, -A, ${q(FIXTURE)}]
`,
  );
  // A v1 host offering elicitation: the modern server's input_required reaches it as elicitation/create.
  const host = new Client({ name: "host", version: "1.0.0" }, {
    capabilities: { elicitation: { form: {} } },
  });
  const asked: unknown[] = [];
  host.setRequestHandler(ElicitRequestSchema, (request) => {
    asked.push(request.params);
    return { action: "accept" as const, content: { name: "Ada" } };
  });
  await using gw = await connectGateway(path, { allowAll: true, client: host });
  const g = gw.client;
  const names = (await g.listTools()).tools.map((t) => t.name);
  assert.deepEqual(names.filter((n) => n.startsWith("modern__")), [
    "modern__echo",
    "modern__add",
    "modern__ask",
  ]);
  assert.ok(names.includes("legacy__echo"));
  assert.equal(text(await g.callTool({ name: "modern__add", arguments: { a: 2, b: 40 } })), "42");
  assert.equal(text(await g.callTool({ name: "modern__echo", arguments: { text: "héllo" } })), "héllo");
  // Through call_tool too (the hub's own call path).
  const viaMeta = await g.callTool({
    name: "call_tool",
    arguments: { tool: "modern__echo", arguments: { text: "meta" } },
  });
  assert.equal(text(viaMeta), "meta");
  assert.equal(text(await g.callTool({ name: "legacy__echo", arguments: { text: "old" } })), "old");
  const rows = await servers(g);
  assert.deepEqual(
    rows.map((r) => [r.name, r.state]).sort(),
    [["legacy", "connected"], ["modern", "connected"]],
  );
  // MRTR: one round of input, then the answer; the host saw the server's question as asked.
  assert.equal(
    text(await g.callTool({ name: "modern__ask", arguments: { question: "Who?" } })),
    "answer: Ada",
  );
  assert.equal(asked.length, 1);
  const params = asked[0] as { message: string; requestedSchema: { properties: object } };
  assert.equal(params.message, "Who?");
  assert.deepEqual(Object.keys(params.requestedSchema.properties), ["name"]);
  // Again through call_tool, and twice at once (each call's rounds its own).
  const both = await Promise.all([
    g.callTool({ name: "call_tool", arguments: { tool: "modern__ask", arguments: { question: "A?" } } }),
    g.callTool({ name: "modern__ask", arguments: { question: "B?" } }),
  ]);
  assert.deepEqual(both.map(text), ["answer: Ada", "answer: Ada"]);
  // A tool's argument error comes back from the modern server as it does from any.
  const bad = await g.callTool({ name: "modern__add", arguments: { a: "x" } }) as { isError?: boolean };
  assert.equal(bad.isError, true);
});

Deno.test("MRTR to a host without elicitation: the call ends with the server's error, the server stays up", async () => {
  await using dir = await tempDir();
  const path = await writeConfig(
    dir.path,
    `servers:\n  modern:\n    command: ${q(DENO)}\n    args: [run, -A, ${q(MODERN)}]\n`,
  );
  await using gw = await connectGateway(path, { allowAll: true });
  const g = gw.client;
  const failed = await g.callTool({ name: "modern__ask", arguments: { question: "Who?" } }).then(
    (r) => JSON.stringify(r),
    (e) => String(e),
  );
  // The downstream session declared no elicitation (its host offers none): the server refuses, as directly.
  assert.match(failed, /-32021: Cannot request input 'who' \(elicitation\/create\)/);
  assert.equal(text(await g.callTool({ name: "modern__add", arguments: { a: 1, b: 1 } })), "2");
});

Deno.test("a server refusing every revision mcphub speaks: list_servers names the refusal", async () => {
  await using dir = await tempDir();
  const refuser = `${dir.path}/refuser.ts`;
  // Answers initialize with -32022 naming only a revision nobody speaks, then exits (as some SDKs do).
  await Deno.writeTextFile(
    refuser,
    `const reader = Deno.stdin.readable.pipeThrough(new TextDecoderStream()).getReader();
let buffered = "";
for (;;) {
  const { value, done } = await reader.read();
  if (done) break;
  buffered += value;
  const at = buffered.indexOf("\\n");
  if (at < 0) continue;
  const message = JSON.parse(buffered.slice(0, at));
  const error = { code: -32022, message: "Unsupported protocol version", data: { supported: ["2099-01-01"], requested: message.params.protocolVersion } };
  await Deno.stdout.write(new TextEncoder().encode(JSON.stringify({ jsonrpc: "2.0", id: message.id, error }) + "\\n"));
  Deno.exit(0);
}
`,
  );
  const path = await writeConfig(
    dir.path,
    `servers:\n  future:\n    command: ${q(DENO)}\n    args: [run, -A, ${q(refuser)}]\n`,
  );
  await using gw = await connectGateway(path, { allowAll: true });
  // A permanent failure: no restarts.
  const row = await until("the refusal", async () => {
    const [r] = await servers(gw.client);
    return r!.state === "failed" ? r : undefined;
  });
  assert.equal(row!.name, "future");
  assert.match(row!.error!, /refused MCP 2025-11-25 \(-32022 unsupported protocol version\)/);
  assert.match(row!.error!, /supports only 2099-01-01/);
  assert.doesNotMatch(row!.error!, /exited during start-up/);
});
