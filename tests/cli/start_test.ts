import assert from "node:assert/strict";
import { DENO, FIXTURE, q, ROOT, tempDir, writeConfig } from "../helpers.ts";
import { hasScript } from "./terminal.ts";
import { HOST_SNIPPET } from "../../src/cli/mod.ts";
import { connectingLine, readyLine } from "../../src/cli/serve.ts";

async function fixtureConfig(dir: string): Promise<string> {
  return await writeConfig(
    dir,
    `servers:\n  fx:\n    command: ${q(DENO)}\n    args: [run, -A, ${q(FIXTURE)}]\n`,
  );
}

Deno.test("readyLine() says what connected and how to stop", () => {
  const stop = "waiting for MCP messages on stdin (Ctrl-C or Ctrl-D to stop)";
  assert.equal(
    readyLine([{ name: "a", state: "connected", tools: 13 }, { name: "b", state: "failed", tools: 0 }]),
    `mcphub: ready: 1 of 2 servers connected, 13 tools (not connected: b (failed)); ${stop}`,
  );
  assert.equal(
    readyLine([{ name: "a", state: "connected", tools: 1 }]),
    `mcphub: ready: 1 of 1 server connected, 1 tool; ${stop}`,
  );
  assert.equal(readyLine([]), `mcphub: ready: no servers configured; ${stop}`);
});

Deno.test("connectingLine() says how many servers it waits for, and that a first npx/uvx run downloads them", () => {
  const server = (command: string, args: string[] = [], enabled = true) => ({ command, args, enabled });
  assert.equal(
    connectingLine([server("npx", ["-y", "x"]), server("node"), server("uvx", ["y"])]),
    "connecting 3 servers — the first run downloads them",
  );
  assert.equal(connectingLine([server("/usr/bin/deno", ["run", "x.ts"])]), "connecting 1 server");
  assert.equal(
    connectingLine([server("pnpm", ["dlx", "x"])]),
    "connecting 1 server — the first run downloads it",
  );
  assert.equal(connectingLine([server("npx", [], false)]), undefined);
});

Deno.test({
  name:
    "deno task start on a terminal: host snippets and a ready line on stderr, nothing on stdout; Ctrl-D stops it",
  ignore: !hasScript(),
  async fn() {
    await using dir = await tempDir();
    const config = await fixtureConfig(dir.path);
    const outFile = `${dir.path}/stdout.txt`;
    // script(1) runs the command on a pseudo-terminal (stdin and stderr); stdout goes to a file.
    const command = `${q(DENO)} run -A ${q(`${ROOT}scripts/start.ts`)} --config ${q(config)} ` +
      `--db ${q(`${dir.path}/db.sqlite`)} > ${q(outFile)}`;
    const child = new Deno.Command("script", {
      args: ["-qec", command, "/dev/null"],
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    const writer = child.stdin.getWriter();
    let transcript = "";
    const decoder = new TextDecoder();
    const reader = child.stdout.getReader();
    try {
      while (!transcript.includes("mcphub: ready:")) {
        const { value, done } = await reader.read();
        if (done) break;
        transcript += decoder.decode(value, { stream: true });
      }
      await writer.write(new Uint8Array([4])); // Ctrl-D: end of input on the terminal
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        transcript += decoder.decode(value, { stream: true });
      }
    } finally {
      await writer.close().catch(() => {});
      reader.releaseLock();
    }
    const status = await child.status;
    const raw = transcript.replaceAll("\r\n", "\n");
    // What the terminal shows: a carriage return and erase-line wipe what the progress line wrote.
    const erase = "\r\x1b[K";
    const visible = (line: string) => {
      const at = line.lastIndexOf(erase);
      return at < 0 ? line : line.slice(at + erase.length);
    };
    const text = raw.split("\n").map(visible).join("\n");
    assert.equal(status.code, 0, raw);
    assert.match(
      text,
      /^mcphub: ready: 1 of 1 server connected, \d+ tools; waiting for MCP messages on stdin \(Ctrl-C or Ctrl-D to stop\)$/m,
    );
    assert.ok(text.includes(HOST_SNIPPET), text);
    // What it waits for, then list's progress line, cleared before the ready line.
    assert.match(text, /^mcphub: connecting 1 server$/m);
    assert.match(raw.replaceAll(erase, "<erase>"), /<erase>connecting 1 server(?: \(\d+s\))?… fx […✓]/);
    assert.doesNotMatch(text, /connecting 1 server…/);
    assert.ok(text.indexOf("mcphub: connecting 1 server") < text.indexOf("mcphub: ready:"), text);
    const from = text.indexOf("an MCP host starts this same gateway with:\n");
    assert.ok(from >= 0, text);
    const json = text.slice(text.indexOf("{", from), text.indexOf("\n}\n", from) + 2);
    const snippet = JSON.parse(json).mcpServers.mcphub;
    assert.equal(snippet.command, DENO);
    assert.deepEqual(snippet.args.slice(0, 2), ["run", "--no-prompt"]);
    assert.ok(!snippet.args.includes("-A"));
    assert.deepEqual(snippet.args.slice(-6), [
      "--config",
      config,
      "--db",
      `${dir.path}/db.sqlite`,
      "mcp",
      "serve",
    ]);
    assert.equal(await Deno.readTextFile(outFile), "", "stdout carries only the protocol");
  },
});

Deno.test("deno task start without a terminal says nothing extra: no snippet, no ready line", async () => {
  await using dir = await tempDir();
  const config = await fixtureConfig(dir.path);
  const child = new Deno.Command(DENO, {
    args: ["run", "-A", `${ROOT}scripts/start.ts`, "--config", config, "--db", `${dir.path}/db.sqlite`],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  await child.stdin.close(); // EOF: the gateway stops
  const out = await child.output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, stderr);
  assert.equal(out.stdout.length, 0);
  assert.match(stderr, /^mcphub: running the gateway with --allow-run=/m);
  assert.doesNotMatch(stderr, /mcpServers|ready:|Ctrl-D/);
});
