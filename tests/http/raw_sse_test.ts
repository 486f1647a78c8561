/**
 * The SDK's Streamable HTTP server transport taught to send a result as bytes (src/http/raw_sse.ts), in
 * process: the SSE event holds exactly those bytes, a resumed stream replays them, and bytes an SSE
 * field cannot carry (a carriage return) go the SDK's way.
 */
import assert from "node:assert/strict";
import { RAW_SSE_INTERNALS, relayRawResults, SessionEvents } from "../../src/http/mod.ts";
import { type JSONRPCMessage, loadHostHttpSdk } from "../../src/mcp/mod.ts";

const enc = new TextEncoder();
const URL_MCP = "http://127.0.0.1/mcp";

/** One session of a transport whose `tools/call` requests are answered with `answer(id)`. */
async function session(
  answer: (id: string | number, send: ReturnType<typeof relayRawResults>) => void,
  eventStore = new SessionEvents(),
) {
  const { WebStandardStreamableHTTPServerTransport } = await loadHostHttpSdk();
  const transport = relayRawResults(
    new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => "session-1",
      eventStore,
    }),
  );
  transport.onmessage = (message: JSONRPCMessage) => {
    if (!("method" in message) || !("id" in message)) return;
    if (message.method === "initialize") {
      void transport.send({
        jsonrpc: "2.0",
        id: message.id,
        result: { protocolVersion: "2025-11-25", capabilities: {}, serverInfo: { name: "t", version: "1" } },
      });
    } else answer(message.id, transport);
  };
  await transport.start();
  const headers = (version: string) => ({
    accept: "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-session-id": "session-1",
    "mcp-protocol-version": version,
  });
  const init = await transport.handleRequest(
    new Request(URL_MCP, {
      method: "POST",
      headers: { accept: "application/json, text/event-stream", "content-type": "application/json" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "c", version: "1" } },
      }),
    }),
  );
  assert.equal(init.status, 200);
  await init.text();
  return {
    transport,
    /** POSTs a tools/call with id `id`; the whole SSE body as text. */
    call: async (id: number, version = "2025-06-18") => {
      const response = await transport.handleRequest(
        new Request(URL_MCP, {
          method: "POST",
          headers: headers(version),
          body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "t" } }),
        }),
      );
      assert.equal(response.status, 200);
      assert.equal(response.headers.get("content-type"), "text/event-stream");
      return await response.text();
    },
    /** Resumes after event `lastEventId`: the replayed events as text. */
    resume: async (lastEventId: string) => {
      const response = await transport.handleRequest(
        new Request(URL_MCP, {
          headers: { ...headers("2025-11-25"), accept: "text/event-stream", "last-event-id": lastEventId },
        }),
      );
      assert.equal(response.status, 200);
      const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
      let text = "";
      while (!text.endsWith("}\n\n")) {
        const { value, done } = await reader.read();
        if (done) break;
        text += value;
      }
      await reader.cancel();
      return text;
    },
  };
}

