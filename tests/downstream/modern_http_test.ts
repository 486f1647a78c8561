/**
 * A remote (`url:`) server that speaks only MCP 2026-07-28 over HTTP (tests/fixtures/modern_server.ts
 * `--http`: the v2 server package's `createMcpHandler` with `legacy: 'reject'`: stateless, no
 * `initialize`, `server/discover`, the `_meta` envelope, `Mcp-Method` / `Mcp-Name` checked, `resultType`)
 * behind mcphub: listed and called by a v1 host and by a 2026-07-28 host (the v2 client pinned), with the
 * results a direct connection gets (the v2 client pinned to 2026-07-28, straight to the server).
 *
 * And the era cache (per server fingerprint, in the store): a server that spoke 2026-07-28 is opened
 * with `server/discover` the next time (no refused `initialize` first); a server that changed (the cache
 * says 2026-07-28, it speaks 2025 now) still connects, and the cache then says legacy.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { Client } from "@modelcontextprotocol/sdk/client";
// @ts-types="@modelcontextprotocol/sdk/types"
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernHttp,
} from "npm:@modelcontextprotocol/client@2.4.0";
import { StdioClientTransport as ModernStdio } from "npm:@modelcontextprotocol/client@2.4.0/stdio";
import {
  connectGateway,
  DENO,
  FIXTURE,
  listServers,
  q,
  ROOT,
  serversReady,
  startHttpServer,
  startRemote,
  tempDir,
  writeConfig,
} from "../helpers.ts";
import { headerValue } from "../../src/mcp/era_http.ts";

const MODERN = `${ROOT}tests/fixtures/modern_server.ts`;

type Message = { id?: unknown; method?: string; result?: Record<string, unknown> };

/** The fixture over HTTP (`extra` args after `--http`); resolves once it listens (its own line says so). */
async function startModernHttp(
  extra: string[] = [],
): Promise<{ url: string; port: number } & AsyncDisposable> {
  const server = await startHttpServer(MODERN, ["--http", ...extra], {
    what: "the 2026-07-28 fixture",
    stderr: "null",
  });
  return {
    url: `http://127.0.0.1:${server.port}/mcp`,
    port: server.port,
    [Symbol.asyncDispose]: () => server[Symbol.asyncDispose](),
  };
}

/** Keeps every message a connected client's transport receives from now on, as it came. */
function record(transport: { onmessage?: (message: never, extra?: never) => void }): Message[] {
  const raw: Message[] = [];
  const onmessage = transport.onmessage as (m: Message, e?: unknown) => void;
  transport.onmessage = ((message: Message, extra?: unknown) => {
    raw.push(structuredClone(message));
    onmessage(message, extra);
  }) as typeof transport.onmessage;
  return raw;
}

