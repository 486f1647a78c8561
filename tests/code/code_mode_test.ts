/**
 * Code mode end to end: `mcp serve` under the permissions derived from its config, the official SDK
 * client, the real reference servers (memory, filesystem, everything).
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import type { Client } from "@modelcontextprotocol/sdk/client";
import { ToolListChangedNotificationSchema } from "../../src/mcp/sdk.ts";
import {
  connectGateway,
  DENO,
  HOSTILE,
  pageAll,
  q,
  REAL,
  serversReady,
  structured,
  tempDir,
  until,
  writeConfig,
} from "../helpers.ts";

function config(root: string, extra = ""): string {
  return `code_mode: true
servers:
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
${extra}`;
}

type Text = { type: string; text: string }[];

async function ready(client: Client): Promise<void> {
  await serversReady(client, { state: "connected" });
}

function runCode(client: Client, code: string, extra: Record<string, unknown> = {}) {
  return client.callTool({ name: "run_code", arguments: { code, ...extra } });
}

Deno.test("run_code: creates entities and returns only their names; result, logs and calls", async () => {
  await using dir = await tempDir();
  const path = await writeConfig(dir.path, config(dir.path));
  await using gw = await connectGateway(path);
  await ready(gw.client);
  const names = (await gw.client.listTools()).tools.map((t) => t.name);
  assert.ok(names.includes("run_code"));
  const result = await runCode(
    gw.client,
    `await mcp.tools.memory__create_entities({ entities: [
  { name: "Ada", entityType: "person", observations: ["wrote the first program"] },
  { name: "Grace", entityType: "person", observations: ["found a moth"] },
] });
const graph = await mcp.call("memory__read_graph", {});
console.log("entities:", graph.entities.length);
return graph.entities.map((e) => e.name);`,
  );
  assert.equal(result.isError, undefined);
  assert.deepEqual(result.content, [{ type: "text", text: '["Ada","Grace"]' }]);
  assert.deepEqual(result.structuredContent, { result: ["Ada", "Grace"], logs: ["entities: 2"], calls: 2 });
});

Deno.test("run_code: an uncaught error is a tool error with its message and line; a tool error throws", async () => {
  await using dir = await tempDir();
  const path = await writeConfig(dir.path, config(dir.path));
  await using gw = await connectGateway(path);
  await ready(gw.client);
  const thrown = await runCode(gw.client, `const a = 1;\nif (a) {\n  throw new RangeError("too far");\n}`);
  assert.equal(thrown.isError, true);
  assert.deepEqual(thrown.content, [{ type: "text", text: "run_code failed (line 3): RangeError: too far" }]);
  assert.deepEqual(thrown.structuredContent, { error: "RangeError: too far", line: 3, logs: [], calls: 0 });

  await Deno.writeTextFile(`${dir.path}/a.txt`, "alpha\n");
  const failed = await runCode(
    gw.client,
    `try {\n  await mcp.call("filesystem__read_text_file", { path: ${
      q(`${dir.path}/missing.txt`)
    } });\n} catch (e) {\n  return "caught: " + e.message.includes("ENOENT");\n}`,
  );
  assert.deepEqual(failed.structuredContent, { result: "caught: true", logs: [], calls: 1 });
  const uncaught = await runCode(
    gw.client,
    `\nawait mcp.call("filesystem__read_text_file", { path: ${q(`${dir.path}/missing.txt`)} });`,
  );
  assert.equal(uncaught.isError, true);
  assert.equal((uncaught.structuredContent as { line: number }).line, 2);
  assert.match((uncaught.content as Text)[0]!.text, /^run_code failed \(line 2\): Error: .*ENOENT/);

  const syntax = await runCode(gw.client, `const = 1;`);
  assert.equal(syntax.isError, true);
  assert.match((syntax.content as Text)[0]!.text, /^run_code failed \(line 1\): SyntaxError: /);
});

Deno.test("run_code: reads three files and returns only the matching lines; sums values across calls", async () => {
  await using dir = await tempDir();
  for (const [name, text] of [["a", "one apple\ntwo\n"], ["b", "three\nfour apples\n"], ["c", "five\n"]]) {
    await Deno.writeTextFile(`${dir.path}/${name}.txt`, text);
  }
  const path = await writeConfig(dir.path, config(dir.path));
  await using gw = await connectGateway(path);
  await ready(gw.client);
  const lines = await runCode(
    gw.client,
    `const out = [];
for (const name of ["a", "b", "c"]) {
  const file = await mcp.tools.filesystem__read_text_file({ path: ${q(dir.path)} + "/" + name + ".txt" });
  out.push(...file.content.split("\\n").filter((l: string) => l.includes("apple")));
}
return out;`,
  );
  assert.deepEqual(lines.structuredContent, { result: ["one apple", "four apples"], logs: [], calls: 3 });
  const sum = await runCode(
    gw.client,
    `let total = 0;
for (const [a, b] of [[1, 2], [3, 4], [5, 6]]) {
  const text = await mcp.tools["everything__get-sum"]({ a, b });
  total += Number(String(text).match(/(\\d+)\\.?$/)![1]);
}
return total;`,
  );
  assert.deepEqual(sum.structuredContent, { result: 21, logs: [], calls: 3 });
});

Deno.test("run_code: an agent's code reaches only its scope; records link inner calls to the run", async () => {
  await using dir = await tempDir();
  const path = await writeConfig(
    dir.path,
    config(
      dir.path,
      `agents:
  reader:
    tools: [memory__read_graph, memory__create_entities]
`,
    ).replace("code_mode: true\n", "code_mode: false\n") + `    code_mode: true\n`,
  );
  const db = `${dir.path}/store.db`;
  {
    await using gw = await connectGateway(path, { db, args: ["--agent", "reader"] });
    await ready(gw.client);
    const tools = (await gw.client.listTools()).tools.map((t) => t.name);
    assert.ok(tools.includes("run_code"), "the agent's code_mode turns it on");
    const out = await runCode(
      gw.client,
      `await mcp.tools.memory__create_entities({ entities: [{ name: "K", entityType: "t", observations: [] }] });
const errors = [];
for (const name of ["filesystem__read_text_file", "memory__delete_entities", "nowhere__nothing"]) {
  try { await mcp.call(name, { path: "/etc/hostname", entityNames: ["K"] }); } catch (e) { errors.push(e.message); }
}
return { errors, names: (await mcp.tools.memory__read_graph({})).entities.map((e) => e.name) };`,
    );
    assert.deepEqual(out.structuredContent, {
      result: {
        errors: [
          `Tool "filesystem__read_text_file" is outside the scope of agent "reader": it cannot be called from here`,
          `Tool "memory__delete_entities" is outside the scope of agent "reader": it cannot be called from here`,
          `Tool "nowhere__nothing" is outside the scope of agent "reader": it cannot be called from here`,
        ],
        names: ["K"],
      },
      logs: [],
      calls: 5,
    });
  }
  using store = new DatabaseSync(db, { readOnly: true });
  const rows = store.prepare(
    "SELECT server, namespaced, via, agent, run_id, ok, est_tokens, returned_bytes FROM calls ORDER BY id",
  ).all() as {
    server: string;
    namespaced: string;
    via: string;
    agent: string;
    run_id: string | null;
    ok: number;
    est_tokens: number;
    returned_bytes: number;
  }[];
  const run = rows.find((r) => r.namespaced === "run_code")!;
  assert.equal(run.server, "mcphub");
  assert.match(run.run_id!, /^[0-9a-f]{32}$/);
  assert.ok(
    run.est_tokens > 0 && run.returned_bytes > 0,
    "run_code's own record counts what reached the agent",
  );
  assert.deepEqual(
    rows.filter((r) => r.via === "code").map((r) => [
      r.namespaced,
      r.agent,
      r.run_id,
      r.ok,
      r.est_tokens,
      r.returned_bytes,
    ]),
    [
      // Nothing of a call made by code reaches the agent: no tokens, no bytes returned to it.
      ["memory__create_entities", "reader", run.run_id, 1, 0, 0],
      ["memory__read_graph", "reader", run.run_id, 1, 0, 0],
    ],
    "out-of-scope names never reach a server, so they leave no call record",
  );
});

Deno.test("run_code: a return over the response budget is spooled whole; get_result pages it", async () => {
  await using dir = await tempDir();
  const path = await writeConfig(dir.path, config(dir.path, "response_budget: 4KB\n"));
  await using gw = await connectGateway(path);
  await ready(gw.client);
  const result = await runCode(gw.client, `return Array.from({ length: 2000 }, (_, i) => "line " + i);`);
  const receipt = structured<{ status: string; callId: string; originalBytes: number }>(result);
  assert.equal(receipt.status, "stored");
  const whole = JSON.parse(await pageAll(gw.client, receipt.callId));
  const expected = Array.from({ length: 2000 }, (_, i) => "line " + i);
  assert.deepEqual(whole.structuredContent, { result: expected, logs: [], calls: 0 });
  assert.equal(new TextEncoder().encode(JSON.stringify(whole)).length, receipt.originalBytes);
});

Deno.test("run_code: detach runs it in the background; poll_result collects it", async () => {
  await using dir = await tempDir();
  const path = await writeConfig(dir.path, config(dir.path));
  await using gw = await connectGateway(path);
  await ready(gw.client);
  const accepted = structured<{ status: string; callId: string }>(
    await runCode(gw.client, `return (await mcp.call("everything__echo", { message: "hi" }));`, {
      detach: true,
    }),
  );
  assert.equal(accepted.status, "accepted");
  // Polled until it is no longer pending (until's deadline: 400 polls of 25 ms gave up silently, and the
  // run's sandbox may start slowly on a loaded machine).
  const polled = await until("the detached run's result", async () => {
    const answer = await gw.client.callTool({ name: "poll_result", arguments: { callId: accepted.callId } });
    return (answer.structuredContent as { status?: string } | undefined)?.status === "pending"
      ? undefined
      : answer;
  });
  assert.deepEqual(polled.structuredContent, { result: "Echo: hi", logs: [], calls: 1 });
});

Deno.test("run_code: declarations of the callable tools (describe_tool and the resource), within scope", async () => {
  await using dir = await tempDir();
  const path = await writeConfig(
    dir.path,
    config(
      dir.path,
      `agents:
  notes:
    servers: [memory]
`,
    ),
  );
  await using gw = await connectGateway(path, { args: ["--agent", "notes"] });
  await ready(gw.client);
  const described = structured<{ name: string; declarations: string }>(
    await gw.client.callTool({ name: "describe_tool", arguments: { tool: "run_code" } }),
  );
  assert.equal(described.name, "run_code");
  const d = described.declarations;
  assert.match(d, /^declare const mcp: \{$/m);
  assert.match(d, /^ {4}memory__create_entities\(args: \{$/m);
  assert.match(d, /^ {6}entities: Array<\{$/m);
  assert.match(d, /^ {8}name: string;$/m);
  assert.ok(!d.includes("filesystem__") && !d.includes("everything__"), "only the agent's tools");
  const narrowed = structured<{ declarations: string }>(
    await gw.client.callTool({
      name: "describe_tool",
      arguments: { tool: "run_code", query: "delete observations" },
    }),
  ).declarations;
  assert.match(narrowed, /memory__delete_observations\(args:/);
  assert.ok(narrowed.length < d.length);
  const { resources } = await gw.client.listResources();
  assert.equal(resources[0]!.uri, "mcphub://code/types.d.ts");
  const read = await gw.client.readResource({ uri: "mcphub://code/types.d.ts" });
  assert.deepEqual(read.contents, [{
    uri: "mcphub://code/types.d.ts",
    mimeType: "application/typescript",
    text: d,
  }]);
});

Deno.test("run_code is not offered without code_mode", async () => {
  await using dir = await tempDir();
  const path = await writeConfig(dir.path, config(dir.path).replace("code_mode: true\n", ""));
  await using gw = await connectGateway(path);
  const names = (await gw.client.listTools()).tools.map((t) => t.name);
  assert.ok(!names.includes("run_code"));
  await assert.rejects(runCode(gw.client, "return 1;"), /code mode is off \(set code_mode: true/);
});

Deno.test("code_mode turned on by a config edit: run_code is listed (list_changed), and says when it cannot start", async () => {
  await using dir = await tempDir();
  const off = config(dir.path).replace("code_mode: true\n", "");
  const path = await writeConfig(dir.path, off);
  // Permissions derived from the config as it was at start: code mode was off, so the runtime may not be run.
  await using gw = await connectGateway(path);
  await ready(gw.client);
  let changed = Promise.withResolvers<void>();
  gw.client.setNotificationHandler(ToolListChangedNotificationSchema, () => changed.resolve());
  assert.ok(!(await gw.client.listTools()).tools.some((t) => t.name === "run_code"));
  await Deno.writeTextFile(path, `code_mode: true\n${off}`);
  await changed.promise;
  assert.ok((await gw.client.listTools()).tools.some((t) => t.name === "run_code"));
  const refused = await runCode(gw.client, "return 1;");
  assert.equal(refused.isError, true);
  const text = (refused.content as Text)[0]!.text;
  assert.match(text, /^run_code failed: The sandbox could not be started \(.*Requires run access/);
  assert.match(text, /derive its permissions again \(mcphub permissions\) and restart it$/);

  changed = Promise.withResolvers<void>();
  await Deno.writeTextFile(path, off);
  await changed.promise;
  assert.ok(!(await gw.client.listTools()).tools.some((t) => t.name === "run_code"));
});

Deno.test("run_code in lazy mode: listed with the meta-tools, named in the instructions, calls hidden tools", async () => {
  await using dir = await tempDir();
  const path = await writeConfig(dir.path, `expose: lazy\n${config(dir.path)}`);
  await using gw = await connectGateway(path);
  await ready(gw.client);
  const { tools } = await gw.client.listTools();
  assert.ok(!tools.some((t) => t.name.includes("__")), "no downstream tool is mounted");
  assert.ok(tools.some((t) => t.name === "run_code"));
  const describe = tools.find((t) => t.name === "describe_tool")!;
  assert.ok("query" in (describe.inputSchema.properties ?? {}));
  assert.match(gw.client.getInstructions()!, /run_code runs a short program/);
  const result = await runCode(gw.client, `return await mcp.tools.everything__echo({ message: "hidden" });`);
  assert.deepEqual(result.structuredContent, { result: "Echo: hidden", logs: [], calls: 1 });
  const long = await runCode(
    gw.client,
    `try { await mcp.call("x".repeat(100000), {}); } catch (e) { return e.message; }`,
  );
  assert.match(String((long.structuredContent as { result: string }).result), /^Unknown tool "x{128}…"\.$/);
});

Deno.test("run_code: its time is capped by call_timeout; a bad input is InvalidParams", async () => {
  await using dir = await tempDir();
  const path = await writeConfig(dir.path, `call_timeout: 2s\n${config(dir.path)}`);
  await using gw = await connectGateway(path);
  await ready(gw.client);
  const capped = await runCode(gw.client, "while (true) {}", { timeout: "10m" });
  assert.equal((capped.structuredContent as { limit: string }).limit, "timeout");
  assert.match((capped.content as Text)[0]!.text, /time limit \(2000 ms\)/);
  for (
    const [args, message] of [
      [{}, /run_code: "code" must be a non-empty string/],
      [{ code: "return 1;", timeout: 30 }, /run_code: "timeout" must be a duration such as "30s"/],
      [{ code: "return 1;", timeout: "soon" }, /run_code: "timeout": Invalid duration "soon"/],
      [{ code: "return 1;", detach: "yes" }, /run_code: "detach" must be true or false/],
      [{ code: "x".repeat(256 * 1024 + 1) }, /run_code: "code" is 262145 bytes; at most 262144 are accepted/],
    ] as const
  ) {
    await assert.rejects(gw.client.callTool({ name: "run_code", arguments: args }), message);
  }
});

Deno.test("run_code: a tool held by pinning (trust: pin) is refused inside code with the same words as call_tool", async () => {
  await using dir = await tempDir();
  const desc = `${dir.path}/desc`;
  await Deno.writeTextFile(desc, "Answers ok.");
  const path = await writeConfig(
    dir.path,
    `code_mode: true
servers:
  pinned:
    command: ${DENO}
    args: ${JSON.stringify(["run", "-A", HOSTILE, "--mode", "rug", "--desc-file", desc])}
    trust: pin
  everything:
    command: node
    args: [${q(REAL.everything)}, stdio]
`,
  );
  await using gw = await connectGateway(path);
  await ready(gw.client);
  const direct = await gw.client.callTool({ name: "call_tool", arguments: { tool: "pinned__ok" } });
  assert.equal(direct.isError, true);
  const held = (direct.content as Text)[0]!.text;
  assert.match(
    held,
    /^Tool "pinned__ok" is new and server "pinned" has trust: pin, so it is held until approved/,
  );
  const result = await runCode(
    gw.client,
    `try { await mcp.tools.pinned__ok({}); return "called"; } catch (e) { return e.message; }`,
  );
  assert.equal(
    (result.structuredContent as { result: string }).result,
    held.replace(/\. Call list_servers for the state of every server\.$/, ""),
  );
});
