/**
 * A modern server's listens renewed (src/mcp/era.ts with `renew`, src/mcp/era_http.ts): a listen whose
 * stream ended is sent again under a new id (also after the server's closing result; never after a
 * refusal or a cancellation); the renewed listen's acknowledgement tells the client what it may have
 * missed; over HTTP a listen is sent without holding up the client, cancelled by closing its stream
 * (nothing posted), and renewed after the backoff's wait when its stream drops.
 *
 * @module
 */
import { SdkErrorCode, SdkHttpError } from "@modelcontextprotocol/client";
import assert from "node:assert/strict";
import { Era } from "../../src/mcp/era.ts";
import { EraTransport, ListenStreams } from "../../src/mcp/era_http.ts";
import type { JSONRPCMessage, Transport } from "../../src/mcp/sdk.ts";

type Message = Record<string, unknown>;
const INIT = {
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "mcphub", version: "1" } },
} as JSONRPCMessage;
const DISCOVERED = {
  jsonrpc: "2.0",
  id: "mcphub-discover",
  result: {
    resultType: "complete",
    supportedVersions: ["2026-07-28"],
    capabilities: { tools: { listChanged: true }, resources: { subscribe: true } },
  },
} as JSONRPCMessage;
const STAMP = "io.modelcontextprotocol/subscriptionId";
const ack = (id: string, notifications: Message) =>
  ({
    jsonrpc: "2.0",
    method: "notifications/subscriptions/acknowledged",
    params: { notifications, _meta: { [STAMP]: id } },
  }) as JSONRPCMessage;
const initialized = { jsonrpc: "2.0", method: "notifications/initialized" } as JSONRPCMessage;
const filterOf = (m: unknown) => ((m as Message).params as Message).notifications;

function modernEra(): Era {
  const era = new Era({ probe: true, listen: true, renew: true });
  era.outgoing(INIT);
  era.incoming(DISCOVERED);
  assert.equal(era.era, "modern");
  return era;
}

Deno.test("renewal: a listen whose stream ended goes again under a new id; its acknowledgement tells what may have been missed", () => {
  const era = modernEra();
  const first = era.outgoing(initialized).send as Message;
  assert.equal(first.id, "mcphub-listen-1");
  assert.deepEqual(filterOf(first), { toolsListChanged: true });
  assert.deepEqual(era.incoming(ack("mcphub-listen-1", { toolsListChanged: true })), {});
  // The stream dropped: the same listen again.
  const second = era.relisten("mcphub-listen-1") as unknown as Message;
  assert.equal(second.id, "mcphub-listen-2");
  assert.deepEqual(filterOf(second), { toolsListChanged: true });
  assert.equal(era.relisten("mcphub-listen-1"), undefined, "renewed once");
  // Its acknowledgement: a list_changed for the client (changes while nothing listened were not told).
  assert.deepEqual(era.incoming(ack("mcphub-listen-2", { toolsListChanged: true })), {
    notifications: [{ jsonrpc: "2.0", method: "notifications/tools/list_changed", params: {} }],
  });
  // A late answer to the listen given up is nobody's.
  assert.deepEqual(era.incoming({ jsonrpc: "2.0", id: "mcphub-listen-1", result: {} } as JSONRPCMessage), {});
  // Ended by the server with its closing result: renewable once the stream is gone.
  assert.deepEqual(
    era.incoming(
      { jsonrpc: "2.0", id: "mcphub-listen-2", result: { resultType: "complete" } } as JSONRPCMessage,
    ),
    {},
  );
  const third = era.relisten("mcphub-listen-2") as unknown as Message;
  assert.equal(third.id, "mcphub-listen-3");
  // Refused (a JSON-RPC error): not asked again.
  era.incoming({
    jsonrpc: "2.0",
    id: "mcphub-listen-3",
    error: { code: -32603, message: "Subscription limit reached" },
  } as JSONRPCMessage);
  assert.equal(era.relisten("mcphub-listen-3"), undefined);
});

