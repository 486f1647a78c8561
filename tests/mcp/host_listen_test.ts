/**
 * The listens of one host connection (src/mcp/host_listen.ts), message by message: what is honored,
 * acknowledged and routed, and that a resource stays subscribed while any listen names it.
 *
 * @module
 */
import assert from "node:assert/strict";
import { HostListens, MAX_LISTENS } from "../../src/mcp/host_listen.ts";

const KEY = "io.modelcontextprotocol/subscriptionId";
const CAPS = { tools: { listChanged: true }, resources: { subscribe: true, listChanged: true } };
type M = { id?: string | number; method?: string; params?: Record<string, unknown>; result?: unknown };

function listen(id: string | number, notifications: unknown) {
  return { jsonrpc: "2.0", id, method: "subscriptions/listen", params: { notifications } };
}

/** Answers every request of a step as the gateway's server would (subscribe fails for `bad`). */
function answer(l: HostListens, deliver: unknown[], bad = "bad://x") {
  const out = { deliver: [] as M[], notify: [] as M[] };
  for (const m of deliver as M[]) {
    const ok = !(m.method === "resources/subscribe" && m.params?.uri === bad);
    const step = l.answered(
      ok ? { id: m.id, result: {} } : { id: m.id, error: { code: -32002, message: "no" } },
    )!;
    out.deliver.push(...step.deliver as M[]);
    out.notify.push(...step.notify as M[]);
  }
  return out;
}

Deno.test("a listen is acknowledged with what is honored once its lists and subscriptions are answered", () => {
  const l = new HostListens();
  const step = l.listen(listen("L", {
    toolsListChanged: true,
    promptsListChanged: true,
    resourceSubscriptions: ["r://a", "bad://x", "r://a"],
  }));
  // The gateway's server is asked for the lists watched (a baseline) and each URI once; no ack yet.
  assert.deepEqual((step.deliver as M[]).map((m) => [m.method, m.params]), [
    ["tools/list", {}],
    ["prompts/list", {}],
    ["resources/subscribe", { uri: "r://a" }],
    ["resources/subscribe", { uri: "bad://x" }],
  ]);
  assert.deepEqual(step.notify, []);
  assert.deepEqual(answer(l, step.deliver).notify, []); // the server's opening is not known yet
  const [ack] = l.opened(CAPS, { name: "mcphub", version: "1" }) as M[];
  // prompts: the gateway offers no prompt list changes here; bad://x failed to subscribe.
  assert.deepEqual(ack, {
    jsonrpc: "2.0",
    method: "notifications/subscriptions/acknowledged",
    params: {
      notifications: { toolsListChanged: true, resourceSubscriptions: ["r://a"] },
      _meta: { [KEY]: "L" },
    },
  });
  // Routed: only what was honored, stamped.
  assert.deepEqual(l.route({ method: "notifications/tools/list_changed" }), [
    { jsonrpc: "2.0", method: "notifications/tools/list_changed", params: { _meta: { [KEY]: "L" } } },
  ]);
  assert.deepEqual(l.route({ method: "notifications/prompts/list_changed" }), []);
  assert.deepEqual(l.route({ method: "notifications/resources/updated", params: { uri: "bad://x" } }), []);
  assert.equal(l.route({ method: "notifications/resources/updated", params: { uri: "r://a" } }).length, 1);
  // A second listen does not list again.
  assert.deepEqual(
    (l.listen(listen("L2", { toolsListChanged: true })).notify as M[]).map((m) => m.method),
    ["notifications/subscriptions/acknowledged"],
  );
});

Deno.test("a URI stays subscribed while a listen names it; one given back when its listen ended meanwhile", () => {
  const l = new HostListens();
  l.opened(CAPS, undefined);
  const one = l.listen(listen(1, { resourceSubscriptions: ["r://a"] }));
  answer(l, one.deliver);
  const two = l.listen(listen(2, { resourceSubscriptions: ["r://a"] }));
  answer(l, two.deliver);
  assert.deepEqual(l.cancel(1)!.deliver, []);
  assert.equal(l.route({ method: "notifications/resources/updated", params: { uri: "r://a" } }).length, 1);
  const last = l.cancel(2)!.deliver as M[];
  assert.deepEqual(last.map((m) => [m.method, m.params]), [["resources/unsubscribe", { uri: "r://a" }]]);
  assert.equal(l.cancel(2), undefined);
  // Cancelled before its subscription was answered: the subscription made meanwhile is given back.
  const three = l.listen(listen(3, { resourceSubscriptions: ["r://b"] }));
  assert.deepEqual(l.cancel(3)!.deliver, []);
  const late = answer(l, three.deliver);
  assert.deepEqual(late.deliver.map((m) => [m.method, m.params]), [["resources/unsubscribe", {
    uri: "r://b",
  }]]);
  assert.deepEqual(late.notify, []);
});

Deno.test("listens refused by name; an empty one is acknowledged and ended; end() closes with a result", () => {
  const l = new HostListens();
  l.opened(CAPS, { name: "mcphub", version: "1" });
  assert.equal((l.listen(listen(1, undefined)).reply as { error: { code: number } }).error.code, -32602);
  assert.equal(
    (l.listen(listen(1, { toolsListChanged: "yes" })).reply as { error: { code: number } }).error.code,
    -32602,
  );
  const empty = l.listen(listen("E", { promptsListChanged: true })).notify as M[];
  assert.deepEqual(empty.map((m) => m.method ?? "result"), [
    "notifications/subscriptions/acknowledged",
    "result",
  ]);
  assert.deepEqual(empty[1]!.result, {
    resultType: "complete",
    _meta: { [KEY]: "E", "io.modelcontextprotocol/serverInfo": { name: "mcphub", version: "1" } },
  });
  assert.equal(l.size, 0);
  for (let i = 0; i < MAX_LISTENS; i++) l.listen(listen(i, { toolsListChanged: true }));
  const over = l.listen(listen("over", { toolsListChanged: true })).reply as { error: { message: string } };
  assert.match(over.error.message, /Subscription limit reached: 256 listens are open/);
  const ended = l.end((id) => id === 7);
  assert.deepEqual((ended.notify as M[]).map((m) => m.id), [7]);
  assert.equal(l.size, MAX_LISTENS - 1);
});
