/**
 * `Mcp-Param-*` headers (src/mcp/param_headers.ts) and how a modern HTTP connection uses them
 * (src/mcp/era_http.ts): declarations scanned as the 2026-07-28 revision constrains them, values encoded
 * and checked; a server's tools/list read (invalid tools left out) and a call refused with -32020 sent
 * once more after the list is read again.
 */
import assert from "node:assert/strict";
import {
  decodeHeaderValue,
  paramHeaderMismatch,
  paramHeaders,
  scanParamHeaders,
} from "../../src/mcp/param_headers.ts";
import { Era } from "../../src/mcp/era.ts";
import { eraFetch, EraTransport, ToolParams } from "../../src/mcp/era_http.ts";
import type { JSONRPCMessage, Transport } from "../../src/mcp/sdk.ts";

const ROUTE = {
  type: "object",
  properties: {
    region: { type: "string", "x-mcp-header": "Region" },
    count: { type: "integer", "x-mcp-header": "Count" },
    opts: { type: "object", properties: { flag: { type: "boolean", "x-mcp-header": "Flag" } } },
  },
};

Deno.test("x-mcp-header declarations: found through properties at any depth; invalid ones named", () => {
  assert.deepEqual(scanParamHeaders(ROUTE), {
    valid: true,
    declarations: [
      { path: ["region"], header: "Region", type: "string" },
      { path: ["count"], header: "Count", type: "integer" },
      { path: ["opts", "flag"], header: "Flag", type: "boolean" },
    ],
  });
  assert.deepEqual(scanParamHeaders({ type: "object" }), { valid: true, declarations: [] });
  const invalid: [unknown, RegExp][] = [
    [{ properties: { a: { type: "string", "x-mcp-header": "" } } }, /non-empty/],
    [{ properties: { a: { type: "string", "x-mcp-header": "A B" } } }, /RFC 9110 token/],
    [{ properties: { a: { type: "object", "x-mcp-header": "A" } } }, /got object/],
    [{ properties: { a: { type: "number", "x-mcp-header": "A" } } }, /got number/],
    [{
      properties: {
        a: { type: "string", "x-mcp-header": "Id" },
        b: { type: "string", "x-mcp-header": "ID" },
      },
    }, /not unique/],
    [
      { properties: { a: { type: "array", items: { type: "string", "x-mcp-header": "A" } } } },
      /'properties' alone/,
    ],
    [{ anyOf: [{ properties: { a: { type: "string", "x-mcp-header": "A" } } }] }, /'properties' alone/],
    [{ type: "string", "x-mcp-header": "Root" }, /'properties' alone/],
  ];
  for (const [schema, reason] of invalid) {
    const scan = scanParamHeaders(schema);
    assert.equal(scan.valid, false, JSON.stringify(schema));
    assert.match((scan as { reason: string }).reason, reason);
  }
  // A number's declaration makes the tool invalid, but a server still checks its header.
  const number = scanParamHeaders({ properties: { n: { type: "number", "x-mcp-header": "N" } } });
  assert.deepEqual(number.declarations, [{ path: ["n"], header: "N", type: "number" }]);
});

