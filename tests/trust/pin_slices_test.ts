import assert from "node:assert/strict";
import { parseConfig } from "../../src/config/mod.ts";
import { buildCatalog, type ToolDefinition } from "../../src/catalog/mod.ts";
import { Hub } from "../../src/hub/mod.ts";
import { type PinStore, toolPinMigrations, ToolPins } from "../../src/trust/mod.ts";
import { decidePins, PIN_CHUNK, type PinRow, type PinVerdict, type Trust } from "../../src/trust/pinning.ts";
import { Stepper } from "../../src/json/slices.ts";
import { type DatabaseSync, openStore } from "../../src/store/mod.ts";
import { DENO, FIXTURE, HOSTILE, tempDir } from "../helpers.ts";

function tool(name: string, description: string): ToolDefinition {
  return { name, description, inputSchema: { type: "object", properties: { x: { type: "string" } } } };
}

function rowsOf(db: DatabaseSync, server: string): Map<string, PinRow> {
  const rows = db.prepare(
    "SELECT tool, hash, definition, pending_hash, pending_definition, changed_at FROM tool_pins WHERE server = ?",
  ).all(server) as unknown as PinRow[];
  return new Map(rows.map((r) => [r.tool, { ...r }]));
}

/** The rows `decidePins`' writes leave, applied to `rows` the way the one-transaction check did. */
function applied(
  rows: Map<string, PinRow>,
  server: string,
  trust: Exclude<Trust, "off">,
  tools: ToolDefinition[],
  now: number,
) {
  const next = new Map([...rows].map(([k, v]) => [k, { ...v }]));
  for (const w of decidePins(rows, server, trust, tools, now).writes) {
    if (w.kind === "insert") {
      next.set(w.tool, {
        tool: w.tool,
        hash: w.hash,
        definition: w.definition,
        pending_hash: w.pendingHash,
        pending_definition: w.pendingDefinition,
        changed_at: w.changedAt,
      });
    } else {
      Object.assign(next.get(w.tool)!, {
        pending_hash: w.pendingHash,
        pending_definition: w.pendingDefinition,
        changed_at: w.changedAt,
      });
    }
  }
  return next;
}

/** A list of `n` tools in generation `g`: some descriptions change, some tools come and go. */
function generation(n: number, g: number): ToolDefinition[] {
  const out: ToolDefinition[] = [];
  for (let i = 0; i < n + g * 7; i++) {
    const changes = g > 0 && i % 5 === 0; // changed in every later generation
    const back = g === 2 && i % 10 === 0; // changed back to the approved one
    out.push(tool(`t${i}`, changes && !back ? `tool ${i}, version ${g}` : `tool ${i}`));
  }
  return out;
}

for (const n of [5, PIN_CHUNK * 7 + 3]) {
  for (const trust of ["changes", "pin"] as const) {
    Deno.test(`a sliced pin check of ${n} tools (trust: ${trust}) gives the one-piece verdict and rows`, async () => {
      const db = openStore(":memory:", { migrations: toolPinMigrations });
      let now = 1_000;
      const pins = new ToolPins(db, () => now);
      try {
        for (let g = 0; g < 4; g++) {
          now += 1_000;
          const tools = generation(n, g % 3);
          const before = rowsOf(db, "s");
          const expected: PinVerdict = decidePins(before, "s", trust, tools, now).verdict;
          const rows = applied(before, "s", trust, tools, now);
          // Slices of 0 ms: one chunk a macrotask.
          const verdict = await new Stepper(pins.checkSteps("s", trust, tools)).finishAsync(0);
          assert.deepEqual(verdict, expected, `generation ${g}`);
          assert.deepEqual(rowsOf(db, "s"), rows, `generation ${g}: the stored rows`);
          if (g === 0 && trust === "pin") assert.equal(verdict.held.length, tools.length);
          if (g === 1 && trust === "changes") assert.ok(verdict.held.length > 0);
          if (trust === "pin" && g === 1) pins.approve("s");
        }
        assert.deepEqual(pins.check("s", "off", [tool("x", "x")]), { mounted: [tool("x", "x")], held: [] });
      } finally {
        db.close();
      }
    });
  }
}

Deno.test("a sliced pin check yields between chunks of a large list, never for a small one", () => {
  const db = openStore(":memory:", { migrations: toolPinMigrations });
  try {
    const pins = new ToolPins(db);
    let steps = 0;
    const gen = pins.checkSteps("s", "changes", generation(PIN_CHUNK * 3, 0));
    while (!gen.next().done) steps++;
    assert.equal(steps, 2, "one step between each two chunks");
    steps = 0;
    const small = pins.checkSteps("s", "changes", generation(3, 0));
    while (!small.next().done) steps++;
    assert.equal(steps, 0);
  } finally {
    db.close();
  }
});

