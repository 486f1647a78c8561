import assert from "node:assert/strict";
import { EventBudget, MAX_EVENT_BYTES, SessionEvents } from "../../src/http/mod.ts";
import type { JSONRPCMessage } from "../../src/mcp/mod.ts";

const note = (n: number): JSONRPCMessage => ({
  jsonrpc: "2.0",
  method: "notifications/message",
  params: { n },
});

async function replay(events: SessionEvents, after: string): Promise<[string, JSONRPCMessage][]> {
  const sent: [string, JSONRPCMessage][] = [];
  await events.replayEventsAfter(after, {
    send: (id, message) => Promise.resolve(void sent.push([id, message])),
  });
  return sent;
}

Deno.test("SessionEvents replays one stream's events after the given id, in order", async () => {
  const events = new SessionEvents();
  const a1 = await events.storeEvent("a", note(1));
  const b1 = await events.storeEvent("b", note(2));
  const a2 = await events.storeEvent("a", note(3));
  const a3 = await events.storeEvent("a", note(4));
  assert.deepEqual(await replay(events, a1), [[a2, note(3)], [a3, note(4)]]);
  assert.deepEqual(await replay(events, b1), []);
  assert.equal(await events.getStreamIdForEventId(a2), "a");
  assert.equal(await events.getStreamIdForEventId("nonsense"), undefined);
  await assert.rejects(replay(events, "nonsense"), /Unknown Last-Event-ID/);
});

Deno.test("SessionEvents drops the oldest events beyond its count and byte bounds", async () => {
  const byCount = new SessionEvents({ maxEvents: 3 });
  const ids = [];
  for (let i = 0; i < 5; i++) ids.push(await byCount.storeEvent("s", note(i)));
  assert.equal(byCount.size, 3);
  assert.deepEqual(await replay(byCount, ids[0]), [[ids[2], note(2)], [ids[3], note(3)], [ids[4], note(4)]]);

  const one = JSON.stringify(note(0)).length;
  const byBytes = new SessionEvents({ maxBytes: one * 2 });
  for (let i = 0; i < 4; i++) await byBytes.storeEvent("s", note(i));
  assert.equal(byBytes.size, 2);
  // One event over the byte bound on its own is still kept (the newest is never dropped).
  const tiny = new SessionEvents({ maxBytes: 1 });
  await tiny.storeEvent("s", note(1));
  assert.equal(tiny.size, 1);
});

Deno.test("SessionEvents: a shared byte budget bounds every session's events in total; the biggest session gives first; a closed one gives all back", async () => {
  const one = JSON.stringify(note(0)).length;
  const budget = new EventBudget(one * 10);
  const big = new SessionEvents({ budget });
  const small = new SessionEvents({ budget });
  for (let i = 0; i < 3; i++) await small.storeEvent("s", note(i));
  for (let i = 0; i < 20; i++) await big.storeEvent("s", note(i % 10));
  // Ten events' worth in total: the small session kept its three, the big one the rest.
  assert.equal(budget.bytes, one * 10);
  assert.equal(small.size, 3);
  assert.equal(big.size, 7);
  big.clear();
  assert.equal(big.size, 0);
  assert.equal(budget.bytes, one * 3);
  // The per-session default is far below the old 8 MB.
  assert.ok(MAX_EVENT_BYTES <= 1024 * 1024);
});

Deno.test("SessionEvents: a bound of 0 (listen_limits.events_per_session or events_total) keeps no event, ids still given", async () => {
  const none = new SessionEvents({ maxBytes: 0 });
  const first = await none.storeEvent("s", note(1));
  const second = await none.storeEvent("s", note(2));
  assert.ok(first < second);
  assert.equal(none.size, 0);
  assert.equal(none.bytes, 0);
  assert.equal(await none.getStreamIdForEventId(second), "s");
  assert.deepEqual(await replay(none, first), []);

  const budget = new EventBudget(0);
  const shared = new SessionEvents({ budget });
  await shared.storeEvent("s", note(1));
  assert.equal(shared.size, 0);
  assert.equal(budget.bytes, 0);
  // A reload that raises the total applies from the next event stored.
  budget.max = 1024;
  await shared.storeEvent("s", note(2));
  assert.equal(shared.size, 1);
  assert.equal(budget.bytes, JSON.stringify(note(2)).length);
});