Deno.test("Mcp-Param-* values: as the revision converts and encodes them; a server's check decodes and compares", () => {
  const declarations = scanParamHeaders(ROUTE).declarations!;
  assert.deepEqual(paramHeaders(declarations, { region: "Hello, 世界", count: 42, opts: { flag: false } }), {
    "Mcp-Param-Region": "=?base64?SGVsbG8sIOS4lueVjA==?=",
    "Mcp-Param-Count": "42",
    "Mcp-Param-Flag": "false",
  });
  assert.deepEqual(paramHeaders(declarations, { region: null, count: 2 ** 60, opts: "x" }), {});
  assert.equal(decodeHeaderValue("=?base64?IHBhZGRlZCA=?="), " padded ");
  assert.equal(decodeHeaderValue("=?base64?not base64?="), undefined);
  assert.equal(decodeHeaderValue("plain"), "plain");

  const args = { region: " x ", count: 42 };
  const ok = new Headers({ "mcp-param-region": `=?base64?${btoa(" x ")}?=` });
  ok.set("mcp-param-count", "42.0");
  assert.equal(paramHeaderMismatch(declarations, args, ok), undefined);
  assert.match(
    paramHeaderMismatch(declarations, args, new Headers({ "mcp-param-count": "42" }))!,
    /region=" x " but the Mcp-Param-Region header is absent/,
  );
  ok.set("mcp-param-count", "41");
  assert.match(paramHeaderMismatch(declarations, args, ok)!, /Mcp-Param-Count header decodes to "41"/);
  ok.set("mcp-param-count", "=?base64?@@?=");
  assert.match(paramHeaderMismatch(declarations, args, ok)!, /invalid base64/);
  // A header for a value the body does not carry is not expected, and ignored.
  assert.equal(paramHeaderMismatch(declarations, {}, new Headers({ "mcp-param-region": "y" })), undefined);
});

/** A server end for an {@linkcode EraTransport}: what it was sent, and `answer` to reply. */
function fakeServer() {
  const sent: Record<string, unknown>[] = [];
  const inner: Transport = {
    start: () => Promise.resolve(),
    send: (message) => {
      sent.push(structuredClone(message) as Record<string, unknown>);
      return Promise.resolve();
    },
    close: () => Promise.resolve(),
  };
  return { inner, sent, answer: (message: unknown) => inner.onmessage!(message as JSONRPCMessage) };
}

const INIT = {
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "mcphub", version: "1" } },
} as JSONRPCMessage;

/** An EraTransport opened modern (a probe answered), and what reached its client. */
async function modernTransport() {
  const server = fakeServer();
  const params = new ToolParams();
  const warned: string[] = [];
  const transport = new EraTransport(server.inner, new Era({ probe: true }), params, (l) => warned.push(l));
  const delivered: Record<string, unknown>[] = [];
  transport.onmessage = (m) => delivered.push(m as Record<string, unknown>);
  await transport.start();
  await transport.send(INIT);
  server.answer({
    jsonrpc: "2.0",
    id: "mcphub-discover",
    result: { resultType: "complete", supportedVersions: ["2026-07-28"], capabilities: { tools: {} } },
  });
  assert.equal(transport.era.era, "modern");
  delivered.length = 0;
  server.sent.length = 0;
  return { server, params, warned, transport, delivered };
}

const tool = (name: string, inputSchema: unknown) => ({ name, inputSchema });

Deno.test("a modern HTTP server's tools/list: tools with invalid declarations left out (and said), the rest read", async () => {
  const { server, params, warned, transport, delivered } = await modernTransport();
  await transport.send({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} } as JSONRPCMessage);
  server.answer({
    jsonrpc: "2.0",
    id: 1,
    result: {
      tools: [
        tool("route", ROUTE),
        tool("bad", { properties: { a: { type: "object", "x-mcp-header": "A" } } }),
      ],
    },
  });
  assert.deepEqual(delivered, [{ jsonrpc: "2.0", id: 1, result: { tools: [tool("route", ROUTE)] } }]);
  assert.equal(warned.length, 1);
  assert.match(warned[0]!, /^tool "bad" left out: invalid x-mcp-header declaration \(a: .*got object\)$/);
  assert.deepEqual(params.headers("route", { region: "eu" }), { "Mcp-Param-Region": "eu" });
  assert.deepEqual(params.headers("bad", { a: "x" }), {});
});

