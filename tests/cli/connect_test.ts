/**
 * `mcp connect`: to an address where nothing listens it names the address and the likely cause; a
 * 2026-07-28 host through it reaches the listener with the revision's headers.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { Client as ModernClient } from "npm:@modelcontextprotocol/client@2.4.0";
import { StdioClientTransport as ModernStdio } from "npm:@modelcontextprotocol/client@2.4.0/stdio";
import { DENO, q, ROOT, sandbox, sandboxSync, tempDir, writeConfig } from "../helpers.ts";
import { startListener } from "../http/http_helpers.ts";
import { unreachable } from "../../src/http/bridge.ts";

Deno.test("mcp connect to a dead port: the host's initialize fails naming the address and the cause", async () => {
  const closed = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (closed.addr as Deno.NetAddr).port;
  closed.close();
  const url = `http://127.0.0.1:${port}/mcp`;
  const transport = new StdioClientTransport({
    command: DENO,
    args: ["run", "-A", `${ROOT}main.ts`, "mcp", "connect", url],
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Uint8Array) => stderr += new TextDecoder().decode(chunk));
  const client = new Client({ name: "host", version: "1.0.0" });
  const expected = `nothing listens at ${url} (connection refused): is the gateway running? Start it with ` +
    `mcphub mcp serve --listen 127.0.0.1:${port}, or check the URL's host and port`;
  try {
    await assert.rejects(client.connect(transport), (error: Error) => {
      assert.equal(error.message, `MCP error -32603: ${expected}`);
      return true;
    });
  } finally {
    await client.close();
  }
  assert.match(stderr, new RegExp(`mcphub: mcp connect: ${expected.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
  assert.doesNotMatch(stderr, /fetch failed/);
});

Deno.test("unreachable(): refused, unresolvable, or undefined for other errors", () => {
  const url = new URL("http://gw.example:8080/mcp");
  const refused = new TypeError("fetch failed", {
    cause: new Error("error sending request: tcp connect error: Connection refused (os error 111)"),
  });
  assert.match(
    unreachable(refused, url)!,
    /^nothing listens at http:\/\/gw\.example:8080\/mcp \(connection refused\)/,
  );
  const dns = new TypeError("fetch failed", {
    cause: new Error("dns error: failed to lookup address information"),
  });
  assert.equal(
    unreachable(dns, url),
    "cannot resolve gw.example (http://gw.example:8080/mcp): check the URL's host name",
  );
  assert.equal(unreachable(new Error("HTTP 500"), url), undefined);
});

Deno.test("mcp connect carries a 2026-07-28 host (the v2 client pinned, on stdio) to the listener: what it sends with no session gets the revision's headers", async () => {
  await using dir = await tempDir();
  const path = await writeConfig(
    dir.path,
    `servers:\n  modern:\n    command: ${q(DENO)}\n    args: [run, -A, ${
      q(`${ROOT}tests/fixtures/modern_server.ts`)
    }, --route]\n`,
  );
  await using listener = await startListener(path);
  const box = sandboxSync();
  const client = new ModernClient(
    { name: "bridged", version: "2.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  const transport = new ModernStdio({
    command: DENO,
    args: ["run", "-A", `${ROOT}main.ts`, "mcp", "connect", listener.url],
    env: box.env,
    stderr: "pipe",
  });
  let stderr = "";
  const ended = Promise.withResolvers<void>();
  transport.stderr?.on("data", (chunk: Uint8Array) => stderr += new TextDecoder().decode(chunk));
  transport.stderr?.on("close", () => ended.resolve());
  try {
    await client.connect(transport);
    const text = (result: unknown) => (result as { content: { text: string }[] }).content[0]!.text;
    assert.ok((await client.listTools()).tools.some((t) => t.name === "modern__route"));
    // Mcp-Method / Mcp-Name, and the Mcp-Param-* headers the tool declares (a value that needs base64).
    const args = { region: "Zürich", count: 3 };
    assert.deepEqual(
      JSON.parse(text(await client.callTool({ name: "modern__route", arguments: args }))),
      args,
    );
    assert.equal(
      text(await client.callTool({ name: "modern__echo", arguments: { text: "bridged" } })),
      "bridged",
    );
  } finally {
    await client.close().catch(() => {});
    await box[Symbol.asyncDispose]();
  }
  // Passed unchanged (no 2025 session made up for it, nothing refused): the bridge logged nothing.
  await ended.promise;
  assert.equal(stderr, "");
});

Deno.test("mcp connect: a host's notifications/initialized sent right behind its initialize (before the answer) goes in the session", async () => {
  await using dir = await tempDir();
  const path = await writeConfig(
    dir.path,
    `servers:\n  modern:\n    command: ${q(DENO)}\n    args: [run, -A, ${
      q(`${ROOT}tests/fixtures/modern_server.ts`)
    }]\n`,
  );
  await using listener = await startListener(path);
  await using box = await sandbox();
  const child = new Deno.Command(DENO, {
    args: ["run", "-A", `${ROOT}main.ts`, "mcp", "connect", listener.url],
    env: box.env,
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  const writer = child.stdin.getWriter();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  const answer = async (id: number) => {
    for (;;) {
      for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
        const message = JSON.parse(buffer.slice(0, nl));
        buffer = buffer.slice(nl + 1);
        if (message.id === id) return message;
      }
      const { value, done } = await lines.read();
      if (done) throw new Error(`the bridge closed before answering ${id}`);
      buffer += value;
    }
  };
  try {
    // One write, as a host that does not wait for the initialize's answer sends them.
    const initialize = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "eager", version: "1" },
      },
    };
    await writer.write(new TextEncoder().encode(
      `${JSON.stringify(initialize)}\n${
        JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })
      }\n`,
    ));
    assert.equal((await answer(1)).result.protocolVersion, "2025-11-25");
    await writer.write(
      new TextEncoder().encode(
        `${JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list", params: {} })}\n`,
      ),
    );
    assert.ok((await answer(2)).result.tools.some((t: { name: string }) => t.name === "modern__echo"));
  } finally {
    await writer.close().catch(() => {});
    await lines.cancel().catch(() => {});
    await child.status;
  }
  // Everything the bridge logged is in once it exited: the notification was not refused.
  const logged = await stderr;
  assert.doesNotMatch(logged, /mcp connect:/);
  assert.doesNotMatch(logged, /not initialized/i);
});
