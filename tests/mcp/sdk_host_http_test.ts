/**
 * The `--listen` sessions' transport (src/mcp/sdk_host_http.ts: v2's Streamable HTTP server transport) held
 * to v1's (1.32.2), which served them before: the same requests to both, in process, get the same
 * answers (status, headers, body), and the host's `Protocol` gets the same `extra`.
 */
import assert from "node:assert/strict";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/server/webStandardStreamableHttp.js"
import { WebStandardStreamableHTTPServerTransport as V1 } from "npm:@modelcontextprotocol/sdk@1.32.2/server/webStandardStreamableHttp.js";
import { WebStandardStreamableHTTPServerTransport as V2Base } from "@modelcontextprotocol/server";
import { type JSONRPCMessage, loadHostHttpSdk } from "../../src/mcp/mod.ts";
import { SessionEvents } from "../../src/http/mod.ts";

const URL_MCP = "http://127.0.0.1:9/mcp?x=1";
const ACCEPT = "application/json, text/event-stream";
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

interface Plain {
  handleRequest(request: Request): Promise<Response>;
  start(): Promise<void>;
  close(): Promise<void>;
  send(message: JSONRPCMessage): Promise<void>;
  onmessage?: (message: JSONRPCMessage, extra?: Record<string, unknown>) => void;
}

/** A session on `transport` whose requests are answered with their own method and params. */
async function serve(transport: Plain, extras: Record<string, unknown>[]): Promise<Plain> {
  transport.onmessage = (message, extra) => {
    extras.push(extra ?? {});
    if (!("method" in message) || !("id" in message)) return;
    const result = message.method === "initialize"
      ? { protocolVersion: "2025-11-25", capabilities: {}, serverInfo: { name: "t", version: "1" } }
      : { echo: message.method, params: message.params ?? null };
    void transport.send({ jsonrpc: "2.0", id: message.id, result } as JSONRPCMessage);
  };
  await transport.start();
  return transport;
}

