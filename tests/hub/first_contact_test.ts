/**
 * First contact: what a stock client and a new user meet in the first minute. A one-shot client (the
 * official Inspector CLI) sees and calls every downstream tool on its first try, with an empty and a warm
 * store; an oversized result of a tool with an outputSchema reaches the SDK's `Client.callTool` as a
 * receipt it accepts; one broken server entry fails only that server; one-shot commands leave no
 * process behind; every progress notification arrives before its result; bare names and downstream
 * errors read as a user expects.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import {
  alive,
  connectDirect,
  connectGateway,
  DENO,
  FIXTURE,
  gatewayFlags,
  q,
  RawGateway,
  REAL,
  ROOT,
  runMcphub,
  stderrMatches,
  structured,
  tempDir,
  until,
  writeConfig,
} from "../helpers.ts";

const INSPECTOR = `${ROOT}tests/servers/node_modules/@modelcontextprotocol/inspector/cli/build/cli.js`;

function threeServers(dir: string, extra = ""): string {
  return `
${extra}
servers:
  everything:
    command: node
    args: [${q(REAL.everything)}]
  filesystem:
    command: node
    args: [${q(REAL.filesystem)}, ${q(dir)}]
  memory:
    command: node
    args: [${q(REAL.memory)}]
    env: { MEMORY_FILE_PATH: ${q(`${dir}/memory.jsonl`)} }
`;
}

/** A script that starts the gateway under its derived flags: the command a one-shot client runs. */
async function gatewayScript(dir: string, config: string, db: string): Promise<string> {
  const flags = await gatewayFlags(config, db);
  const path = `${dir}/gateway.sh`;
  const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
  await Deno.writeTextFile(
    path,
    `#!/bin/sh\nexec ${
      [DENO, "run", "--no-prompt", ...flags, `${ROOT}main.ts`, "--config", config, "--db", db, "mcp", "serve"]
        .map(quote).join(" ")
    }\n`,
  );
  await Deno.chmod(path, 0o755);
  return path;
}

