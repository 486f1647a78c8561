/**
 * `expose: auto`: every tool mounted while the definitions fit `expose_budget`, past it the pins and the
 * most-used tools that fit; the choice said in list_servers, re-decided as usage changes (list_changed).
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import type { CatalogTool } from "../../src/catalog/mod.ts";
import { ConfigError, parseConfig } from "../../src/config/mod.ts";
import { decideExposure } from "../../src/hub/mod.ts";
import { connectGateway, q, REAL, structured, tempDir, until, writeConfig } from "../helpers.ts";

/** Catalog entries of the given byte sizes, named s__t0, s__t1, … (only what the decision reads). */
function entries(sizes: number[]): { catalog: CatalogTool[]; bytes: (e: CatalogTool) => number } {
  const size = new Map<CatalogTool, number>();
  const catalog = sizes.map((bytes, i) => {
    const entry = { server: "s", tool: `t${i}`, namespaced: `s__t${i}` } as unknown as CatalogTool;
    size.set(entry, bytes);
    return entry;
  });
  return { catalog, bytes: (e) => size.get(e)! };
}

Deno.test("decideExposure: auto mounts every tool while the definitions and the meta-tools fit", () => {
  const { catalog, bytes } = entries([400, 400, 400]);
  const fits = decideExposure(catalog, {
    expose: "auto",
    pins: [],
    budgetTokens: 1000,
    bytes,
    metaBytes: 2800,
    usage: new Map(),
  });
  assert.equal(fits.mode, "all");
  assert.deepEqual(fits.tools.map((t) => t.namespaced), ["s__t0", "s__t1", "s__t2"]);
  assert.equal(
    fits.reason,
    "expose: auto mounts every tool: the 3 tool definitions (~1000 tokens with the meta-tools) fit expose_budget (1000 tokens)",
  );
});

Deno.test("decideExposure: past the budget, the pins always, then the most-used that fit, in catalog order", () => {
  const { catalog, bytes } = entries([400, 4000, 400, 400, 400, 400]);
  const usage = new Map([["s__t1", 50], ["s__t3", 9], ["s__t4", 9], ["s__t5", 1]]);
  const over = decideExposure(catalog, {
    expose: "auto",
    pins: ["s__t2"],
    budgetTokens: 1000,
    bytes,
    metaBytes: 2400,
    usage,
  });
  // 2400 + 400 (pin) = 2800; t1 (most used) does not fit; t3 and t4 (tied: by name) take it to 3600; t5
  // would pass 4000 by 0 bytes: it fits exactly.
  assert.equal(over.mode, "lazy");
  assert.deepEqual(over.tools.map((t) => t.namespaced), ["s__t2", "s__t3", "s__t4", "s__t5"]);
  assert.match(
    over.reason,
    /^expose: auto hides most tools: the 6 tool definitions pass expose_budget \(1000 tokens\), so 1 pinned and 3 most-used tools are mounted \(~1000 tokens with the meta-tools\)/,
  );
  // A pin is mounted even when it alone passes the budget; unused tools never are.
  const pinned = decideExposure(catalog, {
    expose: "auto",
    pins: ["s__t1"],
    budgetTokens: 1000,
    bytes,
    metaBytes: 2400,
    usage: new Map(),
  });
  assert.deepEqual(pinned.tools.map((t) => t.namespaced), ["s__t1"]);
});

Deno.test("decideExposure: all and lazy are what they were", () => {
  const { catalog, bytes } = entries([400, 400]);
  const base = { pins: ["s__t1"], bytes, metaBytes: 100, usage: new Map([["s__t0", 3]]) };
  assert.deepEqual(decideExposure(catalog, { ...base, expose: "all" }).tools.length, 2);
  assert.deepEqual(decideExposure(catalog, { ...base, expose: "lazy" }).tools.map((t) => t.namespaced), [
    "s__t1",
  ]);
});

Deno.test("config: expose: auto and expose_budget are read; a bad budget names the key and the fix", () => {
  const options = { env: { get: () => undefined }, cwd: "/work", home: "/home/u" };
  const config = parseConfig("expose: auto\nexpose_budget: 20k\n", "mcphub.yaml", options);
  assert.equal(config.expose, "auto");
  assert.equal(config.exposeBudgetTokens, 20_000);
  assert.equal(parseConfig("expose_budget: 5000\n", "mcphub.yaml", options).exposeBudgetTokens, 5000);
  for (
    const [text, message] of [
      ["expose_budget: 500\n", "500 tokens is below the minimum of 1000"],
      ["expose_budget: lots\n", 'expected a number of tokens such as 20000 or "20k", got "lots"'],
      ["expose: some\n", "auto"],
    ]
  ) {
    assert.throws(() => parseConfig(text, "mcphub.yaml", options), (error) => {
      assert.ok(error instanceof ConfigError);
      assert.ok(error.message.includes("mcphub.yaml") && error.message.includes(message), error.message);
      return true;
    });
  }
});

