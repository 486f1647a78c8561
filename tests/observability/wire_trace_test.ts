/**
 * CLIENT spans for every request the gateway sends a server (issue #45), not only tool calls: the opening
 * (`initialize`, the 2026-07-28 `server/discover`), `tools/list` pages, and requests made for the host
 * (`prompts/list`, `prompts/get`, `logging/setLevel`), each with its `traceparent` in `params._meta`; and
 * a server's request relayed to the host (sampling; a 2026-07-28 server's `input_required` elicitation): a
 * SERVER span as the gateway receives it, a CLIENT span toward the host. The fixtures log the `traceparent` each request arrived with (`--trace-log`), so
 * the test checks that the server got the very CLIENT span the receiver got.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client";
// @ts-types="@modelcontextprotocol/sdk/types"
import { CreateMessageRequestSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import {
  connectGateway,
  DENO,
  FIXTURE,
  q,
  REAL,
  ROOT,
  startFixtureHttp,
  startHttpServer,
  startRemote,
  tempDir,
  writeConfig,
} from "../helpers.ts";
import { attribute, type OtlpReceiver, type OtlpSpan, startOtlpReceiver } from "./otlp_receiver.ts";

const MODERN = `${ROOT}tests/fixtures/modern_server.ts`;
const HOST_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const HOST_SPAN = "00f067aa0ba902b7";
const SERVER = 2;
const CLIENT = 3;
const ERROR = 2;

function otelEnv(endpoint: string): Record<string, string> {
  return {
    OTEL_DENO: "true",
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    OTEL_SERVICE_NAME: "mcphub",
    OTEL_DENO_CONSOLE: "ignore",
  };
}

/** One request as a fixture logged it (`--trace-log`). */
interface Arrived {
  method: string;
  id: string | number | null;
  traceparent: string | null;
}

async function arrived(file: string): Promise<Arrived[]> {
  const text = await Deno.readTextFile(file).catch(() => "");
  return text.split("\n").filter(Boolean).map((line) => JSON.parse(line) as Arrived);
}

/** The request `method` the fixture logged (the first, or the one `pick` picks), with a traceparent. */
async function request(file: string, method: string, pick = (_: Arrived) => true): Promise<Arrived> {
  const found = (await arrived(file)).find((a) => a.method === method && pick(a));
  assert.ok(found, `${method} in ${JSON.stringify(await arrived(file))}`);
  assert.ok(found.traceparent, `${method} arrived without a traceparent`);
  return found;
}

/**
 * The CLIENT span whose `traceparent` the server received with `a`: same trace, same span id, and the
 * attributes of a request to server `server` over `transport`.
 */
async function clientSpanOf(
  receiver: OtlpReceiver,
  a: Arrived,
  name: string,
  server: string,
  transport: "pipe" | "tcp",
): Promise<OtlpSpan> {
  const [version, traceId, spanId, flags] = a.traceparent!.split("-");
  assert.equal(version, "00");
  assert.equal(flags, "01");
  const span = await receiver.span((s) => s.spanId === spanId);
  assert.equal(span.traceId, traceId);
  assert.equal(span.name, name);
  assert.equal(span.kind, CLIENT);
  assert.equal(attribute(span, "mcp.method.name"), a.method);
  assert.equal(attribute(span, "mcphub.server.name"), server);
  assert.equal(attribute(span, "network.transport"), transport);
  assert.equal(attribute(span, "jsonrpc.request.id"), String(a.id));
  return span;
}

/** A root span: no parent (start-up is a trace of the gateway's own). */
function assertRoot(span: OtlpSpan): void {
  assert.equal(span.parentSpanId || undefined, undefined, `${span.name} has a parent`);
}

/** The opening and the tool list of a 2025 server: CLIENT spans, roots, their traceparents received. */
async function assertOpening(
  receiver: OtlpReceiver,
  log: string,
  server: string,
  transport: "pipe" | "tcp",
): Promise<void> {
  const init = await clientSpanOf(
    receiver,
    await request(log, "initialize"),
    "initialize",
    server,
    transport,
  );
  assertRoot(init);
  assert.equal(attribute(init, "error.type"), undefined);
  const list = await clientSpanOf(
    receiver,
    await request(log, "tools/list"),
    "tools/list",
    server,
    transport,
  );
  assertRoot(list);
  assert.notEqual(list.traceId, init.traceId);
}

