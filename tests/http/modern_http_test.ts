/**
 * MCP 2026-07-28 over HTTP (`mcp serve --listen`): the v2 client pinned and in `auto` mode lists and
 * calls with no session, alternating between two replicas on one store; the routing headers are
 * checked (-32020); the v1 client's sessions on the same endpoint are unchanged; an MRTR started on one
 * replica is completed by retries on the other (through the store), and a sealed requestState that is
 * forged, altered, another agent's, another request's or used is refused.
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
import { pgCluster, pgTest } from "../store/_pg.ts";

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
async function modernHttp(
  urls: string[],
  mode: "auto" | { pin: string },
  answer: (message: string) => Record<string, unknown> = () => ({
    action: "accept",
    content: { name: "Ada" },
  }),
) {
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
  const asked: string[] = [];
  client.setRequestHandler("elicitation/create", (request) => {
    asked.push(request.params.message);
    return answer(request.params.message) as never;
  });
  await client.connect(transport);
  return {
    client,
    seen,
    /** The messages of the elicitations the host was asked, in order. */
    asked,
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
  const held: { endpoint?: ModernEndpoint } = {};
  // As the real gateway does: its close closes its server, which closes the transport (the endpoint).
  const gateway = {
    connect: () => Promise.resolve(),
    close: async () => {
      closes++;
      if (closes < 5) await held.endpoint!.close();
    },
  } as unknown as Gateway;
  const endpoint = held.endpoint = new ModernEndpoint(gateway, undefined, {} as never);
  await endpoint.close();
  await endpoint.close();
  assert.equal(closes, 1);
});

/** A 2026-07-28 meta block with no client capabilities. */
const BARE_META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
};

/**
 * One 2026-07-28 POST as a host sends it (the era's headers, then `headers`; one set to undefined is
 * left out): its status and JSON body (null when it has none).
 */