/** The v2 client pinned to 2026-07-28, straight to the server (the baseline); answers elicitation "Ada". */
async function direct(url: string) {
  const transport = new ModernHttp(new URL(url));
  const client = new ModernClient(
    { name: "direct", version: "2.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } }, capabilities: { elicitation: { form: {} } } },
  );
  const asked: unknown[] = [];
  client.setRequestHandler("elicitation/create", (request) => {
    asked.push(request.params);
    return { action: "accept", content: { name: "Ada" } };
  });
  await client.connect(transport);
  const raw = record(transport);
  return {
    client,
    raw,
    asked,
    async [Symbol.asyncDispose]() {
      await client.close().catch(() => {});
    },
  };
}

/** The result of the last answer on the wire. */
function lastResult(raw: Message[]): Record<string, unknown> {
  return raw.findLast((m) => m.method === undefined && m.result)!.result!;
}

/** A tool as listed, without the gateway's namespace in its name and its server's in its description. */
function bare(tool: { name: string; description?: string }, prefix: string) {
  const server = `[${prefix.slice(0, -2)}] `;
  assert.ok(tool.description?.startsWith(server), tool.description);
  return {
    ...tool,
    name: tool.name.slice(prefix.length),
    description: tool.description!.slice(server.length),
  };
}

Deno.test("a 2026-07-28-only HTTP server behind mcphub: a v1 host lists and calls it as a direct client does", async () => {
  await using server = await startModernHttp();
  await using dir = await tempDir();
  const path = await writeConfig(
    dir.path,
    `servers:
  modern:
    url: ${q(server.url)}
  legacy:
    command: ${q(DENO)}
    args: [run, -A, ${q(FIXTURE)}]
`,
  );
  const host = new Client({ name: "host", version: "1.0.0" }, {
    capabilities: { elicitation: { form: {} } },
  });
  const asked: unknown[] = [];
  host.setRequestHandler(ElicitRequestSchema, (request) => {
    asked.push(request.params);
    return { action: "accept" as const, content: { name: "Ada" } };
  });
  await using gw = await connectGateway(path, { allowAll: true, client: host });
  await using d = await direct(server.url);
  const g = gw.client;

  const tools = (await g.listTools()).tools.filter((t) => t.name.startsWith("modern__"));
  const directTools = (await d.client.listTools()).tools;
  assert.deepEqual(tools.map((t) => bare(t, "modern__")), directTools);
  assert.ok((await g.listTools()).tools.some((t) => t.name === "legacy__echo"));

  // Each call's result is what the server answered a direct client, key for key (on the direct wire).
  for (const [name, args] of [["add", { a: 2, b: 40 }], ["echo", { text: "héllo ✓" }], ["add", { a: "x" }]]) {
    const through = await g.callTool({ name: `modern__${name}`, arguments: args as Record<string, unknown> });
    await d.client.callTool({ name: name as string, arguments: args as Record<string, unknown> });
    assert.deepEqual(through, lastResult(d.raw), `${name} ${JSON.stringify(args)}`);
  }
  // Through call_tool (the hub's own call path) too.
  const viaMeta = await g.callTool({
    name: "call_tool",
    arguments: { tool: "modern__echo", arguments: { text: "meta" } },
  });
  await d.client.callTool({ name: "echo", arguments: { text: "meta" } });
  assert.deepEqual(viaMeta, lastResult(d.raw));

  // MRTR: the server's input_required reaches this host as elicitation/create, as the direct client's
  // handler sees it; the call completes with the answer.
  const answer = await g.callTool({ name: "modern__ask", arguments: { question: "Who?" } });
  await d.client.callTool({ name: "ask", arguments: { question: "Who?" } });
  assert.deepEqual(answer, lastResult(d.raw));
  assert.equal((answer as { content: { text: string }[] }).content[0]!.text, "answer: Ada");
  assert.equal(asked.length, 1);
  assert.deepEqual(asked, d.asked);

  const rows = await listServers(g);
  assert.deepEqual(rows.map((r) => [r.name, r.state]).sort(), [["legacy", "connected"], [
    "modern",
    "connected",
  ]]);
});

Deno.test("a 2026-07-28 host (v2 client pinned) through mcphub to a 2026-07-28-only HTTP server: as direct", async () => {
  await using server = await startModernHttp();
  await using dir = await tempDir();
  const path = await writeConfig(dir.path, `servers:\n  modern:\n    url: ${q(server.url)}\n`);
  const transport = new ModernStdio({
    command: DENO,
    args: ["run", "-A", `${ROOT}main.ts`, "--config", path, "--db", `${path}.db`, "mcp", "serve"],
    env: Deno.env.toObject(),
    stderr: "ignore",
  });
  const host = new ModernClient(
    { name: "modern-host", version: "2.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } }, capabilities: { elicitation: { form: {} } } },
  );
  const asked: unknown[] = [];
  host.setRequestHandler("elicitation/create", (request) => {
    asked.push(request.params);
    return { action: "accept", content: { name: "Ada" } };
  });
  await host.connect(transport);
  const raw = record(transport);
  try {
    await using d = await direct(server.url);
    assert.equal(host.getNegotiatedProtocolVersion(), "2026-07-28");
    const tools = (await host.listTools()).tools.filter((t) => t.name.startsWith("modern__"));
    assert.deepEqual(tools.map((t) => bare(t, "modern__")), (await d.client.listTools()).tools);
    for (
      const [name, args] of [["add", { a: 20, b: 22 }], ["echo", { text: "é ✓" }], ["ask", {
        question: "Q?",
      }]]
    ) {
      const through = await host.callTool({
        name: `modern__${name}`,
        arguments: args as Record<string, unknown>,
      });
      const straight = await d.client.callTool({
        name: name as string,
        arguments: args as Record<string, unknown>,
      });
      // As the client sees it, and on the wire (resultType and all).
      assert.deepEqual(through, straight);
      assert.deepEqual(lastResult(raw), lastResult(d.raw), name as string);
    }
    assert.equal(lastResult(raw).resultType, "complete");
    assert.deepEqual(asked, d.asked);
  } finally {
    await host.close().catch(() => {});
  }
});

/** The era the store keeps for the one server of a gateway's store. */
function storedEras(db: string): string[] {
  const store = new DatabaseSync(db, { readOnly: true });
  try {
    return (store.prepare("SELECT era FROM server_era").all() as { era: string }[]).map((r) => r.era);
  } finally {
    store.close();
  }
}

/** The methods logged by the fixture (`--log`) since `from` lines. */
async function logged(file: string, from = 0): Promise<string[]> {
  const text = await Deno.readTextFile(file).catch(() => "");
  return text.split("\n").filter(Boolean).slice(from);
}

Deno.test("the era cache, HTTP: a known 2026-07-28 server is probed first; a changed one still connects", async () => {
  await using dir = await tempDir();
  const log = `${dir.path}/methods.log`;
  const db = `${dir.path}/store.db`;
  let path = "";
  const connect = async () => {
    const gw = await connectGateway(path, { allowAll: true, db });
    // Past connecting (tools/list may answer from the cached list before).
    const rows = await serversReady(gw.client);
    const tools = (await gw.client.listTools()).tools.filter((t) => t.name.startsWith("remote__"));
    return { gw, rows, tools };
  };
  let port: number;
  {
    // The fixture binds port 0 and says which port it got (no free-port guess another process can take).
    await using server = await startModernHttp(["--log", log]);
    port = server.port;
    path = await writeConfig(dir.path, `servers:\n  remote:\n    url: ${q(server.url)}\n`);
    {
      // Unknown, over HTTP: server/discover first (as the v2 client's auto mode), answered: no initialize.
      const { gw, rows } = await connect();
      await gw.close();
      assert.equal(rows[0]!.state, "connected");
      assert.equal((await logged(log))[0], "server/discover");
      assert.ok(!(await logged(log)).includes("initialize"));
      assert.deepEqual(storedEras(db), ["modern"]);
    }
    {
      // Known: server/discover first, and no initialize at all.
      const before = (await logged(log)).length;
      const { gw, rows, tools } = await connect();
      await gw.close();
      assert.equal(rows[0]!.state, "connected");
      assert.equal(tools.length, 4);
      const since = await logged(log, before);
      assert.equal(since[0], "server/discover");
      assert.ok(!since.includes("initialize"), since.join(","));
    }
  }
  // The server at that URL changed: a 2025 server (server-everything, sessions) now, on the same port (the
  // URL is the cache's key); startRemote fails loudly, naming the port, if another process took it meanwhile.
  await using _everything = await startRemote("streamableHttp", port);
  const { gw, rows, tools } = await connect();
  await gw.close();
  assert.equal(rows[0]!.state, "connected", rows[0]!.error);
  assert.ok(tools.length > 4, tools.map((t) => t.name).join());
  assert.deepEqual(storedEras(db), ["legacy"]);
});

Deno.test("the era cache, stdio: a known 2026-07-28 server is probed first; a changed one still connects", async () => {
  await using dir = await tempDir();
  const log = `${dir.path}/methods.log`;
  // The server's command line stays the same (its fingerprint), what it runs changes.
  const script = `${dir.path}/server.ts`;
  await Deno.writeTextFile(script, `import ${JSON.stringify(new URL(`file://${MODERN}`).href)};\n`);
  const path = await writeConfig(
    dir.path,
    `servers:\n  s:\n    command: ${q(DENO)}\n    args: [run, -A, ${q(script)}, --log, ${q(log)}]\n`,
  );
  const db = `${dir.path}/store.db`;
  const connect = async () => {
    const gw = await connectGateway(path, { allowAll: true, db });
    // Past connecting (tools/list may answer from the cached list before).
    const rows = await serversReady(gw.client);
    const tools = (await gw.client.listTools()).tools.filter((t) => t.name.startsWith("s__"));
    await gw.close();
    return { rows, tools };
  };
  {
    // Unknown, on stdio too: server/discover first, answered: no initialize.
    const { rows } = await connect();
    assert.equal(rows[0]!.state, "connected");
    assert.equal((await logged(log))[0], "server/discover");
    assert.ok(!(await logged(log)).includes("initialize"));
    assert.deepEqual(storedEras(db), ["modern"]);
  }
  {
    const before = (await logged(log)).length;
    const { rows, tools } = await connect();
    assert.equal(rows[0]!.state, "connected");
    assert.equal(tools.length, 3);
    const since = await logged(log, before);
    assert.equal(since[0], "server/discover");
    assert.ok(!since.includes("initialize"), since.join(","));
  }
  // Now a 2025 server (it answers the probe -32601, as one does before initialize), its input logged too.
  await Deno.writeTextFile(script, legacyProxy("answer"));
  let before = (await logged(log)).length;
  {
    const { rows, tools } = await connect();
    assert.equal(rows[0]!.state, "connected", rows[0]!.error);
    // (Its echo differs from the old server's echo: held back by the pins, as for any changed tool.)
    assert.ok(tools.some((t) => t.name === "s__wait"), tools.map((t) => t.name).join());
    // The probe went first, was refused, and the 2025 opening followed on the same connection.
    assert.deepEqual((await logged(log, before)).slice(0, 2), ["server/discover", "initialize"]);
    assert.deepEqual(storedEras(db), ["legacy"]);
  }
  // Back to 2026-07-28 (the cache says legacy: refused, then modern, and the cache follows).
  await Deno.writeTextFile(script, `import ${JSON.stringify(new URL(`file://${MODERN}`).href)};\n`);
  before = (await logged(log)).length;
  {
    const { rows } = await connect();
    assert.equal(rows[0]!.state, "connected", rows[0]!.error);
    assert.deepEqual((await logged(log, before)).slice(0, 2), ["initialize", "server/discover"]);
    assert.deepEqual(storedEras(db), ["modern"]);
  }
  // A 2025 server that exits on anything before initialize: the probe costs that process; a second one
  // is started with the 2025 opening at once, within the same connection attempt.
  await Deno.writeTextFile(script, legacyProxy("exit"));
  before = (await logged(log)).length;
  {
    const { rows } = await connect();
    assert.equal(rows[0]!.state, "connected", rows[0]!.error);
    assert.equal(rows[0]!.error, undefined);
    assert.deepEqual((await logged(log, before)).slice(0, 2), ["server/discover", "initialize"]);
    assert.deepEqual(storedEras(db), ["legacy"]);
  }
  // Modern again, then a 2025 server that leaves the probe unanswered: after half the connect timeout
  // (10 s here: 5 s) the 2025 opening follows on the same connection. (connect_timeout is not part of the
  // server's fingerprint.)
  await Deno.writeTextFile(script, `import ${JSON.stringify(new URL(`file://${MODERN}`).href)};\n`);
  await connect();
  assert.deepEqual(storedEras(db), ["modern"]);
  await Deno.writeTextFile(script, legacyProxy("silent"));
  await Deno.writeTextFile(path, `connect_timeout: 10s\n${await Deno.readTextFile(path)}`);
  before = (await logged(log)).length;
  const { rows } = await connect();
  assert.equal(rows[0]!.state, "connected", rows[0]!.error);
  assert.deepEqual((await logged(log, before)).slice(0, 2), ["server/discover", "initialize"]);
  assert.deepEqual(storedEras(db), ["legacy"]);
});

/**
 * A script that runs the legacy fixture behind a pipe that logs each message's method (`--log FILE`).
 * Before the first `initialize`, by `mode`: "answer" passes messages on (the fixture answers a probe
 * -32601), "exit" exits (code 3) as some servers do, "silent" drops them unanswered.
 */
function legacyProxy(mode: "answer" | "exit" | "silent"): string {
  return `const log = Deno.args[Deno.args.indexOf("--log") + 1];
const mode = ${JSON.stringify(mode)};
let child, writer;
const spawn = () => {
  child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", ${JSON.stringify(FIXTURE)}],
    stdin: "piped", stdout: "inherit", stderr: "inherit",
  }).spawn();
  writer = child.stdin.getWriter();
};
if (mode === "silent") spawn();
let opened = false;
let buffered = "";
for await (const chunk of Deno.stdin.readable.pipeThrough(new TextDecoderStream())) {
  buffered += chunk;
  let at;
  while ((at = buffered.indexOf("\\n")) >= 0) {
    const line = buffered.slice(0, at + 1);
    buffered = buffered.slice(at + 1);
    const method = JSON.parse(line).method;
    Deno.writeTextFileSync(log, (method ?? "(answer)") + "\\n", { append: true });
    opened ||= method === "initialize";
    if (!opened && mode === "exit") Deno.exit(3);
    if (!opened && mode === "silent") continue;
    if (!child) spawn();
    await writer.write(new TextEncoder().encode(line));
  }
}
await writer?.close();
Deno.exit(child ? (await child.status).code : 0);
`;
}

Deno.test("Mcp-Name values: plain visible ASCII as is, anything else in the revision's base64 form", () => {
  assert.equal(headerValue("echo"), "echo");
  assert.equal(headerValue("file:///a b.txt"), "file:///a b.txt");
  assert.equal(headerValue("é"), "=?base64?w6k=?=");
  assert.equal(headerValue(" x"), "=?base64?IHg=?=");
  assert.equal(headerValue(""), "=?base64??=");
  assert.equal(headerValue("=?base64?eA==?="), "=?base64?PT9iYXNlNjQ/ZUE9PT89?=");
});

/** The `tools/call` POSTs' headers the fixture recorded (`--headers`), from line `from` on. */
async function callHeaders(file: string, from = 0): Promise<Record<string, string>[]> {
  const lines = (await Deno.readTextFile(file).catch(() => "")).split("\n").filter(Boolean).slice(from);
  return lines.map((l) => JSON.parse(l)).filter((l) => l.method === "tools/call").map((l) => l.headers);
}

const ROUTE_CALLS: Record<string, unknown>[] = [
  { region: "us-west1", count: 7, opts: { flag: true }, note: "not mirrored" },
  { region: " Zürich ", count: -3, opts: { flag: false } },
  { region: "=?base64?literal?=", opts: {} },
  { region: "plain" },
];

Deno.test("Mcp-Param-* headers: mcphub mirrors x-mcp-header arguments to a 2026-07-28 HTTP server as the v2 client does", async () => {
  await using dir = await tempDir();
  const headersFile = `${dir.path}/headers.jsonl`;
  await using server = await startModernHttp(["--headers", headersFile]);
  const path = await writeConfig(dir.path, `servers:\n  modern:\n    url: ${q(server.url)}\n`);
  await using gw = await connectGateway(path, { allowAll: true });
  await using d = await direct(server.url);

  // The tool is listed as direct, its declarations kept (a host over HTTP mirrors them to the gateway).
  const [listed] = (await gw.client.listTools()).tools.filter((t) => t.name === "modern__route");
  const [straight] = (await d.client.listTools()).tools.filter((t) => t.name === "route");
  assert.deepEqual(bare(listed!, "modern__"), straight);

  const before = (await callHeaders(headersFile)).length;
  const directResults = [];
  for (const args of ROUTE_CALLS) {
    directResults.push(await d.client.callTool({ name: "route", arguments: args }));
  }
  const directHeaders = (await callHeaders(headersFile)).slice(before);
  const throughResults = [];
  for (const args of ROUTE_CALLS) {
    throughResults.push(await gw.client.callTool({ name: "modern__route", arguments: args }));
  }
  const throughHeaders = (await callHeaders(headersFile)).slice(before + ROUTE_CALLS.length);
  // The server checks the headers against the body: without them each call would be refused (-32020).
  assert.deepEqual(throughResults.map((r) => r.isError ?? false), ROUTE_CALLS.map(() => false));
  assert.deepEqual(
    throughResults.map((r) => (r.content as { text: string }[])[0]!.text),
    directResults.map((r) => (r.content as { text: string }[])[0]!.text),
  );
  assert.deepEqual(throughHeaders, directHeaders);
  assert.deepEqual(directHeaders[0], {
    "mcp-method": "tools/call",
    "mcp-name": "route",
    "mcp-param-region": "us-west1",
    "mcp-param-count": "7",
    "mcp-param-flag": "true",
  });
  assert.equal(directHeaders[1]!["mcp-param-region"], "=?base64?IFrDvHJpY2gg?=");
  assert.deepEqual(Object.keys(directHeaders[3]!).sort(), ["mcp-method", "mcp-name", "mcp-param-region"]);
});

Deno.test("a server that serves both revisions (HTTP) is spoken to in 2026-07-28, as the v2 client's auto mode does; a legacy one still connects", async () => {
  await using dir = await tempDir();
  const log = `${dir.path}/methods.log`;
  const headersFile = `${dir.path}/headers.jsonl`;
  await using server = await startModernHttp(["--legacy", "--log", log, "--headers", headersFile]);
  await using everything = await startRemote("streamableHttp");
  const db = `${dir.path}/store.db`;
  const path = await writeConfig(
    dir.path,
    `servers:\n  dual:\n    url: ${q(server.url)}\n  legacy:\n    url: ${
      q(`http://127.0.0.1:${everything.port}/mcp`)
    }\n`,
  );
  // The baseline: the v2 client in auto mode, straight to the server, finds it modern.
  {
    const client = new ModernClient({ name: "auto", version: "2.0.0" }, {
      versionNegotiation: { mode: "auto" },
    });
    await client.connect(new ModernHttp(new URL(server.url)));
    assert.equal(client.getProtocolEra(), "modern");
    await client.close();
  }
  const before = (await logged(log)).length;
  await using gw = await connectGateway(path, { allowAll: true, db });
  const rows = await serversReady(gw.client);
  assert.deepEqual(rows.map((r) => [r.name, r.state]).sort(), [["dual", "connected"], [
    "legacy",
    "connected",
  ]]);
  const methods = await logged(log, before);
  assert.equal(methods[0], "server/discover");
  assert.ok(!methods.includes("initialize"), methods.join(","));
  // Spoken to in 2026-07-28: every request carries the envelope's headers, Mcp-Param-* included.
  const result = await gw.client.callTool({ name: "dual__route", arguments: { region: "eu", count: 2 } });
  assert.deepEqual(JSON.parse((result.content as { text: string }[])[0]!.text), { region: "eu", count: 2 });
  const [sent] = (await callHeaders(headersFile)).slice(-1);
  assert.deepEqual(sent, {
    "mcp-method": "tools/call",
    "mcp-name": "route",
    "mcp-param-region": "eu",
    "mcp-param-count": "2",
  });
  const everythingTools = (await gw.client.listTools()).tools.filter((t) => t.name.startsWith("legacy__"));
  assert.ok(everythingTools.length > 0);
  assert.deepEqual(storedEras(db).sort(), ["legacy", "modern"]);
});
