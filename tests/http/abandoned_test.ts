/**
 * An abandoned call (issue 41): a host that drops its connection while a call runs, without cancelling,
 * leaves a session with no stream open; after `session_idle` the session is ended, its call cancelled
 * downstream, and another session's sampling on that server is relayed again.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CreateMessageRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { parseConfig } from "../../src/config/mod.ts";
import { listen } from "../../src/http/mod.ts";
import { DENO, FIXTURE, q, tempDir, until } from "../helpers.ts";
import { INITIALIZE } from "./http_helpers.ts";

const HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

Deno.test("a call whose host went away is cancelled when its session idles out; other sessions' sampling flows again", async () => {
  await using dir = await tempDir();
  // session_idle 5 s: the session must outlive the gaps between this host's own requests (a gap of over
  // 1 s between initialized and the call ended it with a 404 on a loaded machine); its end is awaited below.
  const config = parseConfig(
    `session_idle: 5s\nservers:\n  fx:\n    command: ${q(DENO)}\n    args: [run, -A, ${
      q(FIXTURE)
    }, --state, ${q(dir.path)}]\n`,
    `${dir.path}/mcphub.yaml`,
    { env: { get: (key) => Deno.env.get(key) }, cwd: dir.path },
  );
  const lines: string[] = [];
  const listener = await listen({
    config,
    env: Deno.env.toObject(),
    tokenEnv: { get: () => undefined },
    version: "test",
    log: (line) => lines.push(line),
    address: { hostname: "127.0.0.1", port: 0 },
    storePath: `${dir.path}/store.db`,
    drainMs: 200,
  });
  try {
    const url = `${listener.origin}/mcp`;
    // Host A: initialize, then a long call whose stream it drops without a cancellation.
    const init = await fetch(url, { method: "POST", headers: HEADERS, body: INITIALIZE });
    const session = init.headers.get("mcp-session-id")!;
    await init.body?.cancel();
    const headers = { ...HEADERS, "mcp-session-id": session, "mcp-protocol-version": "2025-06-18" };
    const note = await fetch(url, {
      method: "POST",
      headers,
      body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
    });
    await note.body?.cancel();
    const abort = new AbortController();
    const call = await fetch(url, {
      method: "POST",
      headers,
      signal: abort.signal,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "fx__wait", arguments: { ms: 120_000 } },
      }),
    });
    assert.equal(call.status, 200);
    // Drop the stream only once the call runs downstream: the 200 comes before the call is sent there, and
    // a call still waiting for a slow-starting server when the session idles out is never sent at all.
    const marker = (name: string) => () =>
      Deno.stat(`${dir.path}/${name}`).then(() => true as const, () => undefined);
    await until("the call running downstream", marker("calls-wait"));
    abort.abort();
    await call.body?.cancel().catch(() => {});
    // Ended after session_idle, its call cancelled downstream.
    await until("the abandoned call cancelled", marker("cancelled"));
    assert.ok(lines.some((line) => /session [0-9a-f]{8} ended: idle/.test(line)), lines.join("\n"));

    // Host B: its server's sampling request reaches it.
    const client = new Client({ name: "b", version: "1.0.0" }, { capabilities: { sampling: {} } });
    client.setRequestHandler(CreateMessageRequestSchema, () => ({
      model: "m",
      role: "assistant" as const,
      content: { type: "text" as const, text: "from b" },
    }));
    const transport = new StreamableHTTPClientTransport(new URL(url));
    await client.connect(transport);
    try {
      const result = await client.callTool({ name: "fx__sample", arguments: { timeout_ms: 10_000 } });
      assert.match(JSON.stringify(result.content), /sampled: .*from b/);
    } finally {
      await transport.terminateSession().catch(() => {});
      await client.close();
    }
  } finally {
    await listener.stop();
  }
});
