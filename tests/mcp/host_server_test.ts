/**
 * The gateway's HostServer answers as the SDK's `Server` does (host_server.ts): the same JSON-RPC
 * messages sent to each, over the SDK's in-memory transport, give the same answers, and the same calls
 * on each throw the same errors.
 */
import assert from "node:assert/strict";
import { Server } from "@modelcontextprotocol/sdk/server";
// @ts-types="@modelcontextprotocol/sdk/inMemory"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  CallToolRequestSchema,
  type JSONRPCMessage,
  ListToolsRequestSchema,
  type ServerCapabilities,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/sdk/types.js";
import { HostServer } from "../../src/mcp/sdk.ts";
import { GATEWAY_CAPABILITIES } from "../../src/gateway/passthrough.ts";

type AnyServer = Server | HostServer;

interface Session {
  server: AnyServer;
  /** Sends raw messages one by one; returns every message the server sent back meanwhile. */
  exchange(messages: unknown[]): Promise<JSONRPCMessage[]>;
  initialized: () => number;
  close(): Promise<void>;
}

/** `setRequestHandler` of either server (v1's `Server` and `HostServer` type it apart). */
function on(server: AnyServer, schema: unknown, handler: (request: unknown) => unknown): void {
  (server.setRequestHandler as (schema: unknown, handler: (request: unknown) => unknown) => void).call(
    server,
    schema,
    handler,
  );
}

async function session(make: () => AnyServer): Promise<Session> {
  const server = make();
  let initialized = 0;
  server.oninitialized = () => initialized++;
  // The tools/call check: a handler whose result is whatever the request's arguments say.
  on(server, CallToolRequestSchema, (request) => {
    const wanted = (request as { params: { arguments?: { result?: unknown } } }).params.arguments?.result;
    return wanted as never;
  });
  on(server, ListToolsRequestSchema, () => ({ tools: [] }));
  return { server, initialized: () => initialized, ...await linked(server) };
}

/**
 * `server` connected to one end of an in-memory pair: `exchange` sends raw messages one by one and returns
 * every message the server sent back meanwhile.
 */
async function linked(
  server: { connect(transport: never): Promise<void>; close(): Promise<void> },
): Promise<Pick<Session, "exchange" | "close">> {
  const [ours, theirs] = InMemoryTransport.createLinkedPair();
  const received: JSONRPCMessage[] = [];
  let wake: (() => void) | undefined;
  ours.onmessage = (message) => {
    received.push(message);
    wake?.();
  };
  await ours.start();
  await server.connect(theirs as never);
  return {
    async exchange(messages) {
      const start = received.length;
      for (const message of messages) {
        const before = received.length;
        await ours.send(message as JSONRPCMessage);
        // A request is answered once; a notification gets nothing back (a ping after it shows it was read).
        const isRequest = typeof message === "object" && message !== null && "id" in message;
        if (!isRequest) {
          await ours.send({ jsonrpc: "2.0", id: "after", method: "ping" });
        }
        while (received.length === before) await new Promise<void>((resolve) => wake = resolve);
        if (!isRequest) assert.deepEqual(received.pop(), { jsonrpc: "2.0", id: "after", result: {} });
      }
      return received.slice(start);
    },
    close: () => server.close(),
  };
}

function both(
  capabilities: ServerCapabilities,
  options: { instructions?: string; enforceStrictCapabilities?: boolean } = {},
): Promise<[Session, Session]> {
  const info = { name: "mcphub", version: "9.9.9" };
  return Promise.all([
    session(() => new Server(info, { capabilities: capabilities as never, ...options })),
    session(() => new HostServer(info, { capabilities: capabilities as never, ...options })),
  ]);
}

function initialize(protocolVersion: unknown, capabilities: unknown = {}, id: unknown = 1) {
  return {
    jsonrpc: "2.0",
    id,
    method: "initialize",
    params: { protocolVersion, capabilities, clientInfo: { name: "host", version: "1.0.0" } },
  };
}

/** The 14 requests both tests send: initialize (three versions), ping, setLevel, tools/list, tools/call
 * (a valid result, an invalid one, an invalid request, a task result that is not one), and the unknown. */
