import assert from "node:assert/strict";
import { buildCatalog } from "../../src/catalog/mod.ts";
import { parseConfig } from "../../src/config/mod.ts";
import { Hub, resolveTool, searchTools } from "../../src/hub/mod.ts";
import {
  INDEX_WORKER_MIN_TOOLS,
  IndexGoneError,
  localDiscovery,
  workerDiscovery,
} from "../../src/hub/index_host.ts";
import { buildIndex, catalogRevision, resolveResponse, searchResponse } from "../../src/resolver/mod.ts";
import { syntheticCatalog } from "../../scripts/bench/resolver_bench.ts";
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

function fixtureConfig() {
  const yaml = `servers:\n${
    ["alpha", "beta"].map((name) =>
      `  ${name}:\n    command: ${DENO}\n    args: ${
        JSON.stringify(["run", "-A", FIXTURE, "--name", name])
      }\n`
    ).join("")
  }`;
  return parseConfig(yaml, "/tmp/mcphub.yaml", { env: { get: () => undefined }, cwd: "/tmp" });
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
