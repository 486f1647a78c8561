/**
 * The sandbox refuses or kills what a program must not do, while the gateway keeps serving: through
 * `mcp serve` with the SDK client, and the sandbox entry of a compiled binary (all permissions granted,
 * then revoked) on its own.
 */
import assert from "node:assert/strict";
import type { Client } from "@modelcontextprotocol/sdk/client";
import {
  alive,
  connectGateway,
  DENO,
  descendants,
  q,
  REAL,
  ROOT,
  serversReady,
  tempDir,
  until,
  within,
  writeConfig,
} from "../helpers.ts";
import { MAX_IN_FLIGHT, runSandboxed, SANDBOX_ARG } from "../../src/code/mod.ts";

type Outcome = { result?: unknown; error?: string; limit?: string; logs: string[]; calls: number };

async function gateway(dir: string) {
  const path = await writeConfig(
    dir,
    `code_mode: true
servers:
  everything:
    command: node
    args: [${q(REAL.everything)}, stdio]
`,
  );
  const gw = await connectGateway(path, { env: { MCPHUB_TEST_SECRET: "s3cr3t-value" } });
  // Fails loudly at its deadline, naming each server's state (the loop it replaces gave up silently).
  await serversReady(gw.client, { state: "connected" });
  return gw;
}

/** The sandbox processes under this test (the gateway's children started from sandbox_main.ts). */
function sandboxes(): number[] {
  return descendants(Deno.pid).filter((pid) => {
    try {
      return alive(pid) && Deno.readTextFileSync(`/proc/${pid}/cmdline`).includes("sandbox_main.ts");
    } catch {
      return false;
    }
  });
}

/** Runs `code` while another call goes through the gateway; says whether the run was still going then. */
async function whileServing(client: Client, code: string, timeout = "30s") {
  let settled = false;
  const run = client.callTool({ name: "run_code", arguments: { code, timeout } }).finally(() =>
    settled = true
  );
  const echo = await client.callTool({ name: "everything__echo", arguments: { message: "still here" } });
  assert.deepEqual(echo.content, [{ type: "text", text: "Echo: still here" }]);
  const pendingDuringEcho = !settled;
  const result = await run;
  return { result, outcome: result.structuredContent as Outcome, pendingDuringEcho };
}

