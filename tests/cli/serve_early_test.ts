/**
 * `mcp serve` on stdio answers a 2025 host's `initialize` before the gateway loads (gateway/early.ts): the
 * host sees the same session as before, whatever it sends with or after it, and however it ends.
 */
import assert from "node:assert/strict";
import { connectGateway, DENO, q, REAL, ROOT, sandboxSync, tempDir, writeConfig } from "../helpers.ts";

const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
};

/** `mcp serve` on `config`, fed `input` in one write; stdin then stays open until `close` (or ends at once). */
async function serve(
  config: string,
  input: string,
  options: { end?: boolean; env?: Record<string, string> } = {},
) {
  const box = sandboxSync();
  const child = new Deno.Command(DENO, {
    args: ["run", "-A", `${ROOT}main.ts`, "--config", config, "--db", `${config}.db`, "mcp", "serve"],
    env: { ...box.env, ...options.env },
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  const write = (text: string) => writer.write(new TextEncoder().encode(text));
  if (input) await write(input);
  if (options.end) await writer.close();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  /** The next `n` lines of stdout. */
  const lines = async (n: number): Promise<string[]> => {
    const out: string[] = [];
    while (out.length < n) {
      const nl = buffer.indexOf("\n");
      if (nl >= 0) {
        out.push(buffer.slice(0, nl));
        buffer = buffer.slice(nl + 1);
        continue;
      }
      const { value, done } = await reader.read();
      if (done) throw new Error(`stdout ended after ${out.length} of ${n} lines: ${out.join("\n")}`);
      buffer += value;
    }
    return out;
  };
  /** Everything left on stdout once the process ended, its status and stderr. */
  const end = async () => {
    await writer.close().catch(() => {});
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
    }
    const [status, stderr] = await Promise.all([child.status, new Response(child.stderr).text()]);
    await box[Symbol.asyncDispose]();
    return { rest: buffer, status, stderr };
  };
  return { write, lines, end };
}

async function emptyConfig(dir: string): Promise<string> {
  return await writeConfig(dir, "servers: {}\n");
}

Deno.test("initialize, initialized, tools/list and ping in one write: initialize answered first, then the others; no bug warning", async () => {
  await using dir = await tempDir("mcphub-early-");
  const input = [
    INITIALIZE,
    { jsonrpc: "2.0", method: "notifications/initialized" },
    { jsonrpc: "2.0", id: 2, method: "tools/list" },
    { jsonrpc: "2.0", id: "three", method: "ping" },
  ].map((m) => JSON.stringify(m) + "\n").join("");
  const gateway = await serve(await emptyConfig(dir.path), input);
  const lines = (await gateway.lines(3)).map((line) => JSON.parse(line));
  // initialize's answer first; the others as the gateway answers them (a ping does not wait for the lists).
  assert.equal(lines[0].id, 1);
  assert.equal(lines[0].result.protocolVersion, "2025-06-18");
  assert.equal(lines[0].result.serverInfo.name, "mcphub");
  const byId = new Map(lines.map((m) => [m.id, m]));
  assert.equal(byId.size, 3);
  assert.ok(byId.get(2).result.tools.some((t: { name: string }) => t.name === "list_servers"));
  assert.deepEqual(byId.get("three"), { result: {}, jsonrpc: "2.0", id: "three" });
  const { rest, status, stderr } = await gateway.end();
  assert.equal(rest, "");
  assert.equal(status.code, 0);
  assert.doesNotMatch(stderr, /bug:/);
});

Deno.test("a host that writes only after a while (the gateway loading meanwhile): the same answers", async () => {
  await using dir = await tempDir("mcphub-early-");
  const gateway = await serve(await emptyConfig(dir.path), "");
  // Not a synchronisation: the answers are the same whether the gateway loaded before or after this.
  await new Promise((resolve) => setTimeout(resolve, 300));
  await gateway.write(
    [INITIALIZE, { jsonrpc: "2.0", method: "notifications/initialized" }, {
      jsonrpc: "2.0",
      id: 2,
      method: "tools/list",
    }]
      .map((m) => JSON.stringify(m) + "\n").join(""),
  );
  const [init, list] = (await gateway.lines(2)).map((line) => JSON.parse(line));
  assert.equal(init.id, 1);
  assert.equal(init.result.serverInfo.name, "mcphub");
  assert.equal(list.id, 2);
  const { status, stderr } = await gateway.end();
  assert.equal(status.code, 0);
  assert.doesNotMatch(stderr, /bug:/);
});

Deno.test("stdin closed right after initialize: the answer, then a clean exit", async () => {
  await using dir = await tempDir("mcphub-early-");
  const gateway = await serve(await emptyConfig(dir.path), JSON.stringify(INITIALIZE) + "\n", { end: true });
  const [line] = await gateway.lines(1);
  assert.equal(JSON.parse(line!).id, 1);
  const { rest, status, stderr } = await gateway.end();
  assert.equal(rest, "");
  assert.equal(status.code, 0, stderr);
  assert.doesNotMatch(stderr, /bug:|error/i);
});

Deno.test("stdin closed before a whole line came: a clean exit, nothing written", async () => {
  await using dir = await tempDir("mcphub-early-");
  const gateway = await serve(await emptyConfig(dir.path), '{"jsonrpc":"2.0","id":1,', { end: true });
  const { rest, status } = await gateway.end();
  assert.equal(status.code, 0);
  // The gateway answers a line cut by the end of its input as it always did.
  for (const line of rest.split("\n").filter(Boolean)) assert.equal(JSON.parse(line).id, null);
});

Deno.test("a malformed initialize gets the gateway's error, as before; the session goes on", async () => {
  await using dir = await tempDir("mcphub-early-");
  const bad = { ...INITIALIZE, params: { ...INITIALIZE.params, protocolVersion: 5 } };
  const input = [bad, { jsonrpc: "2.0", id: 2, method: "ping" }].map((m) => JSON.stringify(m) + "\n").join(
    "",
  );
  const gateway = await serve(await emptyConfig(dir.path), input);
  const [error, ping] = (await gateway.lines(2)).map((line) => JSON.parse(line));
  assert.equal(error.id, 1);
  assert.equal(error.error.code, -32603);
  assert.match(error.error.message, /"path": \[\n\s+"params",\n\s+"protocolVersion"\n\s+\]/);
  assert.deepEqual(ping, { result: {}, jsonrpc: "2.0", id: 2 });
  assert.equal((await gateway.end()).status.code, 0);
});

Deno.test("not JSON first: the gateway's parse error, as before", async () => {
  await using dir = await tempDir("mcphub-early-");
  const gateway = await serve(await emptyConfig(dir.path), "{not json\n" + JSON.stringify(INITIALIZE) + "\n");
  const [parse, init] = (await gateway.lines(2)).map((line) => JSON.parse(line));
  assert.deepEqual(parse, { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } });
  assert.equal(init.id, 1);
  assert.ok(init.result.instructions);
  assert.equal((await gateway.end()).status.code, 0);
});

