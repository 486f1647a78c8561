/**
 * Redaction of what a remote server's HTTP answer echoes (issue 41): a password in `url:` userinfo (and
 * its `Authorization: Basic` form) and a bearer token we send are secrets; an HTTP 500 body that echoes
 * them reaches neither the host's error text, nor `list_servers`, nor the gateway's log.
 */
import assert from "node:assert/strict";
import { connectGateway, q, tempDir, writeConfig } from "../helpers.ts";

const PASSWORD = "userinfo-pass-4711";
const TOKEN = "bearer-token-0123456789abcdef";

/** A minimal Streamable HTTP server: initialize and tools/list answered; tools/call a 500 echoing the request's headers. */
function remote(): { port: number; seen: string[]; close(): Promise<void> } {
  const seen: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (request) => {
    if (request.method !== "POST") return new Response(null, { status: 405 });
    const message = await request.json();
    const headers = [...request.headers].map(([k, v]) => `${k}: ${v}`).join("; ");
    seen.push(headers);
    const json = (result: unknown) =>
      new Response(JSON.stringify({ jsonrpc: "2.0", id: message.id, result }), {
        headers: { "content-type": "application/json", "mcp-session-id": "s1" },
      });
    switch (message.method) {
      case "initialize":
        return json({
          protocolVersion: message.params.protocolVersion,
          capabilities: { tools: {} },
          serverInfo: { name: "echoer", version: "1" },
        });
      case "tools/list":
        return json({ tools: [{ name: "leak", inputSchema: { type: "object" } }] });
      case "tools/call":
        return new Response(`internal error; your request was: ${headers}`, { status: 500 });
      default:
        return new Response(null, { status: 202 });
    }
  });
  return { port: (server.addr as Deno.NetAddr).port, seen, close: () => server.shutdown() };
}

Deno.test("an HTTP 500 body echoing the userinfo password, its Basic form and our bearer token is scrubbed", async () => {
  await using dir = await tempDir();
  const server = remote();
  try {
    const config = await writeConfig(
      dir.path,
      `servers:
  basic:
    url: http://alice:\${PASS}@127.0.0.1:${server.port}/mcp
  bearer:
    url: http://127.0.0.1:${server.port}/mcp
    headers: { Authorization: ${q("Bearer ${TOK}")} }
`,
    );
    await using gw = await connectGateway(config, { env: { PASS: PASSWORD, TOK: TOKEN }, allowAll: true });
    const basic = btoa(`alice:${PASSWORD}`);
    const texts: string[] = [];
    for (const name of ["basic__leak", "bearer__leak"]) {
      const outcome = await gw.client.callTool({ name, arguments: {} }).then(
        (result) => JSON.stringify(result),
        (error: Error) => error.message,
      );
      texts.push(outcome);
    }
    // The secrets did go out (so the test can fail): the remote saw them.
    const sent = server.seen.join("\n");
    assert.ok(sent.includes(TOKEN), "the bearer token was sent");
    assert.ok(sent.includes(basic) || sent.includes(PASSWORD), `the userinfo was sent: ${sent}`);
    assert.match(texts.join("\n"), /internal error/);
    const listed = JSON.stringify(await gw.client.callTool({ name: "list_servers", arguments: {} }));
    for (const text of [...texts, listed, gw.stderr()]) {
      for (const secret of [PASSWORD, basic, TOKEN]) {
        assert.ok(!text.includes(secret), `${secret} leaked in: ${text.slice(0, 2000)}`);
      }
    }
  } finally {
    await server.close();
  }
});
