/**
 * Over-limit tools of an HTTP downstream judged from their bytes (src/trust/http_lists.ts): the SDK's HTTP
 * transports with {@linkcode HttpListScreen} in front of them, and the hostile fixture over HTTP as a
 * downstream of `mcp serve` (Streamable HTTP with JSON and with SSE answers, the older HTTP+SSE transport).
 */
import assert from "node:assert/strict";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { HttpListScreen } from "../../src/trust/http_lists.ts";
import { UnparsedDefinition } from "../../src/trust/limits.ts";
import {
  connectGateway,
  DENO,
  FIXTURE,
  q,
  startHostileHttp,
  structured,
  tempDir,
  until,
  writeConfig,
} from "../helpers.ts";

const DEEP = "it nests deeper than 64 levels (the limit of a tool definition)";
const LARGE = "it is larger than 524288 bytes (the limit of a tool definition)";
const SHOUT = "SHOUT".repeat(50);

const TRANSPORTS = [
  { label: "Streamable HTTP, JSON answers", path: "/mcp", sse: false },
  { label: "Streamable HTTP, SSE answers", path: "/mcp-sse", sse: false },
  { label: "HTTP+SSE", path: "/sse", sse: true },
];

/** Sends `requests` on a transport with a screen in front and collects the answers' results by id. */
async function answers(
  url: string,
  sse: boolean,
  requests: [string | number, string][],
): Promise<Map<unknown, { tools?: unknown[] }>> {
  const screen = new HttpListScreen();
  const transport: Transport = sse
    ? new SSEClientTransport(new URL(url), { fetch: screen.fetch, eventSourceInit: { fetch: screen.fetch } })
    : new StreamableHTTPClientTransport(new URL(url), { fetch: screen.fetch });
  screen.watch(transport);
  const seen = new Map<unknown, { tools?: unknown[] }>();
  let done: () => void = () => {};
  const all = new Promise<void>((resolve) => done = resolve);
  transport.onmessage = (message: JSONRPCMessage) => {
    if (!("id" in message)) return;
    seen.set(message.id, (message as { result: { tools?: unknown[] } }).result);
    if (seen.size === requests.length + 1) done();
  };
  transport.onerror = (error: Error) => seen.set("error", { tools: [error] });
  await transport.start();
  try {
    await transport.send({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    });
    for (const [id, method] of requests) {
      await transport.send({
        jsonrpc: "2.0",
        id,
        method,
        params: method === "tools/call" ? { name: "ok" } : {},
      });
    }
    await all;
  } finally {
    await transport.close();
  }
  assert.equal(seen.has("error"), false, String(seen.get("error")?.tools?.[0]));
  return seen;
}

/** The deep fixture with `args` behind a screen: its deep tool arrives as its stand-in, the rest whole. */
async function assertDeepStandIn(args: string[], path: string, sse: boolean): Promise<void> {
  await using fixture = await startHostileHttp(["--mode", "deep", ...args]);
  const seen = await answers(`http://127.0.0.1:${fixture.port}${path}`, sse, [[1, "tools/list"], [
    "x",
    "tools/call",
  ]]);
  const tools = seen.get(1)!.tools!;
  assert.equal(tools.length, 2);
  assert.equal((tools[0] as { name: string }).name, "ok");
  assert.deepEqual(tools[1], new UnparsedDefinition("deep", DEEP));
  assert.deepEqual(seen.get("x"), { content: [{ type: "text", text: "ok" }] });
}

for (const { label, path, sse } of TRANSPORTS) {
  Deno.test(`HttpListScreen, ${label}: an over-limit tool in a tools/list answer arrives as its stand-in`, async () => {
    await assertDeepStandIn(["--depth", "2000"], path, sse);
    {
      await using fixture = await startHostileHttp(["--mode", "capitals", "--bytes", "600000"]);
      const seen = await answers(`http://127.0.0.1:${fixture.port}${path}`, sse, [[7, "tools/list"]]);
      const tools = seen.get(7)!.tools!;
      assert.ok(tools[1] instanceof UnparsedDefinition);
      assert.equal(tools[1].problem, LARGE);
      assert.ok(tools[1].name?.startsWith(SHOUT.slice(0, 129)));
    }
  });

  if (path !== "/mcp") {
    Deno.test(`HttpListScreen, ${label}: an answer cut into 40 data: lines is screened as one`, async () => {
      await assertDeepStandIn(["--depth", "100000", "--data-lines", "40"], path, sse);
    });
  }

  Deno.test(`${label}: a deep or huge tool is rejected as over stdio, every other tool works`, async () => {
    await using deep = await startHostileHttp(["--mode", "deep", "--depth", "100000"]);
    await using caps = await startHostileHttp(["--mode", "capitals", "--bytes", "2000000"]);
    await using dir = await tempDir();
    const server = (name: string, port: number) =>
      `  ${name}:\n    url: ${q(`http://127.0.0.1:${port}${path}`)}\n${sse ? "    transport: sse\n" : ""}`;
    const config = await writeConfig(
      dir.path,
      `servers:\n  good:\n    command: ${q(DENO)}\n    args: [run, -A, ${q(FIXTURE)}]\n${
        server("deep", deep.port)
      }${server("caps", caps.port)}`,
    );
    await using gw = await connectGateway(config, { allowAll: true });
    type Servers = { servers: { name: string; state: string; tools?: number; rejected?: unknown[] }[] };
    const listed = await until("all servers connected", async () => {
      const { servers } = structured<Servers>(
        await gw.client.callTool({ name: "list_servers", arguments: {} }),
      );
      return servers.length === 3 && servers.every((s) => s.state === "connected") ? servers : undefined;
    });
    const by = new Map(listed.map((s) => [s.name, s]));
    assert.deepEqual(by.get("deep")!.rejected, [{ name: "deep", reason: `not mounted: ${DEEP}` }]);
    assert.deepEqual(by.get("caps")!.rejected, [{
      name: `${SHOUT.slice(0, 128)}…`,
      reason: `not mounted: ${LARGE}`,
    }]);
    for (const name of ["deep__ok", "caps__ok"]) {
      const r = await gw.client.callTool({ name, arguments: {} });
      assert.deepEqual(r.content, [{ type: "text", text: "ok" }], gw.stderr());
    }
    const echo = await gw.client.callTool({ name: "good__echo", arguments: { text: "hi" } });
    assert.deepEqual(echo.content, [{ type: "text", text: "hi" }]);
  });
}

