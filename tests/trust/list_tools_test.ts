import assert from "node:assert/strict";
import { Client, sdkSafeParse } from "../../src/mcp/sdk_client.ts";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client";
import { listSlicing, listToolsPage, SLICED_LIST_MIN_TOOLS } from "../../src/trust/list_tools.ts";
import { parseConfig } from "../../src/config/mod.ts";
import { DEFAULT_RESTART_POLICY } from "../../src/downstream/mod.ts";
import { Hub } from "../../src/hub/mod.ts";
import { DENO, FIXTURE, HOSTILE } from "../helpers.ts";

/** The v1 SDK Client's private caches that its `cacheToolMetadata` fills. */
interface Caches {
  _cachedToolOutputValidators: Map<string, unknown>;
  _cachedRequiredTaskTools: Set<string>;
}

/**
 * A real SDK Client (the gateway's, or v1's as the reference) whose `request` answers `answer` the way v1's
 * Protocol does (a structured clone of the answer, parsed with the requested schema, its ZodError thrown as
 * is), recording each request.
 */
function clientAnswering<C extends Client | V1Client = Client>(
  answer: unknown,
  sent: unknown[] = [],
  make: () => C = () => new Client({ name: "t", version: "1.0.0" }) as C,
): C {
  const client = make();
  const c = client as unknown as {
    request: (req: unknown, schema: unknown, options: unknown) => Promise<unknown>;
  };
  c.request = (req, schema, options) => {
    sent.push({ req, options });
    const r = sdkSafeParse(schema as Parameters<typeof sdkSafeParse>[0], structuredClone(answer));
    return r.success ? Promise.resolve(r.data) : Promise.reject(r.error);
  };
  return client;
}

/** v1's record of a listing (validators by tool, task-required tools). */
function v1Caches(client: V1Client) {
  const c = client as unknown as Caches;
  return { validators: [...c._cachedToolOutputValidators.keys()], required: [...c._cachedRequiredTaskTools] };
}

/** The gateway client's record of the tools it was given (`cacheToolMetadata`), as v1's is read. */
function caches(client: Client, names: string[]) {
  return {
    validators: names.filter((n) => client.getToolOutputValidator(n)),
    required: names.filter((n) => client.isToolTaskRequired(n)),
  };
}

function tools(n: number): Record<string, unknown>[] {
  return Array.from({ length: n }, (_, i) => {
    const t: Record<string, unknown> = {
      name: `t${i}`,
      description: `tool ${i}`,
      inputSchema: { type: "object", properties: { x: { type: "string" } }, extra: i },
      unknownKey: "stripped by ToolSchema",
    };
    if (i % 7 === 0) t.outputSchema = { type: "object", properties: { y: { type: "number" } } };
    if (i % 11 === 0) t.execution = { taskSupport: i % 22 === 0 ? "required" : "optional" };
    if (i % 13 === 0) t.annotations = { readOnlyHint: true };
    return t;
  });
}

/** `listToolsPage` against `Client.listTools` on the same answer: same result or same error, same caches. */
async function same(answer: unknown, sliceMs?: number) {
  const sentSdk: unknown[] = [];
  const sentOurs: unknown[] = [];
  const sdk = clientAnswering(answer, sentSdk, () => new V1Client({ name: "t", version: "1.0.0" }));
  const ours = clientAnswering(answer, sentOurs);
  const params = { cursor: "c1" };
  const options = { timeout: 1234 };
  const expected = await sdk.listTools(params, options).then((v) => ({ v }), (e) => ({ e }));
  const actual = await listToolsPage(ours, params, options, sliceMs).then((v) => ({ v }), (e) => ({ e }));
  if ("e" in expected) {
    assert.ok("e" in actual, "the page must fail as the SDK's does");
    const [a, b] = [actual.e as Error & { issues: unknown }, expected.e as Error & { issues: unknown }];
    assert.equal(a.constructor, b.constructor);
    assert.equal(a.name, b.name);
    assert.equal(a.message, b.message);
    assert.deepEqual(a.issues, b.issues);
  } else {
    assert.ok("v" in actual, `the page must pass as the SDK's does: ${"e" in actual ? actual.e : ""}`);
    assert.deepEqual(actual.v, expected.v);
    assert.deepEqual(JSON.stringify(actual.v), JSON.stringify(expected.v), "same key order");
  }
  const listed = (answer as { tools?: { name?: unknown }[] } | null)?.tools;
  const names = Array.isArray(listed) ? listed.map((t) => String(t?.name)) : [];
  assert.deepEqual(caches(ours, names), v1Caches(sdk));
  assert.deepEqual(sentOurs, sentSdk);
  return actual;
}

const page = (list: unknown[], extra: Record<string, unknown> = {}) => ({
  tools: list,
  nextCursor: "next",
  other: { kept: true },
  ...extra,
});

