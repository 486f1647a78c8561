/** The era of a downstream connection, decided by its opening (src/mcp/era.ts). */
import assert from "node:assert/strict";
import { Era, INPUT_KEY } from "../../src/mcp/era.ts";
import type { JSONRPCMessage } from "../../src/mcp/sdk.ts";

const INIT = {
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: {
    protocolVersion: "2025-11-25",
    capabilities: { roots: {} },
    clientInfo: { name: "mcphub", version: "1" },
  },
} as JSONRPCMessage;
const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": { roots: {} },
  "io.modelcontextprotocol/clientInfo": { name: "mcphub", version: "1" },
};

Deno.test("a legacy server's opening and every message after it pass unchanged", () => {
  const era = new Era();
  assert.deepEqual(era.outgoing(INIT), { send: INIT });
  const answer = { jsonrpc: "2.0", id: 0, result: { protocolVersion: "2025-11-25" } } as JSONRPCMessage;
  assert.deepEqual(era.incoming(answer), { deliver: answer });
  assert.equal(era.era, "legacy");
  const ping = { jsonrpc: "2.0", id: 1, method: "ping" } as JSONRPCMessage;
  assert.deepEqual(era.outgoing(ping), { send: ping });
  assert.equal(era.meta({ progressToken: 1 })?.progressToken, 1);
  assert.equal(era.refusal, undefined);
});

Deno.test("a refusal naming 2026-07-28 makes the connection modern in place", () => {
  const era = new Era();
  era.outgoing(INIT);
  const refused = {
    jsonrpc: "2.0",
    id: 0,
    error: {
      code: -32022,
      message: "Unsupported",
      data: { supported: ["2026-07-28"], requested: "2025-11-25" },
    },
  } as JSONRPCMessage;
  assert.deepEqual(era.incoming(refused), {
    send: { jsonrpc: "2.0", id: "mcphub-discover", method: "server/discover", params: { _meta: META } },
  });
  assert.equal(era.era, "modern");
  const discovered = {
    jsonrpc: "2.0",
    id: "mcphub-discover",
    result: {
      resultType: "complete",
      supportedVersions: ["2026-07-28"],
      capabilities: { tools: {} },
      instructions: "hi",
      _meta: { "io.modelcontextprotocol/serverInfo": { name: "m", version: "2" } },
    },
  } as JSONRPCMessage;
  assert.deepEqual(era.incoming(discovered), {
    deliver: {
      jsonrpc: "2.0",
      id: 0,
      result: {
        protocolVersion: "2025-11-25",
        capabilities: { tools: {} },
        serverInfo: { name: "m", version: "2" },
        instructions: "hi",
      },
    },
  });
  // What the revision removed is answered or dropped here; the rest carries the envelope.
  assert.deepEqual(
    era.outgoing({ jsonrpc: "2.0", method: "notifications/initialized" } as JSONRPCMessage),
    {},
  );
  assert.deepEqual(era.outgoing({ jsonrpc: "2.0", id: 2, method: "ping" } as JSONRPCMessage), {
    reply: { jsonrpc: "2.0", id: 2, result: {} },
  });
  assert.deepEqual(
    era.outgoing(
      {
        jsonrpc: "2.0",
        id: 3,
        method: "tools/call",
        params: { name: "x", _meta: { progressToken: 3 } },
      } as JSONRPCMessage,
    ),
    {
      send: {
        jsonrpc: "2.0",
        id: 3,
        method: "tools/call",
        params: { name: "x", _meta: { ...META, progressToken: 3 } },
      },
    },
  );
  assert.deepEqual(era.meta(undefined), META);
});

Deno.test("a refusal naming no revision spoken here is kept for the error, and delivered", () => {
  const era = new Era();
  era.outgoing(INIT);
  const refused = {
    jsonrpc: "2.0",
    id: 0,
    error: {
      code: -32022,
      message: "Unsupported",
      data: { supported: ["2099-01-01"], requested: "2025-11-25" },
    },
  } as JSONRPCMessage;
  assert.deepEqual(era.incoming(refused), { deliver: refused });
  assert.deepEqual(era.refusal, { supported: ["2099-01-01"], requested: "2025-11-25" });
});

