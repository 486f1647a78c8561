/**
 * `mcp serve --listen`: the gateway served over Streamable HTTP to several hosts at once, each with its
 * own agent token, under exactly the permissions `mcphub permissions --listen` derives. The hosts are
 * the official SDK client over HTTP; the baseline is the same agent over stdio.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  alive,
  connectGateway,
  DENO,
  descendants,
  FIXTURE,
  q,
  rawSession,
  REAL,
  ROOT,
  runMcphub,
  sandbox,
  structured,
  tempDir,
  until,
  writeConfig,
} from "../helpers.ts";
import { httpClient, INITIALIZE, rawRequest, startListener } from "./http_helpers.ts";

const TOKEN_ALPHA = "alpha-token-0123456789abcdef";
const TOKEN_BETA = "beta-token-0123456789abcdef";
const ENV = { TOK_ALPHA: TOKEN_ALPHA };

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

async function config(dir: string, extra = ""): Promise<string> {
  return await writeConfig(
    dir,
    `servers:
  everything:
    command: node
    args: [${q(REAL.everything)}, stdio]
  fx:
    command: ${q(DENO)}
    args: [run, -A, ${q(FIXTURE)}, --state, ${q(dir)}]
agents:
  alpha:
    token: \${TOK_ALPHA}
  beta:
    servers: [everything]
    tools: [everything__echo]
    token: sha256:${await sha256(TOKEN_BETA)}
${extra}`,
  );
}

function names(tools: { name: string }[]): string[] {
  return tools.map((t) => t.name).sort();
}

async function post(url: string, headers: Record<string, string>, body = INITIALIZE): Promise<Response> {
  return await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...headers,
    },
    body,
  });
}

const EVERYTHING = /server-everything\/dist\/index\.js/;

function processesOf(pid: number, pattern: RegExp): number[] {
  return descendants(pid).filter((p) => {
    try {
      return pattern.test(Deno.readTextFileSync(`/proc/${p}/cmdline`));
    } catch {
      return false;
    }
  });
}

Deno.test("two hosts at once, each with its own agent token, over one set of servers", async () => {
  await using dir = await tempDir();
  const path = await config(dir.path);
  await using listener = await startListener(path, { env: ENV });
  await using alpha = await httpClient(listener.url, TOKEN_ALPHA);
  await using beta = await httpClient(listener.url, TOKEN_BETA);
  // The same agent over stdio is the baseline of what each host sees: from a host offering what the
  // shared downstream sessions of a listener offer (so server-everything lists the same tools).
  const offering = () =>
    new Client({ name: "baseline", version: "1.0.0" }, {
      capabilities: { sampling: {}, elicitation: { form: {}, url: {} }, roots: { listChanged: true } },
    });
  await using stdioBeta = await connectGateway(path, {
    args: ["--agent", "beta"],
    env: ENV,
    client: offering(),
  });
  await using stdioAlpha = await connectGateway(path, {
    args: ["--agent", "alpha"],
    env: ENV,
    client: offering(),
  });

  const [alphaTools, betaTools] = await Promise.all([alpha.listTools(), beta.listTools()]);
  assert.deepEqual(betaTools, await stdioBeta.client.listTools());
  assert.deepEqual(alphaTools, await stdioAlpha.client.listTools());
  assert.ok(names(betaTools.tools).includes("everything__echo"));
  assert.ok(!names(betaTools.tools).some((n) => n.startsWith("fx__")));
  assert.ok(names(alphaTools.tools).includes("fx__echo"));

  // Calls from both hosts at once, each answered in its own session.
  const [a, b] = await Promise.all([
    alpha.callTool({ name: "everything__echo", arguments: { message: "from alpha" } }),
    beta.callTool({ name: "everything__echo", arguments: { message: "from beta" } }),
  ]);
  assert.deepEqual(a.content, [{ type: "text", text: "Echo: from alpha" }]);
  assert.deepEqual(b.content, [{ type: "text", text: "Echo: from beta" }]);
  // Out of beta's scope over HTTP exactly as over stdio.
  await assert.rejects(
    beta.callTool({ name: "fx__echo", arguments: { text: "x" } }),
    (error: Error) => /Unknown tool "fx__echo"/.test(error.message),
  );
  const betaServers = structured<{ servers: { name: string }[] }>(
    await beta.callTool({ name: "list_servers", arguments: {} }),
  );
  assert.deepEqual(betaServers.servers.map((s) => s.name), ["everything"]);

  // /mcp/AGENT with that agent's token is the same scope.
  await using alphaByPath = await httpClient(`${listener.url}/alpha`, TOKEN_ALPHA);
  assert.deepEqual(await alphaByPath.listTools(), alphaTools);

  // Three sessions, two agents: one server-everything process behind them all.
  assert.equal(processesOf(listener.child.pid, EVERYTHING).length, 1);
  assert.equal((await listener.stop()).code, 0);
});

Deno.test("tokens: missing, wrong and another agent's are 401 with WWW-Authenticate, never unscoped", async () => {
  await using dir = await tempDir();
  await using listener = await startListener(await config(dir.path), { env: ENV });

  const missing = await post(listener.url, {});
  assert.equal(missing.status, 401);
  assert.equal(missing.headers.get("www-authenticate"), 'Bearer realm="mcphub"');
  assert.deepEqual(await missing.json(), { error: "Unauthorized: send Authorization: Bearer TOKEN" });

  const invalid = { error: "Unauthorized: the token is not valid here" };
  for (
    const [url, token] of [
      [listener.url, "not-a-token-of-anyone-here"],
      [`${listener.url}/beta`, TOKEN_ALPHA],
      [`${listener.url}/alpha`, TOKEN_BETA],
      [`${listener.url}/alpha`, `${TOKEN_ALPHA}x`],
    ]
  ) {
    const response = await post(url, { authorization: `Bearer ${token}` });
    assert.equal(response.status, 401, url);
    assert.equal(response.headers.get("www-authenticate"), 'Bearer realm="mcphub", error="invalid_token"');
    assert.deepEqual(await response.json(), invalid);
  }
  // An agent that does not exist is answered as a real one the token is not for (no enumeration).
  const nobody = await post(`${listener.url}/nobody`, { authorization: `Bearer ${TOKEN_ALPHA}` });
  assert.equal(nobody.status, 401);
  assert.deepEqual(await nobody.json(), invalid);

  // A session id opened by alpha is unknown to beta's token.
  const opened = await post(listener.url, { authorization: `Bearer ${TOKEN_ALPHA}` });
  assert.equal(opened.status, 200);
  await opened.body?.cancel();
  const sessionId = opened.headers.get("mcp-session-id")!;
  const list = JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" });
  const stolen = await post(listener.url, {
    authorization: `Bearer ${TOKEN_BETA}`,
    "mcp-session-id": sessionId,
    "mcp-protocol-version": "2025-06-18",
  }, list);
  assert.equal(stolen.status, 404);
  assert.deepEqual(await stolen.json(), {
    jsonrpc: "2.0",
    error: { code: -32001, message: "Session not found" },
    id: null,
  });

  // The live page has the same rules; health needs no token and says nothing about servers.
  const page = await fetch(`${listener.origin}/`);
  assert.equal(page.status, 401);
  await page.body?.cancel();
  const live = await fetch(`${listener.origin}/`, { headers: { authorization: `Bearer ${TOKEN_BETA}` } });
  assert.equal(live.status, 200);
  const html = await live.text();
  assert.match(html, /<title>mcphub: live<\/title>/);
  assert.ok(!html.includes("fx"), "beta's page names only beta's servers");
  assert.ok(!html.includes(TOKEN_BETA) && !html.includes(TOKEN_ALPHA));
  const health = await fetch(`${listener.origin}/healthz`);
  assert.deepEqual([health.status, await health.json()], [200, { status: "ok" }]);
});

Deno.test("Host and Origin outside the allow-list are refused (DNS-rebinding protection)", async () => {
  await using dir = await tempDir();
  await using listener = await startListener(await config(dir.path, `allowed_hosts: [mcp.example.org]\n`), {
    env: ENV,
  });
  const port = listener.port;
  const status = (text: string) => text.slice(0, text.indexOf("\r\n"));
  assert.equal(
    status(await rawRequest(port, `GET /healthz HTTP/1.1\r\nHost: localhost:${port}`)),
    "HTTP/1.1 200 OK",
  );
  assert.equal(
    status(await rawRequest(port, `GET /healthz HTTP/1.1\r\nHost: mcp.example.org`)),
    "HTTP/1.1 200 OK",
  );
  const rebound = await rawRequest(
    port,
    `POST /mcp HTTP/1.1\r\nHost: attacker.example:${port}\r\nAuthorization: Bearer ${TOKEN_ALPHA}\r\n` +
      "Content-Type: application/json\r\nAccept: application/json, text/event-stream",
    INITIALIZE,
  );
  assert.equal(status(rebound), "HTTP/1.1 403 Forbidden");
  assert.match(rebound, /DNS-rebinding protection/);
  const origin = await rawRequest(
    port,
    `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nOrigin: http://attacker.example\r\n` +
      `Authorization: Bearer ${TOKEN_ALPHA}\r\nContent-Type: application/json\r\n` +
      "Accept: application/json, text/event-stream",
    INITIALIZE,
  );
  assert.equal(status(origin), "HTTP/1.1 403 Forbidden");
  const sameSite = await post(listener.url, {
    authorization: `Bearer ${TOKEN_ALPHA}`,
    origin: `http://localhost:${port}`,
  });
  assert.equal(sameSite.status, 200);
  await sameSite.body?.cancel();
});

Deno.test("request body and header size limits", async () => {
  await using dir = await tempDir();
  await using listener = await startListener(await config(dir.path), { env: ENV });
  const huge = JSON.stringify({ ...JSON.parse(INITIALIZE), pad: "x".repeat(5 * 1024 * 1024) });
  const body = await post(listener.url, { authorization: `Bearer ${TOKEN_ALPHA}` }, huge);
  assert.equal(body.status, 413);
  await body.body?.cancel();
  const headers = await post(listener.url, {
    authorization: `Bearer ${TOKEN_ALPHA}`,
    "x-pad": "y".repeat(20_000),
  });
  assert.equal(headers.status, 431);
  await headers.body?.cancel();
});

Deno.test("a detached call is polled from its own session and unknown to another", async () => {
  await using dir = await tempDir();
  await using listener = await startListener(await config(dir.path), { env: ENV });
  await using first = await httpClient(listener.url, TOKEN_ALPHA);
  await using second = await httpClient(listener.url, TOKEN_ALPHA);
  const accepted = structured<{ status: string; callId: string }>(
    await first.callTool({
      name: "call_tool",
      arguments: { tool: "fx__wait", arguments: { ms: 300 }, detach: true },
    }),
  );
  assert.equal(accepted.status, "accepted");
  const poll = (client: Client) =>
    client.callTool({ name: "poll_result", arguments: { callId: accepted.callId } });
  assert.equal(structured<{ status: string }>(await poll(second)).status, "unknown");
  const done = await until("the detached result", async () => {
    const r = await poll(first);
    return (r.structuredContent as { status?: string } | undefined)?.status === "pending" ? undefined : r;
  });
  assert.deepEqual(done.content, [{ type: "text", text: "waited 300ms" }]);
  assert.equal(structured<{ status: string }>(await poll(second)).status, "unknown");
});

Deno.test("mcp connect bridges a stdio host to the shared gateway", async () => {
  await using dir = await tempDir();
  await using listener = await startListener(await config(dir.path), { env: ENV });
  await using direct = await httpClient(listener.url, TOKEN_ALPHA);
  await using box = await sandbox();
  const bridged = (token: string) =>
    new StdioClientTransport({
      command: DENO,
      args: ["run", "-A", `${ROOT}main.ts`, "mcp", "connect", listener.url],
      env: { ...box.env, MCPHUB_TOKEN: token },
      stderr: "pipe",
    });
  const transport = bridged(TOKEN_ALPHA);
  const client = new Client({ name: "stdio-host", version: "1.0.0" });
  await client.connect(transport);
  const pid = transport.pid!;
  try {
    assert.deepEqual(await client.listTools(), await direct.listTools());
    const echo = { name: "fx__echo", arguments: { text: "über the bridge ✓" } };
    assert.deepEqual(await client.callTool(echo), await direct.callTool(echo));
  } finally {
    await client.close();
  }
  // The SDK's close() sends SIGTERM when the process has not exited 2 s after EOF (a loaded machine), and
  // the end follows a signal, not at once: wait for it.
  await until(
    "the bridge to exit once the host closed stdin",
    () => Promise.resolve(alive(pid) ? undefined : true),
  );

  // Progress crosses the bridge, each notification before the result. Read as bytes: an SDK host drops a
  // notification it reads in the same chunk as the response, which any two writes may share under load.
  {
    await using raw = await rawSession(
      DENO,
      ["run", "-A", `${ROOT}main.ts`, "mcp", "connect", listener.url],
      {
        ...box.env,
        MCPHUB_TOKEN: TOKEN_ALPHA,
      },
    );
    await raw.send({
      jsonrpc: "2.0",
      id: 100,
      method: "tools/call",
      params: { name: "fx__progress", arguments: { n: 3 }, _meta: { progressToken: "bridged" } },
    });
    const result = JSON.parse(await raw.answer(100));
    assert.deepEqual(result.result, { content: [{ type: "text", text: "sent 3" }] });
    const progress = raw.lines.map((line) => JSON.parse(line))
      .filter((m) => m.method === "notifications/progress" && m.params.progressToken === "bridged")
      .map((m) => m.params.progress);
    assert.deepEqual(progress, [1, 2, 3]);
  }

  // A wrong token: the host's initialize fails with the gateway's 401, named.
  const refused = bridged("wrong-token-wrong-token");
  let stderr = "";
  refused.stderr?.on("data", (chunk: Uint8Array) => stderr += new TextDecoder().decode(chunk));
  const host = new Client({ name: "stdio-host", version: "1.0.0" });
  await assert.rejects(host.connect(refused), /refused the token \(401\)/);
  await host.close();
  // stderr is its own pipe, read after the answer on stdout it preceded: wait for the line.
  await until(
    "the bridge's 401 on stderr",
    () => Promise.resolve(/mcp connect: http:\/\/127\.0\.0\.1:\d+\/mcp: .*401/.test(stderr) || undefined),
  );
});

Deno.test("an idle session expires after session_idle; a new one starts", async () => {
  await using dir = await tempDir();
  // 5 s, not 1 s: the session must outlive the gap between the client's initialize and its tools/list on a
  // loaded machine (only its end after the last request is under test, and it is awaited).
  await using listener = await startListener(await config(dir.path, `session_idle: 5s\n`), { env: ENV });
  await using client = await httpClient(listener.url, TOKEN_ALPHA);
  await client.listTools();
  await listener.waitFor(/session [0-9a-f]{8} ended: idle for 5000ms/);
  await assert.rejects(client.listTools(), /Session not found/);
  await using again = await httpClient(listener.url, TOKEN_ALPHA);
  assert.ok((await again.listTools()).tools.length > 0);
});

Deno.test("SIGTERM drains a running call, ends the sessions and leaves no child", async () => {
  await using dir = await tempDir();
  await using listener = await startListener(await config(dir.path), { env: ENV });
  const client = await httpClient(listener.url, TOKEN_ALPHA);
  await client.listTools();
  const children = descendants(listener.child.pid);
  assert.ok(children.length >= 2, "both servers were started");
  const watcher = Deno.watchFs(dir.path);
  const call = client.callTool({ name: "fx__wait", arguments: { ms: 1500 } });
  // The fixture counts the call on disk as it starts: the event that the call is running.
  for await (const event of watcher) {
    if (event.paths.some((p) => p.endsWith("calls-wait"))) break;
  }
  watcher.close();
  const status = listener.stop();
  assert.deepEqual((await call).content, [{ type: "text", text: "waited 1500ms" }]);
  assert.equal((await status).code, 0);
  assert.match(listener.stderr(), /session [0-9a-f]{8} ended: the gateway is stopping/);
  assert.deepEqual(children.filter(alive), []);
  await client.close().catch(() => {});
});

Deno.test("refuses to start: a non-loopback address without tokens, an unset token variable", async () => {
  await using dir = await tempDir();
  const run = async (yaml: string, listen: string, env: Record<string, string> = {}) => {
    const path = await writeConfig(dir.path, yaml);
    return await runMcphub(["--config", path, "--db", `${path}.db`, "mcp", "serve", "--listen", listen], {
      env,
    });
  };
  const open = await run("servers: {}\n", "0.0.0.0:0");
  assert.equal(open.code, 1);
  assert.equal(open.stdout, "");
  assert.match(
    open.stderr,
    /listening on 0\.0\.0\.0 \(not loopback\) requires authentication: set a token for each agent in \S+mcphub\.yaml \(agents\.NAME\.token: \$\{VAR\}\), or listen on 127\.0\.0\.1/,
  );
  const unset = await run("agents:\n  ci:\n    token: ${MCPHUB_TEST_UNSET_TOKEN}\n", "127.0.0.1:0");
  assert.equal(unset.code, 1);
  assert.match(
    unset.stderr,
    /mcphub\.yaml: agents\.ci\.token: environment variable MCPHUB_TEST_UNSET_TOKEN is not set/,
  );
});

/** Reads SSE text from `body` until `done(text)` is true; then cancels the stream (a client disconnect). */
async function readSse(body: ReadableStream<Uint8Array>, done: (text: string) => boolean): Promise<string> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!done(text)) {
    const { value, done: end } = await reader.read();
    if (end) break;
    text += value;
  }
  await reader.cancel();
  return text;
}

