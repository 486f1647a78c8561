/**
 * A tiny OTLP/HTTP receiver for tests: accepts `POST /v1/traces` and `/v1/metrics` in the JSON encoding
 * (`OTEL_EXPORTER_OTLP_PROTOCOL=http/json`) on 127.0.0.1 and keeps what arrived.
 *
 * @module
 */

/** One span as OTLP/JSON carries it (the fields the tests read). */
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: { key: string; value: Record<string, unknown> }[];
  events?: { name: string; attributes: { key: string; value: Record<string, unknown> }[] }[];
  status?: { code?: number; message?: string };
}

/** A running receiver. */
export interface OtlpReceiver extends AsyncDisposable {
  endpoint: string;
  spans(): OtlpSpan[];
  /** Every body received, as text (to check what never appears in it). */
  bodies(): string[];
  /** Metric names received over OTLP. */
  metricNames(): Set<string>;
  /** Resolves once a span matches (or rejects after `ms`). */
  span(match: (span: OtlpSpan) => boolean, ms?: number): Promise<OtlpSpan>;
}

/** A span attribute's value (string, int or bool), undefined when absent. */
export function attribute(span: OtlpSpan, key: string): unknown {
  const value = span.attributes.find((a) => a.key === key)?.value;
  if (!value) return undefined;
  return value.stringValue ?? value.intValue ?? value.boolValue ?? value.doubleValue;
}

/** Starts a receiver on a free port. */
export function startOtlpReceiver(): OtlpReceiver {
  const spans: OtlpSpan[] = [];
  const bodies: string[] = [];
  const metricNames = new Set<string>();
  const waiters: { match: (span: OtlpSpan) => boolean; resolve: (span: OtlpSpan) => void }[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
    const text = await request.text();
    bodies.push(text);
    const path = new URL(request.url).pathname;
    const body = JSON.parse(text);
    if (path === "/v1/traces") {
      for (const rs of body.resourceSpans ?? []) {
        for (const ss of rs.scopeSpans ?? []) {
          for (const span of ss.spans ?? []) {
            spans.push(span);
            for (const w of [...waiters]) {
              if (w.match(span)) waiters.splice(waiters.indexOf(w), 1), w.resolve(span);
            }
          }
        }
      }
    } else if (path === "/v1/metrics") {
      for (const rm of body.resourceMetrics ?? []) {
        for (const sm of rm.scopeMetrics ?? []) for (const m of sm.metrics ?? []) metricNames.add(m.name);
      }
    }
    return new Response("{}", { headers: { "content-type": "application/json" } });
  });
  const port = (server.addr as Deno.NetAddr).port;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans: () => [...spans],
    bodies: () => [...bodies],
    metricNames: () => metricNames,
    span(match, ms = 30_000) {
      const found = spans.find(match);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(
              new Error(`no matching span within ${ms}ms; received: ${spans.map((s) => s.name).join(", ")}`),
            ),
          ms,
        );
        waiters.push({ match, resolve: (span) => (clearTimeout(timer), resolve(span)) });
      });
    },
    async [Symbol.asyncDispose]() {
      await server.shutdown();
    },
  };
}
