/**
 * The process exit (main.ts's only Deno.exit), safe with Deno's OpenTelemetry on.
 *
 * With `OTEL_DENO=true`, `Deno.exit` flushes the exporters on the main thread and waits for each. The
 * periodic metric reader (Deno 2.9, deno_telemetry) asks the isolate to observe its instruments and waits
 * for the answer before anything else, a flush included; an isolate blocked in `Deno.exit` never answers,
 * so a collection asked for just before the exit — or one the reader picks before the flush (it takes
 * whichever is ready first) — left the process waiting forever (`mcp serve` hung at SIGTERM, a listener
 * orphaned at 0% CPU). So the exit first takes one turn of the event loop, which answers a collection
 * already asked for; and since another may still be picked before the flush (likely only with a short
 * OTEL_METRIC_EXPORT_INTERVAL), a watchdog on a thread of its own ends the process once the exporters have
 * had their time: the exit is bounded, never forever.
 *
 * @module
 */

/** Options of {@linkcode exitProcess} (tests set them; the CLI passes none). */
export interface ExitOptions {
  /** The environment (`OTEL_DENO`, `OTEL_EXPORTER_OTLP_TIMEOUT`). @default Deno.env */
  env?: { get(name: string): string | undefined };
  /** How long the flush may take before the watchdog ends the process. @default 2 × the OTLP timeout + 2 s */
  graceMs?: number;
  /** Answer a collection already asked for before exiting (false only to test the watchdog). @default true */
  settle?: boolean;
}

/** The OTLP exporter's per-request timeout when `OTEL_EXPORTER_OTLP_TIMEOUT` is not set (the OTel spec's). */
const OTLP_TIMEOUT_MS = 10_000;

/** Deno's OpenTelemetry is on (it reads `OTEL_DENO` as `true` or `1`). */
export function otelEnabled(env: { get(name: string): string | undefined }): boolean {
  const value = env.get("OTEL_DENO")?.toLowerCase();
  return value === "true" || value === "1";
}

/**
 * How long the exit's flush may take: spans and logs each get one OTLP request's timeout (the metrics are
 * flushed last), plus a margin.
 */
export function exitGraceMs(env: { get(name: string): string | undefined }): number {
  const raw = Number(env.get("OTEL_EXPORTER_OTLP_TIMEOUT"));
  const timeout = Number.isFinite(raw) && raw > 0 ? raw : OTLP_TIMEOUT_MS;
  return 2 * timeout + 2_000;
}

// The watchdog's thread: a worker's timers run while the main thread is blocked in the flush. Killing this
// process needs no --allow-run beyond what the gateway already has (a process may always signal itself).
const WATCHDOG = `self.onmessage = (event) => {
  const { graceMs, message } = event.data;
  setTimeout(() => {
    try {
      Deno.stderr.writeSync(new TextEncoder().encode(message));
    } finally {
      Deno.kill(Deno.pid, "SIGKILL");
    }
  }, graceMs);
};
`;

/** Exits the process with `code`; never hangs in Deno's OpenTelemetry flush. */
export async function exitProcess(code: number, options: ExitOptions = {}): Promise<never> {
  const env = options.env ?? Deno.env;
  if (otelEnabled(env)) {
    const graceMs = options.graceMs ?? exitGraceMs(env);
    const url = URL.createObjectURL(new Blob([WATCHDOG], { type: "text/javascript" }));
    const watchdog = new Worker(url, { type: "module" });
    watchdog.postMessage({
      graceMs,
      message: `mcphub: the OpenTelemetry flush at exit did not finish within ${graceMs}ms (a metric ` +
        "collection waiting on the exiting process); ending the process without it\n",
    });
    // One turn of the event loop: a collection already asked for is answered before the flush waits on it.
    if (options.settle ?? true) await new Promise((resolve) => setTimeout(resolve, 0));
  }
  Deno.exit(code);
}
