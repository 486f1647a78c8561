/**
 * Hosts of both eras on mcphub's stdio: the v2 SDK client pinned to 2026-07-28 and in `auto` mode, and
 * the v1 client, each in front of a legacy server (tests/fixtures/fixture_server.ts) and a
 * 2026-07-28-only one (tests/fixtures/modern_server.ts).
 */
import assert from "node:assert/strict";
import { Client as ModernClient } from "npm:@modelcontextprotocol/client@2.4.0";
import { StdioClientTransport } from "npm:@modelcontextprotocol/client@2.4.0/stdio";
import { connectGateway, DENO, FIXTURE, q, ROOT, structured, tempDir, writeConfig } from "../helpers.ts";
import { REQUESTED_SCHEMA } from "../fixtures/relay_server.ts";

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

/** The v2 client over stdio to `mcphub mcp serve`, in `mode`. */
async function modernHost(
  path: string,
  mode: "auto" | { pin: string },
): Promise<{ client: ModernClient; raw: unknown[]; asked: unknown[] } & AsyncDisposable> {
  const transport = new StdioClientTransport({
    command: DENO,
    args: ["run", "-A", `${ROOT}main.ts`, "--config", path, "--db", `${path}.db`, "mcp", "serve"],
    env: Deno.env.toObject(),
    stderr: "ignore",
  });
  const client = new ModernClient(
    { name: "modern-host", version: "2.0.0" },
    { versionNegotiation: { mode }, capabilities: { elicitation: { form: {} } } },
  );
  const asked: unknown[] = [];
  client.setRequestHandler("elicitation/create", (request) => {
    asked.push(request.params);
    return { action: "accept", content: { name: "Ada" } };
  });
  await client.connect(transport);
  // What the gateway answers, as it came (after connect: the probe may run on a sibling process).
  const raw: unknown[] = [];
  const onmessage = transport.onmessage!;
  transport.onmessage = (message) => {
    raw.push(structuredClone(message));
    onmessage(message);
  };
  return {
    client,
    raw,
    asked,
    async [Symbol.asyncDispose]() {
      await client.close().catch(() => {});
    },
  };
}

for (const mode of [{ pin: "2026-07-28" }, "auto"] as const) {
  Deno.test(`a 2026-07-28 host (v2 client, ${JSON.stringify(mode)}) lists and calls through mcphub`, async () => {
    await using dir = await tempDir();
    const path = await config(dir.path);
    await using host = await modernHost(path, mode);
    const c = host.client;
    assert.equal(c.getProtocolEra(), "modern");
    assert.equal(c.getNegotiatedProtocolVersion(), "2026-07-28");
    const discover = c.getDiscoverResult()!;
    assert.ok(discover.supportedVersions.includes("2026-07-28"));
    assert.deepEqual(Object.keys(discover.capabilities).sort(), [
      "completions",
      "prompts",
      "resources",
      "tools",
    ]);
    const names = (await c.listTools()).tools.map((t) => t.name);
    for (const name of ["list_servers", "call_tool", "modern__echo", "modern__add", "legacy__echo"]) {
      assert.ok(names.includes(name), name);
    }
    // Results carry the revision's resultType; lists their cache hints.
    const list = host.raw.find((m) => (m as { result?: { tools?: unknown } }).result?.tools) as {
      result: Record<string, unknown>;
    };
    assert.equal(list.result.resultType, "complete");
    assert.equal(list.result.ttlMs, 0);
    assert.equal(list.result.cacheScope, "private");
    assert.equal(text(await c.callTool({ name: "modern__add", arguments: { a: 20, b: 22 } })), "42");
    assert.equal(text(await c.callTool({ name: "legacy__echo", arguments: { text: "old" } })), "old");
    const viaMeta = await c.callTool({
      name: "call_tool",
      arguments: { tool: "modern__echo", arguments: { text: "meta" } },
    });
    assert.equal(text(viaMeta), "meta");
    const rows = structured<{ servers: { name: string; state: string }[] }>(
      await c.callTool({ name: "list_servers", arguments: {} }),
    ).servers;
    assert.deepEqual(
      rows.map((r) => [r.name, r.state]).sort(),
      [["legacy", "connected"], ["modern", "connected"], ["relay", "connected"]],
    );
    // A legacy server's elicitation mid-call reaches this host as input_required (the v2 client answers
    // it with its handler and retries); the call completes with the host's answer, the schema intact.
    const elicited = await c.callTool({ name: "relay__elicit", arguments: {} });
    assert.deepEqual(JSON.parse(text(elicited)), { action: "accept", content: { name: "Ada" } });
    assert.equal(host.asked.length, 1);
    const rounds = host.raw.filter((m) =>
      (m as { result?: { resultType?: string } }).result?.resultType === "input_required"
    ) as { result: { inputRequests: Record<string, unknown>; requestState: string } }[];
    assert.equal(rounds.length, 1);
    // On the wire, the server's request whole (the v2 client's own parse then drops the x- keys).
    assert.deepEqual(Object.values(rounds[0]!.result.inputRequests), [{
      method: "elicitation/create",
      params: { mode: "form", message: "Who?", requestedSchema: REQUESTED_SCHEMA },
    }]);
    assert.equal(typeof rounds[0]!.result.requestState, "string");
    // Twice more: each call its own round.
    await c.callTool({ name: "relay__elicit", arguments: {} });
    await c.callTool({ name: "call_tool", arguments: { tool: "relay__elicit", arguments: {} } });
    assert.equal(host.asked.length, 3);
  });
}

