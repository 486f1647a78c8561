/** The eras of a host connection (src/mcp/host_era.ts): classification and what modern answers carry. */
import assert from "node:assert/strict";
import { HostEra } from "../../src/mcp/host_era.ts";
import type { JSONRPCMessage } from "../../src/mcp/sdk.ts";

const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": { elicitation: {} },
  "io.modelcontextprotocol/clientInfo": { name: "h", version: "2" },
};
const OPENING_RESULT = {
  protocolVersion: "2025-11-25",
  capabilities: { tools: { listChanged: true }, logging: {} },
  serverInfo: { name: "mcphub", version: "0.1.0" },
  instructions: "use search_tools",
};

Deno.test("a legacy host: initialize and everything after pass unchanged", () => {
  const era = new HostEra();
  const init = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25" } };
  assert.deepEqual(era.incoming(init), { deliver: [init] });
  assert.equal(era.era, "legacy");
  const list = { jsonrpc: "2.0", id: 2, method: "tools/list" };
  assert.deepEqual(era.incoming(list), { deliver: [list] });
  // A result the fast path relays as bytes goes out unchanged.
  assert.deepEqual(era.rawAnswer(2), { id: 2, modern: false });
  const answer = { jsonrpc: "2.0", id: 2, result: { tools: [] } } as JSONRPCMessage;
  assert.deepEqual(era.outgoing(answer), { send: answer });
  const request = { jsonrpc: "2.0", id: 9, method: "elicitation/create", params: {} } as JSONRPCMessage;
  assert.deepEqual(era.outgoing(request), { send: request });
});

Deno.test("a modern host: opened from the envelope; discover, resultType, cache hints, no requests to it", () => {
  const era = new HostEra();
  const discover = { jsonrpc: "2.0", id: "d", method: "server/discover", params: { _meta: META } };
  const opened = era.incoming(discover);
  assert.deepEqual(opened.deliver, [{
    jsonrpc: "2.0",
    id: "mcphub-host-opening",
    method: "initialize",
    params: {
      protocolVersion: "2025-11-25",
      // Every relayable capability: each request's own envelope decides (checked per call).
      capabilities: { elicitation: { form: {}, url: {} }, sampling: {}, roots: {} },
      clientInfo: { name: "h", version: "2" },
    },
  }]);
  const out = era.outgoing(
    { jsonrpc: "2.0", id: "mcphub-host-opening", result: OPENING_RESULT } as JSONRPCMessage,
  );
  assert.equal(out.send, undefined);
  assert.deepEqual(out.also, [{
    jsonrpc: "2.0",
    id: "d",
    result: {
      resultType: "complete",
      supportedVersions: ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"],
      capabilities: { tools: { listChanged: true } },
      instructions: "use search_tools",
      ttlMs: 0,
      cacheScope: "private",
      _meta: { "io.modelcontextprotocol/serverInfo": { name: "mcphub", version: "0.1.0" } },
    },
  }]);
  const list = { jsonrpc: "2.0", id: 3, method: "tools/list", params: { _meta: META } };
  assert.deepEqual(era.incoming(list), {
    deliver: [{ jsonrpc: "2.0", method: "notifications/initialized" }, list],
  });
  assert.equal(era.era, "modern");
  assert.deepEqual(era.outgoing({ jsonrpc: "2.0", id: 3, result: { tools: [] } } as JSONRPCMessage), {
    send: {
      jsonrpc: "2.0",
      id: 3,
      result: { resultType: "complete", tools: [], ttlMs: 0, cacheScope: "private" },
    },
  });
  // A second discover is answered here at once.
  assert.equal((era.incoming({ ...discover, id: "e" }).reply as { id: string }).id, "e");
  // Server-to-client requests are refused back to the gateway; list changes go only to listens (none).
  const asked = era.outgoing({ jsonrpc: "2.0", id: 4, method: "roots/list" } as JSONRPCMessage);
  assert.equal((asked.back![0] as unknown as { error: { code: number } }).error.code, -32601);
  assert.deepEqual(
    era.outgoing({ jsonrpc: "2.0", method: "notifications/tools/list_changed" } as JSONRPCMessage),
    { notify: [] },
  );
  const progress = { jsonrpc: "2.0", method: "notifications/progress", params: {} } as JSONRPCMessage;
  assert.deepEqual(era.outgoing(progress), { send: progress });
  // A call the fast path answers as bytes: its result gets resultType (settled once: the id is done).
  const call = { jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "t", _meta: META } };
  era.incoming(call);
  assert.deepEqual(era.rawAnswer(5), { id: 5, modern: true });
  assert.deepEqual(era.rawAnswer(5), { id: 5, modern: false });
});

