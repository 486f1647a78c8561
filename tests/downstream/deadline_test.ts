/**
 * How a call to one server ends, pinned on every path a call takes (issue 40: one deadline, cancellation and
 * settling for the stdio fast path and the SDK client's path): its time limit, the caller's cancellation, a
 * server's own JSON-RPC error with the gateway's codes, and the connection dying mid-call. The fixture server
 * on stdio (the fast path, and the SDK's path for a call that is not relayed as bytes) and on Streamable HTTP.
 */
import assert from "node:assert/strict";
import { parseConfig } from "../../src/config/mod.ts";
import {
  CallTimeoutError,
  Downstream,
  type DownstreamCallOptions,
  OutcomeUnknownError,
} from "../../src/downstream/downstream.ts";
import { isLocalFailure, PendingCalls } from "../../src/downstream/deadline.ts";
import { type Client, McpError } from "../../src/mcp/sdk.ts";
import { DENO, FIXTURE, q, startFixtureHttp, tempDir, until } from "../helpers.ts";

const PATHS = ["stdio fast path", "stdio SDK path", "Streamable HTTP"] as const;
type Path = typeof PATHS[number];

interface Opened extends AsyncDisposable {
  d: Downstream;
  state: string;
  /** Whether the call is relayed as bytes (the fast path's option). */
  raw: boolean;
  /** The options of each `tools/call` the SDK's client was asked for (none on the fast path). */
  sdkCalls: Record<string, unknown>[];
}

/** The fixture behind a connected Downstream on `path`, with a state directory. */
async function open(path: Path): Promise<Opened> {
  const dir = await tempDir();
  const state = `${dir.path}/state`;
  await Deno.mkdir(state);
  const remote = path === "Streamable HTTP" ? await startFixtureHttp(["--state", state]) : undefined;
  const yaml = remote
    ? `servers:\n  fx:\n    url: http://127.0.0.1:${remote.port}/mcp\n`
    : `servers:\n  fx:\n    command: ${q(DENO)}\n    args: [run, -A, ${q(FIXTURE)}, --state, ${q(state)}]\n`;
  const config = parseConfig(yaml, `${dir.path}/mcphub.yaml`, {
    env: { get: () => undefined },
    cwd: dir.path,
  })
    .servers[0]!;
  const sdkCalls: Record<string, unknown>[] = [];
  const d = new Downstream(config, {
    env: Deno.env.toObject(),
    clientName: "test",
    clientVersion: "1",
    connectTimeoutMs: 30_000,
    log: () => {},
    // No restart: a test that ends the connection looks at that one call.
    restartPolicy: { baseMs: 500, maxMs: 500, maxFailures: 0, stableMs: 60_000 },
    onClient: (client: Client) => {
      // What the SDK's client is asked for: its request options decide its own timer.
      const request = client.request.bind(client);
      client.request = ((req: { method: string }, schema?: unknown, options?: Record<string, unknown>) => {
        // request(req, options) or request(req, resultSchema, options) (a Standard Schema).
        const given = typeof schema === "object" && schema !== null && !("~standard" in schema)
          ? schema as Record<string, unknown>
          : options;
        if (req.method === "tools/call") sdkCalls.push({ ...given });
        return request(req as never, schema as never, options as never);
      }) as typeof client.request;
    },
  });
  await d.connect();
  assert.equal(d.state, "connected", d.error);
  return {
    d,
    state,
    raw: path === "stdio fast path",
    sdkCalls,
    async [Symbol.asyncDispose]() {
      await d.close();
      await remote?.[Symbol.asyncDispose]();
      await dir[Symbol.asyncDispose]();
    },
  };
}

async function fileText(path: string): Promise<string | undefined> {
  try {
    return await Deno.readTextFile(path);
  } catch {
    return undefined;
  }
}

/** Calls `tool` and returns what it rejected with (fails when it resolves). */
async function failure(
  o: Opened,
  tool: string,
  args: Record<string, unknown>,
  options: Omit<DownstreamCallOptions, "raw">,
): Promise<unknown> {
  try {
    const result = await o.d.callTool(tool, args, { ...options, raw: o.raw });
    assert.fail(`the call resolved: ${JSON.stringify(result)}`);
  } catch (error) {
    return error;
  }
}

