/**
 * Child of otel_bench.ts: the gateway's telemetry work for one proxied `tools/call` (a SERVER operation,
 * from the host's `traceparent` with `--host-context`, its tool, a CLIENT operation with the `traceparent` to pass on, both
 * ended and recorded), `CALLS` times in a loop; prints `{"usPerCall": N}`. With `OTEL_DENO=true` it makes
 * and exports spans as the gateway does; without it, durations are recorded for `/metrics` only.
 *
 * @module
 */
import { loadTelemetry } from "../../src/telemetry/mod.ts";

const CALLS = Number(Deno.args[0] ?? 20_000);
/** With `--host-context` every request carries the host's `traceparent` (a remote parent), else none. */
const hostContext = Deno.args.includes("--host-context");
const telemetry = await loadTelemetry({ tracing: Deno.env.get("OTEL_DENO") === "true" });
const meta = hostContext
  ? { traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", progressToken: 1 }
  : { progressToken: 1 };

function once(i: number): void {
  const server = telemetry.server({ method: "tools/call", requestId: i, transport: "pipe", meta });
  server.tool("everything__echo");
  const client = telemetry.client(server, { method: "tools/call", server: "everything", tool: "echo" });
  if (client.meta) ({ ...client.meta });
  client.requestId(`mcphub-${i}`);
  client.end();
  server.end();
}

for (let i = 0; i < 2_000; i++) once(i);
const t0 = performance.now();
for (let i = 0; i < CALLS; i++) once(i);
const ms = performance.now() - t0;
console.log(JSON.stringify({ usPerCall: (ms * 1000) / CALLS }));