Deno.test("a modern host's resources/read carries the cache hints; a server's own are kept", () => {
  const era = new HostEra();
  era.incoming({ jsonrpc: "2.0", id: "d", method: "server/discover", params: { _meta: META } });
  era.outgoing({ jsonrpc: "2.0", id: "mcphub-host-opening", result: OPENING_RESULT } as JSONRPCMessage);
  const contents = [{ uri: "test://a", text: "a" }];
  const read = (id: number) => ({
    jsonrpc: "2.0",
    id,
    method: "resources/read",
    params: { uri: "test://a", _meta: META },
  });
  era.incoming(read(1));
  assert.deepEqual(era.outgoing({ jsonrpc: "2.0", id: 1, result: { contents } } as JSONRPCMessage), {
    send: {
      jsonrpc: "2.0",
      id: 1,
      result: { resultType: "complete", contents, ttlMs: 0, cacheScope: "private" },
    },
  });
  era.incoming(read(2));
  const hinted = { contents, ttlMs: 60_000, cacheScope: "public" };
  assert.deepEqual(era.outgoing({ jsonrpc: "2.0", id: 2, result: hinted } as JSONRPCMessage), {
    send: { jsonrpc: "2.0", id: 2, result: { resultType: "complete", ...hinted } },
  });
  // Other results get none (a call's is not cacheable).
  era.incoming({ jsonrpc: "2.0", id: 3, method: "prompts/get", params: { name: "p", _meta: META } });
  assert.deepEqual(
    era.outgoing({ jsonrpc: "2.0", id: 3, result: { messages: [] } } as JSONRPCMessage),
    { send: { jsonrpc: "2.0", id: 3, result: { resultType: "complete", messages: [] } } },
  );
});

Deno.test("an unsupported version in _meta is -32022 naming the served versions", () => {
  const era = new HostEra();
  const r = era.incoming({
    jsonrpc: "2.0",
    id: 1,
    method: "tools/list",
    params: { _meta: { "io.modelcontextprotocol/protocolVersion": "2099-01-01" } },
  });
  assert.deepEqual(r.deliver, []);
  const error = (r.reply as { error: { code: number; data: { requested: string } } }).error;
  assert.equal(error.code, -32022);
  assert.equal(error.data.requested, "2099-01-01");
});

/** A HostEra with a modern host's tools/call `id` open (capabilities as given). */
function modernCall(capabilities: Record<string, unknown>, id = 5): HostEra {
  const era = new HostEra();
  era.incoming({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: {
      name: "s__ask",
      arguments: { a: 1, b: [2] },
      _meta: { ...META, "io.modelcontextprotocol/clientCapabilities": capabilities },
    },
  });
  return era;
}

Deno.test("MRTR to a modern host: input_required, the retry answers the server and takes the result", () => {
  const era = modernCall({ elicitation: {} });
  const ask = {
    jsonrpc: "2.0",
    id: 0,
    method: "elicitation/create",
    params: { message: "?" },
  } as JSONRPCMessage;
  const out = era.outgoing(ask, 5).send as unknown as {
    id: number;
    result: { resultType: string; inputRequests: Record<string, unknown>; requestState: string };
  };
  assert.equal(out.id, 5);
  assert.equal(out.result.resultType, "input_required");
  const [key] = Object.keys(out.result.inputRequests);
  assert.deepEqual(out.result.inputRequests[key!], {
    method: "elicitation/create",
    params: { message: "?" },
  });
  // Another request of the same call while it waits: refused, not queued.
  const again = era.outgoing({ ...ask, id: 1 } as JSONRPCMessage, 5);
  assert.equal((again.back![0] as unknown as { error: { code: number } }).error.code, -32601);
  // A retry with other arguments is refused; the right one answers the server's request.
  const retry = (id: number, args: unknown) => ({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: {
      name: "s__ask",
      arguments: args,
      inputResponses: { [key!]: { action: "accept", content: { x: 1 } } },
      requestState: out.result.requestState,
      _meta: META,
    },
  });
  const wrong = era.incoming(retry(6, { a: 2 }));
  assert.match((wrong.reply as { error: { message: string } }).error.message, /belongs to another request/);
  assert.deepEqual(era.incoming(retry(7, { b: [2], a: 1 })), {
    deliver: [{ jsonrpc: "2.0", id: 0, result: { action: "accept", content: { x: 1 } } }],
  });
  // The call's final answer goes to the retry's id.
  assert.deepEqual(era.outgoing({ jsonrpc: "2.0", id: 5, result: { content: [] } } as JSONRPCMessage), {
    send: { jsonrpc: "2.0", id: 7, result: { resultType: "complete", content: [] } },
  });
  // Used: the same state again is unknown.
  const stale = era.incoming(retry(8, { a: 1, b: [2] }));
  assert.match((stale.reply as { error: { message: string } }).error.message, /Unknown requestState/);
});