for (const path of PATHS) {
  Deno.test(`${path}: a call past its time limit is the gateway's own timeout, and is cancelled downstream`, async () => {
    await using o = await open(path);
    // Over HTTP the cancellation travels on a POST of its own, which must not overtake the call's.
    const limit = path === "Streamable HTTP" ? 2000 : 300;
    const error = await failure(o, "wait", { ms: 60_000 }, { timeoutMs: limit });
    assert.ok(error instanceof CallTimeoutError, String(error));
    assert.equal(error.message, "MCP error -32001: Request timed out");
    const cause = error.cause as McpError;
    assert.ok(cause instanceof McpError);
    assert.deepEqual([cause.code, cause.data], [-32001, { timeout: limit }]);
    // The gateway's deadline ended it, not the SDK client's own timer.
    assert.ok(isLocalFailure(cause));
    // The server saw notifications/cancelled for that request.
    await until("the cancellation downstream", () => fileText(`${o.state}/cancelled`));
    // The connection is intact.
    const ok = await o.d.callTool("echo", { text: "after" }, { timeoutMs: 30_000, raw: o.raw });
    assert.notEqual(ok.isError, true);
  });

  Deno.test(`${path}: the caller's cancellation cancels downstream and ends the call with its reason`, async () => {
    await using o = await open(path);
    const controller = new AbortController();
    const call = o.d.callTool("wait", { ms: 60_000 }, {
      timeoutMs: 60_000,
      signal: controller.signal,
      raw: o.raw,
    }).then(() => assert.fail("resolved"), (error) => error);
    // Cancelled once the server has it (it counts the call on arrival).
    await until("the call to reach the server", () => fileText(`${o.state}/calls-wait`));
    controller.abort("host cancelled");
    const error = await call;
    assert.ok(!(error instanceof CallTimeoutError) && !(error instanceof OutcomeUnknownError), String(error));
    // The caller's own reason, on every path (the SDK's client would wrap it in a RequestTimeout McpError).
    assert.equal(error, "host cancelled");
    await until("the cancellation downstream", () => fileText(`${o.state}/cancelled`));
    // Cancelled before it is sent: nothing reaches the server.
    const early = await failure(o, "echo", { text: "never" }, {
      timeoutMs: 30_000,
      signal: controller.signal,
    });
    assert.equal(early, "host cancelled");
    assert.equal(await fileText(`${o.state}/calls-echo`), undefined);
  });

  Deno.test(`${path}: a server's own -32000/-32001 error keeps its code, message and data`, async () => {
    await using o = await open(path);
    for (const [code, text] of [[-32000, "the backend is down"], [-32001, "the backend took too long"]]) {
      const data = { retry: true, code };
      const error = await failure(o, "rpc_error", { code, message: text, data }, { timeoutMs: 30_000 });
      assert.ok(error instanceof McpError, String(error));
      assert.ok(!isLocalFailure(error));
      // The fixture's (v1) SDK server writes its message with the prefix; the (v2) client adds none.
      assert.deepEqual(
        [error.code, error.message, error.data],
        [code, `MCP error ${code}: ${text}`, data],
      );
    }
    assert.equal(o.d.state, "connected");
  });

  Deno.test(`${path}: a connection that dies mid-call leaves the outcome unknown; the call is not replayed`, async () => {
    await using o = await open(path);
    const error = await failure(o, "exit_mid_call", {}, {
      timeoutMs: path === "Streamable HTTP" ? 1500 : 60_000,
    });
    if (path === "Streamable HTTP") {
      // Over HTTP the gateway does not learn of the server's end: the call runs to its limit (whose
      // error says the outcome is unknown and the call was not retried).
      assert.ok(error instanceof CallTimeoutError, String(error));
      assert.equal(error.message, "MCP error -32001: Request timed out");
    } else {
      assert.ok(error instanceof OutcomeUnknownError, String(error));
      assert.equal(error.message, "MCP error -32000: Connection closed");
      assert.ok(isLocalFailure(error.cause));
    }
    assert.equal(await fileText(`${o.state}/calls-exit_mid_call`), "1");
  });
}

Deno.test("the SDK's 60 s default timeout never applies: a call's own limit is what the SDK client is given", async () => {
  for (const path of PATHS) {
    await using o = await open(path);
    const ok = await o.d.callTool("echo", { text: "x" }, { timeoutMs: 120_000, raw: o.raw });
    assert.notEqual(ok.isError, true);
    if (o.raw) {
      // The fast path does not go through the SDK's client at all.
      assert.deepEqual(o.sdkCalls, [], path);
      continue;
    }
    assert.equal(o.sdkCalls.length, 1, path);
    const { timeout } = o.sdkCalls[0]!;
    assert.equal(typeof timeout, "number", path);
    assert.ok((timeout as number) >= 120_000, `${path}: the SDK's timer is ${timeout} ms`);
  }
});