const REQUESTS: unknown[] = [
  initialize(SUPPORTED_PROTOCOL_VERSIONS.at(-1), { sampling: {}, roots: { listChanged: true } }),
  initialize("1999-01-01", {}, 2),
  initialize(42, {}, 3),
  { jsonrpc: "2.0", id: 4, method: "ping" },
  { jsonrpc: "2.0", id: 5, method: "logging/setLevel", params: { level: "debug" } },
  { jsonrpc: "2.0", id: 6, method: "logging/setLevel", params: { level: "loud" } },
  { jsonrpc: "2.0", id: 7, method: "tools/list" },
  {
    jsonrpc: "2.0",
    id: 8,
    method: "tools/call",
    params: { name: "x", arguments: { result: { content: [{ type: "text", text: "ok" }] } } },
  },
  {
    jsonrpc: "2.0",
    id: 9,
    method: "tools/call",
    params: { name: "x", arguments: { result: { content: 5 } } },
  },
  { jsonrpc: "2.0", id: 10, method: "tools/call", params: { name: 5 } },
  {
    jsonrpc: "2.0",
    id: 11,
    method: "tools/call",
    params: { name: "x", task: { ttl: 1000 }, arguments: { result: { content: [] } } },
  },
  { jsonrpc: "2.0", id: 12, method: "prompts/list" },
  { jsonrpc: "2.0", id: 13, method: "tasks/get", params: { taskId: "t" } },
  { jsonrpc: "2.0", id: 14, method: "no/such" },
];

Deno.test("HostServer answers initialize, ping, setLevel, tools/call and the unknown as the SDK's Server", async () => {
  const [sdk, host] = await both(GATEWAY_CAPABILITIES, { instructions: "Use search_tools first." });
  try {
    const messages = [
      REQUESTS[0],
      { jsonrpc: "2.0", method: "notifications/initialized" },
      ...REQUESTS.slice(1),
    ];
    const want = await sdk.exchange(messages);
    const got = await host.exchange(messages);
    assert.deepEqual(got, want);
    assert.equal(want.length, 14);
    assert.equal(host.initialized(), 1);
    assert.equal(sdk.initialized(), 1);
    // What the gateway reads after initialize.
    assert.deepEqual(host.server.getClientCapabilities(), sdk.server.getClientCapabilities());
    assert.deepEqual(
      (host.server as HostServer).getClientVersion(),
      (sdk.server as Server).getClientVersion(),
    );
  } finally {
    await sdk.close();
    await host.close();
  }
});

Deno.test("HostServer refuses what the SDK's Server refuses, with the same words", async () => {
  // Capabilities that leave things out, and a host that declared none (requests to it are checked
  // only with enforceStrictCapabilities: otherwise both send them).
  const [sdk, host] = await both({ tools: {} }, { enforceStrictCapabilities: true });
  try {
    await sdk.exchange([initialize(SUPPORTED_PROTOCOL_VERSIONS[0])]);
    await host.exchange([initialize(SUPPORTED_PROTOCOL_VERSIONS[0])]);
    const outcome = async (f: () => Promise<unknown> | unknown) => {
      try {
        await f();
        return "ok";
      } catch (error) {
        return (error as Error).message;
      }
    };
    const cases: [string, (s: AnyServer) => Promise<unknown> | unknown][] = [
      ["resources list_changed", (s) => s.sendResourceListChanged()],
      ["prompts list_changed", (s) => s.sendPromptListChanged()],
      [
        "log message",
        (s) => s.notification({ method: "notifications/message", params: { level: "info", data: 1 } }),
      ],
      ["tools list_changed", (s) => s.sendToolListChanged()],
      ["sampling", (s) => s.request({ method: "sampling/createMessage", params: {} } as never, {} as never)],
      ["elicitation", (s) => s.request({ method: "elicitation/create", params: {} } as never, {} as never)],
      ["roots", (s) => s.request({ method: "roots/list" }, {} as never)],
      ["a tool-list handler", (s) => on(s, ListToolsRequestSchema, () => ({ tools: [] }))],
    ];
    for (const [what, f] of cases) {
      assert.equal(await outcome(() => f(host.server)), await outcome(() => f(sdk.server)), what);
    }
    const {
      CompleteRequestSchema,
      ListPromptsRequestSchema,
      ListResourcesRequestSchema,
      SetLevelRequestSchema,
    } = await import("../../src/mcp/sdk.ts");
    for (
      const schema of [
        CompleteRequestSchema,
        ListPromptsRequestSchema,
        ListResourcesRequestSchema,
        SetLevelRequestSchema,
      ]
    ) {
      const theirs = await outcome(() => on(sdk.server, schema, () => ({})));
      assert.match(theirs, /^Server does not support /);
      assert.equal(await outcome(() => on(host.server, schema, () => ({}))), theirs);
    }
    // Capabilities are fixed once connected.
    assert.throws(() => (host.server as HostServer).registerCapabilities({ logging: {} }), {
      message: "Cannot register capabilities after connecting to transport",
    });
  } finally {
    await sdk.close();
    await host.close();
  }
});

