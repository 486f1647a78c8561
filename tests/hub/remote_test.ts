/**
 * Remote downstreams: server-everything over Streamable HTTP and over the
 * older HTTP+SSE transport, including the fallback from http to SSE.
 */
import assert from "node:assert/strict";
import { connectGateway, q, REAL, structured, tempDir, writeConfig } from "../helpers.ts";

/** Starts server-everything in a transport mode on a free loopback port; resolves once it listens. */
async function startRemote(mode: "streamableHttp" | "sse"): Promise<{ port: number } & AsyncDisposable> {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const child = new Deno.Command("node", {
    args: [REAL.everything, mode],
    env: { ...Deno.env.toObject(), PORT: String(port) },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  // It announces the port on stdout or stderr: that line is the event we wait for.
  const listening = Promise.withResolvers<void>();
  const watch = async (stream: ReadableStream<Uint8Array>) => {
    const dec = new TextDecoder();
    let text = "";
    for await (const chunk of stream) {
      text += dec.decode(chunk);
      if (text.includes(String(port))) listening.resolve();
    }
  };
  const drained = Promise.all([watch(child.stdout), watch(child.stderr)]);
  const exited = child.status.then((s) => listening.reject(new Error(`server exited: ${s.code}`)));
  await listening.promise;
  return {
    port,
    async [Symbol.asyncDispose]() {
      child.kill("SIGTERM");
      await child.status;
      await drained;
      await exited;
    },
  };
}

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
  let servers: { name: string; state: string; error?: string }[] = [];
  for (let i = 0; i < 200; i++) {
    servers = structured<{ servers: typeof servers }>(
      await gw.client.callTool({ name: "list_servers", arguments: {} }),
    ).servers;
    if (servers.every((s) => s.state !== "connecting")) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.deepEqual(
    servers.map((s) => [s.name, s.state, s.error]),
    [["web", "connected", undefined], ["old", "connected", undefined], ["guess", "connected", undefined]],
  );
  for (const server of ["web", "old", "guess"]) {
    const r = await gw.client.callTool({ name: `${server}__echo`, arguments: { message: `via ${server}` } });
    assert.deepEqual(r.content, [{ type: "text", text: `Echo: via ${server}` }]);
  }
  assert.match(gw.stderr(), /server "guess": Streamable HTTP failed, connected over SSE/);
});
