/**
 * How `StdioClientTransport` starts and stops a downstream server (node:child_process underneath): the
 * child's environment is exactly the one given, its command line exactly the one configured (Deno's
 * child_process would translate the arguments of this very executable as Node's), spawn failures are
 * `Deno.Command`'s errors, exit statuses are described as before, and closing stops the whole group.
 *
 * @module
 */
import assert from "node:assert/strict";
import { ProtocolViolation } from "../../src/mcp/jsonrpc_line.ts";
import { StdioClientTransport, type StdioServerParams } from "../../src/downstream/stdio.ts";
import { alive, DENO, tempDir, until } from "../helpers.ts";

const linuxOnly = { ignore: Deno.build.os !== "linux" };

/** Runs a child to its end; its stdout lines (not JSON-RPC: reported as violations), stderr and errors. */
async function runToEnd(params: StdioServerParams) {
  let stderr = "";
  const decoder = new TextDecoder();
  const transport = new StdioClientTransport({ ...params, onStderr: (c) => stderr += decoder.decode(c) });
  const lines: string[] = [];
  const errors: string[] = [];
  transport.onerror = (error) => {
    if (error instanceof ProtocolViolation) lines.push(error.line);
    else errors.push(error.message);
  };
  const closed = new Promise<void>((resolve) => transport.onclose = resolve);
  await transport.start();
  const status = await transport.exited!;
  await closed;
  await transport.close();
  return { status, lines, errors, stderr: () => stderr };
}

Deno.test(
  "a stdio server's environment is exactly the one given: none of the gateway's, not even NODE_V8_COVERAGE",
  linuxOnly,
  async () => {
    Deno.env.set("NODE_V8_COVERAGE", "/tmp/mcphub-test-coverage");
    Deno.env.set("MCPHUB_TEST_GATEWAY_ONLY", "gateway");
    try {
      const env = { PATH: "/usr/bin:/bin", ONLY: "a b=ç", EMPTY: "" };
      const { status, lines, errors } = await runToEnd({ command: "/usr/bin/env", args: [], env });
      assert.deepEqual(status, { success: true, code: 0, signal: null });
      assert.deepEqual(lines.sort(), ["EMPTY=", "ONLY=a b=ç", "PATH=/usr/bin:/bin"]);
      assert.deepEqual(errors, ["The server process exited (exit code 0)"]);
    } finally {
      Deno.env.delete("NODE_V8_COVERAGE");
      Deno.env.delete("MCPHUB_TEST_GATEWAY_ONLY");
    }
  },
);

Deno.test("this very executable and a shell script starting it run exactly as configured (no Node-style translation)", async () => {
  await using dir = await tempDir();
  const script = `${dir.path}/perm.ts`;
  // `deno perm.ts` runs it with no permission; translated as Node's arguments it would get `run -A`.
  Deno.writeTextFileSync(
    script,
    `console.error(Deno.permissions.querySync({ name: "env" }).state, JSON.stringify(Deno.args));\n`,
  );
  const env = { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: Deno.env.get("HOME") ?? dir.path };
  const direct = await runToEnd({ command: DENO, args: [script, "--flag"], env });
  assert.equal(direct.stderr(), 'prompt ["--flag"]\n');
  assert.equal(direct.status.code, 0);
  if (Deno.build.os === "windows") return;
  for (const text of [`${DENO} ${script} --flag`, `"${DENO}" ${script} --flag`, `$SELF ${script} --flag`]) {
    const shell = await runToEnd({ command: "sh", args: ["-c", text], env: { ...env, SELF: DENO } });
    assert.equal(shell.stderr(), 'prompt ["--flag"]\n', text);
  }
});

Deno.test("a missing command is NotFound and a file that is not executable PermissionDenied, as Deno.Command throws", async () => {
  await using dir = await tempDir();
  const missing = new StdioClientTransport({ command: "mcphub-no-such-command-xyz", args: [], env: {} });
  await assert.rejects(missing.start(), (error: Error) => {
    assert.ok(error instanceof Deno.errors.NotFound, String(error));
    assert.equal(error.message, "Failed to spawn 'mcphub-no-such-command-xyz': entity not found");
    return true;
  });
  assert.equal(missing.pid, undefined);
  await missing.close();
  if (Deno.build.os === "windows") return;
  const file = `${dir.path}/not-executable`;
  Deno.writeTextFileSync(file, "#!/bin/sh\n", { mode: 0o644 });
  const refused = new StdioClientTransport({ command: file, args: [], env: {} });
  await assert.rejects(refused.start(), (error: Error) => {
    assert.ok(error instanceof Deno.errors.PermissionDenied, String(error));
    assert.equal(error.message, `Failed to spawn '${file}': Permission denied (os error 13)`);
    return true;
  });
  await refused.close();
});