Deno.test("a stdio server's initialize and tools/list are CLIENT spans whose traceparent it receives", async () => {
  await using dir = await tempDir();
  await using receiver = startOtlpReceiver();
  const log = `${dir.path}/trace.log`;
  const config = await writeConfig(
    dir.path,
    `servers:\n  fx:\n    command: ${q(DENO)}\n    args: [run, -A, ${q(FIXTURE)}, --trace-log, ${q(log)}]\n`,
  );
  const gw = await connectGateway(config, { env: otelEnv(receiver.endpoint) });
  try {
    const { tools } = await gw.client.listTools();
    assert.ok(tools.some((t) => t.name === "fx__echo"));
  } finally {
    await gw.close();
  }
  await assertOpening(receiver, log, "fx", "pipe");
  // What the gateway traced itself is not traced twice: one CLIENT span per request.
  const inits = receiver.spans().filter((s) => s.name === "initialize" && s.kind === CLIENT);
  assert.equal(inits.length, 1);
});

Deno.test("a Streamable HTTP server gets the CLIENT spans of the probe, initialize and tools/list", async () => {
  await using dir = await tempDir();
  await using receiver = startOtlpReceiver();
  const log = `${dir.path}/trace.log`;
  await using remote = await startFixtureHttp(["--trace-log", log]);
  const config = await writeConfig(
    dir.path,
    `servers:\n  web:\n    url: http://127.0.0.1:${remote.port}/mcp\n`,
  );
  const gw = await connectGateway(config, { env: otelEnv(receiver.endpoint) });
  try {
    const { tools } = await gw.client.listTools();
    assert.ok(tools.some((t) => t.name === "web__echo"));
  } finally {
    await gw.close();
  }
  // Over HTTP an unknown server is probed with server/discover first; a 2025 server refuses it (the
  // SDK's HTTP transport answers 400 before its server sees it: nothing in the log).
  const probe = await receiver.span((s) => s.name === "server/discover" && s.kind === CLIENT);
  assertRoot(probe);
  assert.equal(attribute(probe, "mcphub.server.name"), "web");
  assert.equal(attribute(probe, "error.type"), "400");
  assert.equal(probe.status?.code, ERROR);
  await assertOpening(receiver, log, "web", "tcp");
});

/** A 2026-07-28 server: the discover, tools/list, and a call with the host's context. */
async function modernTrace(receiver: OtlpReceiver, log: string, config: string, transport: "pipe" | "tcp") {
  const gw = await connectGateway(config, { env: otelEnv(receiver.endpoint) });
  try {
    const result = await gw.client.callTool({
      name: "modern__echo",
      arguments: { text: "hi" },
      _meta: { traceparent: `00-${HOST_TRACE}-${HOST_SPAN}-01` },
    });
    assert.deepEqual(result.content, [{ type: "text", text: "hi" }]);
  } finally {
    await gw.close();
  }
  const call = await request(log, "tools/call");
  const client = await clientSpanOf(receiver, call, "tools/call echo", "modern", transport);
  assert.equal(client.traceId, HOST_TRACE);
  const server = await receiver.span((s) => s.spanId === client.parentSpanId);
  assert.equal(server.name, "tools/call modern__echo");
  assert.equal(server.kind, SERVER);
  assert.equal(server.parentSpanId, HOST_SPAN);
  const discover = await clientSpanOf(
    receiver,
    await request(log, "server/discover"),
    "server/discover",
    "modern",
    transport,
  );
  assertRoot(discover);
  assert.equal(attribute(discover, "error.type"), undefined);
  const list = await clientSpanOf(
    receiver,
    await request(log, "tools/list"),
    "tools/list",
    "modern",
    transport,
  );
  assertRoot(list);
}

Deno.test("a 2026-07-28 stdio server receives the gateway's CLIENT spans, the tool call's in the host's trace", async () => {
  await using dir = await tempDir();
  await using receiver = startOtlpReceiver();
  const log = `${dir.path}/trace.log`;
  const config = await writeConfig(
    dir.path,
    `servers:\n  modern:\n    command: ${q(DENO)}\n    args: [run, -A, ${q(MODERN)}, --trace-log, ${
      q(log)
    }]\n`,
  );
  await modernTrace(receiver, log, config, "pipe");
  // A stdio server of unknown era is probed with server/discover first (traced above): no 2025 opening.
  assert.deepEqual((await arrived(log)).filter((a) => a.method === "initialize"), []);
  // On stdio the era listens for its list changes (it offers tools.listChanged): its own request, traced.
  const listen = await clientSpanOf(
    receiver,
    await request(log, "subscriptions/listen"),
    "subscriptions/listen",
    "modern",
    "pipe",
  );
  assertRoot(listen);
});

