/**
 * `mcp serve --listen` throughput of two checkouts in one run: `echo` calls to server-everything through
 * each checkout's listener (the v1 SDK client over Streamable HTTP, one session each), one at a time and
 * 8 in flight, in rounds that alternate the order (gateway_bench.ts's `throughput`), so a noisy machine
 * slows both alike; then SESSIONS sessions on each at once, CALLS_EACH sequential calls per session,
 * p50/p99 per call. Prints calls/s, latencies and head/base ratios. Each listener is started by its own
 * checkout's test helper (`tests/http/http_helpers.ts`), so each runs its own `main.ts`.
 *
 * Usage: deno run -A scripts/bench/listen_ab.ts --base DIR --head DIR [--calls N] [--rounds N]
 *
 * @module
 */
import { parseArgs } from "node:util";
import { q, REAL, tempDir, writeConfig } from "../../tests/helpers.ts";
import { httpClient } from "../../tests/http/http_helpers.ts";
import { echo, throughput } from "./gateway_bench.ts";

const SESSIONS = 20;
const CALLS_EACH = 100;

type Started = AsyncDisposable & { url: string };

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** Runs the comparison and prints it. */
export async function main(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      base: { type: "string" },
      head: { type: "string" },
      calls: { type: "string", default: "1000" },
      rounds: { type: "string", default: "6" },
    },
  });
  if (!values.base || !values.head) throw new TypeError("Usage: listen_ab.ts --base DIR --head DIR");
  await using dir = await tempDir("mcphub_listen_ab_");
  const config = await writeConfig(
    dir.path,
    `servers:\n  everything:\n    command: node\n    args: [${q(REAL.everything)}, stdio]\n`,
  );
  const opened: AsyncDisposable[] = [];
  try {
    const listeners: Started[] = [];
    for (const [label, root] of [["base", values.base], ["head", values.head]] as const) {
      const helpers = await import(`${root}/tests/http/http_helpers.ts`);
      const listener = await helpers.startListener(config, { db: `${dir.path}/${label}.db` }) as Started;
      opened.push(listener);
      listeners.push(listener);
    }
    const clients = [];
    for (const listener of listeners) {
      const client = await httpClient(listener.url);
      opened.push(client);
      await client.listTools();
      clients.push(client);
    }
    const targets = clients.map((client) => echo(client, "everything__echo"));
    const options = { calls: Number(values.calls), rounds: Number(values.rounds) };
    const sequential = await throughput(targets, 1, options);
    const inFlight = await throughput(targets, 8, options);
    // Many sessions: both listeners at once, each with SESSIONS sessions.
    const latencies = await Promise.all(listeners.map(async (listener) => {
      const sessions = await Promise.all(Array.from({ length: SESSIONS }, () => httpClient(listener.url)));
      opened.push(...sessions);
      const ms: number[] = [];
      await Promise.all(sessions.map(async (client) => {
        const call = echo(client, "everything__echo");
        for (let i = 0; i < CALLS_EACH; i++) {
          const t0 = performance.now();
          await call();
          ms.push(performance.now() - t0);
        }
      }));
      return ms.sort((a, b) => a - b);
    }));
    for (const [k, label] of ["base", "head"].entries()) {
      console.log(
        `${label}: sequential ${sequential[k]!.toFixed(0)} calls/s, 8 in flight ${
          inFlight[k]!.toFixed(0)
        } calls/s, ` +
          `${SESSIONS} sessions x ${CALLS_EACH} calls: p50 ${
            percentile(latencies[k]!, 50).toFixed(1)
          } ms, p99 ${percentile(latencies[k]!, 99).toFixed(1)} ms`,
      );
    }
    console.log(
      `head/base: sequential ${(sequential[1]! / sequential[0]!).toFixed(3)}x, 8 in flight ${
        (inFlight[1]! / inFlight[0]!).toFixed(3)
      }x, p50 ${(percentile(latencies[1]!, 50) / percentile(latencies[0]!, 50)).toFixed(3)}x, p99 ${
        (percentile(latencies[1]!, 99) / percentile(latencies[0]!, 99)).toFixed(3)
      }x`,
    );
  } finally {
    for (const item of opened.reverse()) await Promise.resolve(item[Symbol.asyncDispose]()).catch(() => {});
  }
}

if (import.meta.main) await main(Deno.args);
