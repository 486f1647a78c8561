/**
 * The gateway as a process: stdout carries only JSON-RPC, and it leaves no
 * child process behind on stdin EOF or SIGTERM.
 */
import assert from "node:assert/strict";
import {
  alive,
  DENO,
  descendants,
  FIXTURE,
  q,
  RawGateway,
  REAL,
  tempDir,
  until,
  writeConfig,
} from "../helpers.ts";

async function config(dir: string): Promise<string> {
  return await writeConfig(
    dir,
    `servers:
  everything:
    command: node
    args: [${q(REAL.everything)}, stdio]
  wrapped:
    # a wrapper shell whose child is the real server: the grandchild must not survive either
    command: sh
    args: [-c, ${q(`node ${REAL.memory}; exit 0`)}]
  fx:
    command: ${q(DENO)}
    args: [run, -A, ${q(FIXTURE)}]
`,
  );
}

/**
 * Waits until none of `pids` is alive. The gateway signals a server's whole group (SIGTERM, then SIGKILL
 * after its grace) and exits once the server itself is gone: a grandchild's end follows its signal, not at
 * once on a loaded machine. One that was never signalled outlives the deadline, which fails naming it.
 */
async function noneSurvive(pids: number[]): Promise<void> {
  await until(
    "every child of the gateway to end",
    () => Promise.resolve(pids.some(alive) ? undefined : true),
  ).catch((error) => {
    throw new Error(`${error.message}: pids ${pids.filter(alive)} survived the gateway`);
  });
}

function assertAllJsonRpc(gw: RawGateway): void {
  assert.equal(gw.rest, "", "stdout ends with a complete line");
  assert.ok(gw.lines.length > 0);
  for (const line of gw.lines) {
    const m = JSON.parse(line);
    assert.equal(m.jsonrpc, "2.0", line.slice(0, 200));
  }
}

// These read the process table from /proc.
const linuxOnly = { ignore: Deno.build.os !== "linux" };

Deno.test(
  "stdout carries only JSON-RPC, also when the input is garbage, and EOF leaves no child behind",
  linuxOnly,
  async () => {
    await using dir = await tempDir();
    const path = await config(dir.path);
    const gw = await RawGateway.start(path, `${dir.path}/db`);
    await gw.handshake();
    const children = descendants(gw.child.pid);
    assert.ok(children.length >= 4, `children: ${children}`);

    await gw.send({ jsonrpc: "2.0", id: 2, method: "tools/list" });
    const list = await gw.response(2) as { result: { tools: { name: string }[] } };
    assert.ok(list.result.tools.some((t) => t.name === "everything__echo"));
    await gw.send({
      jsonrpc: "2.0",
      id: 3,
      method: "tools/call",
      params: { name: "everything__echo", arguments: { message: "x" } },
    });
    await gw.response(3);
    // Not JSON at all: a parse error with id null. JSON but not JSON-RPC: an invalid request.
    await gw.send("this is not json");
    const parseError = await gw.response(null) as { error: { code: number } };
    assert.equal(parseError.error.code, -32700);
    await gw.send({ hello: "world", id: 7 });
    const invalid = await gw.response(7) as { error: { code: number } };
    assert.equal(invalid.error.code, -32600);
    // Still serving.
    await gw.send({
      jsonrpc: "2.0",
      id: 4,
      method: "tools/call",
      params: { name: "fx__echo", arguments: { text: "ok" } },
    });
    const ok = await gw.response(4) as { result: { content: { text: string }[] } };
    assert.equal(ok.result.content[0]!.text, "ok");

    await gw.closeStdin();
    const status = await gw.child.status;
    await gw.stdoutDone;
    assert.equal(status.code, 0, gw.stderr);
    assertAllJsonRpc(gw);
    await noneSurvive(children);
  },
);

Deno.test("SIGTERM stops the gateway and leaves no child behind", linuxOnly, async () => {
  await using dir = await tempDir();
  const path = await config(dir.path);
  const gw = await RawGateway.start(path, `${dir.path}/db`);
  await gw.handshake();
  const children = descendants(gw.child.pid);
  assert.ok(children.length >= 4, `children: ${children}`);
  gw.child.kill("SIGTERM");
  const status = await gw.child.status;
  await gw.stdoutDone;
  await gw.closeStdin().catch(() => {});
  assert.equal(status.code, 0, gw.stderr);
  assertAllJsonRpc(gw);
  await noneSurvive(children);
});