Deno.test("renewal: a resource subscription's listen keeps the client's subscribe waiting, and is not renewed once unsubscribed", () => {
  const era = modernEra();
  era.outgoing(initialized);
  const subscribe = {
    jsonrpc: "2.0",
    id: 7,
    method: "resources/subscribe",
    params: { uri: "note://a" },
  } as JSONRPCMessage;
  const listen = era.outgoing(subscribe).send as Message;
  assert.equal(listen.id, "mcphub-listen-2");
  assert.deepEqual(filterOf(listen), { resourceSubscriptions: ["note://a"] });
  // Dropped before its acknowledgement: renewed; the client's subscribe is answered by the new one's.
  const again = era.relisten("mcphub-listen-2") as unknown as Message;
  assert.equal(again.id, "mcphub-listen-3");
  assert.deepEqual(era.incoming(ack("mcphub-listen-3", { resourceSubscriptions: ["note://a"] })), {
    deliver: { jsonrpc: "2.0", id: 7, result: {} },
  });
  // Dropped after it: renewed, and the resource's update is told once the new listen is acknowledged.
  const renewed = era.relisten("mcphub-listen-3") as unknown as Message;
  assert.deepEqual(era.incoming(ack(String(renewed.id), { resourceSubscriptions: ["note://a"] })), {
    notifications: [{
      jsonrpc: "2.0",
      method: "notifications/resources/updated",
      params: { uri: "note://a" },
    }],
  });
  // Unsubscribed: cancelled, so a stream end after it renews nothing.
  const out = era.outgoing({
    jsonrpc: "2.0",
    id: 8,
    method: "resources/unsubscribe",
    params: { uri: "note://a" },
  } as JSONRPCMessage);
  assert.equal((out.send as Message).method, "notifications/cancelled");
  assert.equal(era.relisten(String(renewed.id)), undefined);
  // A listen that could not be opened: the subscribe waiting for it gets the error.
  const failing = era.outgoing({ ...subscribe, id: 9 } as JSONRPCMessage).send as Message;
  assert.deepEqual(era.listenFailed(String(failing.id), { code: -32603, message: "refused" }), {
    deliver: { jsonrpc: "2.0", id: 9, error: { code: -32603, message: "refused" } },
  });
  assert.equal(era.relisten(String(failing.id)), undefined);
});

/** A server end for an EraTransport whose listens are streams (ListenStreams fed as eraFetch feeds it). */
async function listeningTransport(refuse?: (message: Message) => unknown) {
  const sent: Message[] = [];
  const waiters: ((m: Message) => void)[] = [];
  const listens = new ListenStreams();
  /** The open listen streams' server ends, by listen id. */
  const streams = new Map<string, ReadableStreamDefaultController<Uint8Array>>();
  /** What the SDK transport read of each listen stream (until it ended). */
  const read = new Map<string, Promise<void>>();
  const inner: Transport = {
    start: () => Promise.resolve(),
    send: (message) => {
      const m = structuredClone(message) as Message;
      sent.push(m);
      for (const wake of waiters.splice(0)) wake(m);
      const refusal = refuse?.(m);
      if (refusal) return Promise.reject(refusal);
      if (m.method === "subscriptions/listen") {
        const id = String(m.id);
        const body = new ReadableStream<Uint8Array>({ start: (c) => void streams.set(id, c) });
        const reader = listens.watch(id, body).getReader();
        read.set(
          id,
          (async () => {
            while (!(await reader.read()).done);
          })(),
        );
      }
      return Promise.resolve();
    },
    close: () => Promise.resolve(),
  };
  const warned: string[] = [];
  const era = new Era({ probe: true, listen: true, renew: true });
  const transport = new EraTransport(inner, era, undefined, (l) => warned.push(l), 15_000, listens);
  const delivered: Message[] = [];
  transport.onmessage = (m) => delivered.push(m as Message);
  await transport.start();
  await transport.send(INIT);
  inner.onmessage!(DISCOVERED);
  const next = (match: (m: Message) => boolean) =>
    new Promise<Message>((resolve) => {
      const found = sent.find(match);
      if (found) return resolve(found);
      const wait = (m: Message) => match(m) ? resolve(m) : waiters.push(wait);
      waiters.push(wait);
    });
  return { sent, listens, streams, read, warned, transport, delivered, next, answer: inner.onmessage! };
}

