/**
 * Traces through the gateway (issue #45): Deno's OpenTelemetry exports the gateway's spans to an OTLP
 * receiver in the test; a host's `traceparent` in `params._meta` is the parent of the SERVER span, and
 * the downstream fixture reports the `traceparent` it received: the gateway's CLIENT span.
 */
import assert from "node:assert/strict";
import {
  connectGateway,
  DENO,
  FIXTURE,
  q,
  REAL,
  startFixtureHttp,
  tempDir,
  until,
  writeConfig,
} from "../helpers.ts";
import { attribute, type OtlpSpan, startOtlpReceiver } from "./otlp_receiver.ts";
import { httpClient, startListener } from "../http/http_helpers.ts";

const HOST_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const HOST_SPAN = "00f067aa0ba902b7";
const SERVER = 2;
const CLIENT = 3;
const ERROR = 2;

/**
 * Deno's OpenTelemetry to `endpoint`. `metricsEveryMs` only for a test that waits on gauges: a periodic
 * collection due at the gateway's exit makes its flush wait out src/cli/exit.ts's watchdog.
 */
function otelEnv(endpoint: string, metricsEveryMs?: number): Record<string, string> {
  return {
    OTEL_DENO: "true",
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    OTEL_SERVICE_NAME: "mcphub",
    OTEL_DENO_CONSOLE: "ignore",
    ...metricsEveryMs === undefined ? {} : { OTEL_METRIC_EXPORT_INTERVAL: String(metricsEveryMs) },
  };
}

/**
 * Stops `listener` within `until`'s bound: a gateway that never exits fails the test with its stderr
 * instead of hanging the run.
 */
async function stopWithin(listener: Awaited<ReturnType<typeof startListener>>): Promise<void> {
  let exited: Deno.CommandStatus | undefined;
  listener.stop().then((status) => exited = status);
  try {
    await until("the listener to exit after SIGTERM", () => Promise.resolve(exited));
  } catch (error) {
    listener.child.kill("SIGKILL");
    await listener.stop();
    throw new Error(`${(error as Error).message}; stderr:\n${listener.stderr()}`);
  }
}

function textOf(result: unknown): string {
  return (result as { content: { text: string }[] }).content[0].text;
}

