/**
 * Per-agent routing: two scoped gateways and one unscoped gateway sharing one
 * store, in front of the real servers. A scoped agent must not see, call or
 * recover anything outside its scope.
 */
import assert from "node:assert/strict";
import type { Client } from "@modelcontextprotocol/sdk/client";
import {
  connectGateway,
  descendants,
  FIXTURE,
  q,
  REAL,
  runMcphub,
  serversReady,
  structured,
  tempDir,
  writeConfig,
} from "../helpers.ts";

function config(root: string): string {
  return `response_budget: "2KB"
expose: all
servers:
  everything:
    command: node
    args: [${q(REAL.everything)}, stdio]
    description: The MCP reference test server
  filesystem:
    command: node
    args: [${q(REAL.filesystem)}, ${q(root)}]
    use_when: [reading or writing files]
    env: { FS_TOKEN: "\${MCPHUB_TEST_SECRET_FS}" }
  memory:
    command: node
    args: [${q(REAL.memory)}]
    env: { MEMORY_FILE_PATH: ${q(`${root}/memory.jsonl`)} }
agents:
  coder:
    servers: [filesystem, memory]
    pin: [filesystem__read_text_file]
  researcher:
    servers: [everything]
    tools: [everything__echo, everything__get-sum]
  tiny:
    servers: [everything, memory]
    tool_schema_budget: 0
  small:
    servers: [everything]
    tool_schema_budget: 1500
`;
}

async function ready(client: Client): Promise<Record<string, { state: string }>> {
  return Object.fromEntries((await serversReady(client)).map((x) => [x.name, x]));
}

const text = (r: unknown) => (r as { content: { text: string }[] }).content[0]!.text;

function commandLines(pid: number): string[] {
  return descendants(pid).map((p) => {
    try {
      return Deno.readTextFileSync(`/proc/${p}/cmdline`).replaceAll("\0", " ");
    } catch {
      return "";
    }
  });
}

