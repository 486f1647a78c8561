/**
 * The fast path over `--listen`: a mounted tool's result is written into the HTTP response as the bytes
 * the downstream sent (ids aside), and what a client makes of it is what a direct connection gives.
 */
import assert from "node:assert/strict";
import { connectDirect, DENO, FIXTURE, HOSTILE, tempDir, writeConfig } from "../helpers.ts";
import { httpClient, startListener } from "./http_helpers.ts";

/** A copy of the fixture's WIRE_RESULT (tests/fixtures/hostile_server.ts): the bytes tool `wire` answers. */
const WIRE_RESULT =
  '{ "_meta" : {"n": 1.50, "e": 1e2}, "content":[ {"text":"caf\\u00e9 \\"q\\" \\ud83d\\ude00 é",' +
  ' "type":"text"} ] , "isError" :false }';
/** Bytes of tool `big`'s text: several reads of the pipe, several SSE chunks. */
const BIG_BYTES = 3_000_000;

function wireArgs(): string[] {
  return ["run", "-A", HOSTILE, "--mode", "wire", "--bytes", String(BIG_BYTES)];
}

/** The wire server's config; passed whole (`verbatim`), so a big result comes as it is. */
async function wireConfig(dir: string): Promise<string> {
  return await writeConfig(
    dir,
    `verbatim: true\nservers:\n  wire:\n    command: ${DENO}\n    args: ${JSON.stringify(wireArgs())}\n`,
  );
}

async function post(url: string, headers: Record<string, string>, message: unknown): Promise<Response> {
  return await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...headers,
    },
    body: JSON.stringify(message),
  });
}

Deno.test("over --listen a mounted tool's result is the bytes the downstream sent, and a resume replays them", async () => {
  await using dir = await tempDir();
  await using listener = await startListener(await wireConfig(dir.path));
  const opened = await post(listener.url, {}, {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
  });
  assert.equal(opened.status, 200);
  await opened.text();
  const session = {
    "mcp-session-id": opened.headers.get("mcp-session-id")!,
    "mcp-protocol-version": "2025-11-25",
  };
  const initialized = await post(listener.url, session, {
    jsonrpc: "2.0",
    method: "notifications/initialized",
  });
  assert.equal(initialized.status, 202);
  await initialized.body?.cancel();
  // `wire`: odd bytes, written as one chunk; `big`: several reads of the pipe, written part by part.
  const text = "0123456789abcdef".repeat(Math.ceil(BIG_BYTES / 16));
  const expected = [["wire", WIRE_RESULT], ["big", JSON.stringify({ content: [{ type: "text", text }] })]];
  for (const [i, [tool, result]] of expected.entries()) {
    const id = 2 + i;
    const call = await post(listener.url, session, {
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: `wire__${tool}`, arguments: {} },
    });
    assert.equal(call.status, 200);
    const body = await call.text();
    // The priming event, then the answer as one event: the downstream's result bytes, untouched.
    const primed = /^id: (\S+)\nretry: \d+\ndata: \n\n/.exec(body);
    assert.ok(primed, body.slice(0, 300));
    const event = body.slice(primed[0].length);
    assert.match(event, /^event: message\nid: \S+\ndata: /);
    assert.ok(
      event.slice(event.indexOf("data: ") + 6) === `{"jsonrpc":"2.0","id":${id},"result":${result}}\n\n`,
    );
    // Resuming after the priming event replays the same bytes (they were kept, not handed away).
    const resumed = await fetch(listener.url, {
      headers: { ...session, accept: "text/event-stream", "last-event-id": primed[1] },
    });
    assert.equal(resumed.status, 200);
    const reader = resumed.body!.pipeThrough(new TextDecoderStream()).getReader();
    let replay = "";
    while (!replay.endsWith("}\n\n")) {
      const { value, done } = await reader.read();
      if (done) break;
      replay += value;
    }
    await reader.cancel();
    assert.ok(replay === event, `${tool}: the replay differs from the event`);
  }
});

Deno.test("through the SDK client over --listen, relayed results (small and big) equal a direct call's", async () => {
  await using dir = await tempDir();
  await using listener = await startListener(await wireConfig(dir.path));
  await using client = await httpClient(listener.url);
  const direct = await connectDirect(DENO, wireArgs());
  try {
    for (const tool of ["wire", "ok", "big"]) {
      const expected = await direct.callTool({ name: tool, arguments: {} });
      const got = await client.callTool({ name: `wire__${tool}`, arguments: {} });
      assert.deepEqual(got, expected);
    }
    const big = await client.callTool({ name: "wire__big", arguments: {} });
    assert.equal((big.content as { text: string }[])[0]!.text.length, Math.ceil(BIG_BYTES / 16) * 16);
    // A bad answer is still that server's failure, and the session goes on.
    await assert.rejects(
      client.callTool({ name: "wire__invalid", arguments: {} }),
      /server "wire" sent an invalid tools\/call result: "content" is not an array/,
    );
    assert.deepEqual(await client.callTool({ name: "wire__ok", arguments: {} }), {
      content: [{ type: "text", text: "ok" }],
    });
  } finally {
    await direct.close();
  }
});

Deno.test("over --listen concurrent results of many sizes each arrive whole and as their own (response frames are written from a shared pool of buffers)", async () => {
  await using dir = await tempDir();
  const config = await writeConfig(
    dir.path,
    `response_budget: "0"\nservers:\n  fx:\n    command: ${DENO}\n    args: ${
      JSON.stringify(["run", "-A", FIXTURE])
    }\n`,
  );
  await using listener = await startListener(config);
  const clients = await Promise.all(
    Array.from({ length: 6 }, (_, i) => httpClient(listener.url, undefined, `c${i}`)),
  );
  try {
    const sizes = [100, 60_000, 130_000, 200_000];
    await Promise.all(clients.flatMap((client, c) =>
      sizes.map(async (bytes, s) => {
        const text = `<${c}.${s}>`;
        for (let round = 0; round < 3; round++) {
          const result = await client.callTool({ name: "fx__big", arguments: { bytes, text } });
          const expected = text.repeat(Math.ceil(bytes / text.length));
          const got = (result.content as { type: string; text: string }[])[0]!.text;
          assert.equal(got.length, expected.length, `client ${c}, ${bytes} B, round ${round}`);
          assert.ok(got === expected, `client ${c}, ${bytes} B, round ${round}: another result's bytes`);
        }
      })
    ));
  } finally {
    await Promise.all(clients.map((c) => c[Symbol.asyncDispose]()));
  }
});