async function modernPost(url: string, headers: Record<string, string | undefined>, body: unknown) {
  const all: Record<string, string | undefined> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": "2026-07-28",
    ...headers,
  };
  const response = await fetch(url, {
    method: "POST",
    headers: Object.entries(all).filter((e): e is [string, string] => e[1] !== undefined),
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

Deno.test("routing headers: a mismatch is -32020; the v1 client's session on the same endpoint is unchanged", async () => {
  await using dir = await tempDir();
  const path = await config(dir.path);
  await using listener = await startListener(path);
  const meta = BARE_META;
  const post = (headers: Record<string, string>, body: unknown) => modernPost(listener.url, headers, body);
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

Deno.test("routing headers: a request missing MCP-Protocol-Version, Mcp-Method or a required Mcp-Name is -32020 (HTTP 400); a legacy POST and the v2 client are unaffected", async () => {
  await using dir = await tempDir();
  const path = await config(dir.path);
  await using listener = await startListener(path);
  const post = (headers: Record<string, string | undefined>, body: unknown) =>
    modernPost(listener.url, headers, body);
  const request = (id: number, method: string, params: Record<string, unknown>) => ({
    jsonrpc: "2.0",
    id,
    method,
    params: { ...params, _meta: BARE_META },
  });
  const refused = async (
    headers: Record<string, string | undefined>,
    body: { id: number },
    message: RegExp,
  ) => {
    const answer = await post(headers, body);
    assert.equal(answer.status, 400, JSON.stringify(answer.body));
    assert.deepEqual(Object.keys(answer.body).sort(), ["error", "id", "jsonrpc"]);
    assert.equal(answer.body.id, body.id);
    assert.equal(answer.body.error.code, -32020);
    assert.match(answer.body.error.message, message);
  };
  const call = request(1, "tools/call", { name: "modern__echo", arguments: { text: "x" } });
  // The standard headers in the revision's order: MCP-Protocol-Version, Mcp-Method, then Mcp-Name.
  await refused(
    { "mcp-protocol-version": undefined },
    call,
    /^the required MCP-Protocol-Version header is missing \(the body's _meta names 2026-07-28\)$/,
  );
  await refused(
    { "mcp-protocol-version": "2025-11-25", "mcp-method": "tools/call", "mcp-name": "modern__echo" },
    call,
    /^MCP-Protocol-Version header "2025-11-25" does not match the body's _meta protocol version "2026-07-28"$/,
  );
  await refused(
    {},
    call,
    /^the required Mcp-Method header is missing \(the body's method is "tools\/call"\)$/,
  );
  await refused(
    { "mcp-method": "tools/call" },
    call,
    /^the required Mcp-Name header is missing \(the body's name is "modern__echo"\)$/,
  );
  await refused(
    { "mcp-method": "prompts/get" },
    request(2, "prompts/get", { name: "legacy__greet" }),
    /^the required Mcp-Name header is missing \(the body's name is "legacy__greet"\)$/,
  );
  await refused(
    { "mcp-method": "resources/read" },
    request(3, "resources/read", { uri: "mcphub://legacy/x" }),
    /^the required Mcp-Name header is missing \(the body's uri is "mcphub:\/\/legacy\/x"\)$/,
  );
  // Mis-encoded: a base64 form that is not base64 of UTF-8.
  await refused(
    { "mcp-method": "resources/read", "mcp-name": "=?base64?%%?=" },
    request(4, "resources/read", { uri: "mcphub://legacy/x" }),
    /^Mcp-Name header "=\?base64\?%%\?=" is not valid base64 of UTF-8$/,
  );
  // Methods without a name need only Mcp-Method; with all the headers a call is answered.
  const listed = await post({ "mcp-method": "tools/list" }, request(5, "tools/list", {}));
  assert.equal(listed.status, 200, JSON.stringify(listed.body));
  assert.ok(listed.body.result.tools.some((t: { name: string }) => t.name === "modern__echo"));
  const answered = await post({ "mcp-method": "tools/call", "mcp-name": "modern__echo" }, call);
  assert.equal(answered.status, 200, JSON.stringify(answered.body));
  assert.equal(text(answered.body.result), "x");
  // A notification carries no header rules (the revision sets none): accepted without them.
  const note = await post({ "mcp-protocol-version": undefined }, {
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: 1, _meta: BARE_META },
  });
  assert.deepEqual(note, { status: 202, body: null });

  // A legacy POST (the 2025 initialize: no routing headers) is served as before.
  const legacy = await fetch(listener.url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    }),
  });
  assert.equal(legacy.status, 200);
  assert.ok(legacy.headers.get("mcp-session-id"));
  await legacy.body?.cancel();
  // The v2 client pinned to 2026-07-28 sends the headers: it lists and calls through the listener.
  const host = new ModernClient({ name: "headers", version: "2.0.0" }, {
    versionNegotiation: { mode: { pin: "2026-07-28" } },
  });
  await host.connect(new StreamableHTTPClientTransport(new URL(listener.url)));
  try {
    assert.ok((await host.listTools()).tools.some((t) => t.name === "modern__echo"));
    assert.equal(text(await host.callTool({ name: "modern__echo", arguments: { text: "v2" } })), "v2");
  } finally {
    await host.close().catch(() => {});
  }
});

Deno.test("a 2026-07-28 request without the envelope is -32602, another version -32022, a removed or unknown method -32601 (HTTP 400, 400, 404), each with its id; a good one is served", async () => {
  await using dir = await tempDir();
  const path = await writeConfig(
    dir.path,
    `servers:\n  legacy:\n    command: ${q(DENO)}\n    args: [run, -A, ${q(FIXTURE)}]\n`,
  );
  await using listener = await startListener(path);
  const post = (method: string, id: number, params: Record<string, unknown>, version = "2026-07-28") =>
    modernPost(listener.url, { "mcp-method": method, "mcp-protocol-version": version }, {
      jsonrpc: "2.0",
      id,
      method,
      params,
    });
  const { "io.modelcontextprotocol/clientCapabilities": _, ...noCapabilities } = BARE_META;
  const { "io.modelcontextprotocol/protocolVersion": __, ...noVersion } = BARE_META;
  for (
    const [id, params, lacks] of [
      [1, {}, /has none/],
      [2, { _meta: noVersion }, /io\.modelcontextprotocol\/protocolVersion/],
      [3, { _meta: noCapabilities }, /io\.modelcontextprotocol\/clientCapabilities/],
    ] as const
  ) {
    const answer = await post("server/discover", id, params);
    assert.equal(answer.status, 400, JSON.stringify(answer.body));
    assert.equal(answer.body.id, id);
    assert.equal(answer.body.error.code, -32602);
    assert.match(answer.body.error.message, lacks);
  }
  const other = { ...BARE_META, "io.modelcontextprotocol/protocolVersion": "v999.0.0" };
  const unsupported = await post("server/discover", 4, { _meta: other }, "v999.0.0");
  assert.equal(unsupported.status, 400);
  assert.deepEqual(unsupported.body, {
    jsonrpc: "2.0",
    id: 4,
    error: {
      code: -32022,
      message: "Unsupported protocol version: v999.0.0",
      data: {
        supported: ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"],
        requested: "v999.0.0",
      },
    },
  });
  for (const method of ["initialize", "ping", "logging/setLevel", "resources/subscribe", "unknown/method"]) {
    const params = method === "resources/subscribe"
      ? { uri: "test://x", _meta: BARE_META }
      : { _meta: BARE_META };
    const answer = await post(method, 5, params);
    assert.equal(answer.status, 404, `${method}: ${JSON.stringify(answer.body)}`);
    assert.equal(answer.body.id, 5);
    assert.equal(answer.body.error.code, -32601, method);
  }
  const discovered = await post("server/discover", 6, { _meta: BARE_META });
  assert.equal(discovered.status, 200);
  assert.ok(discovered.body.result.supportedVersions.includes("2026-07-28"));
  // A downstream's error to a call keeps HTTP 200 (only the gateway's own "no such method" is 404).
  const call = await modernPost(
    listener.url,
    { "mcp-method": "tools/call", "mcp-name": "legacy__nope" },
    { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "legacy__nope", _meta: BARE_META } },
  );
  assert.equal(call.status, 200, JSON.stringify(call.body));
  assert.ok(call.body.error || call.body.result.isError, JSON.stringify(call.body));
});

Deno.test("progress to a 2026-07-28 host over HTTP: a request with a progressToken is answered on an event stream, its progress then its result; without the token, one JSON answer", async () => {
  await using dir = await tempDir();
  const path = await writeConfig(
    dir.path,
    `servers:\n  legacy:\n    command: ${q(DENO)}\n    args: [run, -A, ${q(FIXTURE)}]\n`,
  );
  await using listener = await startListener(path);
  const host = new ModernClient({ name: "progress", version: "2.0.0" }, {
    versionNegotiation: { mode: { pin: "2026-07-28" } },
  });
  await host.connect(new StreamableHTTPClientTransport(new URL(listener.url)));
  try {
    const seen: number[] = [];
    const result = await host.callTool({ name: "legacy__progress", arguments: { n: 3 } }, {
      onprogress: (p) => seen.push(p.progress),
    });
    assert.equal(text(result), "sent 3");
    assert.deepEqual(seen, [1, 2, 3]);
  } finally {
    await host.close();
  }
  // The wire: the notifications carry the host's token, the last event is the answer with the host's id.
  const headers = { "mcp-method": "tools/call", "mcp-name": "legacy__progress" };
  const params = { name: "legacy__progress", arguments: { n: 2 } };
  const streamed = await fetch(listener.url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      ...headers,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: "p1",
      method: "tools/call",
      params: { ...params, _meta: { ...BARE_META, progressToken: "tok" } },
    }),
  });
  assert.equal(streamed.headers.get("content-type"), "text/event-stream");
  const events = (await streamed.text()).split("\n\n").filter((e) => e.startsWith("event: message"))
    .map((e) => JSON.parse(e.slice(e.indexOf("data: ") + 6)));
  assert.deepEqual(events.slice(0, 2).map((e) => e.params), [
    { progressToken: "tok", progress: 1, total: 2 },
    { progressToken: "tok", progress: 2, total: 2 },
  ]);
  assert.equal(events.length, 3);
  assert.equal(events[2].id, "p1");
  assert.equal(text(events[2].result), "sent 2");
  const plain = await modernPost(listener.url, headers, {
    jsonrpc: "2.0",
    id: "p2",
    method: "tools/call",
    params: { ...params, _meta: BARE_META },
  });
  assert.equal(plain.status, 200);
  assert.equal(plain.body.id, "p2");
  assert.equal(text(plain.body.result), "sent 2");
});

Deno.test("a call whose server asks for sampling, from a 2026-07-28 request that did not declare it: -32021 naming it (HTTP 400)", async () => {
  await using dir = await tempDir();
  const path = await writeConfig(
    dir.path,
    `servers:\n  legacy:\n    command: ${q(DENO)}\n    args: [run, -A, ${q(FIXTURE)}, --state, ${
      q(dir.path)
    }]\n`,
  );
  await using listener = await startListener(path);
  const answer = await modernPost(
    listener.url,
    { "mcp-method": "tools/call", "mcp-name": "legacy__sample" },
    { jsonrpc: "2.0", id: "s", method: "tools/call", params: { name: "legacy__sample", _meta: BARE_META } },
  );
  assert.equal(answer.status, 400, JSON.stringify(answer.body));
  assert.equal(answer.body.id, "s");
  assert.equal(answer.body.error.code, -32021);
  assert.deepEqual(answer.body.error.data, { requiredCapabilities: { sampling: {} } });
});

Deno.test("MRTR over HTTP: a legacy server's elicitation reaches a 2026-07-28 host as input_required", async () => {
  await using dir = await tempDir();
  const path = await config(dir.path);
  await using a = await startListener(path, { db: `${dir.path}/shared.db` });
  // One replica: the retry finds the open call; the host's answer completes it.
  await using host = await modernHttp([a.url], { pin: "2026-07-28" });
  const result = await host.client.callTool({ name: "relay__elicit", arguments: {} });
  assert.deepEqual(JSON.parse(text(result)), { action: "accept", content: { name: "Ada" } });
  assert.deepEqual(host.asked, ["Who?"]);
});

/** Two replicas on one store; the v2 client's requests alternate between them; an MRTR of `rounds`. */
async function crossReplica(db: string, dir: string, rounds: number) {
  const path = await config(dir);
  await using a = await startListener(path, { db });
  await using b = await startListener(path, { db });
  let n = 0;
  await using host = await modernHttp(
    [a.url, b.url],
    { pin: "2026-07-28" },
    () => ({ action: "accept", content: { name: `Ada ${++n}` } }),
  );
  const result = await host.client.callTool({ name: "relay__elicit", arguments: { rounds } });
  // Every round's answer reached the one open call, in order; nothing was asked twice (a call run again
  // would have asked its first question again).
  const answers = Array.from(
    { length: rounds },
    (_, i) => ({ action: "accept", content: { name: `Ada ${i + 1}` } }),
  );
  assert.deepEqual(JSON.parse(text(result)), rounds === 1 ? answers[0] : answers);
  assert.deepEqual(
    host.asked,
    Array.from({ length: rounds }, (_, i) => rounds === 1 ? "Who?" : `Who? (${i + 1} of ${rounds})`),
  );
  // The call went to one replica; retries reached the other (answered through the store) and, with three
  // rounds, the first one again (answered there).
  const calls = host.seen.filter((s) => s.method === "tools/call" && s.name === "relay__elicit");
  assert.equal(calls.length, rounds + 1);
  const owner = calls[0]!.origin;
  assert.ok(calls.slice(1).some((c) => c.origin !== owner));
  if (rounds > 2) assert.ok(calls.slice(1).some((c) => c.origin === owner));
}

Deno.test("MRTR across two replicas on one SQLite file: retries on the other replica complete the call open on the first, never run again", async () => {
  await using dir = await tempDir();
  await crossReplica(`${dir.path}/shared.db`, dir.path, 3);
});

pgTest(
  "MRTR across two replicas on one PostgreSQL store: the retry on the other replica completes the call",
  async () => {
    const url = await (await pgCluster()).database();
    await using dir = await tempDir();
    await crossReplica(url, dir.path, 2);
  },
);

const ALPHA = "alpha-token-0123456789abcdef";
const BETA = "beta-token-0123456789abcdef";
const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} } },
};