Deno.test("a broken SSE stream resumes with Last-Event-ID and receives the call's result", async () => {
  await using dir = await tempDir();
  await using listener = await startListener(await config(dir.path), { env: ENV });
  const auth = { authorization: `Bearer ${TOKEN_ALPHA}` };
  const init = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
  });
  const opened = await post(listener.url, auth, init);
  assert.equal(opened.status, 200);
  await readSse(opened.body!, (t) => t.includes('"id":1'));
  const session = {
    ...auth,
    "mcp-session-id": opened.headers.get("mcp-session-id")!,
    "mcp-protocol-version": "2025-11-25",
  };
  const initialized = await post(
    listener.url,
    session,
    JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
  );
  assert.equal(initialized.status, 202);
  await initialized.body?.cancel();

  const call = await post(
    listener.url,
    session,
    JSON.stringify({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "fx__wait", arguments: { ms: 800 } },
    }),
  );
  // The priming event (an id, no data) and the reconnection delay come first; then the client drops.
  const first = await readSse(call.body!, (t) => /\n\n/.test(t));
  const primed = /^id: (\d{12}_[0-9a-f-]{36})\nretry: 1000\ndata: \n\n$/.exec(first);
  assert.ok(primed, `priming event: ${JSON.stringify(first)}`);
  // The server learns of the drop when it next writes to the old stream (or sees the socket close);
  // until then a resume is refused with 409, which a client retries.
  // (until's deadline, not 100 tries of 50 ms: the 800 ms call's write comes later on a loaded machine.)
  const resumed = await until("a resume that is not refused with 409", async () => {
    const response = await fetch(listener.url, {
      headers: { ...session, accept: "text/event-stream", "last-event-id": primed[1] },
    });
    if (response.status !== 409) return response;
    await response.body?.cancel();
    return undefined;
  });
  assert.equal(resumed.status, 200);
  const replay = await readSse(resumed.body!, (t) => t.includes('"id":2'));
  const data = /^data: (\{.*"id":2.*\})$/m.exec(replay);
  assert.ok(data, replay);
  assert.deepEqual(JSON.parse(data[1]), {
    result: { content: [{ type: "text", text: "waited 800ms" }] },
    jsonrpc: "2.0",
    id: 2,
  });
});
