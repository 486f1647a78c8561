/**
 * MCP 2026-07-28 over HTTP (`mcp serve --listen`): the v2 client pinned and in `auto` mode lists and
 * calls with no session, alternating between two replicas on one store; the routing headers are
 * checked (-32020); the v1 client's sessions on the same endpoint are unchanged.
 */
import assert from "node:assert/strict";
import {
  Client as ModernClient,
  StreamableHTTPClientTransport,
} from "npm:@modelcontextprotocol/client@2.4.0";
import { DENO, FIXTURE, q, ROOT, structured, tempDir, writeConfig } from "../helpers.ts";
import { httpClient, startListener } from "./http_helpers.ts";
import { ModernEndpoint } from "../../src/http/modern.ts";
import type { Gateway } from "../../src/gateway/gateway.ts";

const MODERN = `${ROOT}tests/fixtures/modern_server.ts`;
const RELAY = `${ROOT}tests/fixtures/relay_server.ts`;
const text = (result: unknown) =>
  (result as { content: { text: string }[] }).content.map((c) => c.text).join("");

async function config(dir: string): Promise<string> {
  return await writeConfig(
    dir,
    `servers:
  modern:
    command: ${q(DENO)}
    args: [run, -A, ${q(MODERN)}]
  legacy:
    command: ${q(DENO)}
    args: [run, -A, ${q(FIXTURE)}]
  relay:
    command: ${q(DENO)}
    args: [run, -A, ${q(RELAY)}]
`,
  );
}

/**
 * The v2 client over HTTP whose requests go to each of `urls` in turn (a load balancer with no
 * affinity), recording each POST's origin and headers.
 */
async function modernHttp(urls: string[], mode: "auto" | { pin: string }) {
  let turn = 0;
  const seen: { origin: string; method: string | null; name: string | null; session: string | null }[] = [];
  const fetchRoundRobin = (input: string | URL | Request, init?: RequestInit) => {
    const target = new URL(urls[turn++ % urls.length]!);
    const url = new URL(input instanceof Request ? input.url : String(input));
    url.host = target.host;
    const headers = new Headers(init?.headers);
    seen.push({
      origin: url.origin,
      method: headers.get("mcp-method"),
      name: headers.get("mcp-name"),
      session: headers.get("mcp-session-id"),
    });
    return fetch(url, init);
  };
  const transport = new StreamableHTTPClientTransport(new URL(urls[0]!), { fetch: fetchRoundRobin });
  const client = new ModernClient(
    { name: "modern-http", version: "2.0.0" },
    { versionNegotiation: { mode }, capabilities: { elicitation: { form: {} } } },
  );
  client.setRequestHandler("elicitation/create", () => ({ action: "accept", content: { name: "Ada" } }));
  await client.connect(transport);
  return {
    client,
    seen,
    async [Symbol.asyncDispose]() {
      await client.close().catch(() => {});
    },
  };
}

for (const mode of [{ pin: "2026-07-28" }, "auto"] as const) {
  Deno.test(`2026-07-28 over HTTP (v2 client, ${JSON.stringify(mode)}), alternating between two replicas`, async () => {
    await using dir = await tempDir();
    const path = await config(dir.path);
    const db = `${dir.path}/shared.db`;
    await using a = await startListener(path, { db });
    await using b = await startListener(path, { db });
    await using host = await modernHttp([a.url, b.url], mode);
    const c = host.client;
    assert.equal(c.getProtocolEra(), "modern");
    const names = (await c.listTools()).tools.map((t) => t.name);
    for (const name of ["list_servers", "modern__add", "modern__ask", "legacy__echo"]) {
      assert.ok(names.includes(name), name);
    }
    for (let i = 0; i < 4; i++) {
      assert.equal(
        text(await c.callTool({ name: "modern__add", arguments: { a: i, b: 40 } })),
        String(40 + i),
      );
      assert.equal(text(await c.callTool({ name: "legacy__echo", arguments: { text: `r${i}` } })), `r${i}`);
    }
    const rows = structured<{ servers: { name: string; state: string }[] }>(
      await c.callTool({ name: "list_servers", arguments: {} }),
    ).servers;
    assert.deepEqual(
      rows.map((r) => [r.name, r.state]).sort(),
      [["legacy", "connected"], ["modern", "connected"], ["relay", "connected"]],
    );
    // Both replicas answered, with no session; the routing headers were sent (and agreed).
    const posts = host.seen.filter((s) => s.method !== null);
    assert.deepEqual([...new Set(posts.map((s) => s.origin))].sort(), [a.origin, b.origin].sort());
    assert.ok(posts.every((s) => s.session === null));
    assert.ok(posts.some((s) => s.method === "tools/call" && s.name === "modern__add"));
    // Both replicas stop cleanly on SIGTERM after serving 2026-07-28 requests (they once spun in
    // close() until out of memory).
    await c.close();
    assert.equal((await b.stop()).code, 0);
    assert.equal((await a.stop()).code, 0);
  });
}