Deno.test("listToolsPage: a small valid page is what Client.listTools returns", async () => {
  const r = await same(page(tools(50)));
  assert.ok("v" in r && r.v.tools.length === 50);
});

Deno.test("listToolsPage: a large valid page (sliced) is what Client.listTools returns, caches included", async () => {
  const r = await same(page(tools(SLICED_LIST_MIN_TOOLS * 3)));
  assert.ok("v" in r && r.v.tools.length === SLICED_LIST_MIN_TOOLS * 3);
  assert.ok(!("unknownKey" in r.v.tools[0]));
});

Deno.test("listToolsPage: one invalid tool fails a small and a large page with the SDK's very error", async () => {
  for (const n of [50, SLICED_LIST_MIN_TOOLS * 3]) {
    const list = tools(n);
    list[n - 2] = { name: 42, inputSchema: { type: "string" } };
    await same(page(list));
  }
});

Deno.test("listToolsPage: several invalid tools and a bad page field fail with the SDK's very error", async () => {
  for (const n of [50, SLICED_LIST_MIN_TOOLS * 3]) {
    const list: unknown[] = tools(n);
    list[3] = "not a tool";
    list[n - 1] = { name: "x", inputSchema: { type: "object" }, execution: { taskSupport: "sometimes" } };
    await same(page(list, { nextCursor: 7, _meta: "bad" }));
    await same(page(list));
    await same(page(tools(n), { nextCursor: 7 }));
  }
});

Deno.test("listToolsPage: an answer without a tools array fails as Client.listTools does", async () => {
  await same({ nextCursor: "x" });
  await same({ tools: "many" });
  await same({ tools: {} });
  await same(null);
  await same([{ name: "x", inputSchema: { type: "object" } }]);
  await same({ tools: [], _meta: "bad", nextCursor: null });
});

Deno.test("listToolsPage: a large page lets timers run between its slices", async () => {
  let ticks = 0;
  let running = true;
  const tick = () => {
    ticks++;
    if (running) setTimeout(tick, 0);
  };
  setTimeout(tick, 0);
  const client = clientAnswering(page(tools(SLICED_LIST_MIN_TOOLS * 5)));
  const before = ticks;
  const r = await listToolsPage(client, {}, undefined, 0);
  running = false;
  assert.equal(r.tools.length, SLICED_LIST_MIN_TOOLS * 5);
  assert.ok(ticks - before >= 2, `a timer ran ${ticks - before} times during the validation`);
  await new Promise((resolve) => setTimeout(resolve, 0));
});

/** What the hub says of a server listing `count` tools, one of them invalid, with pages sliced or not. */
async function reasonFor(count: number, sliced: boolean): Promise<{ state: string; reason: string }> {
  const yaml = `servers:\n  bad:\n    command: ${DENO}\n    args: ${
    JSON.stringify(["run", "-A", HOSTILE, "--mode", "many", "--count", String(count), "--invalid-at", "7"])
  }\n  good:\n    command: ${DENO}\n    args: ${JSON.stringify(["run", "-A", FIXTURE, "--name", "good"])}\n`;
  const hub = new Hub({
    config: parseConfig(yaml, "/tmp/mcphub.yaml", { env: { get: () => undefined }, cwd: "/tmp" }),
    env: Deno.env.toObject(),
    version: "test",
    log: () => {},
    // The first failure's verdict is compared: no retry may start while the other server still connects.
    restartPolicy: { ...DEFAULT_RESTART_POLICY, baseMs: 600_000, maxMs: 600_000 },
  });
  listSlicing.minTools = sliced ? SLICED_LIST_MIN_TOOLS : Infinity;
  try {
    await hub.start();
    assert.equal(hub.downstream("good")!.state, "connected", "the other server is up");
    const bad = hub.downstream("bad")!;
    return {
      state: bad.state,
      reason: bad.unavailableReason().replace(/next attempt in \d+s/, "next attempt in Ns"),
    };
  } finally {
    listSlicing.minTools = SLICED_LIST_MIN_TOOLS;
    await hub.close();
  }
}

Deno.test("a server whose large tools/list holds an invalid tool fails as it did with the whole-page parse", async () => {
  const sliced = await reasonFor(SLICED_LIST_MIN_TOOLS + 500, true);
  const whole = await reasonFor(SLICED_LIST_MIN_TOOLS + 500, false);
  assert.deepEqual(sliced, whole);
  assert.notEqual(sliced.state, "connected");
  assert.match(sliced.reason, /"tools", 8, "inputSchema", "type"/);
  // And a small list, on the SDK's own path, the same way.
  const small = await reasonFor(20, true);
  assert.deepEqual(small, await reasonFor(20, false));
  assert.match(small.reason, /"tools", 8, "inputSchema", "type"/);
});
