import assert from "node:assert/strict";
import { buildCatalog } from "../../src/catalog/mod.ts";
import { parseConfig } from "../../src/config/mod.ts";
import { Hub, resolveTool, searchTools } from "../../src/hub/mod.ts";
import {
  INDEX_WORKER_MIN_TOOLS,
  INDEX_WORKER_MODULE,
  IndexGoneError,
  IndexWorkerPool,
  localDiscovery,
  workerDiscovery,
} from "../../src/resolver/index_host.ts";
import { buildIndex, catalogRevision, resolveResponse, searchResponse } from "../../src/resolver/mod.ts";
import { syntheticCatalog } from "../../scripts/bench/resolver_bench.ts";
import { INDEX_WORKER_NICE } from "../../src/resolver/index_worker_main.ts";
import { Stepper } from "../../src/json/slices.ts";
import { DENO, FIXTURE } from "../helpers.ts";

const { servers, queries } = syntheticCatalog(INDEX_WORKER_MIN_TOOLS + 1000, 12);
const TOOLS = buildCatalog(servers);

Deno.test("workerDiscovery() answers exactly what the in-process index answers, above the threshold", async () => {
  assert.ok(TOOLS.length >= INDEX_WORKER_MIN_TOOLS);
  const index = buildIndex(TOOLS);
  const revision = catalogRevision(TOOLS);
  const context = { contractVersion: "1", catalogRevision: revision };
  const remote = await workerDiscovery(TOOLS);
  try {
    assert.equal(remote.where, "worker");
    assert.equal(remote.revision, revision);
    for (const query of [...queries, "", "read a text file", "D".repeat(2000)]) {
      for (const max_hits of [undefined, 3, 10]) {
        const args = { query, max_hits };
        assert.deepEqual(await remote.search(args, context), searchResponse(index, args, context), query);
        assert.deepEqual(await remote.resolve(args, context), resolveResponse(index, args, context), query);
      }
    }
    // The resolver's argument errors keep their class (the gateway answers them with InvalidParams).
    await assert.rejects(remote.search({ query: "x", max_hits: 0 }, context), RangeError);
    await assert.rejects(remote.resolve({ query: 42 as unknown as string }, context), TypeError);
  } finally {
    remote.close();
  }
  await assert.rejects(remote.search({ query: "x" }, context), IndexGoneError);
});

Deno.test("workerDiscovery(): closing it mid-query rejects the query; an aborted build stops the worker", async () => {
  const remote = await workerDiscovery(TOOLS);
  const context = { contractVersion: "1", catalogRevision: remote.revision };
  const pending = remote.search({ query: "create a calendar event" }, context);
  remote.close();
  await assert.rejects(pending, IndexGoneError);
  const abort = new AbortController();
  const building = workerDiscovery(TOOLS, { signal: abort.signal });
  abort.abort();
  await assert.rejects(building, IndexGoneError);
});

Deno.test("workerDiscovery(): a query the worker does not answer in time ends with an error", async () => {
  const failures: string[] = [];
  const remote = await workerDiscovery(TOOLS, { queryTimeoutMs: 0, onFailure: (m) => failures.push(m) });
  const context = { contractVersion: "1", catalogRevision: remote.revision };
  await assert.rejects(remote.search({ query: "x".repeat(2000) }, context), IndexGoneError);
  assert.equal(failures.length, 1);
  remote.close();
});

Deno.test("localDiscovery() frees its index when its signal aborts", async () => {
  const abort = new AbortController();
  const local = await localDiscovery(TOOLS.slice(0, 50), { signal: abort.signal });
  const context = { contractVersion: "1", catalogRevision: local.revision };
  assert.equal(local.where, "process");
  assert.ok((await local.search({ query: "create" }, context)).count >= 0);
  abort.abort();
  await assert.rejects(local.search({ query: "create" }, context), IndexGoneError);
});

