/**
 * Lazy mode and discovery against the real servers through the gateway.
 */
import assert from "node:assert/strict";
import type { Client } from "@modelcontextprotocol/sdk/client";
import {
  connectDirect,
  connectGateway,
  DENO,
  FIXTURE,
  q,
  REAL,
  serversReady,
  structured,
  tempDir,
  until,
  writeConfig,
} from "../helpers.ts";
import { META_TOOL_NAMES } from "../../src/hub/mod.ts";

function lazyConfig(root: string, extra = ""): string {
  return `expose: lazy
pin: [memory, filesystem__list_directory]
servers:
  everything:
    command: node
    args: [${q(REAL.everything)}, stdio]
    description: The MCP reference test server
  filesystem:
    command: node
    args: [${q(REAL.filesystem)}, ${q(root)}]
    use_when: [reading or writing files on disk, listing directories]
  memory:
    command: node
    args: [${q(REAL.memory)}]
    env: { MEMORY_FILE_PATH: ${q(`${root}/memory.jsonl`)} }
    tags: [graph, notes]
${extra}`;
}

async function ready(client: Client): Promise<void> {
  await serversReady(client);
}

const enc = new TextEncoder();

Deno.test("lazy mode: tools/list is exactly the eight meta-tools and the pins; instructions are bounded", async () => {
  await using dir = await tempDir();
  const config = await writeConfig(dir.path, lazyConfig(dir.path));
  await using gw = await connectGateway(config);
  await ready(gw.client);
  const { tools } = await gw.client.listTools();
  const names = tools.map((t) => t.name);
  const memory = names.filter((n) => n.startsWith("memory__"));
  assert.ok(memory.length >= 9, "a bare server pin mounts all of its tools");
  // The meta-tools, then the pinned servers' tools in config order, each server's in its own order.
  const direct = await connectDirect("node", [REAL.memory], { MEMORY_FILE_PATH: `${dir.path}/direct.jsonl` });
  const own = (await direct.listTools()).tools.map((t) => `memory__${t.name}`);
  await direct.close();
  assert.deepEqual(memory, own);
  assert.deepEqual(names, [
    ...META_TOOL_NAMES.filter((n) => n !== "run_code"),
    "filesystem__list_directory",
    ...own,
  ]);
  const instructions = gw.client.getInstructions()!;
  assert.match(instructions, /lazy mode/);
  assert.match(instructions, /resolve_tool/);
  const summary = instructions.slice(instructions.indexOf("Servers:\n") + "Servers:\n".length);
  assert.deepEqual(summary.split("\n"), [
    "- everything: The MCP reference test server",
    "- filesystem: reading or writing files on disk; listing directories",
    "- memory: graph, notes",
  ]);
  const list = structured<
    { expose: string; pinned: string[]; management_tools: number; advertised_downstream_tools: number }
  >(
    await gw.client.callTool({ name: "list_servers", arguments: {} }),
  );
  assert.equal(list.expose, "lazy");
  assert.deepEqual(list.pinned, ["memory", "filesystem__list_directory"]);
  assert.equal(list.management_tools, 8);
  assert.equal(list.advertised_downstream_tools, memory.length + 1);
});

Deno.test("lazy mode: search, resolve and describe find filesystem__read_text_file; call_tool reaches it", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(`${dir.path}/notes.txt`, "lazy but found\n");
  const config = await writeConfig(dir.path, lazyConfig(dir.path));
  await using gw = await connectGateway(config);
  await ready(gw.client);
  const query = "read the contents of a text file";
  const search = structured<
    { matches: { namespaced: string }[]; catalog_revision: string; contract_version: string }
  >(
    await gw.client.callTool({ name: "search_tools", arguments: { query } }),
  );
  assert.equal(search.matches[0]!.namespaced, "filesystem__read_text_file");
  assert.equal(search.contract_version, "1");
  const resolve = structured<{
    status: string;
    recommendation: {
      namespaced: string;
      required_fields: string[];
      argument_template: Record<string, unknown>;
    };
    catalog_revision: string;
  }>(await gw.client.callTool({ name: "resolve_tool", arguments: { query } }));
  assert.equal(resolve.recommendation.namespaced, "filesystem__read_text_file");
  assert.deepEqual(resolve.recommendation.required_fields, ["path"]);
  assert.equal(resolve.recommendation.argument_template.path, "<value>");
  assert.equal(resolve.catalog_revision, search.catalog_revision);
  // Requests written in Chinese are confident routes through the glossary: "read the contents of a text file";
  // "search the nodes in the knowledge graph" (里, "lining", left by segmentation, is no miss).
  for (
    const [query, tool] of [
      ["读取一个文本文件的内容", "filesystem__read_text_file"],
      ["在知识图谱里搜索节点", "memory__search_nodes"],
    ]
  ) {
    const zh = structured<{ status: string; recommendation?: { namespaced: string } }>(
      await gw.client.callTool({ name: "resolve_tool", arguments: { query } }),
    );
    assert.deepEqual([zh.status, zh.recommendation?.namespaced], ["confident", tool], query);
  }
  for (
    const args of [{ tool: "filesystem__read_text_file" }, { server: "filesystem", tool: "read_text_file" }]
  ) {
    const d = structured<{ namespaced: string; downstream: string; input_schema: { properties: object } }>(
      await gw.client.callTool({ name: "describe_tool", arguments: args }),
    );
    assert.equal(d.namespaced, "filesystem__read_text_file");
    assert.equal(d.downstream, "read_text_file");
    assert.ok("path" in d.input_schema.properties);
  }
  await assert.rejects(
    gw.client.callTool({ name: "describe_tool", arguments: { tool: "filesystem__read_txt_file" } }),
    /Unknown tool "filesystem__read_txt_file"\. Did you mean "filesystem__read_text_file"/,
  );
  const r = await gw.client.callTool({
    name: "call_tool",
    arguments: { tool: "filesystem__read_text_file", arguments: { path: `${dir.path}/notes.txt` } },
  });
  assert.deepEqual(r.content, [{ type: "text", text: "lazy but found\n" }]);
});

