/**
 * mcphub against a peer gateway, with the same client in the same run: `echo` calls to server-everything
 * directly (SDK client over stdio, the baseline), through `mcphub mcp serve` (stdio), through
 * `mcphub mcp serve --listen` (Streamable HTTP), and through supergateway (npm `supergateway`, pinned in
 * `scripts/bench/peers/package.json`: the stdio server bridged to stateful Streamable HTTP), one at a
 * time and 8 in flight, interleaved in rounds with a rotating order. Prints calls/s and the ratios
 * peer/direct and mcphub/peer.
 *
 * supergateway listens on every interface, so the measuring half runs inside a private network
 * namespace with only loopback up (`unshare -n`); where none can be made the benchmark says so and skips.
 *
 * Usage: deno run -A scripts/bench/peer_bench.ts
 *
 * @module
 */
import {
  connectDirect,
  connectGateway,
  descendants,
  q,
  REAL,
  ROOT,
  tempDir,
  writeConfig,
} from "../../tests/helpers.ts";
import { httpClient, startListener } from "../../tests/http/http_helpers.ts";
import { namespaceUnavailable, run } from "../../tests/conformance_suite.ts";
import { reap } from "./_gateway_process.ts";
import { echo, throughput } from "./gateway_bench.ts";

const PEERS = `${ROOT}scripts/bench/peers`;
const SUPERGATEWAY = `${PEERS}/node_modules/supergateway/dist/index.js`;
const CALLS = 1_000;
const ROUNDS = 5;
const IN_FLIGHT = 8;
const NAMES = ["direct", "mcphub stdio", "mcphub HTTP", "supergateway HTTP"];

/** Installs the pinned peers once (npm ci into scripts/bench/peers). */
async function installPeers(): Promise<void> {
  try {
    await Deno.stat(SUPERGATEWAY);
    return;
  } catch {
    // not installed yet
  }
  const out = await run("npm", ["ci", "--no-audit", "--no-fund"], { cwd: PEERS });
  if (out.code !== 0) throw new Error(`npm ci in ${PEERS} failed: ${out.text.slice(-500)}`);
}

/** Starts supergateway on `port` in front of server-everything; resolves once it listens. */
async function startSupergateway(port: number): Promise<Deno.ChildProcess> {
  const child = new Deno.Command("node", {
    args: [
      SUPERGATEWAY,
      "--stdio",
      `node ${REAL.everything} stdio`,
      "--outputTransport",
      "streamableHttp",
      "--stateful",
      "--port",
      String(port),
      "--logLevel",
      "none",
    ],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  for (let i = 0; i < 200; i++) {
    try {
      (await Deno.connect({ hostname: "127.0.0.1", port })).close();
      return child;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  child.kill("SIGKILL");
  await child.status;
  throw new Error("supergateway did not listen within 10 s");
}

/** The measuring half, inside the namespace: prints one JSON line of calls/s per target and mode. */
async function driver(): Promise<void> {
  await using dir = await tempDir("mcphub-peer-bench-");
  const config = await writeConfig(
    dir.path,
    `servers:\n  everything:\n    command: node\n    args: [${q(REAL.everything)}, stdio]\n`,
  );
  const before = new Set(descendants(Deno.pid));
  const opened: AsyncDisposable[] = [];
  let peer: Deno.ChildProcess | undefined;
  try {
    const direct = await connectDirect("node", [REAL.everything, "stdio"]);
    opened.push({ [Symbol.asyncDispose]: () => direct.close() });
    const stdio = await connectGateway(config, { db: `${dir.path}/stdio.db` });
    opened.push(stdio);
    const listener = await startListener(config);
    opened.push(listener);
    const http = await httpClient(listener.url);
    opened.push(http);
    const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (probe.addr as Deno.NetAddr).port;
    probe.close();
    peer = await startSupergateway(port);
    const viaPeer = await httpClient(`http://127.0.0.1:${port}/mcp`);
    opened.push(viaPeer);
    await stdio.client.listTools();
    await http.listTools();
    const targets = [
      echo(direct, "echo"),
      echo(stdio.client, "everything__echo"),
      echo(http, "everything__echo"),
      echo(viaPeer, "echo"),
    ];
    const sequential = await throughput(targets, 1, { calls: CALLS, rounds: ROUNDS });
    const inFlight = await throughput(targets, IN_FLIGHT, { calls: CALLS, rounds: ROUNDS });
    console.log(JSON.stringify({ sequential, inFlight }));
  } finally {
    for (const item of opened.reverse()) await Promise.resolve(item[Symbol.asyncDispose]()).catch(() => {});
    if (peer) {
      try {
        peer.kill("SIGTERM");
      } catch {
        // already gone
      }
      await peer.status;
    }
    await reap(descendants(Deno.pid).filter((pid) => !before.has(pid)));
  }
}

/** Runs the benchmark and prints its figures. */
export async function main(): Promise<void> {
  const skip = await namespaceUnavailable();
  if (skip) {
    console.log(`SKIP: the peer benchmark needs a private network namespace: ${skip}`);
    return;
  }
  await installPeers();
  const out = await run("unshare", [
    "-n",
    "sh",
    "-c",
    'ip link set lo up && exec "$0" run -A "$1" --driver',
    Deno.execPath(),
    new URL(import.meta.url).pathname,
  ]);
  const line = out.text.split("\n").find((l) => l.startsWith("{"));
  if (out.code !== 0 || !line) throw new Error(`peer benchmark driver failed:\n${out.text.slice(-2000)}`);
  const { sequential, inFlight } = JSON.parse(line) as { sequential: number[]; inFlight: number[] };
  console.log(`echo calls/s, ${CALLS} calls each, ${ROUNDS} interleaved rounds (inside unshare -n)`);
  for (const [label, f] of [["sequential", sequential], [`${IN_FLIGHT} in flight`, inFlight]] as const) {
    const [direct, stdio, http, peer] = f;
    console.log(
      `${label.padEnd(12)} ${NAMES.map((n, i) => `${n} ${f[i]!.toFixed(0)}`).join(", ")}\n` +
        `${"".padEnd(12)} supergateway/direct ${(peer! / direct!).toFixed(2)}x, mcphub stdio/supergateway ${
          (stdio! / peer!).toFixed(2)
        }x, mcphub HTTP/supergateway ${(http! / peer!).toFixed(2)}x, mcphub stdio/direct ${
          (stdio! / direct!).toFixed(2)
        }x`,
    );
  }
}

if (import.meta.main) {
  if (Deno.args.includes("--driver")) await driver();
  else await main();
}