/** One 2026-07-28 POST with a bearer token, as a host sends it. */
async function post(url: string, token: string, body: Record<string, unknown>) {
  const params = body.params as { name?: string };
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": String(body.method),
      ...params?.name ? { "mcp-name": params.name } : {},
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({ jsonrpc: "2.0", ...body }),
  });
  return await response.json();
}

Deno.test("a sealed requestState: forged, altered, another agent's, another request's or a used one is refused by name on either replica, never run", async () => {
  await using dir = await tempDir();
  const path = await writeConfig(
    dir.path,
    `servers:
  relay:
    command: ${q(DENO)}
    args: [run, -A, ${q(RELAY)}]
agents:
  alpha:
    token: \${TOK_ALPHA}
  beta:
    token: \${TOK_BETA}
`,
  );
  const db = `${dir.path}/shared.db`;
  const env = { TOK_ALPHA: ALPHA, TOK_BETA: BETA };
  await using a = await startListener(path, { db, env });
  await using b = await startListener(path, { db, env });
  const call = { method: "tools/call", params: { name: "relay__elicit", arguments: {}, _meta: META } };
  const first = await post(a.url, ALPHA, { id: 1, ...call });
  assert.equal(first.result.resultType, "input_required");
  const [key] = Object.keys(first.result.inputRequests);
  assert.equal(first.result.inputRequests[key!].method, "elicitation/create");
  const state: string = first.result.requestState;
  const inputResponses = { [key!]: { action: "accept", content: { name: "Ada" } } };
  const retry = (s: string, extra: Record<string, unknown> = {}) => ({
    id: 2,
    method: "tools/call",
    params: { ...call.params, inputResponses, requestState: s, ...extra },
  });
  const refused = async (url: string, token: string, body: Record<string, unknown>, message: RegExp) => {
    const answer = await post(url, token, body);
    assert.equal(answer.id, 2);
    assert.equal(answer.error?.code, -32602, JSON.stringify(answer));
    assert.match(answer.error.message, message);
  };
  const forged = /requestState was not issued by this gateway \(its seal does not verify: forged, altered/;
  // Forged and altered (a byte of the sealed contents or of the signature changed): refused on both.
  const [prefix, payload, mac] = state.split(".");
  const flip = (s: string) => (s[5] === "A" ? "B" : "A");
  const altered = `${prefix}.${payload!.slice(0, 5)}${flip(payload!)}${payload!.slice(6)}.${mac}`;
  const badMac = `${prefix}.${payload}.${mac!.slice(0, 5)}${flip(mac!)}${mac!.slice(6)}`;
  for (const url of [a.url, b.url]) {
    await refused(url, ALPHA, retry("not-a-state"), forged);
    await refused(url, ALPHA, retry(altered), forged);
    await refused(url, ALPHA, retry(badMac), forged);
    // Another agent's, with its own valid token.
    await refused(url, BETA, retry(state), /requestState was issued to another agent; nothing was run/);
    // The same state for other arguments, or another tool.
    await refused(
      url,
      ALPHA,
      retry(state, { arguments: { rounds: 1 } }),
      /requestState belongs to another request \(its method, name or arguments differ\)/,
    );
    await refused(
      url,
      ALPHA,
      retry(state, { name: "relay__zeta" }),
      /requestState belongs to another request/,
    );
  }
  // None of that ran anything or used the state: the right retry on the other replica completes the call.
  const done = await post(b.url, ALPHA, retry(state));
  assert.equal(done.id, 2);
  assert.equal(done.result.resultType, "complete");
  assert.deepEqual(JSON.parse(done.result.content[0].text), { action: "accept", content: { name: "Ada" } });
  // Used once: a replay is refused on either replica.
  await refused(
    b.url,
    ALPHA,
    retry(state),
    /requestState was already used \(a continuation is answered once\)/,
  );
  await refused(
    a.url,
    ALPHA,
    retry(state),
    /requestState was already used, or the call it continues has ended/,
  );
  // The key is the store's (one for both replicas), and neither replica printed it.
  const { DatabaseSync } = await import("node:sqlite");
  const store = new DatabaseSync(db, { readOnly: true });
  const rows = store.prepare("SELECT secret FROM mcphub_keys").all() as { secret: string }[];
  store.close();
  assert.equal(rows.length, 1);
  assert.match(rows[0]!.secret, /^[0-9a-f]{64}$/);
  for (const replica of [a, b]) assert.ok(!replica.stderr().includes(rows[0]!.secret));
});

Deno.test("MRTR across replicas: when the replica holding the call has stopped, a retry on the other ends with a clear error, never run there", async () => {
  await using dir = await tempDir();
  const path = await config(dir.path);
  const db = `${dir.path}/shared.db`;
  await using a = await startListener(path, { db });
  await using b = await startListener(path, { db });
  const meta = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} } },
  };
  const params = { name: "relay__elicit", arguments: {}, _meta: meta };
  const send = async (url: string, body: Record<string, unknown>) =>
    await (await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": params.name,
      },
      body: JSON.stringify({ jsonrpc: "2.0", ...body }),
    })).json();
  const first = await send(a.url, { id: 1, method: "tools/call", params });
  assert.equal(first.result.resultType, "input_required");
  const [key] = Object.keys(first.result.inputRequests);
  // The replica holding the call goes away (its downstream call with it).
  await a.stop();
  const answer = await send(b.url, {
    id: 2,
    method: "tools/call",
    params: {
      ...params,
      requestState: first.result.requestState,
      inputResponses: { [key!]: { action: "accept", content: { name: "Ada" } } },
    },
  });
  assert.equal(answer.id, 2);
  assert.equal(answer.error?.code, -32603, JSON.stringify(answer));
  assert.match(
    answer.error.message,
    /^The replica holding this call did not take up the retry within 30 s \(it may have stopped\); the call was not run again here, and its outcome is unknown$/,
  );
});

