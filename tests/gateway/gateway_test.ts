/**
 * End to end: the official SDK client -> `mcphub mcp serve` -> real MCP servers we did not write
 * (server-everything, server-filesystem, server-memory) and our fixture server.
 */
import assert from "node:assert/strict";
import type { Client } from "@modelcontextprotocol/sdk/client";
import {
  connectDirect,
  connectGateway,
  DENO,
  FIXTURE,
  q,
  rawGatewaySession,
  REAL,
  runMcphub,
  serversReady,
  stderrMatches,
  structured,
  tempDir,
  until,
  writeConfig,
} from "../helpers.ts";
import { namespaceResultUris } from "../../src/hub/uris.ts";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

type Tools = Awaited<ReturnType<Client["listTools"]>>["tools"];

function realConfig(fsRoot: string, extra = ""): string {
  return `# real servers
servers:
  everything:
    command: node
    args: [${q(REAL.everything)}, stdio]
    description: The MCP reference test server
    tags: [demo]
  filesystem:
    command: node
    args: [${q(REAL.filesystem)}, ${q(fsRoot)}]
  memory:
    command: node
    args: [${q(REAL.memory)}]
    env:
      MEMORY_FILE_PATH: ${q(`${fsRoot}/../memory.jsonl`)}
${extra}`;
}

async function listAll(client: Client): Promise<Tools> {
  const tools: Tools = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}

/** Waits until the gateway has announced every configured server's tools. */
async function waitForTools(client: Client, count: number): Promise<Tools> {
  await serversReady(client);
  const tools = await listAll(client);
  assert.ok(tools.length >= count, `expected at least ${count} tools, got ${tools.length}`);
  return tools;
}

Deno.test("mcp serve mounts every tool of the real servers as server__tool, with [server] descriptions", async () => {
  await using dir = await tempDir();
  const fsRoot = `${dir.path}/files`;
  await Deno.mkdir(fsRoot);
  const config = await writeConfig(dir.path, realConfig(fsRoot));
  await using gw = await connectGateway(config);
  const direct = await connectDirect("node", [REAL.everything, "stdio"]);
  try {
    const directTools = await listAll(direct);
    const tools = await waitForTools(gw.client, directTools.length);
    const byName = new Map(tools.map((t) => [t.name, t]));
    for (const meta of ["list_servers", "call_tool", "get_result"]) assert.ok(byName.has(meta), meta);
    for (const t of directTools) {
      const mounted = byName.get(`everything__${t.name.replace(/^everything[-_]/, "")}`);
      assert.ok(mounted, `everything__${t.name} is mounted`);
      assert.equal(mounted.description, `[everything] ${t.description}`);
      assert.deepEqual(mounted.inputSchema, t.inputSchema);
    }
    assert.ok(byName.has("filesystem__read_text_file"));
    assert.ok(byName.has("memory__create_entities"));
    for (const t of tools) assert.match(t.name, /^[A-Za-z0-9_-]{1,64}$/);
  } finally {
    await direct.close();
  }
});