Deno.test("per-agent routing: listing, discovery, calls and stored results are scoped on every path", async () => {
  await using dir = await tempDir();
  const root = `${dir.path}/files`;
  await Deno.mkdir(root);
  await Deno.writeTextFile(`${root}/big.txt`, "scoped bytes ".repeat(2000));
  const path = await writeConfig(dir.path, config(root));
  const db = `${dir.path}/shared.db`;
  const env = { MCPHUB_TEST_SECRET_FS: "fs-secret" };
  // The researcher's environment lacks the filesystem secret: out-of-scope secrets are never read.
  await using researcher = await connectGateway(path, { db, args: ["--agent", "researcher"] });
  await using coder = await connectGateway(path, { db, args: ["--agent", "coder"], env });
  await using all = await connectGateway(path, { db, env });

  assert.deepEqual(Object.keys(await ready(researcher.client)), ["everything"]);
  assert.deepEqual(Object.keys(await ready(coder.client)), ["filesystem", "memory"]);
  assert.deepEqual(Object.keys(await ready(all.client)), ["everything", "filesystem", "memory"]);

  // An excluded server's process never starts (the process table is read from /proc).
  if (Deno.build.os === "linux") {
    const researcherProcs = commandLines(researcher.transport.pid!);
    assert.ok(researcherProcs.some((c) => c.includes("server-everything")));
    assert.ok(!researcherProcs.some((c) => c.includes("server-filesystem") || c.includes("server-memory")));
    assert.ok(!commandLines(coder.transport.pid!).some((c) => c.includes("server-everything")));
  }

  // Listing: the researcher sees exactly its allowlist.
  const rTools = (await researcher.client.listTools()).tools.map((t) => t.name).filter((n) =>
    n.includes("__")
  );
  assert.deepEqual(rTools, ["everything__echo", "everything__get-sum"]);
  const cTools = (await coder.client.listTools()).tools.map((t) => t.name).filter((n) => n.includes("__"));
  assert.ok(cTools.includes("filesystem__read_text_file") && cTools.some((n) => n.startsWith("memory__")));
  assert.ok(!cTools.some((n) => n.startsWith("everything__")));

  // Discovery never names an out-of-scope tool: a query for an in-scope and an out-of-scope tool finds only
  // the in-scope one (and finds it: the check is not vacuous).
  const search = structured<{ matches: { namespaced: string }[]; count: number }>(
    await researcher.client.callTool({
      name: "search_tools",
      arguments: { query: "echo a message, or read a text file" },
    }),
  );
  assert.ok(search.matches.some((m) => m.namespaced === "everything__echo"), JSON.stringify(search.matches));
  assert.ok(search.matches.every((m) => ["everything__echo", "everything__get-sum"].includes(m.namespaced)));
  const listing = structured<{ count: number }>(
    await researcher.client.callTool({ name: "search_tools", arguments: { query: "" } }),
  );
  assert.equal(listing.count, 2);
  const resolve = structured<
    { recommendation: { namespaced: string } | null; alternatives: { namespaced: string }[] }
  >(
    await coder.client.callTool({
      name: "resolve_tool",
      arguments: { query: "echo a message back, or read a text file" },
    }),
  );
  const named = [resolve.recommendation, ...resolve.alternatives].filter((m) => m !== null);
  assert.ok(named.some((m) => m.namespaced === "filesystem__read_text_file"), JSON.stringify(resolve));
  for (const m of named) assert.ok(!m.namespaced.startsWith("everything__"), m.namespaced);
  const revisions = await Promise.all(
    [researcher, coder, all].map(async (g) =>
      structured<{ catalog_revision: string }>(
        await g.client.callTool({ name: "list_servers", arguments: {} }),
      )
        .catalog_revision
    ),
  );
  assert.equal(new Set(revisions).size, 3, "catalog_revision is per scope");

  // Out-of-scope names in every form are reported exactly like tools that do not exist.
  const forms: [string, Record<string, unknown>][] = [
    ["filesystem__read_text_file", {}],
    ["call_tool", { tool: "filesystem__read_text_file", arguments: { path: `${root}/big.txt` } }],
    ["call_tool", { server: "filesystem", tool: "read_text_file" }],
    ["call_tool", { tool: "everything__get-tiny-image" }],
    ["call_tool", { server: "everything", tool: "everything__get-tiny-image" }],
    ["describe_tool", { tool: "filesystem__read_text_file" }],
    ["describe_tool", { server: "everything", tool: "get-tiny-image" }],
  ];
  for (const [name, args] of forms) {
    await assert.rejects(
      researcher.client.callTool({ name, arguments: args }),
      (e: Error & { code?: number }) => {
        assert.equal(e.code, -32602, `${name} ${JSON.stringify(args)}`);
        assert.match(e.message, /Unknown tool "/);
        // Suggestions name only in-scope tools.
        const suggested = e.message.match(/Did you mean (.*)\?/)?.[1] ?? "";
        assert.doesNotMatch(suggested, /filesystem__|get-tiny-image/);
        return true;
      },
    );
  }
  assert.equal(
    text(await researcher.client.callTool({ name: "everything__echo", arguments: { message: "in scope" } })),
    "Echo: in scope",
  );

  // A result spooled by the unscoped gateway: served to the agent scoped to filesystem, refused to the other.
  const receipt = structured<{ callId: string }>(
    await all.client.callTool({ name: "filesystem__read_text_file", arguments: { path: `${root}/big.txt` } }),
  );
  assert.match(receipt.callId, /^[0-9a-f]{32}$/);
  const page = structured<{ status: string }>(
    await coder.client.callTool({ name: "get_result", arguments: { callId: receipt.callId } }),
  );
  assert.equal(page.status, "ok");
  // Out of scope answers exactly like an unknown id: a scope cannot tell another's ids from made-up ones.
  const denied = structured<Record<string, unknown>>(
    await researcher.client.callTool({ name: "get_result", arguments: { callId: receipt.callId } }),
  );
  const unknown = structured<Record<string, unknown>>(
    await researcher.client.callTool({ name: "get_result", arguments: { callId: "0".repeat(32) } }),
  );
  assert.equal(denied.status, "unavailable");
  assert.deepEqual({ ...denied, callId: "" }, { ...unknown, callId: "" });

  // Detached calls belong to the scope that started them.
  const detached = structured<{ callId: string }>(
    await all.client.callTool({
      name: "call_tool",
      arguments: { tool: "everything__echo", arguments: { message: "x" }, detach: true },
    }),
  );
  const poll = structured<{ status: string }>(
    await researcher.client.callTool({ name: "poll_result", arguments: { callId: detached.callId } }),
  );
  assert.equal(poll.status, "unknown");

  // stats: the agent's own calls only.
  const rStats = structured<{ totals: { calls: number }; servers: { server: string }[] }>(
    await researcher.client.callTool({ name: "stats", arguments: {} }),
  );
  assert.equal(rStats.totals.calls, 1);
  assert.deepEqual(rStats.servers.map((s) => s.server), ["everything"]);
});

Deno.test("tool_schema_budget: 0 mounts only the meta-tools; a small budget mounts what fits, whole", async () => {
  await using dir = await tempDir();
  const path = await writeConfig(dir.path, config(dir.path));
  const env = { MCPHUB_TEST_SECRET_FS: "fs-secret" };
  await using tiny = await connectGateway(path, { args: ["--agent", "tiny"], env });
  await using small = await connectGateway(path, { args: ["--agent", "small"], env });
  await ready(tiny.client);
  await ready(small.client);
  const tinyTools = (await tiny.client.listTools()).tools;
  assert.ok(tinyTools.every((t) => !t.name.includes("__")), "meta-tools only");
  assert.equal(tinyTools.length, 8);
  // Hidden tools stay callable.
  assert.equal(
    text(
      await tiny.client.callTool({
        name: "call_tool",
        arguments: { tool: "everything__echo", arguments: { message: "hi" } },
      }),
    ),
    "Echo: hi",
  );
  const mounted = (await small.client.listTools()).tools.filter((t) => t.name.includes("__"));
  const size = mounted.reduce((n, t) => n + new TextEncoder().encode(JSON.stringify(t)).length, 0);
  assert.ok(mounted.length >= 1, "something fits");
  assert.ok(size <= 1500, `mounted ${size} bytes`);
  const names = mounted.map((t) => t.name);
  assert.deepEqual(names, [...names].sort());
});

Deno.test("an unknown --agent is an error listing the defined agents", async () => {
  await using dir = await tempDir();
  const path = await writeConfig(dir.path, config(dir.path));
  const out = await runMcphub([
    "--config",
    path,
    "--db",
    `${dir.path}/db`,
    "mcp",
    "serve",
    "--agent",
    "nobody",
  ]);
  assert.equal(out.code, 1);
  assert.equal(out.stdout, "");
  assert.match(
    out.stderr,
    /unknown agent "nobody"; defined agents: coder, researcher, tiny, small/,
  );
});

Deno.test("downstream servers see clientInfo.name mcphub/NAME from a scoped gateway, mcphub otherwise", async () => {
  await using dir = await tempDir();
  const path = await writeConfig(
    dir.path,
    `servers:
  a:
    command: ${q(Deno.execPath())}
    args: [run, -A, ${q(FIXTURE)}, --state, ${q(`${dir.path}/a`)}]
  b:
    command: ${q(Deno.execPath())}
    args: [run, -A, ${q(FIXTURE)}, --state, ${q(`${dir.path}/b`)}]
agents:
  solo:
    servers: [a]
`,
  );
  await Deno.mkdir(`${dir.path}/a`);
  await Deno.mkdir(`${dir.path}/b`);
  {
    await using gw = await connectGateway(path, { args: ["--agent", "solo"] });
    await ready(gw.client);
    assert.equal(await Deno.readTextFile(`${dir.path}/a/client-name`), "mcphub/solo");
    await assert.rejects(Deno.stat(`${dir.path}/b/starts`), Deno.errors.NotFound);
  }
  await using gw = await connectGateway(path);
  await ready(gw.client);
  assert.equal(await Deno.readTextFile(`${dir.path}/b/client-name`), "mcphub");
});