Deno.test("detach across replicas: poll_result on the other replica answers a call detached on the first (state in the store), scoped to the agent", async () => {
  await using dir = await tempDir();
  const path = await config(dir.path);
  const db = `${dir.path}/shared.db`;
  await using a = await startListener(path, { db });
  await using b = await startListener(path, { db });
  await using host = await modernHttp([a.url, b.url], { pin: "2026-07-28" });
  const c = host.client;
  const accepted = structured<{ status: string; callId: string }>(
    await c.callTool({
      name: "call_tool",
      arguments: { tool: "legacy__echo", arguments: { text: "far away" }, detach: true },
    }),
  );
  assert.equal(accepted.status, "accepted");
  const started = host.seen.filter((s) => s.method === "tools/call").at(-1)!.origin;
  // Polled until the call's own state says it is done; every poll is answered, never "unknown".
  const polledOn = new Set<string>();
  let result: Record<string, unknown>;
  for (;;) {
    result = await c.callTool({ name: "poll_result", arguments: { callId: accepted.callId } });
    polledOn.add(host.seen.filter((s) => s.method === "tools/call").at(-1)!.origin);
    const status = (result.structuredContent as { status?: string } | undefined)?.status;
    assert.notEqual(status, "unknown", JSON.stringify(result));
    if (status !== "pending") break;
  }
  assert.equal(text(result), "far away");
  // The replica that did not run the call answered at least one poll.
  assert.ok([...polledOn].some((origin) => origin !== started));
  // An id no replica issued is unknown on both.
  for (let i = 0; i < 2; i++) {
    const unknown = structured<{ status: string }>(
      await c.callTool({ name: "poll_result", arguments: { callId: "0".repeat(32) } }),
    );
    assert.equal(unknown.status, "unknown");
  }
});