Deno.test("mcp serve returns exactly what a direct call returns, for every kind of content", async () => {
  await using dir = await tempDir();
  const fsRoot = `${dir.path}/files`;
  await Deno.mkdir(fsRoot);
  await Deno.writeTextFile(`${fsRoot}/hello.txt`, "héllo wörld ✓\nline 2\n");
  const config = await writeConfig(dir.path, realConfig(fsRoot));
  await using gw = await connectGateway(config);
  const everything = await connectDirect("node", [REAL.everything, "stdio"]);
  const filesystem = await connectDirect("node", [REAL.filesystem, fsRoot]);
  try {
    await waitForTools(gw.client, 20);
    const cases: [Client, string, Record<string, unknown>][] = [
      [everything, "echo", { message: "hi ✓" }],
      [everything, "get-sum", { a: 2, b: 40 }],
      [everything, "get-tiny-image", {}],
      [everything, "get-structured-content", { location: "New York" }],
      [everything, "get-annotated-message", { messageType: "error", includeImage: true }],
      [everything, "get-resource-links", { count: 2 }],
      [filesystem, "read_text_file", { path: `${fsRoot}/hello.txt` }],
      [filesystem, "list_directory", { path: fsRoot }],
      [filesystem, "read_text_file", { path: `${fsRoot}/missing.txt` }],
    ];
    for (const [client, tool, args] of cases) {
      const server = client === everything ? "everything" : "filesystem";
      // Resource links point through the gateway (mcphub://SERVER/...), which reads them back (passthrough_test.ts).
      const want = namespaceResultUris(
        server,
        await client.callTool({ name: tool, arguments: args }) as CallToolResult,
      );
      const got = await gw.client.callTool({ name: `${server}__${tool}`, arguments: args });
      assert.deepEqual(got, want, `${server}__${tool}`);
      const viaMeta = await gw.client.callTool({
        name: "call_tool",
        arguments: { server, tool, arguments: args },
      });
      assert.deepEqual(viaMeta, want, `call_tool ${server} ${tool}`);
    }
    // A downstream isError result is passed through unchanged.
    const missing = await gw.client.callTool({
      name: "filesystem__read_text_file",
      arguments: { path: `${fsRoot}/missing.txt` },
    });
    assert.equal(missing.isError, true);
  } finally {
    await everything.close();
    await filesystem.close();
  }
});

Deno.test("call_tool accepts server__tool, the stutter form, {server, tool} fragments and a redundant prefix", async () => {
  await using dir = await tempDir();
  const config = await writeConfig(
    dir.path,
    `servers:
  fx:
    command: ${q(DENO)}
    args: [run, -A, ${q(FIXTURE)}, --tools, "fx_search,fx-lookup,plain"]
`,
  );
  await using gw = await connectGateway(config);
  const tools = await waitForTools(gw.client, 9);
  const names = tools.map((t) => t.name);
  assert.ok(names.includes("fx__search"), "self-prefix fx_ stripped");
  assert.ok(names.includes("fx__lookup"), "self-prefix fx- stripped");
  assert.ok(names.includes("fx__plain"));
  const forms: Record<string, unknown>[] = [
    { tool: "fx__search" },
    { tool: "fx__fx_search" },
    { server: "fx", tool: "search" },
    { server: "fx", tool: "fx_search" },
    { server: "fx", tool: "fx__search" },
  ];
  for (const form of forms) {
    const result = await gw.client.callTool({ name: "call_tool", arguments: { ...form, arguments: null } });
    assert.deepEqual(result.content, [{ type: "text", text: "fx_search" }], JSON.stringify(form));
  }
  // Aliases of the meta-tools.
  for (const alias of ["mcphub_list_servers", "mcphub__list_servers", "mcphub__mcphub_list_servers"]) {
    const r = await gw.client.callTool({ name: alias, arguments: {} });
    assert.ok(Array.isArray(structured<{ servers: unknown[] }>(r).servers), alias);
  }
  // The stutter form also routes as a tools/call name.
  const stutter = await gw.client.callTool({ name: "fx__fx_search", arguments: {} });
  assert.deepEqual(stutter.content, [{ type: "text", text: "fx_search" }]);
});

Deno.test("an unknown tool is an InvalidParams error naming the closest public names", async () => {
  await using dir = await tempDir();
  const config = await writeConfig(
    dir.path,
    `servers:\n  fx:\n    command: ${q(DENO)}\n    args: [run, -A, ${q(FIXTURE)}]\n`,
  );
  await using gw = await connectGateway(config);
  await waitForTools(gw.client, 6);
  await assert.rejects(
    gw.client.callTool({ name: "fx__ecko", arguments: {} }),
    (error: Error & { code?: number }) => {
      assert.equal(error.code, -32602);
      assert.match(error.message, /Unknown tool "fx__ecko"\. Did you mean "fx__echo"/);
      return true;
    },
  );
  await assert.rejects(
    gw.client.callTool({ name: "call_tool", arguments: { server: "nope", tool: "echo" } }),
    /Unknown tool "nope__echo"/,
  );
});

