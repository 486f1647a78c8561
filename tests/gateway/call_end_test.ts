/**
 * What a host receives when a call ends other than with its result, on the stdio fast path and on the SDK's
 * path (a Streamable HTTP server), byte for byte as the host reads it: the gateway's own timeout, the host's
 * own cancellation (no answer, and the server told), a server's own -32000/-32001 error, and the server dying
 * mid-call. Pins the behaviour that issue 40's one deadline/cancel/settle helper must keep.
 */
import assert from "node:assert/strict";
import { DENO, FIXTURE, q, RawGateway, startFixtureHttp, tempDir, until, writeConfig } from "../helpers.ts";

async function fileText(path: string): Promise<string | undefined> {
  try {
    return await Deno.readTextFile(path);
  } catch {
    return undefined;
  }
}

function call(id: number, name: string, args: Record<string, unknown>) {
  return { jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } };
}

function errorText(text: string) {
  return { content: [{ type: "text", text }], isError: true };
}

for (const path of ["stdio fast path", "Streamable HTTP"] as const) {
  Deno.test(`${path}: a host sees the gateway's timeout, no answer after its cancel, a server's own error, and a death`, async () => {
    await using dir = await tempDir();
    const state = `${dir.path}/state`;
    await Deno.mkdir(state);
    await using remote = path === "Streamable HTTP" ? await startFixtureHttp(["--state", state]) : undefined;
    const server = remote
      ? `    url: http://127.0.0.1:${remote.port}/mcp\n`
      : `    command: ${q(DENO)}\n    args: [run, -A, ${q(FIXTURE)}, --state, ${q(state)}]\n`;
    // Over HTTP a cancellation travels on a POST of its own, which must not overtake the call's.
    const limit = remote ? 2000 : 1000;
    const config = await writeConfig(dir.path, `call_timeout: ${limit}ms\nservers:\n  fx:\n${server}`);
    const db = `${dir.path}/db`;
    const gw = await RawGateway.start(config, db);
    try {
      await gw.handshake();

      // (a) Past call_timeout: the gateway's own isError result, and the server is told.
      await gw.send(call(2, "fx__wait", { ms: 60_000 }));
      assert.deepEqual(
        await gw.response(2),
        {
          jsonrpc: "2.0",
          id: 2,
          result: errorText(
            `The call to fx__wait timed out after ${limit}ms (call_timeout = ${limit}ms) and was cancelled downstream; ` +
              "its outcome is unknown and it was not retried.",
          ),
        },
      );
      await until("the cancellation downstream", () => fileText(`${state}/cancelled`));
      await Deno.remove(`${state}/cancelled`);
      await Deno.remove(`${state}/calls-wait`);

      // (c) A server's own -32000/-32001: the host gets that code, message and data.
      for (const [id, code] of [[3, -32000], [4, -32001]]) {
        await gw.send(call(id!, "fx__rpc_error", { code, message: "its own", data: { code } }));
        assert.deepEqual(await gw.response(id!), {
          jsonrpc: "2.0",
          id,
          error: { code, message: "its own", data: { code } },
        });
      }

      // (b) The host cancels: the server is told, and the host gets no answer for that request.
      await gw.send(call(5, "fx__wait", { ms: 60_000 }));
      await until("the call to reach the server", () => fileText(`${state}/calls-wait`));
      await gw.send({
        jsonrpc: "2.0",
        method: "notifications/cancelled",
        params: { requestId: 5, reason: "host cancelled" },
      });
      await until("the cancellation downstream", () => fileText(`${state}/cancelled`));
      // A later request's answer comes, and none for the cancelled one before or with it.
      await gw.send({ jsonrpc: "2.0", id: 6, method: "ping" });
      assert.deepEqual(await gw.response(6), { jsonrpc: "2.0", id: 6, result: {} });
      assert.deepEqual(gw.lines.filter((line) => JSON.parse(line).id === 5), []);

      // (d) The server dies mid-call: never replayed; over stdio "outcome unknown" at once, over HTTP
      // the gateway does not learn of it and the call runs to call_timeout.
      await gw.send(call(7, "fx__exit_mid_call", {}));
      const died = await gw.response(7) as { result: { content: { text: string }[]; isError: boolean } };
      assert.equal(died.result.isError, true);
      if (path === "stdio fast path") {
        assert.equal(
          died.result.content[0]!.text,
          'Outcome unknown: the connection to server "fx" broke during the call to fx__exit_mid_call ' +
            "(MCP error -32000: Connection closed). The request was not retried, because it may already have " +
            "taken effect; the connection is being restored for future calls.",
        );
      } else {
        assert.equal(
          died.result.content[0]!.text,
          `The call to fx__exit_mid_call timed out after ${limit}ms (call_timeout = ${limit}ms) and was cancelled ` +
            "downstream; its outcome is unknown and it was not retried.",
        );
      }
      assert.equal(await fileText(`${state}/calls-exit_mid_call`), "1");
    } finally {
      await gw.closeStdin();
      await gw.child.status;
      await gw.stdoutDone;
    }
  });
}