Deno.test("Mcp-Param-* headers from a 2026-07-28 host: checked against the published x-mcp-header declarations (-32020); Mcp-Name decoded", async () => {
  await using dir = await tempDir();
  const path = await writeConfig(
    dir.path,
    `servers:\n  modern:\n    command: ${q(DENO)}\n    args: [run, -A, ${q(MODERN)}, --route]\n`,
  );
  await using listener = await startListener(path);
  // The v2 client mirrors the declared arguments, as it does to any server; the gateway accepts them.
  const sent: Record<string, string>[] = [];
  const transport = new StreamableHTTPClientTransport(new URL(listener.url), {
    fetch: (input: string | URL | Request, init?: RequestInit) => {
      const headers = new Headers(init?.headers);
      if (headers.get("mcp-method") === "tools/call") {
        sent.push(Object.fromEntries([...headers].filter(([k]) => k.startsWith("mcp-param-"))));
      }
      return fetch(input, init);
    },
  });
  const host = new ModernClient({ name: "modern-http", version: "2.0.0" }, {
    versionNegotiation: { mode: { pin: "2026-07-28" } },
  });
  await host.connect(transport);
  try {
    const route = (await host.listTools()).tools.find((t) => t.name === "modern__route");
    assert.equal(
      (route?.inputSchema.properties as Record<string, Record<string, unknown>>).region!["x-mcp-header"],
      "Region",
    );
    const args = { region: "Zürich", count: 3, opts: { flag: true } };
    const result = await host.callTool({ name: "modern__route", arguments: args });
    assert.deepEqual(JSON.parse(text(result)), args);
    assert.deepEqual(sent, [{
      "mcp-param-region": "=?base64?WsO8cmljaA==?=",
      "mcp-param-count": "3",
      "mcp-param-flag": "true",
    }]);
  } finally {
    await host.close().catch(() => {});
  }

  const post = (name: string, args: Record<string, unknown>, headers: Record<string, string>) =>
    modernPost(listener.url, { "mcp-method": "tools/call", "mcp-name": name, ...headers }, {
      jsonrpc: "2.0",
      id: 9,
      method: "tools/call",
      params: { name, arguments: args, _meta: BARE_META },
    });
  const refused = async (headers: Record<string, string>, args: Record<string, unknown>, message: RegExp) => {
    const answer = await post("modern__route", args, headers);
    assert.equal(answer.status, 400, JSON.stringify(answer.body));
    assert.equal(answer.body.id, 9);
    assert.equal(answer.body.error.code, -32020);
    assert.match(answer.body.error.message, message);
  };
  await refused(
    {},
    { region: "eu" },
    /the body carries region="eu" but the Mcp-Param-Region header is absent/,
  );
  await refused({ "mcp-param-region": "us" }, { region: "eu" }, /Mcp-Param-Region header decodes to "us"/);
  await refused(
    { "mcp-param-region": "eu", "mcp-param-count": "4" },
    { region: "eu", count: 5 },
    /Mcp-Param-Count header decodes to "4" but the body carries count=5/,
  );
  await refused({ "mcp-param-region": "=?base64?%%?=" }, { region: "eu" }, /invalid base64/);
  // Agreeing headers (an integer compared as a number; a header for an absent value ignored) pass.
  const ok = await post("modern__route", { region: "eu", count: 5 }, {
    "mcp-param-region": "eu",
    "mcp-param-count": "5.0",
    "mcp-param-flag": "true",
  });
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
  assert.deepEqual(JSON.parse(text(ok.body.result)), { region: "eu", count: 5 });
  // Mcp-Name in the base64 form is decoded before it is compared; a tool declaring nothing checks nothing.
  const encoded = await post("modern__echo", { text: "x" }, {
    "mcp-name": `=?base64?${btoa("modern__echo")}?=`,
    "mcp-param-region": "anything",
  });
  assert.equal(encoded.status, 200, JSON.stringify(encoded.body));
  assert.equal(text(encoded.body.result), "x");
});