function post(body: unknown, headers: Record<string, string> = {}): Request {
  return new Request(URL_MCP, {
    method: "POST",
    headers: { accept: ACCEPT, "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

function initialize(version: string, id = 1) {
  return {
    jsonrpc: "2.0",
    id,
    method: "initialize",
    params: { protocolVersion: version, capabilities: {}, clientInfo: { name: "c", version: "1" } },
  };
}

/** A response as compared: status, headers, and the body with random ids (stream ids) made equal. */
async function seen(response: Response): Promise<unknown> {
  return {
    status: response.status,
    headers: [...response.headers].sort(),
    body: (await response.text()).replaceAll(UUID, "UUID"),
  };
}

const SESSION = { "mcp-session-id": "s1" };
/** Each step: a request, made for the session opened by the steps before it. */
const STEPS: [string, () => Request][] = [
  [
    "GET before initialize",
    () => new Request(URL_MCP, { headers: { accept: "text/event-stream", ...SESSION } }),
  ],
  ["POST before initialize", () => post({ jsonrpc: "2.0", id: 1, method: "ping" }, SESSION)],
  ["initialize with a 2026 version", () => post(initialize("2026-07-28"))],
  ["initialize again", () => post(initialize("2025-11-25", 2))],
  [
    "no accept",
    () => post({ jsonrpc: "2.0", id: 3, method: "ping" }, { ...SESSION, accept: "application/json" }),
  ],
  [
    "not JSON content",
    () => post({ jsonrpc: "2.0", id: 3, method: "ping" }, { ...SESSION, "content-type": "text/plain" }),
  ],
  ["invalid JSON", () => post("{", SESSION)],
  ["not JSON-RPC", () => post({ id: 3, method: "ping" }, SESSION)],
  [
    "a batch over 100",
    () => post(Array.from({ length: 101 }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "ping" })), SESSION),
  ],
  ["no session id", () => post({ jsonrpc: "2.0", id: 3, method: "ping" })],
  ["another session id", () => post({ jsonrpc: "2.0", id: 3, method: "ping" }, { "mcp-session-id": "s2" })],
  [
    "an unsupported version",
    () =>
      post({ jsonrpc: "2.0", id: 3, method: "ping" }, { ...SESSION, "mcp-protocol-version": "2026-07-28" }),
  ],
  [
    "a request at 2025-06-18 (no priming)",
    () =>
      post({ jsonrpc: "2.0", id: 4, method: "tools/list", params: { k: [1] } }, {
        ...SESSION,
        "mcp-protocol-version": "2025-06-18",
      }),
  ],
  [
    "a request at 2025-11-25 (primed)",
    () =>
      post({ jsonrpc: "2.0", id: 5, method: "tools/list" }, {
        ...SESSION,
        "mcp-protocol-version": "2025-11-25",
      }),
  ],
  [
    "a batch of two",
    () =>
      post([{ jsonrpc: "2.0", id: 6, method: "a" }, { jsonrpc: "2.0", id: 7, method: "b" }], {
        ...SESSION,
        "mcp-protocol-version": "2025-11-25",
      }),
  ],
  ["a notification", () => post({ jsonrpc: "2.0", method: "notifications/initialized" }, SESSION)],
  ["GET without accept", () => new Request(URL_MCP, { headers: SESSION })],
  ["PUT", () => new Request(URL_MCP, { method: "PUT", headers: SESSION })],
  [
    "a body over the bound",
    () => post({ jsonrpc: "2.0", id: 8, method: "x", params: { pad: "x".repeat(2048) } }, SESSION),
  ],
  ["DELETE", () => new Request(URL_MCP, { method: "DELETE", headers: SESSION })],
  ["after DELETE", () => post({ jsonrpc: "2.0", id: 9, method: "ping" }, SESSION)],
];

Deno.test("the --listen transport (v2's) answers every request as v1's did: status, headers, body", async () => {
  const { WebStandardStreamableHTTPServerTransport: Ours } = await loadHostHttpSdk();
  const options = () => ({
    sessionIdGenerator: () => "s1",
    eventStore: new SessionEvents(),
    retryInterval: 1000,
    maxRequestBodySize: 1024,
  });
  const v1 = await serve(new V1(options()) as unknown as Plain, []);
  const ours = await serve(new Ours(options()) as unknown as Plain, []);
  try {
    for (const [name, request] of STEPS) {
      assert.deepEqual(
        await seen(await ours.handleRequest(request())),
        await seen(await v1.handleRequest(request())),
        name,
      );
    }
  } finally {
    await v1.close();
    await ours.close();
  }
});

Deno.test("the host's Protocol gets v1's extra: requestInfo (headers, url) beside v2's request, and closeSSEStream where v1 gave it", async () => {
  const { WebStandardStreamableHTTPServerTransport: Ours } = await loadHostHttpSdk();
  const options = () => ({ sessionIdGenerator: () => "s1", eventStore: new SessionEvents() });
  const v1Extras: Record<string, unknown>[] = [];
  const ourExtras: Record<string, unknown>[] = [];
  const v1 = await serve(new V1(options()) as unknown as Plain, v1Extras);
  const ours = await serve(new Ours(options()) as unknown as Plain, ourExtras);
  // Wrapped again after connecting, as the listener does: requestInfo is added once, the handler runs once.
  const inner = ours.onmessage!;
  let calls = 0;
  ours.onmessage = (message, extra) => {
    calls++;
    inner(message, extra);
  };
  try {
    for (
      const request of [
        post(initialize("2025-11-25")),
        post({ jsonrpc: "2.0", method: "notifications/initialized" }, SESSION),
      ]
    ) {
      await (await v1.handleRequest(request.clone())).text();
      await (await ours.handleRequest(request)).text();
    }
    assert.equal(calls, 2);
    assert.equal(ourExtras.length, 2);
    for (const [i, extra] of ourExtras.entries()) {
      const expected = v1Extras[i]!;
      assert.deepEqual(extra.requestInfo, expected.requestInfo);
      assert.ok(extra.request instanceof Request);
      assert.equal(typeof extra.closeSSEStream, typeof expected.closeSSEStream);
      assert.equal(typeof extra.closeStandaloneSSEStream, typeof expected.closeStandaloneSSEStream);
      assert.equal(extra.authInfo, expected.authInfo);
    }
    assert.equal((ourExtras[0]!.requestInfo as { url: URL }).url.href, URL_MCP);
  } finally {
    await v1.close();
    await ours.close();
  }
});

Deno.test("the members of v2's transport that sdk_host_http.ts replaces still exist (an SDK upgrade that removes one fails here by name)", async () => {
  const { REPLACED_MEMBERS } = await loadHostHttpSdk();
  assert.deepEqual(REPLACED_MEMBERS, ["supportsEmptySSEData"]);
  const prototype = V2Base.prototype as unknown as Record<string, unknown>;
  for (const name of REPLACED_MEMBERS) {
    assert.equal(
      typeof prototype[name],
      "function",
      `v2's WebStandardStreamableHTTPServerTransport has no ${name}`,
    );
  }
});