Deno.test("a 2026-07-28 Streamable HTTP server receives the gateway's CLIENT spans", async () => {
  await using dir = await tempDir();
  await using receiver = startOtlpReceiver();
  const log = `${dir.path}/trace.log`;
  await using remote = await startHttpServer(MODERN, ["--http", "--trace-log", log], {
    what: "the 2026-07-28 fixture",
    stderr: "null",
  });
  const config = await writeConfig(
    dir.path,
    `servers:\n  modern:\n    url: http://127.0.0.1:${remote.port}/mcp\n`,
  );
  await modernTrace(receiver, log, config, "tcp");
});

Deno.test("requests made for the host are CLIENT spans under its SERVER span (prompts, logging level)", async () => {
  await using dir = await tempDir();
  await using receiver = startOtlpReceiver();
  const config = await writeConfig(
    dir.path,
    `servers:\n  everything:\n    command: node\n    args: [${q(REAL.everything)}, stdio]\n`,
  );
  const gw = await connectGateway(config, { env: otelEnv(receiver.endpoint) });
  const meta = { traceparent: `00-${HOST_TRACE}-${HOST_SPAN}-01` };
  let promptName: string;
  try {
    const { prompts } = await gw.client.listPrompts({ _meta: meta });
    const simple = prompts.find((p) => !p.arguments?.some((a) => a.required));
    assert.ok(simple, JSON.stringify(prompts));
    promptName = simple.name;
    await gw.client.getPrompt({ name: promptName, _meta: meta });
    await gw.client.setLoggingLevel("debug");
  } finally {
    await gw.close();
  }
  const list = await receiver.span((s) => s.name === "prompts/list" && s.kind === CLIENT);
  assert.equal(list.traceId, HOST_TRACE);
  assert.equal(attribute(list, "mcphub.server.name"), "everything");
  const listServer = await receiver.span((s) => s.spanId === list.parentSpanId);
  assert.equal(listServer.name, "prompts/list");
  assert.equal(listServer.kind, SERVER);
  assert.equal(listServer.parentSpanId, HOST_SPAN);

  const downstreamName = promptName.slice("everything__".length);
  const get = await receiver.span((s) => s.name === `prompts/get ${downstreamName}` && s.kind === CLIENT);
  assert.equal(attribute(get, "gen_ai.prompt.name"), downstreamName);
  assert.equal(get.traceId, HOST_TRACE);

  const level = await receiver.span((s) => s.name === "logging/setLevel" && s.kind === CLIENT);
  const levelServer = await receiver.span((s) => s.spanId === level.parentSpanId);
  assert.equal(levelServer.name, "logging/setLevel");
  assert.equal(levelServer.kind, SERVER);
  // The opening of server-everything (it cannot report traceparents): root CLIENT spans all the same.
  assertRoot(await receiver.span((s) => s.name === "initialize" && s.kind === CLIENT));
});

Deno.test("a server's sampling request: a SERVER span under the call's CLIENT span, a CLIENT span to the host", async () => {
  await using dir = await tempDir();
  await using receiver = startOtlpReceiver();
  const config = await writeConfig(
    dir.path,
    `servers:\n  fx:\n    command: ${q(DENO)}\n    args: [run, -A, ${q(FIXTURE)}]\n`,
  );
  const host = new Client({ name: "sampling-host", version: "1.0.0" }, { capabilities: { sampling: {} } });
  let hostMeta: Record<string, unknown> | undefined;
  host.setRequestHandler(CreateMessageRequestSchema, (request) => {
    hostMeta = request.params._meta as Record<string, unknown> | undefined;
    return { model: "test", role: "assistant", content: { type: "text", text: "sampled" } };
  });
  const gw = await connectGateway(config, { env: otelEnv(receiver.endpoint), client: host });
  try {
    const result = await host.callTool({
      name: "fx__sample",
      arguments: {},
      _meta: { traceparent: `00-${HOST_TRACE}-${HOST_SPAN}-01` },
    });
    assert.equal(result.isError, undefined, JSON.stringify(result));
  } finally {
    await gw.close();
  }
  // The host received the gateway's CLIENT span toward it.
  const traceparent = String(hostMeta?.traceparent ?? "");
  const [, traceId, spanId] = traceparent.split("-");
  assert.equal(traceId, HOST_TRACE, JSON.stringify(hostMeta));
  const toHost = await receiver.span((s) => s.spanId === spanId);
  assert.equal(toHost.name, "sampling/createMessage");
  assert.equal(toHost.kind, CLIENT);
  const received = await receiver.span((s) => s.spanId === toHost.parentSpanId);
  assert.equal(received.name, "sampling/createMessage");
  assert.equal(received.kind, SERVER);
  assert.equal(attribute(received, "mcphub.server.name"), "fx");
  assert.equal(attribute(received, "network.transport"), "pipe");
  const call = await receiver.span((s) => s.spanId === received.parentSpanId);
  assert.equal(call.name, "tools/call sample");
  assert.equal(call.kind, CLIENT);
});

