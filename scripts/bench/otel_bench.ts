/**
 * The cost of tracing (issue #45): `echo` calls to server-everything straight, through two gateways with
 * OpenTelemetry off (the default; the second one, started last, is the A/A control that shows the noise
 * between two identical gateways) and through one with it on (`OTEL_DENO=true`, spans and metrics
 * exported over OTLP/HTTP protobuf, Deno's default, to a receiver in this process that reads and drops them), interleaved in
 * the same run (see gateway_bench.ts's `throughput`; 24 rounds, every order of the four targets); calls/s
 * and the ratios on/off (off = the mean of the two) and off₂/off₁, one at a time and 8 in flight. Then
 * start-up to the `initialize` answer with it off and on (median of 7, alternating).
 *
 * Usage: deno run -A scripts/bench/otel_bench.ts [--proxy-only]
 *
 * @module
 */
import {
  connectDirect,
  connectGateway,
  DENO,
  descendants,
  q,
  REAL,
  ROOT,
  tempDir,
  writeConfig,
} from "../../tests/helpers.ts";
import { echo, throughput, timeInitialize, waitReady } from "./gateway_bench.ts";
import { reap } from "./_gateway_process.ts";

const IN_FLIGHT = 8;
const STARTUP_RUNS = 7;

/** Calls/s of one mode, and the ratios. */
export interface Figures {
  direct: number;
  off: number;
  /** The second untraced gateway (the control). */
  off2: number;
  on: number;
  /** on / mean(off, off2) */
  ratio: number;
  /** off2 / off: what two identical gateways differ by in this run */
  control: number;
}

function figures(direct: number, off: number, on: number, off2: number): Figures {
  return { direct, off, off2, on, ratio: on / ((off + off2) / 2), control: off2 / off };
}

/** What one run measured. */
export interface OtelBenchReport {
  sequential: Figures;
  inFlight8: Figures;
  startup?: { offMs: number; onMs: number; ratio: number };
  /**
   * The telemetry work of one proxied call in a loop (`_otel_spans.ts`), µs: spans made and exported
   * (on) and durations only (off, as a `--listen` gateway keeps them); as a share of one untraced call's
   * latency (1 / sequential calls/s) and of its time when the gateway is busy (1 / calls/s 8 in flight).
   */
  perCall?: {
    onUs: number;
    offUs: number;
    onShare: number;
    offShare: number;
    onBusyShare: number;
    /** Traced, with the host's `traceparent` on every request (a remote parent). */
    hostContextUs: number;
  };
  /** Bytes of trace exports the receiver took in (so the spans were made and sent). */
  traceBytes: number;
}