Deno.test("over HTTP: a dropped listen stream is listened to again after the backoff's wait; a cancelled one is closed, nothing posted", async () => {
  const t = await listeningTransport();
  try {
    await t.transport.send(initialized);
    assert.deepEqual(t.sent.map((m) => m.id ?? m.method), ["mcphub-discover", "mcphub-listen-1"]);
    assert.equal(t.listens.size, 1);
    t.answer(ack("mcphub-listen-1", { toolsListChanged: true }));
    // The stream drops: after the first wait, a new listen, and the gateway says so.
    t.streams.get("mcphub-listen-1")!.close();
    await t.read.get("mcphub-listen-1");
    assert.ok(!t.sent.some((m) => m.id === "mcphub-listen-2"), "not sent again at once, but after a wait");
    const renewed = await t.next((m) => m.id === "mcphub-listen-2");
    assert.deepEqual(filterOf(renewed), { toolsListChanged: true });
    assert.deepEqual(t.warned, [
      "its listen for changes (mcphub-listen-1) ended; listening again (mcphub-listen-2)",
    ]);
    t.answer(ack("mcphub-listen-2", { toolsListChanged: true }));
    assert.deepEqual(t.delivered.at(-1), {
      jsonrpc: "2.0",
      method: "notifications/tools/list_changed",
      params: {},
    });

    // A resource subscription: its listen is cancelled by closing its stream; no notification is posted.
    const subscribed = t.transport.send({
      jsonrpc: "2.0",
      id: 5,
      method: "resources/subscribe",
      params: { uri: "note://a" },
    } as JSONRPCMessage);
    await subscribed;
    assert.equal(t.sent.at(-1)!.id, "mcphub-listen-3");
    t.answer(ack("mcphub-listen-3", { resourceSubscriptions: ["note://a"] }));
    assert.deepEqual(t.delivered.at(-1), { jsonrpc: "2.0", id: 5, result: {} });
    const posted = t.sent.length;
    await t.transport.send({
      jsonrpc: "2.0",
      id: 6,
      method: "resources/unsubscribe",
      params: { uri: "note://a" },
    } as JSONRPCMessage);
    await t.read.get("mcphub-listen-3");
    assert.equal(t.sent.length, posted, "nothing posted for the cancellation");
    assert.equal(t.listens.size, 1);
  } finally {
    await t.transport.close();
  }
  assert.equal(t.listens.size, 0, "closing the transport closes the streams");
});

Deno.test("over HTTP: a listen the server refuses (HTTP 4xx) is given up, and a subscribe waiting for it gets the error", async () => {
  const t = await listeningTransport((m) =>
    m.method === "subscriptions/listen"
      // What the v2 SDK's transport throws for a 4xx answer (its code is a string; the status is data).
      ? new SdkHttpError(SdkErrorCode.ClientHttpNotImplemented, "Error POSTing to endpoint: Not Found", {
        status: 404,
        statusText: "Not Found",
        text: "Not Found",
      })
      : undefined
  );
  try {
    // The client's own message is not held up by its listen.
    await t.transport.send(initialized);
    const answered = new Promise<void>((resolve) => {
      const deliver = t.transport.onmessage!;
      t.transport.onmessage = (m) => {
        deliver(m);
        if ((m as Message).id === 5) resolve();
      };
    });
    await t.transport.send({
      jsonrpc: "2.0",
      id: 5,
      method: "resources/subscribe",
      params: { uri: "note://a" },
    } as JSONRPCMessage);
    await answered;
    const error = t.delivered.at(-1)!.error as { code: number; message: string };
    assert.equal(error.code, -32603);
    assert.match(
      error.message,
      /^The server's subscriptions\/listen failed: Error POSTing to endpoint: Not Found$/,
    );
    assert.deepEqual(t.warned.map((l) => l.replace(/\(mcphub-listen-\d\)/, "(ID)")), [
      "its listen for changes (ID) failed, not listened to: Error POSTing to endpoint: Not Found",
      "its listen for changes (ID) failed, not listened to: Error POSTing to endpoint: Not Found",
    ]);
    assert.equal(t.transport.era.relisten("mcphub-listen-1"), undefined);
  } finally {
    await t.transport.close();
  }
});