Deno.test("PendingCalls: a call settles once, tells the server once, and ends as the gateway's own failure", async () => {
  const calls = new PendingCalls();
  const told: unknown[] = [];
  // Answered: later outcomes change nothing, and nothing is sent.
  const answered = calls.open<string>({ timeoutMs: 60_000 }, (reason) => told.push(reason));
  answered.resolve("first");
  answered.reject(new Error("late"));
  answered.cancel("late");
  assert.equal(await answered.promise, "first");
  assert.deepEqual([answered.open, [...told]], [false, []]);
  // The deadline: the server told once, then the gateway's own RequestTimeout.
  const slow = calls.open<string>({ timeoutMs: 1 }, (reason) => told.push(reason));
  const timedOut = await slow.promise.catch((error) => error);
  assert.ok(timedOut instanceof McpError && isLocalFailure(timedOut));
  assert.deepEqual([timedOut.code, timedOut.message, timedOut.data], [
    -32001,
    "MCP error -32001: Request timed out",
    { timeout: 1 },
  ]);
  assert.deepEqual([...told], [timedOut]);
  // The caller's abort: its reason; a signal aborted already: its reason at once, nothing sent.
  const controller = new AbortController();
  const aborted = calls.open<string>({ timeoutMs: 60_000, signal: controller.signal }, (r) => told.push(r));
  controller.abort("host cancelled");
  assert.equal(await aborted.promise.catch((error) => error), "host cancelled");
  const early = calls.open<string>({ timeoutMs: 60_000, signal: controller.signal }, (r) => told.push(r));
  assert.equal(early.open, false);
  assert.equal(await early.promise.catch((error) => error), "host cancelled");
  assert.deepEqual([...told], [timedOut, "host cancelled"]);
  // The connection's end: every open call, and any opened after, fails with the gateway's ConnectionClosed.
  const open = calls.open<string>({ timeoutMs: 60_000 }, (r) => told.push(r));
  calls.close();
  const after = calls.open<string>({ timeoutMs: 60_000 }, (r) => told.push(r));
  for (const call of [open, after]) {
    const closed = await call.promise.catch((error) => error);
    assert.ok(closed instanceof McpError && isLocalFailure(closed));
    assert.deepEqual([closed.code, closed.message], [-32000, "MCP error -32000: Connection closed"]);
  }
  assert.deepEqual([...told], [timedOut, "host cancelled"]);
  // A server's own McpError with the same code is not the gateway's.
  assert.equal(isLocalFailure(new McpError(-32000, "Connection closed")), false);
});

Deno.test("PendingCalls.sdk: the SDK's request gets our signal and a timer that cannot end it first", async () => {
  const calls = new PendingCalls();
  const given: { signal: AbortSignal; timeout: number }[] = [];
  const sdkAnswer = Promise.withResolvers<string>();
  const call = calls.sdk({ timeoutMs: 1 }, (options) => (given.push(options), sdkAnswer.promise));
  const error = await call.catch((e) => e);
  assert.ok(isLocalFailure(error));
  assert.equal(given.length, 1);
  assert.equal(given[0]!.timeout, 2 ** 31 - 1);
  // Our deadline aborted the SDK's request (the SDK then sends notifications/cancelled) with our error.
  assert.equal(given[0]!.signal.aborted, true);
  assert.equal(given[0]!.signal.reason, error);
  // The SDK's own outcome afterwards changes nothing.
  sdkAnswer.resolve("late");
  assert.equal(await call.catch((e) => e), error);
  calls.close();
});

Deno.test("PendingCalls: deadlines under one timer end each call once at its time, in deadline order, never an ended one", async () => {
  const calls = new PendingCalls();
  const told: string[] = [];
  // One cancel for every call, told the key each call was opened with.
  const cancel = (_reason: unknown, key: string) => told.push(key);
  const ended: Promise<unknown>[] = [];
  const open = (ms: number, key: string) => {
    const call = calls.open<string, string>({ timeoutMs: ms }, cancel, key);
    ended.push(call.promise.catch((error) => error));
    return call;
  };
  const t0 = performance.now();
  const calls60 = open(60, "60");
  const answered = open(20, "answered");
  open(40, "40");
  const last = open(80, "80");
  // Opened last with the earliest deadline: the timer is re-armed for it.
  open(10, "10");
  answered.resolve("first");
  const error = await last.promise.catch((e) => e);
  assert.ok(performance.now() - t0 >= 79);
  assert.ok(isLocalFailure(error));
  assert.deepEqual(error.data, { timeout: 80 });
  assert.deepEqual(told, ["10", "40", "60", "80"]);
  // Each timed out with its own limit.
  assert.deepEqual((await Promise.all(ended)).map((e) => (e as McpError).data ?? e), [
    { timeout: 60 },
    "first",
    { timeout: 40 },
    { timeout: 80 },
    { timeout: 10 },
  ]);
  assert.deepEqual([calls60.key, calls60.open, await answered.promise], ["60", false, "first"]);
  calls.close();
});