Deno.test("discovery bounds: query limit, max_hits, empty query listing", async () => {
  await using dir = await tempDir();
  const config = await writeConfig(dir.path, lazyConfig(dir.path));
  await using gw = await connectGateway(config);
  await ready(gw.client);
  await assert.rejects(
    gw.client.callTool({ name: "search_tools", arguments: { query: "x".repeat(2049) } }),
    /2,?048/,
  );
  await assert.rejects(
    gw.client.callTool({ name: "resolve_tool", arguments: { query: "file", max_hits: 11 } }),
    (e: Error & { code?: number }) => e.code === -32602 && /1\.\.10|1 and 10|1 to 10/.test(e.message),
  );
  const all = structured<
    { count: number; returned: number; truncated: boolean; matches: { namespaced: string }[] }
  >(
    await gw.client.callTool({ name: "search_tools", arguments: { query: "", max_hits: 5 } }),
  );
  assert.ok(all.count > 30);
  assert.equal(all.returned, 5);
  assert.equal(all.truncated, true);
  const sorted = all.matches.map((m) => m.namespaced);
  assert.deepEqual(sorted, [...sorted].sort());
  const capped = structured<{ returned: number; byte_limited: boolean }>(
    await gw.client.callTool({ name: "search_tools", arguments: { query: "", max_hits: 1000 } }),
  );
  assert.ok(capped.returned <= 100);
  assert.ok(enc.encode(JSON.stringify(capped)).length < 16 * 1024);
  // The answer says its shape: one page of more with the token that reads on, then everything.
  type Page = {
    count: number;
    returned: number;
    shape: string;
    offset: number;
    next_page_token: string | null;
    next: string;
    matches: { namespaced: string; server: string; description: string; required_arguments: string[] }[];
    servers?: Record<string, { description?: string; tags?: string[]; use_when?: string[] }>;
  };
  const query = "write a file";
  const first = structured<Page>(
    await gw.client.callTool({ name: "search_tools", arguments: { query, max_hits: 4 } }),
  );
  assert.equal(first.shape, "page");
  assert.equal(first.returned, 4);
  assert.match(
    first.next,
    /^Tools 4 of \d+ listed, best first: call_tool .* pass next_page_token as page_token/,
  );
  const write = first.matches.find((m) => m.namespaced === "filesystem__write_file")!;
  assert.ok(write, JSON.stringify(first.matches.map((m) => m.namespaced)));
  assert.deepEqual(write.required_arguments, ["path", "content"]);
  assert.ok(!write.description.includes("\n") && write.description.length < 200, write.description);
  // Several filesystem matches: its use_when hints are said once, in servers.
  assert.deepEqual(first.servers?.filesystem, {
    use_when: ["reading or writing files on disk", "listing directories"],
  });
  assert.ok(first.matches.every((m) => !("server_description" in m) && !("use_when" in m)));
  const seen = first.matches.map((m) => m.namespaced);
  let token = first.next_page_token;
  let last = first;
  while (token !== null) {
    last = structured<Page>(
      await gw.client.callTool({
        name: "search_tools",
        arguments: { query, max_hits: 20, page_token: token },
      }),
    );
    assert.equal(last.offset, seen.length);
    seen.push(...last.matches.map((m) => m.namespaced));
    token = last.next_page_token;
  }
  assert.equal(last.shape, "everything");
  assert.equal(seen.length, first.count);
  assert.equal(new Set(seen).size, seen.length);
  await assert.rejects(
    gw.client.callTool({
      name: "search_tools",
      arguments: { query: "read a file", page_token: first.next_page_token },
    }),
    (e: Error & { code?: number }) =>
      e.code === -32602 && /not a next_page_token of this query/.test(e.message),
  );
});

Deno.test("catalog_revision is stable across gateway runs and changes when a tool changes", async () => {
  await using dir = await tempDir();
  const config = await writeConfig(
    dir.path,
    `expose: lazy\nservers:\n  fx:\n    command: ${q(DENO)}\n    args: [run, -A, ${q(FIXTURE)}]\n`,
  );
  const revision = async (client: Client) =>
    structured<{ catalog_revision: string }>(await client.callTool({ name: "list_servers", arguments: {} }))
      .catalog_revision;
  let first: string;
  {
    await using gw = await connectGateway(config);
    await ready(gw.client);
    first = await revision(gw.client);
    assert.match(first, /^[0-9a-f]{16,}$/);
  }
  await using gw = await connectGateway(config);
  await ready(gw.client);
  assert.equal(await revision(gw.client), first);
  await gw.client.callTool({ name: "call_tool", arguments: { tool: "fx__change_tools" } });
  // The gateway re-lists the server on its list_changed, after the call returned: poll the revision (no
  // event reaches a lazy host) until it moves, failing loudly at the deadline.
  const changed = await until("catalog_revision to change after fx__change_tools", async () => {
    const now = await revision(gw.client);
    return now === first ? undefined : now;
  });
  assert.notEqual(changed, first);
});