for (const sse of [false, true]) {
  Deno.test(`a ${sse ? "stream's event" : "body"} that has all arrived is screened a slice at a time: timers run meanwhile`, async () => {
    // 8 MB of nesting: scanned in one go (each chunk's read a microtask after the last) it held the loop.
    const depth = 4_000_000;
    const json = `{"jsonrpc":"2.0","id":7,"result":{"tools":[{"name":"deep","inputSchema":{"type":"object",` +
      `"properties":{"x":${"[".repeat(depth)}${
        "]".repeat(depth)
      }}}},{"name":"ok","inputSchema":{"type":"object"}}]}}`;
    const bytes = new TextEncoder().encode(sse ? `event: message\ndata: ${json}\n\n` : json);
    const CHUNK = 64 * 1024;
    let ticks = 0;
    let ticksAtLastRead = -1;
    let chunk = 0;
    const chunks = Math.ceil(bytes.length / CHUNK);
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (chunk === chunks - 1) ticksAtLastRead = ticks;
        controller.enqueue(bytes.subarray(chunk * CHUNK, ++chunk * CHUNK));
        if (chunk === chunks) controller.close();
      },
    });
    const screen = new HttpListScreen(() =>
      Promise.resolve(
        new Response(body, { headers: { "content-type": sse ? "text/event-stream" : "application/json" } }),
      )
    );
    let ticking = true;
    const tick = () => {
      ticks++;
      if (ticking) setTimeout(tick, 0);
    };
    setTimeout(tick, 0);
    try {
      const response = await screen.fetch("http://127.0.0.1:1/mcp", {
        method: "POST",
        body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/list", params: {} }),
      });
      const text = await response.text();
      // The deep tool reaches the transport as its stand-in's place holder; the other one whole.
      assert.ok(text.includes('"tools":[null,{"name":"ok"'), text.slice(0, 200));
    } finally {
      ticking = false;
    }
    assert.ok(ticksAtLastRead > 0, `timers ran ${ticksAtLastRead} times before the last chunk was read`);
  });
}

/** The events of an SSE text as a parser reads them: each one's fields, `data` lines joined with LF. */
function sseEvents(text: string): { event?: string; id?: string; data: string }[] {
  const events: { event?: string; id?: string; data: string }[] = [];
  let data: string[] = [];
  let fields: { event?: string; id?: string } = {};
  for (const line of text.split("\n")) {
    if (line === "") {
      if (data.length) events.push({ ...fields, data: data.join("\n") });
      data = [];
      fields = {};
      continue;
    }
    if (line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const name = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (name === "data") data.push(value);
    else if (name === "event" || name === "id") fields[name] = value;
  }
  return events;
}

Deno.test("an answer split over several data: lines is joined, screened and written back as the same value", async () => {
  const depth = 3000;
  const list = `{"jsonrpc":"2.0","id":7,"result":{"tools":[{"name":"deep","inputSchema":{"type":"object",` +
    `"properties":{"x":${"[".repeat(depth)}${
      "]".repeat(depth)
    }}}},{"name":"ok","inputSchema":{"type":"object"}}]}}`;
  const cut = list.indexOf("[[[[");
  const tail = list.indexOf(',{"name":"ok"');
  // A comment and an id between the event's data lines, one data line without its space: all allowed.
  const text = ": hello\n" +
    `event: message\ndata: ${list.slice(0, cut)}\nid: 12\ndata: ${list.slice(cut, tail)}\n: between\n` +
    `data:${list.slice(tail)}\n\n` +
    'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message",\n' +
    'data: "params":{"level":"info","data":"a\\nb"}}\n\n';
  const bytes = new TextEncoder().encode(text);
  for (const size of [7, 1000, bytes.length]) {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let at = 0; at < bytes.length; at += size) controller.enqueue(bytes.subarray(at, at + size));
        controller.close();
      },
    });
    const screen = new HttpListScreen(() =>
      Promise.resolve(new Response(body, { headers: { "content-type": "text/event-stream" } }))
    );
    const response = await screen.fetch("http://127.0.0.1:1/mcp", {
      method: "POST",
      body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/list", params: {} }),
    });
    const [screened, direct] = [sseEvents(await response.text()), sseEvents(text)];
    assert.equal(screened.length, 2, `chunks of ${size}`);
    assert.deepEqual({ ...screened[0], data: undefined }, { event: "message", id: "12", data: undefined });
    const expected = JSON.parse(direct[0]!.data);
    expected.result.tools[0] = null;
    assert.deepEqual(JSON.parse(screened[0]!.data), expected, `chunks of ${size}`);
    // An event that answers nothing awaited: the same value.
    assert.deepEqual(screened[1], direct[1]);
  }
});