Deno.test("another server's calls keep answering while a 100,000-tool server is pinned", async () => {
  await using tmp = await tempDir();
  const db = openStore(`${tmp.path}/s.db`, { migrations: toolPinMigrations });
  const inner = new ToolPins(db);
  let pinning = false;
  let pinned = false;
  const pins: PinStore = {
    check: (server, trust, tools) => inner.check(server, trust, tools),
    *checkSteps(server, trust, tools) {
      if (server === "big") pinning = true;
      try {
        return yield* inner.checkSteps(server, trust, tools);
      } finally {
        if (server === "big") pinning = false, pinned = true;
      }
    },
  };
  const yaml = `servers:\n  big:\n    command: ${DENO}\n    args: ${
    JSON.stringify(["run", "-A", HOSTILE, "--mode", "many", "--count", "100000"])
  }\n  good:\n    command: ${DENO}\n    args: ${JSON.stringify(["run", "-A", FIXTURE, "--name", "good"])}\n`;
  const hub = new Hub({
    config: parseConfig(yaml, "/tmp/mcphub.yaml", { env: { get: () => undefined }, cwd: "/tmp" }),
    env: Deno.env.toObject(),
    version: "test",
    log: () => {},
    pins,
  });
  try {
    await hub.start();
    const good = hub.downstream("good")!;
    const big = hub.downstream("big")!;
    assert.equal(big.tools.length, 100_001);
    // The healthy server's entry, built without the hub's catalog (which would pin `big` at once).
    const echo = buildCatalog([{ name: "good", tools: [...good.tools] }]).find((t) => t.tool === "echo")!;
    const building = hub.catalogAsync();
    let built = false;
    building.finally(() => built = true);
    // Calls while the big list is pinned are answered (how long they take is timed by `deno task bench
    // pin`, as the sliced check's hold against the whole check's).
    let during = 0;
    while (!pinned && !built) {
      const result = await hub.call(echo, { text: "hi" }, { via: "mount" });
      assert.deepEqual(result.content, [{ type: "text", text: "hi" }]);
      if (pinning) during++;
    }
    const catalog = await building;
    assert.ok(during > 0, "a call was answered while the big list was being pinned");
    assert.equal(catalog.filter((t) => t.server === "big").length, 100_001);
    assert.equal(rowsOf(db, "big").size, 100_001, "every first sighting recorded");
  } finally {
    await hub.close();
    db.close();
  }
});

Deno.test("under trust: pin, a large held list is re-read for approvals in slices, and mounted once approved", async () => {
  await using tmp = await tempDir();
  const db = openStore(`${tmp.path}/s.db`, { migrations: toolPinMigrations });
  const inner = new ToolPins(db);
  const checks: { tools: number; yields: number }[] = [];
  const pins: PinStore = {
    check: (server, trust, tools) => inner.check(server, trust, tools),
    *checkSteps(server, trust, tools) {
      const run = { tools: tools.length, yields: 0 };
      checks.push(run);
      const steps = inner.checkSteps(server, trust, tools);
      for (;;) {
        const r = steps.next();
        if (r.done) return r.value;
        run.yields++;
        yield;
      }
    },
  };
  const count = PIN_CHUNK * 4;
  const yaml = `servers:\n  big:\n    command: ${DENO}\n    args: ${
    JSON.stringify(["run", "-A", HOSTILE, "--mode", "many", "--count", String(count)])
  }\n    trust: pin\n`;
  const hub = new Hub({
    config: parseConfig(yaml, "/tmp/mcphub.yaml", { env: { get: () => undefined }, cwd: "/tmp" }),
    env: Deno.env.toObject(),
    version: "test",
    log: () => {},
    pins,
  });
  try {
    await hub.start();
    assert.deepEqual(await hub.catalogAsync(), [], "every tool is new and held");
    assert.equal(hub.held().length, count + 1);
    const mounted = new Promise<void>((resolve) => {
      const off = hub.onChange(() => {
        off();
        resolve();
      });
    });
    checks.length = 0;
    assert.equal(inner.approve("big").length, count + 1);
    await mounted; // the approval watcher's next round (every 2 s)
    assert.deepEqual(checks, [{ tools: count + 1, yields: 4 }], "the held tools, re-read in 5 steps");
    assert.equal((await hub.catalogAsync()).length, count + 1);
    assert.deepEqual(hub.held(), []);
  } finally {
    await hub.close();
    db.close();
  }
});