function fixtureYaml(): string {
  return `servers:\n${
    ["alpha", "beta"].map((name) =>
      `  ${name}:\n    command: ${DENO}\n    args: ${
        JSON.stringify(["run", "-A", FIXTURE, "--name", name])
      }\n`
    ).join("")
  }`;
}

function fixtureConfig() {
  return parseConfig(fixtureYaml(), "/tmp/mcphub.yaml", { env: { get: () => undefined }, cwd: "/tmp" });
}

Deno.test("a hub indexing in a worker answers search_tools and resolve_tool like one indexing in process", async () => {
  const answers: Record<string, unknown>[][] = [];
  for (const indexWorkerMinTools of [Infinity, 0]) {
    const logs: string[] = [];
    const hub = new Hub({
      config: fixtureConfig(),
      env: Deno.env.toObject(),
      version: "test",
      log: (l) => logs.push(l),
      indexWorkerMinTools,
    });
    try {
      await hub.start();
      const discovery = await hub.discovery();
      assert.equal(discovery.where, indexWorkerMinTools === 0 ? "worker" : "process");
      answers.push([
        await searchTools(hub, { query: "echo text back" }),
        await searchTools(hub, { query: "" }),
        await resolveTool(hub, { query: "add two numbers", max_hits: 3 }),
      ]);
      await assert.rejects(searchTools(hub, { query: "x", max_hits: 0 }), /search_tools: /);
      assert.deepEqual(logs.filter((l) => l.startsWith("warning")), []);
    } finally {
      await hub.close();
    }
  }
  assert.deepEqual(answers[1], answers[0]);
});

Deno.test("IndexWorkerPool: one worker serves build after build; a closed discovery's late answers are dropped", async () => {
  const pool = new IndexWorkerPool();
  const first = TOOLS.slice(0, 300), second = TOOLS.slice(300, 500);
  try {
    const one = await workerDiscovery(first, { pool });
    const context = { contractVersion: "1", catalogRevision: one.revision };
    // Still being answered by the worker when its discovery is closed and the worker is handed on.
    const late = one.search({ query: "create a calendar event" }, context);
    one.close();
    await assert.rejects(late, IndexGoneError);
    const two = await workerDiscovery(second, { pool });
    assert.equal(pool.started, 1, "the second build reuses the first one's worker");
    assert.equal(two.revision, catalogRevision(second));
    const index = buildIndex(second);
    const context2 = { contractVersion: "1", catalogRevision: two.revision };
    for (const query of queries) {
      assert.deepEqual(
        await two.search({ query }, context2),
        searchResponse(index, { query }, context2),
        query,
      );
    }
    await assert.rejects(one.search({ query: "x" }, context), IndexGoneError);
    // Closing the pool ends the discovery whose worker it was.
    pool.close();
    await assert.rejects(two.search({ query: "x" }, context2), /shut down/);
    await assert.rejects(workerDiscovery(first, { pool }), IndexGoneError);
  } finally {
    pool.close();
  }
});

/** A worker module that builds nothing real: `crash` throws at the first query, `hang` never answers one. */
function fakeWorker(kind: "crash" | "hang"): Worker {
  const source = `self.onmessage = (e) => {
    const r = e.data;
    if (r.type === "build") self.postMessage({ lease: r.lease, type: "built", revision: "fake" });
    else if (r.type === "query" && ${
    JSON.stringify(kind)
  } === "crash") setTimeout(() => { throw new Error("boom"); });
  };`;
  return new Worker(`data:application/javascript,${encodeURIComponent(source)}`, { type: "module" });
}