Deno.test("MRTR to a modern host: a capability its request did not declare: the host's request is -32021 naming it, the server's refused, the call cancelled", () => {
  const era = modernCall({});
  const out = era.outgoing({ jsonrpc: "2.0", id: 0, method: "sampling/createMessage" } as JSONRPCMessage, 5);
  assert.deepEqual(out.send, {
    jsonrpc: "2.0",
    id: 5,
    error: {
      code: -32021,
      message: 'sampling/createMessage needs the client capability "sampling", which this request\'s _meta ' +
        "(io.modelcontextprotocol/clientCapabilities) does not declare",
      data: { requiredCapabilities: { sampling: {} } },
    },
  });
  assert.equal((out.back![0] as unknown as { id: number; error: { code: number } }).id, 0);
  assert.match(
    (out.back![0] as unknown as { error: { message: string } }).error.message,
    /does not offer sampling/,
  );
  assert.deepEqual(out.deliver, [{
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: 5, reason: "the host does not offer sampling" },
  }]);
  // The host has its answer: a late answer of the gateway's server for the call is dropped, once.
  assert.deepEqual(era.outgoing({ jsonrpc: "2.0", id: 5, result: { content: [] } } as JSONRPCMessage), {});
  assert.deepEqual(era.rawAnswer(5), { id: 5, modern: false });
  const again = modernCall({});
  again.outgoing({ jsonrpc: "2.0", id: 0, method: "roots/list" } as JSONRPCMessage, 5);
  // The fast path's late answer (relayed as bytes) is dropped too.
  assert.deepEqual(again.rawAnswer(5), { id: 5, modern: false, drop: true });
  // An id the host uses again is a new request, answered.
  again.outgoing({ jsonrpc: "2.0", id: 1, method: "roots/list" } as JSONRPCMessage, 5);
  again.incoming({ jsonrpc: "2.0", id: 5, method: "tools/list", params: { _meta: META } });
  assert.deepEqual(again.rawAnswer(5), { id: 5, modern: true });
  // Outside any call: refused too.
  const loose = era.outgoing({ jsonrpc: "2.0", id: 1, method: "roots/list" } as JSONRPCMessage, undefined);
  assert.match((loose.back![0] as unknown as { error: { message: string } }).error.message, /outside a call/);
});

Deno.test("MRTR to a modern host: an abandoned continuation fails the server's request and cancels the call", async () => {
  const era = modernCall({ roots: {} });
  era.continuationMs = 1;
  const injected: unknown[] = [];
  const done = Promise.withResolvers<void>();
  era.inject = (message) => {
    injected.push(message);
    if (injected.length === 2) done.resolve();
  };
  era.outgoing({ jsonrpc: "2.0", id: 3, method: "roots/list" } as JSONRPCMessage, 5);
  // The continuation's timer does not hold a process open: this one does, until it fired.
  const alive = setTimeout(() => {}, 10_000);
  await done.promise;
  clearTimeout(alive);
  assert.equal((injected[0] as { id: number; error: { code: number } }).id, 3);
  assert.deepEqual(
    (injected[1] as { method: string; params: { requestId: number } }).method,
    "notifications/cancelled",
  );
  assert.equal((injected[1] as { params: { requestId: number } }).params.requestId, 5);
});

Deno.test("a modern host's cancellation of a retry reaches the call by its first id; nothing is kept", () => {
  const era = modernCall({ elicitation: {} });
  const out = era.outgoing({ jsonrpc: "2.0", id: 0, method: "elicitation/create" } as JSONRPCMessage, 5)
    .send as unknown as { result: { inputRequests: Record<string, unknown>; requestState: string } };
  const [key] = Object.keys(out.result.inputRequests);
  era.incoming({
    jsonrpc: "2.0",
    id: 9,
    method: "tools/call",
    params: {
      name: "s__ask",
      arguments: { a: 1, b: [2] },
      inputResponses: { [key!]: { action: "decline" } },
      requestState: out.result.requestState,
      _meta: META,
    },
  });
  const cancel = { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 9, reason: "x" } };
  assert.deepEqual(era.incoming(cancel).deliver, [{ ...cancel, params: { requestId: 5, reason: "x" } }]);
  // A late answer of the cancelled call goes out under its own id, undecorated (the host dropped it).
  const late = { jsonrpc: "2.0", id: 5, result: { content: [] } } as JSONRPCMessage;
  assert.deepEqual(era.outgoing(late), { send: late });
});

