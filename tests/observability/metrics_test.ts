/** The in-process instruments behind `GET /metrics` and the trace-context helpers (telemetry/). */
import assert from "node:assert/strict";
import {
  Counter,
  Histogram,
  MAX_SERIES,
  methodLabel,
  parseTraceparent,
  renderGauge,
  Telemetry,
} from "../../src/telemetry/mod.ts";

Deno.test("Histogram.render() writes cumulative buckets, +Inf, sum and count per label set", () => {
  const h = new Histogram("op_seconds", "Duration", ["method", "error_type"], [0.1, 1]);
  h.observe(0.05, { method: "a" });
  h.observe(0.5, { method: "a" });
  h.observe(5, { method: "a" });
  h.observe(0.1, { method: "b", error_type: "tool_error" });
  assert.equal(
    h.render(),
    [
      "# HELP op_seconds Duration",
      "# TYPE op_seconds histogram",
      'op_seconds_bucket{method="a",le="0.1"} 1',
      'op_seconds_bucket{method="a",le="1"} 2',
      'op_seconds_bucket{method="a",le="+Inf"} 3',
      'op_seconds_sum{method="a"} 5.55',
      'op_seconds_count{method="a"} 3',
      'op_seconds_bucket{method="b",error_type="tool_error",le="0.1"} 1',
      'op_seconds_bucket{method="b",error_type="tool_error",le="1"} 1',
      'op_seconds_bucket{method="b",error_type="tool_error",le="+Inf"} 1',
      'op_seconds_sum{method="b",error_type="tool_error"} 0.1',
      'op_seconds_count{method="b",error_type="tool_error"} 1',
      "",
    ].join("\n"),
  );
});

Deno.test("label values are escaped and a counter's series are bounded (the rest count as _overflow)", () => {
  const c = new Counter("x_total", "X", ["name"]);
  c.add(1, { name: 'a"b\\c\nd' });
  assert.match(c.render(), /^x_total\{name="a\\"b\\\\c\\nd"\} 1$/m);
  for (let i = 0; i < MAX_SERIES + 10; i++) c.add(1, { name: `n${i}` });
  const lines = c.render().split("\n").filter((l) => l.startsWith("x_total"));
  assert.equal(lines.length, MAX_SERIES + 1);
  assert.ok(lines.includes('x_total{name="_overflow"} 11'));
  assert.equal(
    renderGauge({ name: "g", help: "G", series: [{ labels: { agent: "" }, value: 2 }] }),
    "# HELP g G\n# TYPE g gauge\ng 2\n",
  );
});

Deno.test("methodLabel() keeps the MCP methods and folds any other into _OTHER", () => {
  assert.equal(methodLabel("tools/call"), "tools/call");
  assert.equal(methodLabel("resources/read"), "resources/read");
  assert.equal(methodLabel("x/made-up-by-a-host"), "_OTHER");
  assert.equal(methodLabel(42), "_OTHER");
});

Deno.test("parseTraceparent() reads W3C traceparent and refuses invalid ones", () => {
  assert.deepEqual(parseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"), {
    traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
    spanId: "00f067aa0ba902b7",
    flags: 1,
  });
  for (
    const bad of [
      undefined,
      "",
      "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
      "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
      "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
    ]
  ) {
    assert.equal(parseTraceparent(bad), undefined, String(bad));
  }
  // A later version may add fields.
  assert.ok(parseTraceparent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-future"));
});

Deno.test("Telemetry without OpenTelemetry times operations and hands out no trace context", () => {
  const telemetry = new Telemetry();
  assert.equal(telemetry.tracing, false);
  const op = telemetry.server({ method: "tools/call", requestId: 1, meta: { traceparent: "junk" } });
  op.tool("fx__echo");
  const client = telemetry.client(op, { method: "tools/call", server: "fx", tool: "echo" });
  assert.equal(client.meta, undefined);
  client.end({ type: "tool_error" });
  op.toolError = true;
  op.end();
  op.end();
  const text = telemetry.render();
  assert.match(
    text,
    /^mcp_server_operation_duration_seconds_count\{mcp_method_name="tools\/call",gen_ai_tool_name="fx__echo",error_type="tool_error"\} 1$/m,
  );
  assert.match(
    text,
    /^mcp_client_operation_duration_seconds_count\{mcp_method_name="tools\/call",gen_ai_tool_name="echo",error_type="tool_error",server="fx"\} 1$/m,
  );
});