Deno.test("a result sent as bytes is one SSE message event holding exactly those bytes, replayed on resume", async () => {
  const small = ['{ "content" :[ {"type":"text",', '"text":"caf\\u00e9 é \\"q\\""}] ,"isError":false}'];
  const text = "0123456789abcdef".repeat(20_000);
  const big = ['{"content":[{"type":"text","text":"', text.slice(0, 100_000), text.slice(100_000), '"}]}'];
  const results = new Map<string | number, string[]>([[2, small], [3, big]]);
  const s = await session((id, t) => void t.sendResult(id, results.get(id)!.map((p) => enc.encode(p))));
  try {
    for (const [id, parts] of results) {
      const body = await s.call(id as number);
      const event = /^event: message\nid: (\S+)\ndata: /.exec(body);
      assert.ok(event, body.slice(0, 200));
      assert.equal(body, `${event[0]}{"jsonrpc":"2.0","id":${id},"result":${parts.join("")}}\n\n`);
      assert.deepEqual(JSON.parse(body.slice(event[0].length)), {
        jsonrpc: "2.0",
        id,
        result: JSON.parse(parts.join("")),
      });
    }
    // A client that supports resumption gets a priming event first; resuming after it replays the bytes.
    results.set(4, small);
    const body = await s.call(4, "2025-11-25");
    const primed = /^id: (\S+)\nretry: \d+\ndata: \n\n/.exec(body) ?? /^id: (\S+)\ndata: \n\n/.exec(body);
    assert.ok(primed, body);
    const event = body.slice(primed[0].length);
    assert.match(event, /^event: message\nid: \S+\ndata: \{"jsonrpc":"2.0","id":4,"result":/);
    assert.equal(await s.resume(primed[1]), event);
  } finally {
    await s.transport.close();
  }
});

Deno.test("the event store keeps its own copy of a result sent as bytes (not the chunks it came in) and frees it when the event is dropped", async () => {
  const size = 8 * 1024 * 1024;
  // The chunks a result arrived in (the test keeps them: only the store's copy can be freed).
  const arrived = new Map<number, Uint8Array[]>([
    [2, [
      enc.encode('{"content":[{"type":"text","text":"'),
      new Uint8Array(size).fill(0x61),
      enc.encode('"}]}'),
    ]],
    [3, [enc.encode('{"content":[]}')]],
  ]);
  const events = new SessionEvents();
  const s = await session((id, t) => void t.sendResult(id, arrived.get(id as number)!), events);
  try {
    const body = await s.call(2, "2025-11-25");
    const primed = /^id: (\S+)\n(?:retry: \d+\n)?data: \n\n/.exec(body);
    assert.ok(primed, body.slice(0, 200));
    const event = body.slice(primed[0].length);
    // The chunks are reused by whoever owned them: the replay still has the bytes that were sent.
    arrived.get(2)![1]!.fill(0x62);
    assert.equal(await s.resume(primed[1]), event);
    assert.ok(events.bytes > size, `${events.bytes} bytes kept`); // over the 1 MB bound: the newest is kept
    // The next call's events push the big one out: its copy is freed at once, not at a later GC.
    const external = Deno.memoryUsage().external;
    await s.call(3, "2025-11-25");
    assert.ok(events.bytes < 1024, `${events.bytes} bytes kept`);
    const freed = external - Deno.memoryUsage().external;
    assert.ok(freed >= size - 1024 * 1024, `${freed} bytes freed`);
  } finally {
    await s.transport.close();
  }
});

Deno.test("a result with a carriage return goes the SDK's way: parsed, or an error when it is not JSON", async () => {
  const answers = new Map<string | number, string>([
    // JSON whitespace: the same value, serialized by the SDK.
    [2, '{"content":[],\r"isError":false}'],
    // A raw carriage return inside a string: not JSON.
    [3, '{"content":[{"type":"text","text":"a\rb"}]}'],
  ]);
  const s = await session((id, t) => void t.sendResult(id, [enc.encode(answers.get(id)!)]));
  try {
    const ok = await s.call(2);
    assert.match(
      ok,
      /^event: message\nid: \S+\ndata: \{"jsonrpc":"2.0","id":2,"result":\{"content":\[\],"isError":false\}\}\n\n$/,
    );
    const bad = await s.call(3);
    const data = /^data: (.*)$/m.exec(bad)![1]!;
    const message = JSON.parse(data);
    assert.equal(message.id, 3);
    assert.equal(message.error.code, -32603);
    assert.match(message.error.message, /^The server's tools\/call result is not valid JSON: /);
  } finally {
    await s.transport.close();
  }
});

Deno.test("raw_sse.ts's SDK internals are still on the --listen transport: writeSSEEvent, _enableJsonResponse (an SDK upgrade that removes one fails here by name)", async () => {
  const { WebStandardStreamableHTTPServerTransport } = await loadHostHttpSdk();
  assert.deepEqual(Object.keys(RAW_SSE_INTERNALS), ["writeSSEEvent", "_enableJsonResponse"]);
  for (const enableJsonResponse of [false, true]) {
    const transport = new WebStandardStreamableHTTPServerTransport({
      enableJsonResponse,
    }) as unknown as Record<
      string,
      unknown
    >;
    for (const [name, type] of Object.entries(RAW_SSE_INTERNALS)) {
      assert.equal(typeof transport[name], type, `the SDK's transport has no ${name}`);
    }
    assert.equal(
      transport._enableJsonResponse,
      enableJsonResponse,
      "_enableJsonResponse is the option's value",
    );
  }
  // Without one, teaching a transport fails naming it.
  for (const name of Object.keys(RAW_SSE_INTERNALS)) {
    const transport = new WebStandardStreamableHTTPServerTransport();
    Object.defineProperty(transport, name, { value: undefined });
    assert.throws(() => relayRawResults(transport), {
      name: "TypeError",
      message: `The MCP SDK's Streamable HTTP server transport has no ${name} (an SDK upgrade changed it): ` +
        "update src/http/raw_sse.ts",
    });
  }
});

Deno.test("a result sent as bytes to a transport answering in JSON (not SSE) goes the SDK's way: one JSON answer with the result", async () => {
  const { WebStandardStreamableHTTPServerTransport } = await loadHostHttpSdk();
  const transport = relayRawResults(
    new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true }),
  );
  const result = '{"content":[{"type":"text","text":"x"}],"isError":false}';
  transport.onmessage = (message: JSONRPCMessage) => {
    if ("method" in message && "id" in message) void transport.sendResult(message.id, [enc.encode(result)]);
  };
  await transport.start();
  try {
    const response = await transport.handleRequest(
      new Request(URL_MCP, {
        method: "POST",
        headers: { accept: "application/json, text/event-stream", "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "t" } }),
      }),
    );
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("content-type"), "application/json");
    assert.equal(await response.text(), `{"jsonrpc":"2.0","id":7,"result":${result}}`);
  } finally {
    await transport.close();
  }
});