/** An Era made modern by a refusal and a discover answer. */
function modern(options?: ConstructorParameters<typeof Era>[0]): Era {
  const era = new Era(options);
  era.outgoing(INIT);
  era.incoming({
    jsonrpc: "2.0",
    id: 0,
    error: { code: -32022, message: "Unsupported", data: { supported: ["2026-07-28"] } },
  } as JSONRPCMessage);
  era.incoming({ jsonrpc: "2.0", id: "mcphub-discover", result: { capabilities: {} } } as JSONRPCMessage);
  return era;
}

Deno.test("MRTR: input requests reach the client; its answers retry the request under its id", () => {
  const era = modern();
  const call = { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "ask" } } as JSONRPCMessage;
  const sent = era.outgoing(call).send as { params: Record<string, unknown> };
  const round = era.incoming({
    jsonrpc: "2.0",
    id: 7,
    result: {
      resultType: "input_required",
      requestState: "opaque",
      inputRequests: {
        a: { method: "elicitation/create", params: { message: "A?" } },
        b: { method: "roots/list" },
      },
    },
  } as JSONRPCMessage);
  // Each carries the server's key and its round (for a 2026-07-28 host: see host_era.ts).
  const mark = (key: string) => ({ [INPUT_KEY]: { key, round: "mcphub-round-1", of: 2 } });
  assert.deepEqual(round, {
    requests: [
      {
        jsonrpc: "2.0",
        id: "mcphub-input-1",
        method: "elicitation/create",
        params: { message: "A?", _meta: mark("a") },
      },
      // Sent without params: marked so (a 2026-07-28 host gets it without).
      {
        jsonrpc: "2.0",
        id: "mcphub-input-2",
        method: "roots/list",
        params: { _meta: { [INPUT_KEY]: { ...mark("b")[INPUT_KEY], bare: true } } },
      },
    ],
  });
  assert.deepEqual(
    era.outgoing({ jsonrpc: "2.0", id: "mcphub-input-2", result: { roots: [] } } as JSONRPCMessage),
    {},
  );
  assert.deepEqual(
    era.outgoing({ jsonrpc: "2.0", id: "mcphub-input-1", result: { action: "decline" } } as JSONRPCMessage),
    {
      send: {
        jsonrpc: "2.0",
        id: 7,
        method: "tools/call",
        params: {
          ...sent.params,
          inputResponses: { b: { roots: [] }, a: { action: "decline" } },
          requestState: "opaque",
        },
      },
    },
  );
  const done = { jsonrpc: "2.0", id: 7, result: { resultType: "complete", content: [] } } as JSONRPCMessage;
  assert.deepEqual(era.incoming(done), { deliver: done });
});

Deno.test("MRTR: an input request the client answers with an error ends the request with it", () => {
  const era = modern();
  era.outgoing({ jsonrpc: "2.0", id: 8, method: "tools/call", params: { name: "ask" } } as JSONRPCMessage);
  era.incoming({
    jsonrpc: "2.0",
    id: 8,
    result: {
      resultType: "input_required",
      inputRequests: { a: { method: "sampling/createMessage", params: {} } },
    },
  } as JSONRPCMessage);
  const error = { code: -32601, message: "Method not found" };
  assert.deepEqual(era.outgoing({ jsonrpc: "2.0", id: "mcphub-input-1", error } as JSONRPCMessage), {
    reply: { jsonrpc: "2.0", id: 8, error },
  });
  // The reply, handed back in, goes to the client as the request's answer.
  const reply = { jsonrpc: "2.0", id: 8, error } as JSONRPCMessage;
  assert.deepEqual(era.incoming(reply), { deliver: reply });
});

const DISCOVER = {
  jsonrpc: "2.0",
  id: "mcphub-discover",
  method: "server/discover",
  params: { _meta: META },
} as JSONRPCMessage;