Deno.test(
  "an exit code and a signal are reported as before, after the last bytes it wrote",
  linuxOnly,
  async () => {
    const env = { PATH: "/usr/bin:/bin" };
    const code = await runToEnd({ command: "sh", args: ["-c", "echo last; echo oops >&2; exit 3"], env });
    assert.deepEqual(code.status, { success: false, code: 3, signal: null });
    assert.deepEqual(code.lines, ["last"]);
    assert.deepEqual(code.errors, ["The server process exited (exit code 3)"]);
    assert.equal(code.stderr(), "oops\n");
    const killed = await runToEnd({ command: "sh", args: ["-c", "kill -TERM $$"], env });
    assert.deepEqual(killed.status, { success: false, code: 143, signal: "SIGTERM" });
    assert.deepEqual(killed.errors, ["The server process exited (signal SIGTERM)"]);
  },
);

Deno.test(
  "close() stops the child's whole process group, and what waits on stdin gets EOF first",
  linuxOnly,
  async () => {
    let stderr = "";
    const decoder = new TextDecoder();
    const transport = new StdioClientTransport({
      command: "sh",
      // A grandchild that ignores EOF, and a shell that waits for it.
      args: ["-c", "sleep 1000 & echo $! >&2; wait"],
      env: { PATH: "/usr/bin:/bin" },
      killGraceMs: 200,
      onStderr: (chunk) => stderr += decoder.decode(chunk),
    });
    await transport.start();
    const pid = transport.pid!;
    const grandchild = await until("the grandchild's pid", () => {
      const n = Number.parseInt(stderr, 10);
      return Promise.resolve(Number.isNaN(n) || !stderr.endsWith("\n") ? undefined : n);
    });
    assert.ok(alive(pid) && alive(grandchild));
    await transport.close();
    assert.equal((await transport.exited!).signal, "SIGTERM");
    assert.ok(!alive(pid), "the child is gone");
    await until("the grandchild gone", () => Promise.resolve(alive(grandchild) ? undefined : true));
  },
);

Deno.test(
  "a write settles only once the child has read it (a child that does not read holds it back)",
  linuxOnly,
  async () => {
    await using dir = await tempDir();
    const script = `${dir.path}/reader.ts`;
    // Reads stdin only after SIGUSR1 (it says when it waits for it), then reports how many bytes it read.
    Deno.writeTextFileSync(
      script,
      `const go = new Promise((resolve) => Deno.addSignalListener("SIGUSR1", resolve));
console.error("waiting");
await go;
let n = 0;
for await (const chunk of Deno.stdin.readable) n += chunk.length;
console.error(n);
`,
    );
    let stderr = "";
    const decoder = new TextDecoder();
    const transport = new StdioClientTransport({
      command: DENO,
      args: ["run", "--quiet", script],
      env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: Deno.env.get("HOME") ?? dir.path },
      onStderr: (chunk) => stderr += decoder.decode(chunk),
    });
    await transport.start();
    // A message four times a pipe's buffer: it cannot all be written before the child reads.
    const text = "x".repeat(256 * 1024);
    const message = { jsonrpc: "2.0" as const, method: "notifications/message", params: { text } };
    const size = new TextEncoder().encode(JSON.stringify(message) + "\n").length;
    let written = false;
    const sent = transport.send(message).then(() => written = true);
    await until("the child waiting", () => Promise.resolve(stderr === "waiting\n" ? true : undefined));
    // The same write to a child that reads settles: by then this one would have settled too, had it not
    // waited for its child to read.
    const control = new StdioClientTransport({
      command: "sh",
      args: ["-c", "cat > /dev/null"],
      env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
    });
    await control.start();
    await control.send(message);
    await control.close();
    assert.equal(written, false, "the write settled before the child read");
    Deno.kill(transport.pid!, "SIGUSR1");
    await sent;
    await transport.close();
    assert.equal(stderr, `waiting\n${size}\n`);
  },
);