Deno.test("HostServer answers as v2's Server where v2 keeps v1's answers; the three it does not, named", async () => {
  const { Server: V2Server } = await import("npm:@modelcontextprotocol/server@2.4.0");
  const info = { name: "mcphub", version: "9.9.9" };
  const options = { capabilities: GATEWAY_CAPABILITIES as never, instructions: "Use search_tools first." };
  const host = await session(() => new HostServer(info, options));
  // v2's Server keys its handlers by method (the session helper registers them by schema).
  const v2 = new V2Server(info, options);
  v2.setRequestHandler("tools/call", (request) => request.params.arguments?.result as never);
  v2.setRequestHandler("tools/list", () => ({ tools: [] }));
  const direct = await linked(v2);
  try {
    const messages = REQUESTS;
    const got = await host.exchange(messages);
    const want = await direct.exchange(messages);
    assert.equal(got.length, 14);
    const differ = [9, 10, 11];
    for (let i = 0; i < messages.length; i++) {
      if (!differ.includes(i + 1)) assert.deepEqual(got[i], want[i], `answer ${i + 1}`);
    }
    // Where v2's Server answers a 2025 host otherwise (HostServer keeps v1's answer, the test above):
    const error = (m: JSONRPCMessage) => (m as { error: { code: number; message: string } }).error;
    // an invalid tools/call result: the same code and text, without v1's "MCP error N:" prefix;
    assert.equal(error(got[8]).code, error(want[8]).code);
    assert.equal(error(got[8]).message, `MCP error -32602: ${error(want[8]).message}`);
    // an invalid tools/call request: v2 -32602 "Invalid tools/call request: …", v1 -32603 with the issues;
    assert.deepEqual([error(got[9]).code, error(want[9]).code], [-32603, -32602]);
    assert.match(error(want[9]).message, /^Invalid tools\/call request: /);
    // a task-augmented call to a server without the tasks capability: v2 runs it, v1 refuses.
    assert.equal(error(got[10]).message, "Server does not support task creation (required for tools/call)");
    assert.deepEqual((want[10] as { result: unknown }).result, { content: [] });
  } finally {
    await host.close();
    await direct.close();
  }
});

Deno.test("HostServer hands a handler the request's _meta as v1's Server does, the 2026-07-28 envelope's keys too", async () => {
  const meta = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": { sampling: {} },
    progressToken: 7,
    "example.com/other": { kept: true },
  };
  const seen: unknown[] = [];
  for (const make of [Server, HostServer] as const) {
    const server = new make({ name: "mcphub", version: "9.9.9" }, { capabilities: { tools: {} } });
    (server.setRequestHandler as (schema: unknown, handler: (r: unknown, extra: unknown) => unknown) => void)
      .call(server, ListToolsRequestSchema, (_request, extra) => {
        seen.push((extra as { _meta?: unknown })._meta);
        return { tools: [] };
      });
    const link = await linked(server);
    await link.exchange([initialize("2025-11-25"), {
      jsonrpc: "2.0",
      id: 2,
      method: "tools/list",
      params: { _meta: meta },
    }]);
    await link.close();
  }
  assert.deepEqual(seen, [meta, meta]);
});
