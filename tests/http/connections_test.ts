/**
 * The listener's connections (issue 41): a flood of bare TCP connections under a lowered `ulimit -n`
 * never ends the process and never stops an authenticated host; a connection that has not sent a
 * complete request is closed after `listen_limits.header_timeout`, an idle one after `idle_timeout`;
 * past `max_pending` the oldest connection without a request is shed first.
 */
import assert from "node:assert/strict";
import { DENO, FIXTURE, q, tempDir, writeConfig } from "../helpers.ts";
import { httpClient, startListener } from "./http_helpers.ts";

const TOKEN = "alpha-token-0123456789abcdef";
const ENV = { TOK_ALPHA: TOKEN };

async function config(dir: string, extra = ""): Promise<string> {
  return await writeConfig(
    dir,
    `servers:
  fx:
    command: ${q(DENO)}
    args: [run, -A, ${q(FIXTURE)}, --state, ${q(dir)}]
agents:
  alpha:
    token: \${TOK_ALPHA}
${extra}`,
  );
}

/** Resolves when the server closes `conn` (EOF or reset); rejects if it is still open after `ms`. */
async function closedByServer(conn: Deno.Conn, ms = 20_000): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) =>
    timer = setTimeout(() => reject(new Error(`the connection was still open after ${ms}ms`)), ms)
  );
  const eof = (async () => {
    const buffer = new Uint8Array(4096);
    try {
      while (await conn.read(buffer) !== null) { /* a response, then the close */ }
    } catch {
      // reset by the server: closed as well
    }
  })();
  try {
    await Promise.race([eof, deadline]);
  } finally {
    clearTimeout(timer);
    try {
      conn.close();
    } catch {
      // already closed
    }
  }
}

/** Opens `count` bare TCP connections that never send a byte (fewer if the client side runs out). */
async function flood(port: number, count: number): Promise<Deno.Conn[]> {
  const conns: Deno.Conn[] = [];
  for (let i = 0; i < count; i++) {
    try {
      conns.push(await Deno.connect({ hostname: "127.0.0.1", port }));
    } catch {
      break;
    }
  }
  return conns;
}

Deno.test("a connection flood under ulimit -n 256: the process lives, an authenticated host keeps being served", async () => {
  await using dir = await tempDir();
  await using listener = await startListener(await config(dir.path), { env: ENV, openFiles: 256 });
  await using host = await httpClient(listener.url, TOKEN);
  assert.equal((await host.callTool({ name: "fx__echo", arguments: { text: "before" } })).isError, undefined);
  // Four times the process's file limit of connections that never send a request.
  const conns = await flood(listener.port, 1_000);
  assert.ok(conns.length >= 900, `opened ${conns.length} connections`);
  try {
    const during = await host.callTool({ name: "fx__echo", arguments: { text: "during" } });
    assert.deepEqual(during.content, [{ type: "text", text: "during" }]);
    // A new host connects and is served while the flood holds its connections.
    await using late = await httpClient(listener.url, TOKEN, "late-host");
    assert.deepEqual(
      (await late.callTool({ name: "fx__echo", arguments: { text: "late" } })).content,
      [{ type: "text", text: "late" }],
    );
  } finally {
    for (const conn of conns) {
      try {
        conn.close();
      } catch {
        // closed by the server (shed)
      }
    }
  }
  const after = await host.callTool({ name: "fx__echo", arguments: { text: "after" } });
  assert.deepEqual(after.content, [{ type: "text", text: "after" }]);
  const stderr = listener.stderr();
  assert.doesNotMatch(stderr, /Uncaught|Too many open files \(os error 24\)\n.*at /);
  // Shedding is logged once per burst, not once per connection.
  const lines = stderr.split("\n").filter((line) => /shed|accept/.test(line));
  assert.ok(lines.length >= 1 && lines.length <= 10, `log lines about the flood:\n${lines.join("\n")}`);
  const status = await listener.stop();
  assert.equal(status.signal ?? "SIGTERM", "SIGTERM", `exited on its own: ${stderr}`);
});

Deno.test("header_timeout closes a connection without a complete request; idle_timeout an idle one", async () => {
  await using dir = await tempDir();
  await using listener = await startListener(
    await config(dir.path, "listen_limits:\n  header_timeout: 1s\n  idle_timeout: 1s\n"),
    { env: ENV },
  );
  const enc = new TextEncoder();
  // Partial headers (slowloris): closed by the header timeout.
  const partial = await Deno.connect({ hostname: "127.0.0.1", port: listener.port });
  await partial.write(enc.encode("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"));
  await closedByServer(partial);
  // A complete request, then nothing: closed by the idle timeout after its answer.
  const idle = await Deno.connect({ hostname: "127.0.0.1", port: listener.port });
  await idle.write(enc.encode("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
  await closedByServer(idle);
});

Deno.test("past max_pending the oldest connection without a request is shed; a host is unaffected", async () => {
  await using dir = await tempDir();
  await using listener = await startListener(
    await config(dir.path, "listen_limits:\n  max_pending: 4\n"),
    { env: ENV },
  );
  // Five connections without a request where four may wait: the first is shed at once.
  const waiting = await flood(listener.port, 5);
  // (The header timeout is 30 s: only shedding closes it sooner.)
  await closedByServer(waiting[0], 15_000);
  for (const conn of waiting.slice(1)) conn.close();
  // An authenticated host is unaffected.
  await using host = await httpClient(listener.url, TOKEN);
  assert.deepEqual(
    (await host.callTool({ name: "fx__echo", arguments: { text: "ok" } })).content,
    [{ type: "text", text: "ok" }],
  );
});
