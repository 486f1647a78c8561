/**
 * The listener in-process (`listen()`): the session cap, and a stop whose running call outlasts the
 * drain bound ends the session anyway, and stops the servers.
 */
import assert from "node:assert/strict";
import { parseConfig } from "../../src/config/mod.ts";
import { listen } from "../../src/http/mod.ts";
import { alive, DENO, descendants, FIXTURE, q, tempDir } from "../helpers.ts";
import { httpClient } from "./http_helpers.ts";

Deno.test("a session cap; stop: a call running past the drain bound is ended with its session; no child is left", async () => {
  await using dir = await tempDir();
  const config = parseConfig(
    `servers:\n  fx:\n    command: ${q(DENO)}\n    args: [run, -A, ${q(FIXTURE)}, --state, ${q(dir.path)}]\n`,
    `${dir.path}/mcphub.yaml`,
    { env: { get: (key) => Deno.env.get(key) }, cwd: dir.path },
  );
  const lines: string[] = [];
  const before = new Set(descendants(Deno.pid));
  const listener = await listen({
    config,
    env: Deno.env.toObject(),
    tokenEnv: { get: () => undefined },
    version: "test",
    log: (line) => lines.push(line),
    address: { hostname: "127.0.0.1", port: 0 },
    drainMs: 300,
    maxSessions: 1,
  });
  const client = await httpClient(`${listener.origin}/mcp`);
  await client.listTools();
  // One session is this listener's most: a second initialize is refused, the first keeps working.
  await assert.rejects(
    httpClient(`${listener.origin}/mcp`),
    /Error POSTing to endpoint: \{"error":"Service Unavailable: 1 sessions are open, the most this gateway keeps; retry later"\}/,
  );
  const children = descendants(Deno.pid).filter((pid) => !before.has(pid));
  assert.ok(children.length >= 1, "the fixture server was started");
  const watcher = Deno.watchFs(dir.path);
  const call = client.callTool({ name: "fx__wait", arguments: { ms: 60_000 } });
  const outcome = call.then(() => "answered", (error: Error) => `failed: ${error.message}`);
  for await (const event of watcher) {
    if (event.paths.some((p) => p.endsWith("calls-wait"))) break;
  }
  watcher.close();
  await listener.stop();
  assert.deepEqual(lines.filter((l) => l.startsWith("stopping") || l.includes("ended")), [
    "stopping: 1 request(s) still running after 300ms; ending them",
    `session ${
      listener.sessions().length === 0 ? lines.find((l) => l.startsWith("session"))!.slice(8, 16) : "?"
    } ended: the gateway is stopping`,
  ]);
  assert.match(await outcome, /^failed: /);
  assert.deepEqual(children.filter(alive), []);
  await client.close().catch(() => {});
});