Deno.test("IndexWorkerPool: a worker that crashed or hung is terminated and the next build starts a new one", async () => {
  const made: string[] = [];
  const kinds = ["crash", "hang"] as const;
  const pool = new IndexWorkerPool(() => {
    const kind = kinds[made.length];
    made.push(kind ?? "real");
    return kind ? fakeWorker(kind) : new Worker(INDEX_WORKER_MODULE, {
      type: "module",
    });
  });
  const tools = TOOLS.slice(0, 50);
  try {
    for (const kind of kinds) {
      const failures: string[] = [];
      const fake = await workerDiscovery(tools, {
        pool,
        queryTimeoutMs: 200,
        onFailure: (m) => failures.push(m),
      });
      const context = { contractVersion: "1", catalogRevision: fake.revision };
      await assert.rejects(fake.search({ query: "x" }, context), IndexGoneError);
      assert.equal(failures.length, 1, kind);
      assert.match(failures[0]!, kind === "crash" ? /crashed: .*boom/ : /did not answer within 200 ms/);
      // Closing a failed discovery does not hand its worker back.
      fake.close();
    }
    const real = await workerDiscovery(tools, { pool });
    assert.equal(real.revision, catalogRevision(tools));
    real.close();
    assert.deepEqual(made, ["crash", "hang", "real"]);
    // The healthy worker is kept; warm() starts none while one is idle.
    pool.warm();
    assert.equal(pool.started, 3);
  } finally {
    pool.close();
  }
});