/** An OTLP/HTTP receiver that reads every body and drops it, counting the bytes of trace exports. */
function sink(): { endpoint: string; traceBytes(): number } & AsyncDisposable {
  let bytes = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
    const body = await request.arrayBuffer();
    if (new URL(request.url).pathname === "/v1/traces") bytes += body.byteLength;
    return new Response(null, { status: 200, headers: { "content-type": "application/x-protobuf" } });
  });
  return {
    endpoint: `http://127.0.0.1:${(server.addr as Deno.NetAddr).port}`,
    traceBytes: () => bytes,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

function otelEnv(endpoint: string): Record<string, string> {
  return {
    OTEL_DENO: "true",
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    // Deno's default, and the cheaper encoding to make.
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
    OTEL_SERVICE_NAME: "mcphub-bench",
    OTEL_DENO_CONSOLE: "ignore",
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function rate(n: number): string {
  return `${Math.round(n)} calls/s`;
}

/** µs of telemetry work per proxied call, measured in a child with `env`. */
async function spanCost(env: Record<string, string>, hostContext = false): Promise<number> {
  const out = await new Deno.Command(DENO, {
    args: [
      "run",
      "-A",
      `${ROOT}scripts/bench/_otel_spans.ts`,
      "20000",
      ...(hostContext ? ["--host-context"] : []),
    ],
    env,
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (!out.success) throw new Error("_otel_spans.ts failed");
  return (JSON.parse(new TextDecoder().decode(out.stdout)) as { usPerCall: number }).usPerCall;
}

/** Runs the benchmark, prints the figures and returns them. */
export async function main({ proxyOnly = false }: { proxyOnly?: boolean } = {}): Promise<OtelBenchReport> {
  const before = new Set(descendants(Deno.pid));
  await using dir = await tempDir("mcphub_otel_bench_");
  await using receiver = sink();
  const config = await writeConfig(
    dir.path,
    `servers:\n  everything:\n    command: node\n    args: [${q(REAL.everything)}, stdio]\n`,
  );
  const opened: { close(): Promise<void> }[] = [];
  try {
    const direct = await connectDirect("node", [REAL.everything, "stdio"]);
    opened.push(direct);
    const off = await connectGateway(config, { db: `${dir.path}/off.db` });
    opened.push(off);
    const on = await connectGateway(config, { db: `${dir.path}/on.db`, env: otelEnv(receiver.endpoint) });
    opened.push(on);
    const off2 = await connectGateway(config, { db: `${dir.path}/off2.db` });
    opened.push(off2);
    await Promise.all([waitReady(off), waitReady(on), waitReady(off2)]);
    const targets = [
      echo(direct, "echo"),
      echo(off.client, "everything__echo"),
      echo(on.client, "everything__echo"),
      echo(off2.client, "everything__echo"),
    ];
    const [sd, so, sn, so2] = await throughput(targets, 1, { rounds: 24 });
    const [cd, co, cn, co2] = await throughput(targets, IN_FLIGHT, { rounds: 24 });
    const report: OtelBenchReport = {
      sequential: figures(sd, so, sn, so2),
      inFlight8: figures(cd, co, cn, co2),
      traceBytes: 0,
    };
    for (
      const [label, f] of [["sequential", report.sequential], ["8 in flight", report.inFlight8]] as const
    ) {
      console.log(
        `tracing ${label}: direct ${rate(f.direct)}, gateway off ${rate(f.off)} / ${rate(f.off2)}, ` +
          `gateway on ${rate(f.on)}; ratio on/off ${f.ratio.toFixed(3)} (control off2/off ${
            f.control.toFixed(3)
          })`,
      );
    }
    await Promise.all(opened.splice(0).map((c) => c.close().catch(() => {})));
    const onUs: number[] = [];
    const offUs: number[] = [];
    const hostUs: number[] = [];
    for (let i = 0; i < 5; i++) {
      offUs.push(await spanCost({}));
      onUs.push(await spanCost(otelEnv(receiver.endpoint)));
      hostUs.push(await spanCost(otelEnv(receiver.endpoint), true));
    }
    // One untraced gateway call: its latency one at a time, and its cost when the gateway is the
    // bottleneck (8 in flight: 1 / calls/s is the gateway's time per call).
    const latencyUs = 1e6 / ((report.sequential.off + report.sequential.off2) / 2);
    const busyUs = 1e6 / ((report.inFlight8.off + report.inFlight8.off2) / 2);
    report.perCall = {
      onUs: median(onUs),
      offUs: median(offUs),
      onShare: median(onUs) / latencyUs,
      offShare: median(offUs) / latencyUs,
      onBusyShare: median(onUs) / busyUs,
      hostContextUs: median(hostUs),
    };
    const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
    const f = report.perCall;
    console.log(
      [
        `telemetry work per call (median of 5 × 20000): traced ${f.onUs.toFixed(1)} µs,`,
        `durations only ${f.offUs.toFixed(1)} µs; traced = ${pct(f.onShare)} of an untraced call's latency`,
        `(${latencyUs.toFixed(0)} µs one at a time), ${pct(f.onBusyShare)} of its time at 8 in flight`,
        `(${busyUs.toFixed(0)} µs); durations only = ${pct(f.offShare)} of the latency; traced with the`,
        `host's traceparent on every request ${f.hostContextUs.toFixed(1)} µs`,
      ].join(" "),
    );
    if (!proxyOnly) {
      const args = [
        "run",
        "-A",
        `${ROOT}main.ts`,
        "--config",
        config,
        "--db",
        `${dir.path}/startup.db`,
        "mcp",
        "serve",
      ];
      await timeInitialize(args, 1);
      await timeInitialize(args, 1, otelEnv(receiver.endpoint));
      const offMs: number[] = [];
      const onMs: number[] = [];
      for (let i = 0; i < STARTUP_RUNS; i++) {
        offMs.push(await timeInitialize(args, 1));
        onMs.push(await timeInitialize(args, 1, otelEnv(receiver.endpoint)));
      }
      report.startup = { offMs: median(offMs), onMs: median(onMs), ratio: median(onMs) / median(offMs) };
      console.log(
        `start-up to initialize (median of ${STARTUP_RUNS}): tracing off ${
          report.startup.offMs.toFixed(0)
        } ms, ` +
          `on ${report.startup.onMs.toFixed(0)} ms, ratio ${report.startup.ratio.toFixed(2)}`,
      );
    }
    report.traceBytes = receiver.traceBytes();
    console.log(`trace exports received by the OTLP receiver: ${report.traceBytes} bytes`);
    return report;
  } finally {
    const pids = descendants(Deno.pid).filter((pid) => !before.has(pid));
    await Promise.all(opened.map((c) => c.close().catch(() => {})));
    const left = await reap(pids);
    if (left) console.error(`warning: ${left} leftover process(es) of the otel bench were killed`);
  }
}

if (import.meta.main) await main({ proxyOnly: Deno.args.includes("--proxy-only") });