Deno.test("a host's traceparent continues through the gateway's SERVER and CLIENT spans to the server", async () => {
  await using dir = await tempDir();
  await using receiver = startOtlpReceiver();
  const config = await writeConfig(
    dir.path,
    `servers:\n  fx:\n    command: ${q(DENO)}\n    args: [run, -A, ${q(FIXTURE)}, --trace]\n`,
  );
  const gw = await connectGateway(config, { env: otelEnv(receiver.endpoint, 200) });
  let mounted: string, viaMeta: string, failed: unknown, detachedId: string;
  try {
    await gw.client.listTools();
    // The mounted tool (the stdio fast path, which writes the request itself) with the host's context.
    mounted = textOf(
      await gw.client.callTool({
        name: "fx__trace",
        arguments: {},
        _meta: { traceparent: `00-${HOST_TRACE}-${HOST_SPAN}-01`, tracestate: "host=1" },
      }),
    );
    // call_tool (the SDK client's path), with no context from the host: a trace of the gateway's own.
    viaMeta = textOf(await gw.client.callTool({ name: "call_tool", arguments: { tool: "fx__trace" } }));
    failed = await gw.client.callTool({
      name: "fx__fail",
      arguments: { text: "argument-value-never-recorded" },
    });
    // A result over the budget is stored (an event on the SERVER span); get_result pages it.
    const receipt = await gw.client.callTool({ name: "fx__big", arguments: { bytes: 100_000 } });
    const callId = (receipt.structuredContent as { callId: string }).callId;
    await gw.client.callTool({ name: "get_result", arguments: { callId } });
    // A detached call: an event on call_tool's span, the downstream call its child.
    const accepted = await gw.client.callTool({
      name: "call_tool",
      arguments: { tool: "fx__echo", arguments: { text: "later" }, detach: true },
    });
    detachedId = (accepted.structuredContent as { callId: string }).callId;
    // Gauges and counters (observable instruments) go out with the periodic export, not the one at exit:
    // the counter of result bytes has a series once a call is recorded.
    await until(
      "the OTLP gauges",
      () => Promise.resolve(receiver.metricNames().has("mcphub.result_bytes") || undefined),
    );
  } finally {
    await gw.close();
  }
  assert.equal((failed as { isError?: boolean }).isError, true);

  // What the server received: the gateway's CLIENT span in the host's trace, and the host's tracestate.
  const received = JSON.parse(mounted) as { traceparent: string; tracestate: string };
  const parts = received.traceparent.split("-");
  assert.deepEqual([parts[0], parts[1], parts[3]], ["00", HOST_TRACE, "01"]);
  assert.notEqual(parts[2], HOST_SPAN);
  assert.equal(received.tracestate, "host=1");

  const client = await receiver.span((s) => s.spanId === parts[2]);
  assert.equal(client.name, "tools/call trace");
  assert.equal(client.kind, CLIENT);
  assert.equal(client.traceId, HOST_TRACE);
  assert.equal(attribute(client, "mcp.method.name"), "tools/call");
  assert.equal(attribute(client, "gen_ai.tool.name"), "trace");
  assert.equal(attribute(client, "gen_ai.operation.name"), "execute_tool");
  assert.equal(attribute(client, "mcphub.server.name"), "fx");
  assert.equal(attribute(client, "network.transport"), "pipe");
  assert.match(String(attribute(client, "jsonrpc.request.id")), /^mcphub-\d+$/);
  assert.equal(attribute(client, "error.type"), undefined);

  const server = await receiver.span((s) => s.spanId === client.parentSpanId);
  assert.equal(server.name, "tools/call fx__trace");
  assert.equal(server.kind, SERVER);
  assert.equal(server.traceId, HOST_TRACE);
  assert.equal(server.parentSpanId, HOST_SPAN);
  assert.equal(attribute(server, "mcp.method.name"), "tools/call");
  assert.equal(attribute(server, "gen_ai.tool.name"), "fx__trace");
  assert.equal(attribute(server, "network.transport"), "pipe");
  assert.ok(attribute(server, "jsonrpc.request.id") !== undefined);

  // No context from the host: the gateway's own trace, still passed on.
  const own = (JSON.parse(viaMeta) as { traceparent: string }).traceparent.split("-");
  assert.notEqual(own[1], HOST_TRACE);
  const ownClient = await receiver.span((s) => s.spanId === own[2]);
  assert.equal(ownClient.traceId, own[1]);
  assert.equal(ownClient.name, "tools/call trace");
  const ownServer = await receiver.span((s) => s.spanId === ownClient.parentSpanId);
  assert.equal(ownServer.name, "tools/call call_tool");
  assert.equal(ownServer.parentSpanId || undefined, undefined);

  // isError: error.type tool_error and an ERROR status on both sides.
  const failServer = await receiver.span((s) => s.name === "tools/call fx__fail");
  const failClient = await receiver.span((s) => s.name === "tools/call fail");
  for (const span of [failServer, failClient] as OtlpSpan[]) {
    assert.equal(attribute(span, "error.type"), "tool_error");
    assert.equal(span.status?.code, ERROR);
  }
  assert.equal(failClient.parentSpanId, failServer.spanId);

  // Other requests have SERVER spans too (named by method); argument values never become attributes.
  await receiver.span((s) => s.name === "tools/list" && s.kind === SERVER);
  await receiver.span((s) => s.name === "initialize" && s.kind === SERVER);
  assert.ok(!receiver.bodies().some((b) => b.includes("argument-value-never-recorded")));

  const big = await receiver.span((s) => s.name === "tools/call fx__big");
  const spooled = big.events?.find((e) => e.name === "mcphub.result.spooled");
  assert.ok(spooled, JSON.stringify(big.events));
  assert.ok(spooled.attributes.some((a) => a.key === "mcphub.result.bytes"));
  await receiver.span((s) => s.name === "tools/call get_result" && s.kind === SERVER);
  const detach = await receiver.span((s) =>
    s.name === "tools/call call_tool" && (s.events ?? []).some((e) => e.name === "mcphub.call.detached")
  );
  const event = detach.events!.find((e) => e.name === "mcphub.call.detached")!;
  assert.ok(event.attributes.some((a) => a.key === "mcphub.call.id" && a.value.stringValue === detachedId));
  const later = await receiver.span((s) => s.name === "tools/call echo" && s.parentSpanId === detach.spanId);
  assert.equal(later.kind, CLIENT);
  // A server's state changes are spans of their own (start-up, reconnects).
  const state = await receiver.span((s) => s.name === "mcphub.server.state connected");
  assert.equal(attribute(state, "mcphub.server.name"), "fx");

  // The same metrics over OTLP.
  for (
    const name of [
      "mcp.server.operation.duration",
      "mcp.client.operation.duration",
      "mcphub.server_state",
      "mcphub.server_tools",
      "mcphub.result_bytes",
    ]
  ) {
    assert.ok(receiver.metricNames().has(name), `${name} in ${[...receiver.metricNames()].join(", ")}`);
  }
});