Deno.test("probe first (the cache says 2026-07-28): server/discover in place of initialize, answered as it", () => {
  const era = new Era({ probe: true });
  assert.deepEqual(era.outgoing(INIT), { send: DISCOVER });
  assert.equal(era.era, "probing");
  const discovered = {
    jsonrpc: "2.0",
    id: "mcphub-discover",
    result: {
      supportedVersions: ["2026-07-28"],
      capabilities: { tools: {} },
      _meta: { "io.modelcontextprotocol/serverInfo": { name: "m", version: "2" } },
    },
  } as JSONRPCMessage;
  assert.deepEqual(era.incoming(discovered), {
    deliver: {
      jsonrpc: "2.0",
      id: 0,
      result: {
        protocolVersion: "2025-11-25",
        capabilities: { tools: {} },
        serverInfo: { name: "m", version: "2" },
      },
    },
  });
  assert.equal(era.era, "modern");
  assert.equal(era.probed, true);
  const list = { jsonrpc: "2.0", id: 1, method: "tools/list" } as JSONRPCMessage;
  assert.deepEqual(era.outgoing(list), { send: { ...list, params: { _meta: META } } });
});

Deno.test("probe first, a 2025 server now: its error answer sends the client's initialize, as sent", () => {
  const era = new Era({ probe: true });
  era.outgoing(INIT);
  const refused = {
    jsonrpc: "2.0",
    id: "mcphub-discover",
    error: { code: -32601, message: "Method not found" },
  } as JSONRPCMessage;
  assert.deepEqual(era.incoming(refused), { send: INIT });
  assert.equal(era.era, "opening");
  const answer = { jsonrpc: "2.0", id: 0, result: { protocolVersion: "2025-11-25" } } as JSONRPCMessage;
  assert.deepEqual(era.incoming(answer), { deliver: answer });
  assert.equal(era.era, "legacy");
});

Deno.test("probe first: a result offering no 2026-07-28 is no discover answer: the client's initialize follows", () => {
  for (const result of [{}, { content: [] }, { supportedVersions: ["2099-01-01"], capabilities: {} }]) {
    const era = new Era({ probe: true });
    era.outgoing(INIT);
    assert.deepEqual(era.incoming({ jsonrpc: "2.0", id: "mcphub-discover", result } as JSONRPCMessage), {
      send: INIT,
    });
    assert.equal(era.era, "opening");
  }
});

Deno.test("probe first, unanswered or unsendable: probeFailed gives the initialize once; a late answer is dropped", () => {
  const era = new Era({ probe: true });
  era.outgoing(INIT);
  assert.deepEqual(era.probeFailed(), INIT);
  assert.equal(era.probeFailed(), undefined);
  const late = { jsonrpc: "2.0", id: "mcphub-discover", result: { capabilities: {} } } as JSONRPCMessage;
  assert.deepEqual(era.incoming(late), {});
  const answer = { jsonrpc: "2.0", id: 0, result: { protocolVersion: "2025-11-25" } } as JSONRPCMessage;
  assert.deepEqual(era.incoming(answer), { deliver: answer });
  assert.equal(era.era, "legacy");
  assert.deepEqual(era.incoming(late), {});
  // Without a probe there is nothing to give up on.
  assert.equal(new Era().probeFailed(), undefined);
});

Deno.test("a client's resources/subscribe becomes a listen carrying the request's trace context", () => {
  const era = modern({ listen: true });
  const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  const out = era.outgoing({
    jsonrpc: "2.0",
    id: 5,
    method: "resources/subscribe",
    params: { uri: "r://a", _meta: { traceparent, tracestate: "a=1", progressToken: 9 } },
  } as JSONRPCMessage);
  const listen = out.send as { method: string; params: { _meta: Record<string, unknown> } };
  assert.equal(listen.method, "subscriptions/listen");
  // The envelope and the trace context; nothing else of the client's _meta.
  assert.deepEqual(listen.params._meta, { ...META, traceparent, tracestate: "a=1" });
  // The next listen (without context) does not inherit it.
  const next = era.outgoing({
    jsonrpc: "2.0",
    id: 6,
    method: "resources/subscribe",
    params: { uri: "r://b" },
  } as JSONRPCMessage);
  assert.deepEqual((next.send as { params: { _meta: unknown } }).params._meta, META);
});
