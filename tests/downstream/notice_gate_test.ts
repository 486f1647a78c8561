/**
 * The notification gate of a downstream connection (src/downstream/notice_gate.ts): progress for tokens nobody
 * waits on is reported and dropped before the SDK, repeated list_changed within a turn are dropped; what
 * the SDK's client waits on still reaches it. Unit cases, then a real transport with the SDK's client
 * against the hostile fixture's storms and server-everything's progress.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { NoticeGate } from "../../src/downstream/notice_gate.ts";
import { StdioClientTransport } from "../../src/downstream/stdio.ts";
import { DENO, HOSTILE, REAL, until } from "../helpers.ts";

const progress = (token: unknown) => ({
  jsonrpc: "2.0",
  method: "notifications/progress",
  params: { progressToken: token, progress: 1 },
});
const turn = () => new Promise((resolve) => setTimeout(resolve, 0));

Deno.test("NoticeGate: progress reaches the client while its request waits, then is reported and dropped", () => {
  const gate = new NoticeGate();
  const line = JSON.stringify(progress(7));
  const unknown = gate.admits(progress(7), line);
  assert.ok(unknown instanceof Error);
  assert.equal(unknown.message, `Received a progress notification for an unknown token: ${line}`);
  assert.equal(unknown.stack, undefined);

  gate.sent({
    jsonrpc: "2.0",
    id: 7,
    method: "tools/call",
    params: { name: "x", _meta: { progressToken: 7 } },
  });
  assert.equal(gate.admits(progress(7), line), true);
  // The SDK keys handlers by Number(token): "7" is the same request's.
  assert.equal(gate.admits(progress("7"), ""), true);
  // A request without a token, and notifications, change nothing.
  gate.sent({ jsonrpc: "2.0", id: 8, method: "tools/list" });
  gate.delivered({ jsonrpc: "2.0", id: 8, result: {} });
  gate.delivered({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: 1 } });
  assert.equal(gate.admits(progress(7), line), true);

  gate.delivered({ jsonrpc: "2.0", id: 7, result: { content: [] } });
  assert.ok(gate.admits(progress(7), line) instanceof Error);
  // Tokens the SDK would not read as its own go on as before (the SDK reports them itself).
  assert.equal(gate.admits(progress({ x: 1 }), ""), true);
  assert.equal(gate.admits({ jsonrpc: "2.0", method: "notifications/progress" }, ""), true);
});

Deno.test("NoticeGate: a task's answer keeps its progress going; an error answer ends it", () => {
  const gate = new NoticeGate();
  const call = (id: number) => ({
    jsonrpc: "2.0" as const,
    id,
    method: "tools/call",
    params: { name: "x", _meta: { progressToken: id } },
  });
  gate.sent(call(1));
  gate.sent(call(2));
  gate.delivered({ jsonrpc: "2.0", id: 1, result: { task: { taskId: "t1", status: "working" } } });
  gate.delivered({ jsonrpc: "2.0", id: 2, error: { code: -32603, message: "no" } });
  assert.equal(gate.admits(progress(1), ""), true);
  assert.ok(gate.admits(progress(2), "") instanceof Error);
});

Deno.test("NoticeGate: list_changed repeated within a turn is dropped, each kind on its own", async () => {
  const gate = new NoticeGate();
  const changed = (kind: string) => ({ jsonrpc: "2.0", method: `notifications/${kind}/list_changed` });
  assert.equal(gate.admits(changed("tools"), ""), true);
  assert.equal(gate.admits(changed("tools"), ""), false);
  assert.equal(gate.admits(changed("resources"), ""), true);
  assert.equal(gate.admits(changed("prompts"), ""), true);
  assert.equal(gate.admits(changed("prompts"), ""), false);
  // Requests and answers are never the gate's.
  assert.equal(gate.admits({ jsonrpc: "2.0", id: 1, method: "notifications/tools/list_changed" }, ""), true);
  await turn();
  assert.equal(gate.admits(changed("tools"), ""), true);
  assert.equal(gate.admits(changed("tools"), ""), false);
});

async function hostileClient(mode: string, count: number) {
  const transport = new StdioClientTransport({
    command: DENO,
    args: ["run", "-A", HOSTILE, "--mode", mode, "--count", String(count)],
    env: {},
  });
  const client = new Client({ name: "t", version: "1" });
  const errors: string[] = [];
  client.onerror = (error) => errors.push(error.message);
  await client.connect(transport);
  return { client, errors, [Symbol.asyncDispose]: () => client.close() };
}

Deno.test("a storm of progress for unknown tokens: every one reported with the SDK's words, nothing else", async () => {
  await using h = await hostileClient("noise", 2000);
  await h.client.listTools();
  await until("2,000 reports", () => Promise.resolve(h.errors.length >= 2000 ? true : undefined));
  assert.equal(h.errors.length, 2000);
  assert.equal(
    h.errors[1999],
    'Received a progress notification for an unknown token: {"jsonrpc":"2.0","method":"notifications/progress",' +
      '"params":{"progressToken":"nope-1999","progress":1999}}',
  );
  assert.ok(h.errors.every((e) => e.startsWith("Received a progress notification for an unknown token: ")));
  // The connection is healthy after it.
  assert.equal((await h.client.listTools()).tools.length > 0, true);
});

Deno.test("a storm of list_changed reaches the client's handler a few times, not 20,000", async () => {
  await using h = await hostileClient("storm", 20_000);
  let seen = 0;
  h.client.setNotificationHandler(ToolListChangedNotificationSchema, () => void seen++);
  await h.client.listTools();
  // The storm is written right after the answer; an answer after it proves it was all read.
  await h.client.listTools();
  await turn();
  assert.ok(seen >= 1 && seen <= 40, `list_changed delivered ${seen} times`);
  assert.deepEqual(h.errors, []);
});

Deno.test("progress of a call made through the SDK's client still reaches it (server-everything)", async () => {
  const transport = new StdioClientTransport({
    command: "node",
    args: [REAL.everything],
    env: Deno.env.toObject(),
  });
  const client = new Client({ name: "t", version: "1" });
  const errors: string[] = [];
  client.onerror = (error) => errors.push(error.message);
  await client.connect(transport);
  try {
    const seen: number[] = [];
    const result = await client.callTool(
      { name: "trigger-long-running-operation", arguments: { duration: 0.3, steps: 3 } },
      undefined,
      { onprogress: (p) => seen.push(p.progress) },
    );
    assert.match(JSON.stringify(result.content), /Long running operation completed/);
    assert.deepEqual(seen.slice(0, 2), [1, 2]);
    assert.deepEqual(errors, []);
  } finally {
    await client.close();
  }
});