Deno.test("the CLIENT span's traceparent reaches a Streamable HTTP server in params._meta", async () => {
  await using dir = await tempDir();
  await using receiver = startOtlpReceiver();
  await using remote = await startFixtureHttp(["--trace"]);
  const config = await writeConfig(
    dir.path,
    `servers:\n  web:\n    url: http://127.0.0.1:${remote.port}/mcp\n`,
  );
  const gw = await connectGateway(config, { env: otelEnv(receiver.endpoint) });
  let text: string;
  try {
    text = textOf(
      await gw.client.callTool({
        name: "web__trace",
        arguments: {},
        _meta: { traceparent: `00-${HOST_TRACE}-${HOST_SPAN}-01` },
      }),
    );
  } finally {
    await gw.close();
  }
  const received = JSON.parse(text) as { traceparent: string; tracestate: string | null };
  const parts = received.traceparent.split("-");
  assert.equal(parts[1], HOST_TRACE);
  assert.equal(received.tracestate, null);
  const client = await receiver.span((s) => s.spanId === parts[2]);
  assert.equal(client.name, "tools/call trace");
  assert.equal(client.kind, CLIENT);
  assert.equal(attribute(client, "network.transport"), "tcp");
  const server = await receiver.span((s) => s.spanId === client.parentSpanId);
  assert.equal(server.name, "tools/call web__trace");
  assert.equal(server.parentSpanId, HOST_SPAN);
});

Deno.test("a resource read is a SERVER span with a CLIENT span under it for the server that holds it", async () => {
  await using dir = await tempDir();
  await using receiver = startOtlpReceiver();
  const config = await writeConfig(
    dir.path,
    `servers:\n  everything:\n    command: node\n    args: [${q(REAL.everything)}, stdio]\n`,
  );
  const gw = await connectGateway(config, { env: otelEnv(receiver.endpoint) });
  try {
    const { resources } = await gw.client.listResources();
    assert.ok(resources.length > 0);
    await gw.client.readResource({
      uri: resources[0].uri,
      _meta: { traceparent: `00-${HOST_TRACE}-${HOST_SPAN}-01` },
    });
  } finally {
    await gw.close();
  }
  const client = await receiver.span((s) => s.name === "resources/read" && s.kind === CLIENT);
  assert.equal(attribute(client, "mcphub.server.name"), "everything");
  assert.equal(client.traceId, HOST_TRACE);
  const server = await receiver.span((s) => s.spanId === client.parentSpanId);
  assert.equal(server.name, "resources/read");
  assert.equal(server.kind, SERVER);
  assert.equal(server.parentSpanId, HOST_SPAN);
  const list = await receiver.span((s) => s.name === "resources/list" && s.kind === CLIENT);
  assert.equal(attribute(list, "mcp.method.name"), "resources/list");
});