Deno.test("a 2026-07-28 endpoint closes its gateway once, though the gateway's close closes the endpoint", async () => {
  let closes = 0;
  let endpoint: ModernEndpoint | undefined;
  // As the real gateway does: its close closes its server, which closes the transport (the endpoint).
  const gateway = {
    connect: () => Promise.resolve(),
    close: async () => {
      closes++;
      if (closes < 5) await endpoint!.close();
    },
  } as unknown as Gateway;
  endpoint = new ModernEndpoint(gateway);
  await endpoint.close();
  await endpoint.close();
  assert.equal(closes, 1);
});

Deno.test("routing headers: a mismatch is -32020; the v1 client's session on the same endpoint is unchanged", async () => {
  await using dir = await tempDir();
  const path = await config(dir.path);
  await using listener = await startListener(path);
  const meta = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
  };
  const post = async (headers: Record<string, string>, body: unknown) => {
    const response = await fetch(listener.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        ...headers,
      },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: await response.json() };
  };
  const call = {
    jsonrpc: "2.0",
    id: 5,
    method: "tools/call",
    params: { name: "modern__echo", arguments: { text: "x" }, _meta: meta },
  };
  const wrongMethod = await post({ "mcp-method": "tools/list" }, call);
  assert.equal(wrongMethod.status, 400);
  assert.equal(wrongMethod.body.id, 5);
  assert.equal(wrongMethod.body.error.code, -32020);
  assert.match(
    wrongMethod.body.error.message,
    /Mcp-Method header "tools\/list" does not match the body's method "tools\/call"/,
  );
  const wrongName = await post({ "mcp-method": "tools/call", "mcp-name": "modern__add" }, call);
  assert.equal(wrongName.status, 400);
  assert.equal(wrongName.body.error.code, -32020);
  assert.match(
    wrongName.body.error.message,
    /Mcp-Name header "modern__add" does not match the body's "modern__echo"/,
  );
  const right = await post({ "mcp-method": "tools/call", "mcp-name": "modern__echo" }, call);
  assert.equal(right.status, 200);
  assert.deepEqual(right.body.result.content, [{ type: "text", text: "x" }]);
  assert.equal(right.body.result.resultType, "complete");
  // server/discover with no session.
  const discover = await post({ "mcp-method": "server/discover" }, {
    jsonrpc: "2.0",
    id: "d",
    method: "server/discover",
    params: { _meta: meta },
  });
  assert.equal(discover.body.id, "d");
  assert.ok(discover.body.result.supportedVersions.includes("2026-07-28"));
  // The 2025 session, as before.
  await using v1 = await httpClient(listener.url);
  assert.equal(
    text(await v1.callTool({ name: "modern__echo", arguments: { text: "legacy host" } })),
    "legacy host",
  );
});

Deno.test("MRTR over HTTP: a legacy server's elicitation reaches a 2026-07-28 host as input_required", async () => {
  await using dir = await tempDir();
  const path = await config(dir.path);
  const db = `${dir.path}/shared.db`;
  await using a = await startListener(path, { db });
  {
    // One replica: the retry finds the open call; the host's answer completes it.
    await using host = await modernHttp([a.url], { pin: "2026-07-28" });
    const result = await host.client.callTool({ name: "relay__elicit", arguments: {} });
    assert.deepEqual(JSON.parse(text(result)), { action: "accept", content: { name: "Ada" } });
  }
  // Two replicas with no affinity: a retry that reaches the other replica is refused by name, never run
  // again (the rendezvous in the store is not built yet).
  await using b = await startListener(path, { db });
  await using host = await modernHttp([a.url, b.url], { pin: "2026-07-28" });
  // The call goes to one replica, its retry to the other.
  const failed = await host.client.callTool({ name: "relay__elicit", arguments: {} }).then(
    (r) => JSON.stringify(r),
    (e) => String(e),
  );
  assert.match(failed, /Unknown requestState: the call it continues is not open on this gateway/);
});