Deno.test("the v1 SDK client connects, lists and calls through server-everything as before", async () => {
  await using dir = await tempDir("mcphub-early-");
  const path = await writeConfig(
    dir.path,
    `servers:\n  everything:\n    command: node\n    args: [${q(REAL.everything)}, stdio]\n`,
  );
  await using gateway = await connectGateway(path);
  const { client } = gateway;
  assert.equal(client.getServerVersion()?.name, "mcphub");
  assert.match(client.getInstructions() ?? "", /^mcphub gateway in front of 1 MCP server\./);
  const { tools } = await client.listTools();
  assert.ok(tools.some((t) => t.name === "everything__echo"), tools.map((t) => t.name).join(" "));
  const result = await client.callTool({ name: "everything__echo", arguments: { message: "early" } });
  assert.deepEqual(result.content, [{ type: "text", text: "Echo: early" }]);
  assert.doesNotMatch(gateway.stderr(), /bug:/);
});

Deno.test("SIGTERM before the host sent anything: a clean exit, not a wait for stdin", async () => {
  await using dir = await tempDir("mcphub-early-");
  const box = sandboxSync();
  // No config anywhere: the gateway says so on stderr, once its signal handlers are in place.
  const child = new Deno.Command(DENO, {
    args: ["run", "-A", `${ROOT}main.ts`, "--db", `${dir.path}/store.db`, "mcp", "serve"],
    cwd: dir.path,
    env: box.env,
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  try {
    const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
    let stderr = "";
    while (!stderr.includes("no mcphub.yaml found")) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`stderr ended: ${stderr}`);
      stderr += value;
    }
    child.kill("SIGTERM");
    const [status, stdout] = await Promise.all([child.status, new Response(child.stdout).text()]);
    await reader.cancel();
    assert.equal(status.code, 0);
    assert.equal(stdout, "");
  } finally {
    await child.stdin.close().catch(() => {});
    await box[Symbol.asyncDispose]();
  }
});