Deno.test("a call refused with -32020 is sent once more after the list is read again; a second refusal is the answer", async () => {
  const { server, params, transport, delivered } = await modernTransport();
  const call = {
    jsonrpc: "2.0",
    id: 7,
    method: "tools/call",
    params: { name: "route", arguments: { region: "eu" } },
  };
  await transport.send(call as JSONRPCMessage);
  const refused = { jsonrpc: "2.0", id: 7, error: { code: -32020, message: "Header mismatch" } };
  server.answer(refused);
  assert.deepEqual(delivered, []);
  const relist = server.sent.at(-1)!;
  assert.equal(relist.method, "tools/list");
  assert.equal(relist.id, "mcphub-tools-1");
  assert.equal(
    (relist.params as { _meta: Record<string, unknown> })._meta["io.modelcontextprotocol/protocolVersion"],
    "2026-07-28",
  );
  // Two pages: the second asked with the first's cursor, then the call sent again, as it was sent.
  server.answer({ jsonrpc: "2.0", id: "mcphub-tools-1", result: { tools: [], nextCursor: "p2" } });
  assert.deepEqual((server.sent.at(-1)!.params as { cursor?: string }).cursor, "p2");
  server.answer({ jsonrpc: "2.0", id: server.sent.at(-1)!.id, result: { tools: [tool("route", ROUTE)] } });
  assert.deepEqual(server.sent.at(-1), server.sent[0]);
  assert.equal(server.sent.length, 4);
  assert.deepEqual(params.headers("route", { region: "eu" }), { "Mcp-Param-Region": "eu" });
  assert.deepEqual(delivered, []);
  // Refused again: that is the call's answer (no third try).
  server.answer(refused);
  assert.deepEqual(delivered, [refused]);
  assert.equal(server.sent.length, 4);
});

Deno.test("a refused call the client cancels while the list is read again is not sent again", async () => {
  const { server, transport, delivered } = await modernTransport();
  const call = { jsonrpc: "2.0", id: 8, method: "tools/call", params: { name: "route", arguments: {} } };
  await transport.send(call as JSONRPCMessage);
  server.answer({ jsonrpc: "2.0", id: 8, error: { code: -32020, message: "Header mismatch" } });
  await transport.send(
    { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 8 } } as JSONRPCMessage,
  );
  const sent = server.sent.length;
  server.answer({ jsonrpc: "2.0", id: "mcphub-tools-1", result: { tools: [] } });
  assert.equal(server.sent.length, sent);
  assert.deepEqual(delivered, []);
});

Deno.test("a probe (server/discover) answered 202 Accepted with no body is an error answer at once, not a wait", async () => {
  const base = () => Promise.resolve(new Response(null, { status: 202 }));
  const probe = { jsonrpc: "2.0", id: "mcphub-discover", method: "server/discover", params: { _meta: {} } };
  const response = await eraFetch(base as typeof fetch)("http://127.0.0.1:1/mcp", {
    method: "POST",
    body: JSON.stringify(probe),
  });
  assert.equal(response.status, 200);
  assert.deepEqual(await response.json(), {
    jsonrpc: "2.0",
    id: "mcphub-discover",
    error: { code: -32601, message: "server/discover was answered with 202 Accepted, not an answer" },
  });
  // A notification's 202 is what it should be.
  const note = await eraFetch(base as typeof fetch)("http://127.0.0.1:1/mcp", {
    method: "POST",
    body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
  });
  assert.equal(note.status, 202);
});

Deno.test("a probe left unanswered: the legacy opening goes after it on the same connection, once", async () => {
  const server = fakeServer();
  const transport = new EraTransport(server.inner, new Era({ probe: true }), new ToolParams(), undefined, 10);
  const delivered: unknown[] = [];
  transport.onmessage = (m) => delivered.push(m);
  await transport.start();
  await transport.send(INIT);
  assert.deepEqual(server.sent.map((m) => m.method), ["server/discover"]);
  const opened = Promise.withResolvers<void>();
  const send = server.inner.send.bind(server.inner);
  server.inner.send = async (message) => {
    await send(message);
    if ((message as { method?: string }).method === "initialize") opened.resolve();
  };
  await opened.promise;
  assert.deepEqual(server.sent.map((m) => m.method), ["server/discover", "initialize"]);
  assert.deepEqual(server.sent[1], INIT);
  server.answer({ jsonrpc: "2.0", id: 0, result: { protocolVersion: "2025-11-25", capabilities: {} } });
  assert.equal(transport.era.era, "legacy");
  assert.equal(delivered.length, 1);
  await transport.close();
});