Deno.test("a 2026-07-28 host on stdio whose call's server asks for sampling it did not declare: -32021 naming it, one answer only; the host goes on", async () => {
  await using dir = await tempDir();
  const path = await config(dir.path);
  await using host = await modernHost(path, { pin: "2026-07-28" });
  await assert.rejects(
    host.client.callTool({ name: "legacy__sample", arguments: {} }),
    (error: Error & { code?: number; data?: unknown }) => {
      assert.equal(error.code, -32021, error.message);
      assert.deepEqual(error.data, { requiredCapabilities: { sampling: {} } });
      return true;
    },
  );
  assert.equal(text(await host.client.callTool({ name: "legacy__echo", arguments: { text: "on" } })), "on");
  const errors = host.raw.filter((m) => (m as { error?: { code: number } }).error?.code === -32021);
  assert.equal(errors.length, 1);
  const id = (errors[0] as { id: unknown }).id;
  assert.equal(host.raw.filter((m) => (m as { id?: unknown }).id === id).length, 1, JSON.stringify(host.raw));
});

Deno.test("the v1 client through the same gateway: the legacy session, unchanged", async () => {
  await using dir = await tempDir();
  const path = await config(dir.path);
  await using gw = await connectGateway(path, { allowAll: true });
  const g = gw.client;
  assert.equal(g.getServerVersion()?.name, "mcphub");
  assert.equal(text(await g.callTool({ name: "modern__add", arguments: { a: 1, b: 2 } })), "3");
  assert.equal(text(await g.callTool({ name: "legacy__echo", arguments: { text: "x" } })), "x");
});

Deno.test("raw stdio: server/discover, a request with only _meta, an unsupported version", async () => {
  await using dir = await tempDir();
  const path = await config(dir.path);
  const child = new Deno.Command(DENO, {
    args: ["run", "-A", `${ROOT}main.ts`, "--config", path, "--db", `${path}.db`, "mcp", "serve"],
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  const next = async (): Promise<Record<string, unknown>> => {
    for (;;) {
      const at = buffered.indexOf("\n");
      if (at >= 0) {
        const line = buffered.slice(0, at);
        buffered = buffered.slice(at + 1);
        return JSON.parse(line);
      }
      const { value, done } = await lines.read();
      if (done) throw new Error("the gateway closed stdout");
      buffered += value;
    }
  };
  const send = (message: unknown) => writer.write(new TextEncoder().encode(JSON.stringify(message) + "\n"));
  const meta = (version = "2026-07-28") => ({
    "io.modelcontextprotocol/protocolVersion": version,
    "io.modelcontextprotocol/clientCapabilities": {},
  });
  try {
    await send({ jsonrpc: "2.0", id: 1, method: "server/discover", params: { _meta: meta() } });
    const discover = await next();
    assert.equal(discover.id, 1);
    const result = discover.result as Record<string, unknown>;
    assert.equal(result.resultType, "complete");
    assert.deepEqual(
      (result._meta as Record<string, { name: string }>)["io.modelcontextprotocol/serverInfo"].name,
      "mcphub",
    );
    assert.equal((result.supportedVersions as string[])[0], "2026-07-28");
    await send({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "modern__echo", arguments: { text: "hi" }, _meta: meta() },
    });
    const call = await next();
    assert.deepEqual(call, {
      jsonrpc: "2.0",
      id: 2,
      // The server's own result, kept whole (its _meta names it, as it does directly).
      result: {
        resultType: "complete",
        content: [{ type: "text", text: "hi" }],
        _meta: { "io.modelcontextprotocol/serverInfo": { name: "modern", version: "2.0.0" } },
      },
    });
    await send({ jsonrpc: "2.0", id: 3, method: "tools/list", params: { _meta: meta("2099-01-01") } });
    const refused = await next();
    assert.equal(refused.id, 3);
    const error = refused.error as { code: number; data: { supported: string[]; requested: string } };
    assert.equal(error.code, -32022);
    assert.equal(error.data.requested, "2099-01-01");
    assert.ok(error.data.supported.includes("2026-07-28"));
  } finally {
    await writer.close().catch(() => {});
    await lines.cancel().catch(() => {});
    await child.status;
  }
});
