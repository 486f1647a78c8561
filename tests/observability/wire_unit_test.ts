/**
 * The spans of a connection's own requests (`WireTrace`, telemetry.ts) message by message, with a tracer
 * that keeps its spans (a stand-in for the OpenTelemetry API, so every end state can be read): which
 * requests get a span and a `traceparent`, which are left to the CLIENT operation that traced them, and
 * how each span ends.
 */
import assert from "node:assert/strict";
import type * as OtelApi from "@opentelemetry/api";
import { Telemetry } from "../../src/telemetry/mod.ts";

/** A span as the stand-in tracer keeps it. */
interface Kept {
  name: string;
  parent?: string;
  spanId: string;
  attributes: Record<string, unknown>;
  status?: { code: number; message?: string };
  ended: boolean;
}

const PARENT = Symbol("parent span");

/** The parts of the OpenTelemetry API telemetry.ts uses, keeping every span it starts. */
function keepingApi(): { api: typeof OtelApi; spans: Kept[] } {
  const spans: Kept[] = [];
  let seq = 0;
  const root = { getValue: () => undefined } as unknown as OtelApi.Context;
  const withSpan = (span: unknown) => ({ getValue: (k: symbol) => k === PARENT ? span : undefined });
  const tracer = {
    startSpan(name: string, options: { attributes?: Record<string, unknown> }, context?: OtelApi.Context) {
      const parent = (context as unknown as { getValue(k: symbol): { kept: Kept } | undefined })
        ?.getValue(PARENT);
      const kept: Kept = {
        name,
        parent: parent?.kept.spanId,
        spanId: (++seq).toString(16).padStart(16, "0"),
        attributes: { ...options.attributes },
        ended: false,
      };
      spans.push(kept);
      return {
        kept,
        spanContext: () => ({ traceId: "ab".repeat(16), spanId: kept.spanId, traceFlags: 1 }),
        setAttribute(key: string, value: unknown) {
          kept.attributes[key] = value;
        },
        setStatus(status: { code: number; message?: string }) {
          kept.status = status;
        },
        updateName(next: string) {
          kept.name = next;
        },
        addEvent() {},
        end() {
          assert.equal(kept.ended, false, `${kept.name} ended twice`);
          kept.ended = true;
        },
      };
    },
  };
  const instrument = { record() {}, addCallback() {} };
  const api = {
    ROOT_CONTEXT: root,
    SpanKind: { INTERNAL: 0, SERVER: 1, CLIENT: 2 },
    SpanStatusCode: { UNSET: 0, OK: 1, ERROR: 2 },
    trace: {
      getTracer: () => tracer,
      setSpan: (_: unknown, span: unknown) => withSpan(span),
      setSpanContext: () => root,
    },
    context: { active: () => root },
    metrics: {
      getMeter: () => ({
        createHistogram: () => instrument,
        createObservableGauge: () => instrument,
        createObservableCounter: () => instrument,
      }),
    },
  };
  return { api: api as unknown as typeof OtelApi, spans };
}

function setup() {
  const { api, spans } = keepingApi();
  const telemetry = new Telemetry({ api });
  const wire = telemetry.wire("fx", "pipe", (text) => text.replaceAll("s3cret", "[redacted]"))!;
  const span = (name: string) => {
    const found = spans.filter((s) => s.name === name);
    assert.equal(found.length, 1, `one ${name} span in ${JSON.stringify(spans.map((s) => s.name))}`);
    return found[0]!;
  };
  return { telemetry, wire, spans, span };
}

type Message = { jsonrpc: string; id?: string | number; method?: string; params?: Record<string, unknown> };

function traceparentOf(message: Message): string {
  return (message.params?._meta as { traceparent: string }).traceparent;
}

Deno.test("a request of the connection's own: a root CLIENT span, its traceparent added to a copy, ended by the answer", () => {
  const { wire, span } = setup();
  const envelope = { "io.modelcontextprotocol/protocolVersion": "2026-07-28" };
  const sent = {
    jsonrpc: "2.0",
    id: 1,
    method: "tools/list",
    params: { cursor: "c", _meta: envelope },
  } as Message;
  const out = wire.out(sent);
  assert.notEqual(out, sent);
  assert.deepEqual(sent.params, { cursor: "c", _meta: envelope }, "the message given is not changed");
  const list = span("tools/list");
  assert.equal(traceparentOf(out), `00-${"ab".repeat(16)}-${list.spanId}-01`);
  assert.equal(
    (out.params?._meta as Record<string, unknown>)["io.modelcontextprotocol/protocolVersion"],
    "2026-07-28",
  );
  assert.equal(out.params?.cursor, "c");
  assert.equal(list.parent, undefined);
  assert.deepEqual(list.attributes, {
    "mcp.method.name": "tools/list",
    "mcphub.server.name": "fx",
    "network.transport": "pipe",
    "jsonrpc.request.id": "1",
  });
  assert.equal(list.ended, false);
  wire.in({ jsonrpc: "2.0", id: 1, result: { tools: [] } });
  assert.equal(list.ended, true);
  assert.equal(list.status, undefined);
  // Notifications and answers pass as they are.
  const note = { jsonrpc: "2.0", method: "notifications/initialized" };
  assert.equal(wire.out(note), note);
  const answer = { jsonrpc: "2.0", id: "s-1", result: {} };
  assert.equal(wire.out(answer), answer);
});