Deno.test("a hub's index worker is started once and ends with the hub (the process exits by itself)", async () => {
  const script = `
    import { parseConfig } from ${JSON.stringify(new URL("../../src/config/mod.ts", import.meta.url).href)};
    import { Hub, searchTools } from ${JSON.stringify(new URL("../../src/hub/mod.ts", import.meta.url).href)};
    const config = parseConfig(${
    // A connection's own deadline (AbortSignal.timeout) also keeps a process alive until it passes.
    JSON.stringify(
      `connect_timeout: 15s\n${fixtureYaml()}`,
    )}, "/tmp/mcphub.yaml", { env: { get: () => undefined }, cwd: "/tmp" });
    const hub = new Hub({ config, env: Deno.env.toObject(), version: "test", log: () => {}, indexWorkerMinTools: 0 });
    await hub.start();
    await hub.catalogAsync();
    const first = await hub.discovery();
    await searchTools(hub, { query: "echo text back" });
    await hub.close();
    console.log(first.where);
  `;
  const child = new Deno.Command(DENO, {
    args: ["run", "-A", "-"],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(script));
  await writer.close();
  // An index worker left running would keep the child alive: it is killed (and the test fails) after 60 s.
  const guard = setTimeout(() => child.kill("SIGKILL"), 60_000);
  const out = await child.output();
  clearTimeout(guard);
  assert.equal(
    new TextDecoder().decode(out.stderr).includes("error"),
    false,
    new TextDecoder().decode(out.stderr),
  );
  assert.equal(out.code, 0);
  assert.equal(new TextDecoder().decode(out.stdout), "worker\n");
});

Deno.test("workerDiscovery(): a worker started for the build is made in a macrotask with nothing else of the build in it", async () => {
  const events: string[] = [];
  let creationTask = false;
  const pool = new IndexWorkerPool(() => {
    events.push("create");
    creationTask = true;
    // Runs before any later macrotask of the same delay: the end of the task that made the worker.
    setTimeout(() => creationTask = false, 0);
    const worker = new Worker(INDEX_WORKER_MODULE, { type: "module" });
    const post = worker.postMessage.bind(worker);
    worker.postMessage = (message: unknown) => {
      events.push(creationTask ? "post in the creation task" : "post");
      post(message);
    };
    return worker;
  });
  const tools = TOOLS.slice(0, 200);
  try {
    const built = workerDiscovery(tools, { pool });
    // Not made synchronously in the caller's task either (that task may hold a catalog slice).
    assert.deepEqual(events, []);
    const discovery = await built;
    assert.equal(events[0], "create");
    assert.deepEqual(events.filter((e) => e === "post in the creation task"), []);
    assert.equal(discovery.revision, catalogRevision(tools));
    discovery.close();
    // With the worker idle in the pool, a build takes it without waiting a macrotask.
    events.length = 0;
    const again = await workerDiscovery(tools, { pool });
    assert.deepEqual(events.filter((e) => e === "create"), []);
    assert.equal(again.revision, catalogRevision(tools));
    again.close();
    assert.equal(pool.started, 1);
  } finally {
    pool.close();
  }
});

Deno.test("IndexWorkerPool.warmSoon(): the worker is made in a macrotask of its own; a build gated on it slices after that one", async () => {
  const events: string[] = [];
  let creationTask = false;
  const pool = new IndexWorkerPool(() => {
    events.push("create");
    creationTask = true;
    // Runs before any later macrotask of the same delay: the end of the task that made the worker.
    setTimeout(() => creationTask = false, 0);
    return new Worker(INDEX_WORKER_MODULE, { type: "module" });
  });
  try {
    const warming = pool.warmSoon();
    assert.ok(warming);
    // Asked twice before it ran: the same start.
    assert.equal(pool.warmSoon(), warming);
    // Not made in the caller's task (that task may hold a catalog slice).
    assert.equal(events.length, 0);
    const steps = new Stepper(function* () {
      for (let i = 0; i < 3; i++) {
        events.push(creationTask ? "slice in the creation task" : "slice");
        yield;
      }
      return "built";
    }()).after(warming);
    // A slice per step: every step yields to the event loop.
    assert.equal(await steps.finishAsync(0), "built");
    assert.deepEqual(events, ["create", "slice", "slice", "slice"]);
    assert.equal(pool.started, 1);
    // A worker is there: nothing to wait for, none started.
    assert.equal(pool.warmSoon(), undefined);
    assert.equal(pool.started, 1);
  } finally {
    pool.close();
  }
  // Closing the pool settles a pending start without making a worker.
  const closed = new IndexWorkerPool(() => {
    throw new Error("no worker may be made");
  });
  const pending = closed.warmSoon()!;
  closed.close();
  await pending;
  assert.equal(closed.started, 0);
  assert.equal(closed.warmSoon(), undefined);
});

Deno.test("Stepper.after(): slices wait for the gate; finish() does not", async () => {
  const gate = Promise.withResolvers<void>();
  let steps = 0;
  const stepper = new Stepper(function* () {
    for (let i = 0; i < 4; i++) {
      steps++;
      yield;
    }
    return steps;
  }()).after(gate.promise);
  const sliced = stepper.finishAsync(0);
  // An ungated stepper started after it runs all its slices: by then the gated one would have run its own.
  let free = 0;
  const ungated = new Stepper(function* () {
    for (let i = 0; i < 4; i++) free++, yield;
    return free;
  }());
  assert.equal(await ungated.finishAsync(0), 4);
  assert.equal(steps, 0, "no slice before the gate settles");
  assert.equal(stepper.finish(), 4);
  gate.reject(new Error("a failed gate still lets the build finish"));
  assert.equal(await sliced, 4);
});

Deno.test({
  name: "the index worker runs below the gateway's priority (Linux: its own thread's nice value)",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    const { getPriority } = await import("node:os");
    /** The nice value of each live Web Worker thread of this process, by thread id. */
    const workers = () => {
      const nice = new Map<number, number>();
      for (const entry of Deno.readDirSync("/proc/self/task")) {
        try {
          const comm = Deno.readTextFileSync(`/proc/self/task/${entry.name}/comm`).trim();
          if (comm.startsWith("worker-")) nice.set(Number(entry.name), getPriority(Number(entry.name)));
        } catch {
          // a thread that ended between the listing and the read (an earlier test's worker closing)
        }
      }
      return nice;
    };
    const before = new Set(workers().keys());
    const own = getPriority(Deno.pid);
    const remote = await workerDiscovery(TOOLS);
    try {
      const added = [...workers()].filter(([tid]) => !before.has(tid));
      assert.deepEqual(added.map(([, nice]) => nice), [Math.max(INDEX_WORKER_NICE, own)]);
      // This thread keeps its own priority.
      assert.equal(getPriority(Deno.pid), own);
    } finally {
      remote.close();
    }
  },
});
