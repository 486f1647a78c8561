/**
 * Remote downstreams: server-everything over Streamable HTTP and over the
 * older HTTP+SSE transport, including the fallback from http to SSE.
 */
import assert from "node:assert/strict";
import {
  connectGateway,
  q,
  serversReady,
  startRemote,
  stderrMatches,
  tempDir,
  writeConfig,
} from "../helpers.ts";

Deno.test("remote servers over Streamable HTTP, SSE, and http falling back to SSE", async () => {
  await using dir = await tempDir();
  await using http = await startRemote("streamableHttp");
  await using sse = await startRemote("sse");
  const config = await writeConfig(
    dir.path,
    `servers:
  web:
    url: ${q(`http://127.0.0.1:${http.port}/mcp`)}
    headers:
      X-Test-Token: not-a-real-token
  old:
    url: ${q(`http://127.0.0.1:${sse.port}/sse`)}
    transport: sse
  guess:
    # transport defaults to http; this server speaks only SSE, so the gateway falls back
    url: ${q(`http://127.0.0.1:${sse.port}/sse`)}
`,
  );
  await using gw = await connectGateway(config);
  const servers = await serversReady(gw.client);
  assert.deepEqual(
    servers.map((s) => [s.name, s.state, s.error]),
    [["web", "connected", undefined], ["old", "connected", undefined], ["guess", "connected", undefined]],
  );
  for (const server of ["web", "old", "guess"]) {
    const r = await gw.client.callTool({ name: `${server}__echo`, arguments: { message: `via ${server}` } });
    assert.deepEqual(r.content, [{ type: "text", text: `Echo: via ${server}` }]);
  }
  // Logged on stderr, a pipe of its own: awaited, not assumed there by the time the calls answered.
  await stderrMatches(gw, /server "guess": Streamable HTTP failed, connected over SSE/);
});