Deno.test("progress notifications from the downstream reach the caller", async () => {
  await using dir = await tempDir();
  const config = await writeConfig(dir.path, realConfig(`${dir.path}`));
  // Read as the bytes the gateway writes to its host: an SDK client drops a notification it reads in the
  // same chunk as the response, and on a loaded machine a 100 ms stall of the reader merges any of them.
  await using host = await rawGatewaySession(config, `${dir.path}/store.db`);
  const answer = JSON.parse(
    await host.request("tools/call", {
      name: "everything__trigger-long-running-operation",
      arguments: { duration: 0.4, steps: 4 },
      _meta: { progressToken: "long" },
    }),
  );
  assert.match(JSON.stringify(answer.result.content), /Long running operation completed/);
  const seen = host.lines.map((line) => JSON.parse(line))
    .filter((m) => m.method === "notifications/progress" && m.params.progressToken === "long")
    .map((m) => ({ progress: m.params.progress, total: m.params.total }));
  assert.deepEqual(seen, [1, 2, 3, 4].map((progress) => ({ progress, total: 4 })));
});

Deno.test("a cancelled call is cancelled downstream too", async () => {
  await using dir = await tempDir();
  const state = `${dir.path}/state`;
  await Deno.mkdir(state);
  const config = await writeConfig(
    dir.path,
    `servers:\n  fx:\n    command: ${q(DENO)}\n    args: [run, -A, ${q(FIXTURE)}, --state, ${q(state)}]\n`,
  );
  await using gw = await connectGateway(config);
  await waitForTools(gw.client, 6);
  const controller = new AbortController();
  const call = gw.client.callTool({ name: "fx__wait", arguments: { ms: 60_000 } }, undefined, {
    signal: controller.signal,
  });
  // The downstream counts the call on arrival: cancel once it is running there (a bounded loop that
  // fell through would cancel a call not yet sent, and the assertion below would fail for the wrong reason).
  const marker = (name: string) => () =>
    Deno.stat(`${state}/${name}`).then(() => true as const, () => undefined);
  await until("the call running downstream", marker("calls-wait"));
  controller.abort("user cancelled");
  await assert.rejects(call);
  await until("the downstream server to see notifications/cancelled", marker("cancelled"));
});

Deno.test("a missing command and a server that exits at start are reported; the others work", async () => {
  await using dir = await tempDir();
  const config = await writeConfig(
    dir.path,
    `servers:
  ghost:
    command: mcphub-no-such-command-xyz
    args: [--token, "\${MCPHUB_TEST_GHOST_TOKEN}"]
  crasher:
    command: ${q(DENO)}
    args: [run, -A, ${q(FIXTURE)}, --crash-at-start]
    env:
      FIXTURE_SECRET: hunter2-secret-value
  fx:
    command: ${q(DENO)}
    args: [run, -A, ${q(FIXTURE)}]
`,
  );
  const env = { MCPHUB_TEST_GHOST_TOKEN: "ghost-token-value-42" };
  await using gw = await connectGateway(config, { env });
  await waitForTools(gw.client, 6);
  const list = structured<{ servers: { name: string; state: string; connected: boolean; error?: string }[] }>(
    await gw.client.callTool({ name: "list_servers", arguments: {} }),
  );
  const byName = Object.fromEntries(list.servers.map((s) => [s.name, s]));
  assert.equal(byName.ghost!.state, "failed");
  assert.match(byName.ghost!.error!, /command "mcphub-no-such-command-xyz" was not found/);
  // It is restarted with backoff (supervision); the reason stays visible meanwhile.
  assert.match(byName.crasher!.state, /^(backoff|connecting)$/);
  assert.match(byName.crasher!.error ?? "", /exited during start-up \(exit code 3\)|closed|^$/);
  assert.equal(byName.fx!.state, "connected");
  const echo = await gw.client.callTool({ name: "fx__echo", arguments: { text: "still here" } });
  assert.deepEqual(echo.content, [{ type: "text", text: "still here" }]);
  // The stderr tail is logged, redacted (stderr is a pipe of its own: await the line, the answers above
  // say nothing of it).
  await stderrMatches(gw, /simulated crash/);
  assert.doesNotMatch(gw.stderr(), /hunter2-secret-value/);
  assert.match(gw.stderr(), /starting with token \*\*\*/);

  // mcphub list shows the same.
  const out = await runMcphub(["--config", config, "--db", `${dir.path}/list.db`, "list"], { env });
  const text = out.stdout;
  assert.equal(out.code, 0, out.stderr);
  assert.match(text, /^SERVER\s+STATE\s+KIND\s+TARGET\s+TAGS\s+DESCRIPTION$/m);
  // A ${VAR} value in args is a secret: never shown.
  assert.match(text, /^ghost\s+failed\s+stdio\s+mcphub-no-such-command-xyz --token \*\*\*\s/m);
  assert.doesNotMatch(text + gw.stderr(), /ghost-token-value-42/);
  assert.match(text, /^crasher\s+failed\s+stdio/m);
  assert.match(text, /^fx\s+connected \(8 tools\)\s+stdio/m);
  assert.match(text, /^ghost: command "mcphub-no-such-command-xyz" was not found/m);
  assert.match(
    text,
    /^crasher: .*\n {2}stderr:\n {4}fixture: starting with token \*\*\*\n {4}fixture: cannot start \(simulated crash\)$/m,
  );
  assert.doesNotMatch(text, /hunter2/);
});