function autoConfig(root: string, budget: string, extra = ""): string {
  return `expose: auto
expose_budget: ${budget}
${extra}servers:
  everything:
    command: node
    args: [${q(REAL.everything)}, stdio]
  filesystem:
    command: node
    args: [${q(REAL.filesystem)}, ${q(root)}]
  memory:
    command: node
    args: [${q(REAL.memory)}]
    env: { MEMORY_FILE_PATH: ${q(`${root}/memory.jsonl`)} }
`;
}

interface Listed {
  servers: { state: string }[];
  expose: string;
  exposure: { mode: string; reason: string };
  total_tools: number;
  advertised_downstream_tools: number;
}

async function connected(client: Client): Promise<Listed> {
  return await until("every server connected", async () => {
    const s = structured<Listed>(await client.callTool({ name: "list_servers", arguments: {} }));
    return s.servers.every((x) => x.state === "connected") ? s : undefined;
  });
}

Deno.test("expose: auto over the reference servers: all mounted within the budget, and list_servers says why", async () => {
  await using dir = await tempDir();
  await using gw = await connectGateway(await writeConfig(dir.path, autoConfig(dir.path, "40k")));
  const listed = await connected(gw.client);
  assert.equal(listed.expose, "auto");
  assert.equal(listed.exposure.mode, "all");
  assert.equal(listed.advertised_downstream_tools, listed.total_tools);
  assert.match(
    listed.exposure.reason,
    new RegExp(`^expose: auto mounts every tool: the ${listed.total_tools} tool definitions`),
  );
  const { tools } = await gw.client.listTools();
  assert.ok(
    tools.some((t) => t.name === "memory__create_entities") && tools.some((t) => t.name === "search_tools"),
  );
  assert.match(gw.client.getInstructions()!, /^mcphub gateway in auto mode, in front of 3 MCP servers/);
});

Deno.test("expose: auto past the budget mounts the pins, then a tool once it is used (with list_changed)", async () => {
  await using dir = await tempDir();
  const config = await writeConfig(dir.path, autoConfig(dir.path, "2000", "pin: [memory__read_graph]\n"));
  let changed = 0;
  const client = new Client({ name: "mcphub-test", version: "1.0.0" });
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    changed++;
  });
  await using gw = await connectGateway(config, { client });
  const listed = await connected(gw.client);
  assert.equal(listed.exposure.mode, "lazy");
  assert.match(
    listed.exposure.reason,
    /pass expose_budget \(2000 tokens\), so 1 pinned and 0 most-used tools are mounted/,
  );
  const names = async () =>
    (await gw.client.listTools()).tools.map((t) => t.name).filter((n) => n.includes("__"));
  assert.deepEqual(await names(), ["memory__read_graph"]);
  const seen = changed;
  const result = await gw.client.callTool({
    name: "call_tool",
    arguments: { tool: "filesystem__list_allowed_directories", arguments: {} },
  });
  assert.equal(result.isError, undefined);
  await until("tools/list_changed", () => Promise.resolve(changed > seen ? true : undefined));
  assert.deepEqual(await names(), ["filesystem__list_allowed_directories", "memory__read_graph"]);
  const after = structured<Listed>(await gw.client.callTool({ name: "list_servers", arguments: {} }));
  assert.match(after.exposure.reason, /so 1 pinned and 1 most-used tool is mounted/);
});

Deno.test("expose: auto reads the call records: a tool used in an earlier session is mounted at once", async () => {
  await using dir = await tempDir();
  const config = await writeConfig(dir.path, autoConfig(dir.path, "1500"));
  const db = `${dir.path}/shared.db`;
  {
    await using first = await connectGateway(config, { db });
    await connected(first.client);
    await first.client.callTool({
      name: "call_tool",
      arguments: { tool: "filesystem__list_allowed_directories" },
    });
  }
  await using second = await connectGateway(config, { db });
  await connected(second.client);
  const names = await until("the records read", async () => {
    const tools = (await second.client.listTools()).tools.map((t) => t.name).filter((n) => n.includes("__"));
    return tools.length ? tools : undefined;
  });
  assert.deepEqual(names, ["filesystem__list_allowed_directories"]);
});