Deno.test("sandbox: files, loopback sockets, processes and env are refused; the gateway serves meanwhile", async (t) => {
  await using dir = await tempDir();
  await Deno.writeTextFile(`${dir.path}/secret.txt`, "top secret");
  await using gw = await gateway(dir.path);

  await t.step("reading a file", async () => {
    const { outcome } = await whileServing(
      gw.client,
      `const tries = [];
for (const f of [() => Deno.readTextFile(${q(`${dir.path}/secret.txt`)}),
  () => import(${q(`file://${dir.path}/secret.txt`)}, { with: { type: "text" } }),
  () => Deno.writeTextFile(${q(`${dir.path}/written.txt`)}, "x")]) {
  try { tries.push(String(await f())); } catch (e) { tries.push(e.name); }
}
return tries;`,
    );
    assert.deepEqual(outcome.result, ["NotCapable", "TypeError", "NotCapable"]);
    await assert.rejects(Deno.stat(`${dir.path}/written.txt`), Deno.errors.NotFound);
  });

  await t.step("opening a loopback socket: nothing arrives", async () => {
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = listener.addr.port;
    let arrived = 0;
    const first = Promise.withResolvers<void>();
    const accepting = (async () => {
      for await (const conn of listener) {
        arrived++;
        first.resolve();
        conn.close();
      }
    })();
    const { outcome } = await whileServing(
      gw.client,
      `const tries = [];
for (const f of [() => fetch("http://127.0.0.1:${port}/"), () => Deno.connect({ hostname: "127.0.0.1", port: ${port} }),
  () => new Promise((ok, no) => { const ws = new WebSocket("ws://127.0.0.1:${port}/"); ws.onopen = ok; ws.onerror = no; }),
  () => Deno.listen({ port: 0 })]) {
  try { await f(); tries.push("connected"); } catch (e) { tries.push(e.name); }
}
return tries;`,
    );
    assert.deepEqual(outcome.result, ["NotCapable", "NotCapable", "NotCapable", "NotCapable"]);
    // The listener does take connections: this one is the only one it ever saw.
    (await Deno.connect({ hostname: "127.0.0.1", port })).close();
    await within(first.promise, "the test's own connection to arrive");
    assert.equal(arrived, 1);
    listener.close();
    await accepting.catch(() => {});
  });

  await t.step("spawning a process", async () => {
    const { outcome } = await whileServing(
      gw.client,
      `try { await new Deno.Command("/bin/sh", { args: ["-c", "touch ${dir.path}/spawned"] }).output(); return "ran"; }
catch (e) { return e.name; }`,
    );
    assert.equal(outcome.result, "NotCapable");
    await assert.rejects(Deno.stat(`${dir.path}/spawned`), Deno.errors.NotFound);
  });

  await t.step("reading env", async () => {
    const { result, outcome } = await whileServing(
      gw.client,
      `const tries = [];
for (const f of [() => Deno.env.get("MCPHUB_TEST_SECRET"), () => Deno.env.toObject(), () => Deno.hostname()]) {
  try { tries.push(JSON.stringify(f())); } catch (e) { tries.push(e.name); }
}
return tries;`,
    );
    assert.deepEqual(outcome.result, ["NotCapable", "NotCapable", "NotCapable"]);
    assert.ok(!JSON.stringify(result).includes("s3cr3t"));
  });

  await t.step("an endless loop is killed at its time limit, named", async () => {
    const { result, outcome, pendingDuringEcho } = await whileServing(gw.client, "while (true) {}", "5s");
    assert.ok(pendingDuringEcho, "the loop was still running when the other call was answered");
    assert.equal(result.isError, true);
    assert.equal(outcome.limit, "timeout");
    assert.deepEqual(result.content, [{
      type: "text",
      text:
        'run_code stopped: limit "timeout" exceeded. The code ran longer than its time limit (5000 ms) and was stopped',
    }]);
  });

  await t.step("a memory bomb is killed at its heap limit, named", async () => {
    const { result, outcome } = await whileServing(
      gw.client,
      `console.log("filling"); const a = []; while (true) a.push(new Array(1e5).fill(a.length));`,
    );
    assert.equal(result.isError, true);
    assert.equal(outcome.limit, "memory");
    assert.match(String(outcome.error), /more than its memory limit \(128 MiB heap, 384 MiB resident\)/);
  });

  await t.step(
    "a memory bomb outside the V8 heap (ArrayBuffers) is killed at the resident limit, named",
    async () => {
      const { result, outcome } = await whileServing(
        gw.client,
        `const a = []; while (true) a.push(new Uint8Array(16 * 1024 * 1024).fill(1));`,
      );
      assert.equal(result.isError, true);
      assert.equal(outcome.limit, "memory");
    },
  );

  await t.step("a cancelled run ends its sandbox process; one spare waits for the next run", async () => {
    // After a run, exactly one sandbox is left: the spare started behind it, which the next run takes.
    // The killed one's end and the spare's start follow the answer, not before it: wait for the state.
    const [spare] = await until(
      "one spare sandbox after the last run",
      () => Promise.resolve(sandboxes().length === 1 ? sandboxes() : undefined),
    );
    const controller = new AbortController();
    const run = gw.client.callTool(
      { name: "run_code", arguments: { code: "while (true) {}", timeout: "10m" } },
      undefined,
      { signal: controller.signal },
    );
    // The run takes the spare: its program is the only code running there.
    await until("the run to start", async () => {
      const status = await Deno.readTextFile(`/proc/${spare}/stat`);
      // Busy in its loop: CPU time keeps growing (utime, the 14th field).
      const utime = Number(status.slice(status.lastIndexOf(")") + 2).split(" ")[11]);
      return utime > 10 ? true : undefined;
    });
    controller.abort();
    await assert.rejects(run);
    await until("the cancelled sandbox to end", () => Promise.resolve(alive(spare) ? undefined : true));
    // Once the run is over, the next spare is started.
    const [next, ...more] = await until(
      "the next spare",
      () => Promise.resolve(sandboxes().length ? sandboxes() : undefined),
    );
    assert.ok(next !== spare && more.length === 0);
    const echo = await gw.client.callTool({ name: "everything__echo", arguments: { message: "after" } });
    assert.deepEqual(echo.content, [{ type: "text", text: "Echo: after" }]);
  });

  await t.step("after all that, code still runs", async () => {
    const { outcome } = await whileServing(
      gw.client,
      `return (await mcp.tools.everything__echo({ message: "ok" }));`,
    );
    assert.deepEqual(outcome, { result: "Echo: ok", logs: [], calls: 1 });
  });

  await t.step("a gateway that ends leaves no sandbox behind", async () => {
    assert.equal(sandboxes().length, 1, "the spare");
    await gw.close();
    await until("every sandbox to end", () => Promise.resolve(sandboxes().length ? undefined : true));
  });
});

Deno.test("sandbox: a compiled binary's entry revokes the permissions it was started with", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(`${dir.path}/secret.txt`, "top secret");
  // As a compiled mcphub starts itself: the whole CLI with every permission, and the hidden last argument.
  const outcome = await runSandboxed(
    `const tries = [];
for (const f of [() => Deno.readTextFile(${q(`${dir.path}/secret.txt`)}), () => Deno.env.get("HOME"),
  () => new Deno.Command("/bin/true").output(), () => fetch("http://127.0.0.1:8/"), () => Deno.dlopen("libc.so.6", {})]) {
  try { await f(); tries.push("allowed"); } catch (e) { tries.push(e.name); }
}
return tries;`,
    {
      limits: { timeoutMs: 30_000, heapMb: 128, maxOutputBytes: 1 << 20, maxCalls: 10 },
      call: () => Promise.reject(new Error("no tools here")),
      command: { path: DENO, args: ["run", "-A", `${ROOT}main.ts`, SANDBOX_ARG], env: { NO_COLOR: "1" } },
    },
  );
  assert.deepEqual(outcome, {
    ok: true,
    value: ["NotCapable", "NotCapable", "NotCapable", "NotCapable", "NotCapable"],
    logs: [],
    calls: 0,
  });
});

Deno.test("sandbox: output and inner-call limits kill the run and are named", async () => {
  const limits = { timeoutMs: 30_000, heapMb: 128, maxOutputBytes: 64 * 1024, maxCalls: 3 };
  const call = () => Promise.resolve(1);
  const output = await runSandboxed(`for (;;) console.log("x".repeat(1000));`, { limits, call });
  assert.equal(output.limit, "output");
  assert.equal(output.ok, false);
  const calls = await runSandboxed(`for (;;) await mcp.call("a__b", {});`, { limits, call });
  assert.equal(calls.limit, "calls");
  assert.equal(calls.calls, 3);
});

Deno.test("sandbox: at most MAX_IN_FLIGHT inner calls are under way at once; the rest wait their turn", async () => {
  let now = 0;
  let most = 0;
  const outcome = await runSandboxed(
    `const all = await Promise.all(Array.from({ length: 40 }, (_, i) => mcp.call("a__b", { i })));
return all.reduce((a, b) => a + b, 0);`,
    {
      limits: { timeoutMs: 30_000, heapMb: 128, maxOutputBytes: 1 << 20, maxCalls: 100 },
      call: async (_name, args) => {
        most = Math.max(most, ++now);
        // Each call waits for the next macrotask, so the calls of one burst overlap.
        await new Promise((resolve) => setTimeout(resolve, 0));
        now--;
        return args.i as number;
      },
    },
  );
  assert.deepEqual(outcome, { ok: true, value: 780, logs: [], calls: 40 });
  assert.equal(most, MAX_IN_FLIGHT);
});

Deno.test("sandbox: errors outside the program's chain and a program that ends its worker end the run at once", async (t) => {
  const limits = { timeoutMs: 60_000, heapMb: 128, maxOutputBytes: 1 << 20, maxCalls: 10 };
  const call = () => Promise.resolve(null);
  const cases: [string, string, string][] = [
    [
      "a timer's callback throws",
      `setTimeout(() => { throw new TypeError("late"); }, 0);\nawait new Promise((r) => setTimeout(r, 60_000));`,
      "Uncaught TypeError: late",
    ],
    [
      "a floating rejection",
      `Promise.reject(new RangeError("floating"));\nawait new Promise((r) => setTimeout(r, 60_000));`,
      "RangeError: floating",
    ],
    ["close()", "self.close();", "The code ended its sandbox (close())"],
    ["Deno.exit()", "Deno.exit(3);", "The code ended its sandbox (Deno.exit())"],
  ];
  for (const [name, code, error] of cases) {
    await t.step(name, async () => {
      assert.deepEqual(await runSandboxed(code, { limits, call }), { ok: false, error, logs: [], calls: 0 });
    });
  }
});