Deno.test("a downstream tools/list_changed refreshes the server and is forwarded upstream", async () => {
  await using dir = await tempDir();
  const config = await writeConfig(
    dir.path,
    `servers:\n  fx:\n    command: ${q(DENO)}\n    args: [run, -A, ${q(FIXTURE)}]\n`,
  );
  await using gw = await connectGateway(config);
  await waitForTools(gw.client, 6);
  const { ToolListChangedNotificationSchema } = await import("../../src/mcp/sdk.ts");
  let notified = Promise.withResolvers<void>();
  gw.client.setNotificationHandler(ToolListChangedNotificationSchema, () => notified.resolve());
  await gw.client.callTool({ name: "fx__change_tools", arguments: {} });
  let tools = await listAll(gw.client);
  // Each notification is an event to re-list on; a start-up one may still be in flight.
  for (let i = 0; i < 5 && !tools.some((t) => t.name === "fx__added_later"); i++) {
    await notified.promise;
    notified = Promise.withResolvers<void>();
    tools = await listAll(gw.client);
  }
  assert.ok(tools.some((t) => t.name === "fx__added_later"));
});

Deno.test("a server's paginated tools/list is followed to the end (nextCursor)", async () => {
  await using dir = await tempDir();
  const config = await writeConfig(
    dir.path,
    `servers:\n  fx:\n    command: ${q(DENO)}\n    args: [run, -A, ${
      q(FIXTURE)
    }, --page-size, "2", --tools, "t1,t2,t3"]\n`,
  );
  await using gw = await connectGateway(config);
  const tools = await waitForTools(gw.client, 9);
  const names = tools.map((t) => t.name).filter((n) => n.startsWith("fx__")).sort();
  assert.deepEqual(names, [
    "fx__big",
    "fx__change_tools",
    "fx__echo",
    "fx__exit_mid_call",
    "fx__fail",
    "fx__progress",
    "fx__rpc_error",
    "fx__t1",
    "fx__t2",
    "fx__t3",
    "fx__wait",
  ]);
});

Deno.test("a downstream's own error -32000/-32001 reaches the host with its code, message and data", async () => {
  await using dir = await tempDir();
  const config = await writeConfig(
    dir.path,
    `servers:\n  fx:\n    command: ${q(DENO)}\n    args: [run, -A, ${q(FIXTURE)}]\n`,
  );
  await using gw = await connectGateway(config);
  await waitForTools(gw.client, 9);
  for (
    const [code, text] of [[-32000, "the backend is down"], [-32001, "the backend took too long"]] as const
  ) {
    const data = { retry: true, code };
    await assert.rejects(
      gw.client.callTool({ name: "fx__rpc_error", arguments: { code, message: text, data } }),
      (error: Error & { code?: number; data?: unknown }) => {
        assert.equal(error.message, `MCP error ${code}: ${text}`);
        assert.equal(error.code, code);
        assert.deepEqual(error.data, data);
        return true;
      },
    );
  }
  // The connection is intact: the next call is served.
  const ok = await gw.client.callTool({ name: "fx__echo", arguments: { text: "still here" } });
  assert.deepEqual(ok.content, [{ type: "text", text: "still here" }]);
});