/** A modern host opened, and its tools/call (id `id`) delivered; `caps`: its envelope's capabilities. */
function keyedCall(id: number, params: Record<string, unknown>, caps: Record<string, unknown>) {
  const era = new HostEra();
  const meta = { ...META, "io.modelcontextprotocol/clientCapabilities": caps };
  const call = { jsonrpc: "2.0", id, method: "tools/call", params: { name: "ask", ...params, _meta: meta } };
  era.incoming(call);
  era.outgoing({ jsonrpc: "2.0", id: "mcphub-host-opening", result: OPENING_RESULT } as JSONRPCMessage);
  return { era, meta };
}

/** A 2026-07-28 server's input request as the era relays it (its key and round in `_meta`). */
const input = (id: number, method: string, key: string, of: number, params: Record<string, unknown> = {}) =>
  ({
    jsonrpc: "2.0",
    id,
    method,
    params: { ...params, _meta: { "io.mcphub/inputRequest": { key, round: "mcphub-round-1", of } } },
  }) as JSONRPCMessage;

Deno.test("a 2026-07-28 server's round reaches a modern host as one input_required, under the server's keys", () => {
  const { era, meta } = keyedCall(5, {}, { elicitation: {}, sampling: {} });
  // The first of two waits for the second; then both are asked at once, the marker gone.
  assert.deepEqual(
    era.outgoing(input(50, "elicitation/create", "user_name", 2, { message: "Name?" }), 5),
    {},
  );
  const asked = era.outgoing(input(51, "sampling/createMessage", "greeting", 2, { maxTokens: 5 }), 5);
  const result = (asked.send as unknown as { result: Record<string, unknown> }).result;
  assert.equal(result.resultType, "input_required");
  assert.deepEqual(result.inputRequests, {
    user_name: { method: "elicitation/create", params: { message: "Name?" } },
    greeting: { method: "sampling/createMessage", params: { maxTokens: 5 } },
  });
  // The retry answers each server request by its key.
  const retry = era.incoming({
    jsonrpc: "2.0",
    id: 6,
    method: "tools/call",
    params: {
      name: "ask",
      inputResponses: { greeting: { role: "assistant" }, user_name: { action: "accept" } },
      requestState: result.requestState,
      _meta: meta,
    },
  });
  assert.deepEqual(retry.deliver, [
    { jsonrpc: "2.0", id: 50, result: { action: "accept" } },
    { jsonrpc: "2.0", id: 51, result: { role: "assistant" } },
  ]);
  // The call's final answer goes to the retry.
  const done = era.outgoing({ jsonrpc: "2.0", id: 5, result: { content: [] } } as JSONRPCMessage);
  assert.deepEqual(done.send, { jsonrpc: "2.0", id: 6, result: { resultType: "complete", content: [] } });
});

Deno.test("a 2026-07-28 server's input request the host answered up front (inputResponses, no state) is answered from it", () => {
  const given = { user_name: { action: "accept", content: { name: "Ada" } }, extra: { action: "accept" } };
  const { era } = keyedCall(7, { inputResponses: given }, { elicitation: {} });
  const out = era.outgoing(input(70, "elicitation/create", "user_name", 1, { message: "Name?" }), 7);
  assert.deepEqual(out, { back: [{ jsonrpc: "2.0", id: 70, result: given.user_name }] });
  // Once only: the server asking again (its next round) is asked of the host.
  const again = era.outgoing(input(71, "elicitation/create", "user_name", 1, { message: "Name?" }), 7);
  assert.deepEqual(
    Object.keys((again.send as unknown as { result: { inputRequests: object } }).result.inputRequests),
    ["user_name"],
  );
});

Deno.test("the round marker never reaches a legacy host", () => {
  const era = new HostEra();
  era.incoming({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25" } });
  const marked = input(9, "elicitation/create", "user_name", 1, { message: "Name?", _meta: { other: 1 } });
  (marked as { params: { _meta: Record<string, unknown> } }).params._meta.other = 1;
  assert.deepEqual(era.outgoing(marked).send, {
    jsonrpc: "2.0",
    id: 9,
    method: "elicitation/create",
    params: { message: "Name?", _meta: { other: 1 } },
  });
});