/** Runs the Inspector CLI once against a command; returns its parsed JSON output. */
async function inspector(command: string, args: string[]): Promise<Record<string, unknown>> {
  const env = { ...Deno.env.toObject() };
  for (const name of Object.keys(env)) if (/^(LD|DYLD)_/.test(name)) delete env[name];
  const out = await new Deno.Command("node", {
    args: [INSPECTOR, "--cli", command, ...args],
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  assert.equal(out.code, 0, `inspector failed: ${new TextDecoder().decode(out.stderr)}\n${text}`);
  return JSON.parse(text);
}

/** Every tool of the three servers, connected directly: the names the gateway must mount. */
async function directToolNames(dir: string): Promise<string[]> {
  const names: string[] = [];
  for (
    const [server, args, env] of [
      ["everything", [REAL.everything], {}],
      ["filesystem", [REAL.filesystem, dir], {}],
      ["memory", [REAL.memory], { MEMORY_FILE_PATH: `${dir}/memory.jsonl` }],
    ] as const
  ) {
    const client = await connectDirect("node", [...args], env);
    try {
      const { tools } = await client.listTools();
      for (const t of tools) names.push(`${server}__${t.name.replaceAll("-", "-")}`);
    } finally {
      await client.close();
    }
  }
  return names.sort();
}

Deno.test("the Inspector CLI lists every downstream tool on its first try (empty and warm store) and calls one", async () => {
  await using tmp = await tempDir();
  const config = await writeConfig(tmp.path, threeServers(tmp.path, "startup_wait: 60s"));
  const db = `${tmp.path}/store.db`;
  const script = await gatewayScript(tmp.path, config, db);
  const expected = await directToolNames(tmp.path);

  for (const store of ["empty", "warm"]) {
    const listed = await inspector(script, ["--method", "tools/list"]);
    const names = (listed.tools as { name: string }[]).map((t) => t.name);
    const downstream = names.filter((n) => n.includes("__")).sort();
    assert.deepEqual(downstream, expected, `${store} store: every tool of the three servers`);
    assert.ok(names.includes("list_servers") && names.includes("call_tool"), `${store} store: meta-tools`);
  }

  const called = await inspector(script, [
    "--method",
    "tools/call",
    "--tool-name",
    "everything__echo",
    "--tool-arg",
    "message=hello from the inspector",
  ]);
  assert.deepEqual(called.content, [{ type: "text", text: "Echo: hello from the inspector" }]);
});

Deno.test("a warm cache answers the first tools/list at once; a call to a cached tool waits for its server", async () => {
  await using tmp = await tempDir();
  // startup_wait 0: without a cache, the first tools/list does not wait for the slow server. The server
  // starts once the file `go` exists: connecting for as long as the test needs it, not for 1.5 s that a
  // loaded machine can spend before the first tools/list.
  const go = `${tmp.path}/go`;
  const config = await writeConfig(
    tmp.path,
    `startup_wait: "0"\nservers:\n  slow:\n    command: ${q(DENO)}\n    args: [run, -A, ${
      q(FIXTURE)
    }, --start-when, ${q(go)}]\n`,
  );
  {
    await using gw = await connectGateway(config);
    const first = await gw.client.listTools();
    assert.equal(
      first.tools.filter((t) => t.name.startsWith("slow__")).length,
      0,
      "cold: nothing cached yet",
    );
    const search = structured(
      await gw.client.callTool({ name: "search_tools", arguments: { query: "echo" } }),
    );
    assert.deepEqual(search.servers_connecting, ["slow"]);
    assert.match(String(search.hint ?? ""), /still connecting \(slow\)/);
    // The server connects; its list is cached.
    await Deno.writeTextFile(go, "");
    const echoed = await gw.client.callTool({
      name: "call_tool",
      arguments: { tool: "slow__echo", arguments: { text: "a" } },
    });
    assert.deepEqual(echoed.content, [{ type: "text", text: "a" }]);
    // stderr is its own pipe: the line written before the answer may be read after it.
    await until(
      "the connected line on stderr",
      () => Promise.resolve(/slow: connected, \d+ tools, \d+\.\d s/.test(gw.stderr()) || undefined),
    );
  }
  await Deno.remove(go);
  {
    await using gw = await connectGateway(config);
    const first = await gw.client.listTools();
    const names = first.tools.map((t) => t.name);
    assert.ok(names.includes("slow__echo") && names.includes("slow__wait"), "warm: cached tools at once");
    const list = structured<{ servers: { name: string; state: string }[] }>(
      await gw.client.callTool({ name: "list_servers", arguments: {} }),
    );
    assert.equal(
      list.servers[0]!.state,
      "connecting",
      "the server was still starting when tools/list answered",
    );
    await Deno.writeTextFile(go, "");
    const echoed = await gw.client.callTool({ name: "slow__echo", arguments: { text: "b" } });
    assert.deepEqual(echoed.content, [{ type: "text", text: "b" }]);
  }
});

Deno.test("an oversized result of a tool with an outputSchema reaches Client.callTool as a receipt; pages equal the direct result", async () => {
  await using tmp = await tempDir();
  const files = `${tmp.path}/files`;
  await Deno.mkdir(files);
  const body = "línea de texto — 行 — line\n".repeat(4000);
  await Deno.writeTextFile(`${files}/big.txt`, body);
  await Deno.writeTextFile(`${files}/small.txt`, "small");
  const memoryFile = `${tmp.path}/memory.jsonl`;
  const config = await writeConfig(
    tmp.path,
    `response_budget: 2KB
servers:
  filesystem:
    command: node
    args: [${q(REAL.filesystem)}, ${q(files)}]
  memory:
    command: node
    args: [${q(REAL.memory)}]
    env: { MEMORY_FILE_PATH: ${q(memoryFile)} }
`,
  );
  await using gw = await connectGateway(config);
  const tools = await gw.client.listTools();
  const read = tools.tools.find((t) => t.name === "filesystem__read_text_file")!;
  assert.ok(read.outputSchema, "the mounted tool keeps an outputSchema");

  const direct = await connectDirect("node", [REAL.filesystem, files]);
  const memDirect = await connectDirect("node", [REAL.memory], { MEMORY_FILE_PATH: memoryFile });
  try {
    // A real result under the budget still validates against the advertised schema.
    const small = await gw.client.callTool({
      name: "filesystem__read_text_file",
      arguments: { path: `${files}/small.txt` },
    });
    assert.deepEqual(small.structuredContent, { content: "small" });

    const cases: [string, Record<string, unknown>, typeof direct][] = [
      ["filesystem__read_text_file", { path: `${files}/big.txt` }, direct],
    ];
    // server-memory: a graph larger than the budget.
    await gw.client.callTool({
      name: "memory__create_entities",
      arguments: {
        entities: Array.from({ length: 40 }, (_, i) => ({
          name: `entity-${i}`,
          entityType: "thing",
          observations: [`observation ${i} `.repeat(10)],
        })),
      },
    });
    cases.push(["memory__read_graph", {}, memDirect]);

    for (const [name, args, baseline] of cases) {
      const result = await gw.client.callTool({ name, arguments: args });
      const receipt = result.structuredContent as Record<string, unknown>;
      assert.equal(receipt.status, "stored", `${name}: a receipt`);
      const callId = receipt.callId as string;
      let text = "";
      let cursor: number | null = 0;
      while (cursor !== null) {
        type Page = { text: string; nextCursor: number | null; done: boolean };
        const page: Page = structured<Page>(
          await gw.client.callTool({ name: "get_result", arguments: { callId, cursor, encoding: "utf8" } }),
        );
        text += page.text;
        cursor = page.done ? null : page.nextCursor;
      }
      const stored = JSON.parse(text);
      const downstreamName = name.slice(name.indexOf("__") + 2);
      const want = await baseline.callTool({ name: downstreamName, arguments: args });
      assert.deepEqual(stored.structuredContent, want.structuredContent, `${name}: paged = direct`);
      assert.equal(Buffer.byteLength(text), receipt.originalBytes);
    }
  } finally {
    await direct.close();
    await memDirect.close();
  }
});

Deno.test("an unset ${VAR} fails only that server, named with the variable and key; the rest are served", async () => {
  await using tmp = await tempDir();
  const config = await writeConfig(
    tmp.path,
    `servers:
  broken:
    command: node
    args: [${q(REAL.memory)}]
    env: { TOKEN: "\${MCPHUB_TEST_UNSET_VARIABLE}" }
  fixture:
    command: ${q(DENO)}
    args: [run, -A, ${q(FIXTURE)}]
`,
  );
  const env = { ...Deno.env.toObject() };
  delete env.MCPHUB_TEST_UNSET_VARIABLE;
  await using gw = await connectGateway(config, { flags: ["-A"] });
  const list = structured<{ servers: { name: string; state: string; error?: string }[] }>(
    await gw.client.callTool({ name: "list_servers", arguments: {} }),
  );
  const broken = list.servers.find((s) => s.name === "broken")!;
  assert.equal(broken.state, "failed");
  assert.match(
    broken.error!,
    /mcphub\.yaml:5:\d+: servers\.broken\.env\.TOKEN: environment variable MCPHUB_TEST_UNSET_VARIABLE is not set/,
  );
  const echoed = await gw.client.callTool({ name: "fixture__echo", arguments: { text: "still here" } });
  assert.deepEqual(echoed.content, [{ type: "text", text: "still here" }]);

  const out = await runMcphub(["--config", config, "--db", `${tmp.path}/l.db`, "list", "--json"], { env });
  const listed = JSON.parse(out.stdout);
  const row = listed.servers.find((s: { name: string }) => s.name === "broken");
  assert.equal(row.state, "failed");
  assert.match(row.error, /MCPHUB_TEST_UNSET_VARIABLE is not set/);
});

Deno.test("mcphub list and search stop a server that hangs in start-up, with its whole process group", async () => {
  await using tmp = await tempDir();
  for (const command of ["list", "search"]) {
    const state = `${tmp.path}/${command}`;
    await Deno.mkdir(state);
    // A wrapper shell whose child (the fixture) hangs: the fixture is a grandchild of the gateway. The
    // grandchild's shell writes its pid and then execs the fixture, so the pid is on disk at once: the
    // fixture itself writes it only after loading, which on a loaded machine can outlast connect_timeout
    // and the grace before the kill (the test then found no pid file).
    // (`$$$$`: the config's `$$` is a literal `$`, so the shell sees its own `$$`.)
    const inner = `echo $$$$ > ${state}/pid && exec ${DENO} run -A ${FIXTURE} --hang-at-start`;
    const config = await writeConfig(
      tmp.path,
      `connect_timeout: 1s
servers:
  hangs:
    command: sh
    args: [-c, ${q(`sh -c '${inner}'; exit 0`)}]
`,
      `${command}.yaml`,
    );
    const out = await runMcphub(["--config", config, "--db", `${tmp.path}/db`, command]);
    assert.equal(out.code, 0, out.stderr);
    const pid = Number(await Deno.readTextFile(`${state}/pid`));
    assert.ok(pid > 0);
    // The group was signalled before the command exited; the process's end follows the signal (not at
    // once on a loaded machine). A server left running never ends, and this fails at the deadline.
    await until(
      `${command}: the hung server (pid ${pid}) stopped`,
      () => Promise.resolve(alive(pid) ? undefined : true),
    );
  }
});

Deno.test("a progress notification written together with its response reaches the caller before the result", async () => {
  // The fixture writes its last progress notifications and the response in one write. Asserted on the bytes
  // the gateway writes to its host, in order: an SDK host that reads a notification in the same chunk as
  // its response drops it (the SDK handles a notification a microtask after a response), and on a loaded
  // machine any two writes can share a read, so an SDK client's view would test the scheduler, not the
  // gateway (its pause between them is a mitigation no test can make deterministic).
  await using tmp = await tempDir();
  const config = await writeConfig(
    tmp.path,
    `servers:\n  batch:\n    command: ${q(DENO)}\n    args: [run, -A, ${q(FIXTURE)}, --batch-writes]\n`,
  );
  const db = `${tmp.path}/db`;
  const gw = new RawGateway(config, db, await gatewayFlags(config, db));
  try {
    await gw.send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    });
    assert.ok((await gw.response(1)).result);
    await gw.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    for (let round = 0; round < 5; round++) {
      const id = 10 + round;
      const token = `round-${round}`;
      await gw.send({
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: { name: "batch__progress", arguments: { n: 4 }, _meta: { progressToken: token } },
      });
      const response = await gw.response(id);
      assert.deepEqual(response.result, { content: [{ type: "text", text: "sent 4" }] });
      const messages = gw.lines.map((line) => JSON.parse(line));
      const answered = messages.findIndex((m) => m.id === id && "result" in m);
      const progress = messages.slice(0, answered)
        .filter((m) => m.method === "notifications/progress" && m.params.progressToken === token)
        .map((m) => m.params.progress);
      assert.deepEqual(progress, [1, 2, 3, 4], `round ${round}: every progress, in order, before the result`);
    }
  } finally {
    await gw.closeStdin().catch(() => {});
    await gw.child.status;
    await gw.stdoutDone;
  }
  // Nothing of a call after its result, and the gateway lost none of the batched notifications.
  const messages = gw.lines.map((line) => JSON.parse(line));
  assert.equal(messages.filter((m) => m.method === "notifications/progress").length, 20);
  assert.equal(gw.rest, "");
  assert.doesNotMatch(gw.stderr, /unknown token/);
});