Deno.test("on --listen, a SERVER span carries the session id and the host's traceparent still leads", async () => {
  await using dir = await tempDir();
  await using receiver = startOtlpReceiver();
  const config = await writeConfig(
    dir.path,
    `servers:\n  fx:\n    command: ${q(DENO)}\n    args: [run, -A, ${q(FIXTURE)}, --trace]\n`,
  );
  const listener = await startListener(config, { env: otelEnv(receiver.endpoint) });
  let sessionId: string | undefined;
  let text: string;
  try {
    await using client = await httpClient(listener.url);
    sessionId = (client.transport as { sessionId?: string } | undefined)?.sessionId;
    text = textOf(
      await client.callTool({
        name: "fx__trace",
        arguments: {},
        _meta: { traceparent: `00-${HOST_TRACE}-${HOST_SPAN}-01` },
      }),
    );
  } finally {
    // Stopped: the spans go out as it exits.
    await stopWithin(listener);
  }
  assert.ok(sessionId);
  const parts = (JSON.parse(text) as { traceparent: string }).traceparent.split("-");
  const client = await receiver.span((s) => s.spanId === parts[2]);
  const server = await receiver.span((s) => s.spanId === client.parentSpanId);
  assert.equal(server.name, "tools/call fx__trace");
  assert.equal(server.parentSpanId, HOST_SPAN);
  assert.equal(attribute(server, "mcp.session.id"), sessionId);
  assert.equal(attribute(server, "network.transport"), "tcp");
});

Deno.test("run_code is a SERVER span; its inner calls are CLIENT spans under it, and the run an event", async () => {
  await using dir = await tempDir();
  await using receiver = startOtlpReceiver();
  const config = await writeConfig(
    dir.path,
    `code_mode: true\nservers:\n  fx:\n    command: ${q(DENO)}\n    args: [run, -A, ${
      q(FIXTURE)
    }, --trace]\n`,
  );
  const gw = await connectGateway(config, { env: otelEnv(receiver.endpoint) });
  let received: string;
  try {
    await gw.client.listTools();
    const result = await gw.client.callTool({
      name: "run_code",
      arguments: { code: 'const r = await mcp.call("fx__trace", {}); return r;' },
      _meta: { traceparent: `00-${HOST_TRACE}-${HOST_SPAN}-01` },
    });
    assert.equal(result.isError, undefined, JSON.stringify(result));
    received = JSON.stringify((result.structuredContent as { result: unknown }).result);
  } finally {
    await gw.close();
  }
  // The server received the inner call's CLIENT span, in the host's trace.
  const traceparent = /00-([0-9a-f]{32})-([0-9a-f]{16})-01/.exec(received)!;
  assert.equal(traceparent[1], HOST_TRACE);
  const inner = await receiver.span((s) => s.spanId === traceparent[2]);
  assert.equal(inner.name, "tools/call trace");
  assert.equal(inner.kind, CLIENT);
  const run = await receiver.span((s) => s.spanId === inner.parentSpanId);
  assert.equal(run.name, "tools/call run_code");
  assert.equal(run.kind, SERVER);
  assert.equal(run.parentSpanId, HOST_SPAN);
  const event = run.events?.find((e) => e.name === "mcphub.code.run");
  assert.ok(event, JSON.stringify(run.events));
  const calls = event.attributes.find((a) => a.key === "mcphub.code.calls");
  assert.equal(
    Number(calls?.value.intValue ?? (calls?.value as { doubleValue?: number })?.doubleValue),
    1,
    JSON.stringify(calls),
  );
});