Deno.test("an error answer ends the span with its code, the message redacted; an unknown method is _OTHER", () => {
  const { wire, span } = setup();
  wire.out({ jsonrpc: "2.0", id: 0, method: "initialize", params: {} });
  wire.in({ jsonrpc: "2.0", id: 0, error: { code: -32022, message: "no, s3cret" } });
  const init = span("initialize");
  assert.equal(init.attributes["error.type"], "-32022");
  assert.equal(init.attributes["rpc.response.status_code"], "-32022");
  assert.deepEqual(init.status, { code: 2, message: "no, [redacted]" });
  wire.out({ jsonrpc: "2.0", id: 7, method: "vendor/thing" });
  assert.equal(span("_OTHER").attributes["mcp.method.name"], "_OTHER");
});

Deno.test("a request its caller traced is left to the caller's CLIENT span, which learns the request id", () => {
  const { telemetry, wire, spans } = setup();
  const host = telemetry.server({ method: "tools/call", transport: "pipe" });
  const op = telemetry.client(host, { method: "tools/call", server: "fx", tool: "echo" });
  const sent = {
    jsonrpc: "2.0",
    id: 4,
    method: "tools/call",
    params: { name: "echo", _meta: { ...op.meta } },
  };
  assert.equal(wire.out(sent), sent);
  assert.equal(spans.length, 2, "no span of the wire's own");
  assert.equal(
    op.span && spans.find((s) => s.name === "tools/call echo")?.attributes["jsonrpc.request.id"],
    "4",
  );
  op.end();
  // Once the caller's operation ended, the same traceparent is no longer its: a request of its own.
  wire.out({ jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "echo", _meta: { ...op.meta } } });
  assert.equal(spans.length, 3);
});

Deno.test("input_required keeps the span for the request sent again under the same id, with the same traceparent", () => {
  const { wire, span } = setup();
  const first = wire.out({ jsonrpc: "2.0", id: 3, method: "prompts/list", params: {} });
  wire.in({ jsonrpc: "2.0", id: 3, result: { resultType: "input_required", inputRequests: {} } });
  assert.equal(span("prompts/list").ended, false);
  const again = wire.out({ jsonrpc: "2.0", id: 3, method: "prompts/list", params: { inputResponses: {} } });
  assert.equal(traceparentOf(again), traceparentOf(first));
  wire.in({ jsonrpc: "2.0", id: 3, result: { prompts: [] } });
  assert.equal(span("prompts/list").ended, true);
});

Deno.test("a listen ends at its acknowledgement; a cancelled request as timeout or cancelled; the rest at the close", () => {
  const { wire, span, spans } = setup();
  wire.out({ jsonrpc: "2.0", id: "mcphub-listen-1", method: "subscriptions/listen", params: {} });
  wire.in({
    jsonrpc: "2.0",
    method: "notifications/subscriptions/acknowledged",
    params: { _meta: { "io.modelcontextprotocol/subscriptionId": "mcphub-listen-1" } },
  });
  const listen = span("subscriptions/listen");
  assert.equal(listen.ended, true);
  assert.equal(listen.attributes["error.type"], undefined);

  wire.out({ jsonrpc: "2.0", id: 8, method: "tools/list" });
  wire.out({
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: 8, reason: "McpError: MCP error -32001: Request timed out" },
  });
  wire.out({ jsonrpc: "2.0", id: 9, method: "ping" });
  wire.out({
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: 9, reason: "the host went" },
  });
  const [list, ping] = [spans.find((s) => s.name === "tools/list")!, span("ping")];
  assert.equal(list.attributes["error.type"], "timeout");
  assert.equal(ping.attributes["error.type"], "cancelled");

  wire.out({ jsonrpc: "2.0", id: 10, method: "resources/unsubscribe", params: { uri: "file:///x" } });
  const unsubscribe = span("resources/unsubscribe");
  assert.equal(unsubscribe.ended, false);
  assert.equal(
    JSON.stringify(unsubscribe.attributes).includes("file:///x"),
    false,
    "no resource URI recorded",
  );
  wire.close();
  assert.equal(unsubscribe.ended, true);
  assert.equal(unsubscribe.attributes["error.type"], "outcome_unknown");
});

Deno.test("a probe given up for the 2025 opening ends as timeout; a request that could not be written ends with the failure", () => {
  const { wire, span } = setup();
  wire.out({ jsonrpc: "2.0", id: "mcphub-discover", method: "server/discover", params: {} });
  wire.out({ jsonrpc: "2.0", id: 0, method: "initialize", params: {} });
  assert.equal(span("server/discover").attributes["error.type"], "timeout");
  assert.equal(span("initialize").ended, false);
  const sent = wire.out({ jsonrpc: "2.0", id: 1, method: "tools/list" });
  wire.unsent(sent, Object.assign(new Error("HTTP 400"), { code: 400 }));
  assert.equal(span("tools/list").attributes["error.type"], "400");
  // An answer after that finds no span (ended once).
  wire.in({ jsonrpc: "2.0", id: 1, result: { tools: [] } });
});

Deno.test("not tracing: no wire tap at all", () => {
  assert.equal(new Telemetry().wire("fx", "pipe"), undefined);
});