Deno.test("bare names: call_tool takes a name unique in scope; ambiguous or mounted bare names say what to use", async () => {
  await using tmp = await tempDir();
  const config = await writeConfig(
    tmp.path,
    `servers:
  everything:
    command: node
    args: [${q(REAL.everything)}]
  fixture:
    command: ${q(DENO)}
    args: [run, -A, ${q(FIXTURE)}]
`,
  );
  await using gw = await connectGateway(config);
  await gw.client.listTools();
  const sum = await gw.client.callTool({
    name: "call_tool",
    arguments: { tool: "get-sum", arguments: { a: 2, b: 3 } },
  });
  assert.match(JSON.stringify(sum.content), /5/);

  await assert.rejects(
    gw.client.callTool({ name: "call_tool", arguments: { tool: "echo", arguments: { message: "x" } } }),
    (error: Error) => {
      assert.match(
        error.message,
        /^MCP error -32602: call_tool: "echo" is a tool of 2 servers; name one of "everything__echo", "fixture__echo"\.$/,
      );
      return true;
    },
  );
  await assert.rejects(
    gw.client.callTool({ name: "get-sum", arguments: { a: 1, b: 2 } }),
    (error: Error) => {
      assert.match(
        error.message,
        /^MCP error -32602: Unknown tool "get-sum": mounted tools are named server__tool; use "everything__get-sum"\.$/,
      );
      return true;
    },
  );
  // A downstream JSON-RPC error keeps one prefix.
  await assert.rejects(
    gw.client.callTool({ name: "fixture__rpc_error", arguments: {} }),
    (error: Error & { code?: number }) => {
      assert.equal(error.message, "MCP error -32602: the fixture refuses these arguments");
      assert.equal(error.code, -32602);
      return true;
    },
  );
});

Deno.test("a restarting server's stderr tail is its own attempt's, not repeated and grown", async () => {
  await using tmp = await tempDir();
  const config = await writeConfig(
    tmp.path,
    `servers:\n  crasher:\n    command: ${q(DENO)}\n    args: [run, -A, ${q(FIXTURE)}, --crash-at-start]\n`,
  );
  await using gw = await connectGateway(config, { flags: ["-A"] });
  // Backoff restarts it at 0.5 s, 1 s, …: await (on stderr's own events, failing loudly at the deadline)
  // three logged attempts, each up to its tail's crash line.
  const stderr = await stderrMatches(gw, /failed to start[\s\S]*?simulated crash/, 2);
  const blocks = stderr.split('server "crasher" failed to start').slice(1, 4);
  assert.equal(blocks.length, 3);
  for (const block of blocks) {
    assert.equal((block.match(/simulated crash/g) ?? []).length, 1, "one attempt's stderr per failure");
  }
});