Deno.test("a 2026-07-28 server's input_required round: the relayed elicitation under the call's CLIENT span, one span for both sends", async () => {
  await using dir = await tempDir();
  await using receiver = startOtlpReceiver();
  const log = `${dir.path}/trace.log`;
  const config = await writeConfig(
    dir.path,
    `servers:\n  modern:\n    command: ${q(DENO)}\n    args: [run, -A, ${q(MODERN)}, --trace-log, ${
      q(log)
    }]\n`,
  );
  const host = new Client({ name: "eliciting-host", version: "1.0.0" }, {
    capabilities: { elicitation: { form: {} } },
  });
  let hostMeta: Record<string, unknown> | undefined;
  host.setRequestHandler(ElicitRequestSchema, (request) => {
    hostMeta = request.params._meta as Record<string, unknown> | undefined;
    return { action: "accept", content: { name: "Ada" } };
  });
  const gw = await connectGateway(config, { env: otelEnv(receiver.endpoint), client: host });
  try {
    const result = await host.callTool({
      name: "modern__ask",
      arguments: { question: "who?" },
      _meta: { traceparent: `00-${HOST_TRACE}-${HOST_SPAN}-01` },
    });
    assert.deepEqual(result.content, [{ type: "text", text: "answer: Ada" }]);
  } finally {
    await gw.close();
  }
  // The call went twice (the second time with the answer), both times under the same CLIENT span.
  const calls = (await arrived(log)).filter((a) => a.method === "tools/call");
  assert.equal(calls.length, 2, JSON.stringify(calls));
  assert.equal(calls[0].traceparent, calls[1].traceparent);
  const call = await clientSpanOf(receiver, calls[0], "tools/call ask", "modern", "pipe");
  assert.equal(call.traceId, HOST_TRACE);
  // The host got the gateway's CLIENT span toward it, under the SERVER span of the input request.
  const [, traceId, spanId] = String(hostMeta?.traceparent ?? "").split("-");
  assert.equal(traceId, HOST_TRACE, JSON.stringify(hostMeta));
  const toHost = await receiver.span((s) => s.spanId === spanId);
  assert.equal(toHost.name, "elicitation/create");
  assert.equal(toHost.kind, CLIENT);
  const received = await receiver.span((s) => s.spanId === toHost.parentSpanId);
  assert.equal(received.name, "elicitation/create");
  assert.equal(received.kind, SERVER);
  assert.equal(received.parentSpanId, call.spanId);
});

Deno.test("a server on the older HTTP+SSE transport: its opening and tool list are CLIENT spans too", async () => {
  await using dir = await tempDir();
  await using receiver = startOtlpReceiver();
  await using sse = await startRemote("sse");
  const config = await writeConfig(
    dir.path,
    `servers:\n  old:\n    url: ${q(`http://127.0.0.1:${sse.port}/sse`)}\n    transport: sse\n`,
  );
  const gw = await connectGateway(config, { env: otelEnv(receiver.endpoint) });
  try {
    const result = await gw.client.callTool({ name: "old__echo", arguments: { message: "hi" } });
    assert.deepEqual(result.content, [{ type: "text", text: "Echo: hi" }]);
  } finally {
    await gw.close();
  }
  for (const name of ["initialize", "tools/list"]) {
    const span = await receiver.span((s) => s.name === name && s.kind === CLIENT);
    assertRoot(span);
    assert.equal(attribute(span, "mcphub.server.name"), "old");
    assert.equal(attribute(span, "network.transport"), "tcp");
    assert.equal(attribute(span, "error.type"), undefined);
    assert.ok(attribute(span, "jsonrpc.request.id") !== undefined);
  }
  const call = await receiver.span((s) => s.name === "tools/call echo" && s.kind === CLIENT);
  assert.equal(attribute(call, "jsonrpc.request.id") !== undefined, true);
});
