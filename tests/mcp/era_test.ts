/** The era of a downstream connection, decided by its opening (src/mcp/era.ts). */
import assert from "node:assert/strict";
import { Era } from "../../src/mcp/era.ts";
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
