/**
 * mcphub against a peer gateway, with the same client in the same run: `echo` calls to server-everything
 * directly (SDK client over stdio, the baseline), through `mcphub mcp serve` (stdio), through
 * `mcphub mcp serve --listen` (Streamable HTTP), and through supergateway (npm `supergateway`, pinned in
 * `scripts/bench/peers/package.json`: the stdio server bridged to stateful Streamable HTTP), one at a
 * time and 8 in flight, interleaved in rounds with a rotating order. Prints calls/s and the ratios
 * peer/direct and mcphub/peer.
 *
 * Then memory: one 10 MB and one 100 MB result (the fixture server's `big`) through each target, each
 * in a fresh process, passed through whole (mcphub with `verbatim: true`, as the peer does), read over
 * raw pipes or a raw HTTP request (the SDK client caps a stdio message at 10 MB); the peak RSS (VmHWM)
 * of the process in between (for direct: the server's own, as a reference) as a multiple of the payload.
 *
 * supergateway listens on every interface, so the measuring half runs inside a private network
 * namespace with only loopback up (`unshare -n`); where none can be made the benchmark says so and skips.
 *
 * Usage: deno run -A scripts/bench/peer_bench.ts [--memory] [--mcphub] [--budget=SIZE]
 *
 * - `--memory`: only the memory part (no calls/s).
 * - `--mcphub`: in the memory part, only mcphub stdio and `--listen` (no direct, no peer).
 * - `--budget=SIZE` (e.g. `32KB`): mcphub with `response_budget: SIZE` instead of `verbatim: true`, so the
 *   result is spooled and answered with a receipt (implies `--mcphub`: the peer has no budget).
 *
 * @module
 */
import {
  connectDirect,
  connectGateway,
  DENO,
  descendants,
  FIXTURE,
  freePort,
  q,
  REAL,
  ROOT,
  tempDir,
  writeConfig,
} from "../../tests/helpers.ts";
import { httpClient, startListener } from "../../tests/http/http_helpers.ts";
import { namespaceUnavailable, run } from "../../tests/conformance_suite.ts";
import { gatewayPid, MB, reap, sampleProcess, type ServerState, waitConnected } from "./_gateway_process.ts";
import { echo, throughput } from "./gateway_bench.ts";
import { RawGateway } from "./spool_e2e_bench.ts";

const PEERS = `${ROOT}scripts/bench/peers`;
const SUPERGATEWAY = `${PEERS}/node_modules/supergateway/dist/index.js`;
const CALLS = 1_000;
const ROUNDS = 5;
const IN_FLIGHT = 8;
const NAMES = ["direct", "mcphub stdio", "mcphub HTTP", "supergateway HTTP"];
/** Result sizes of the memory part. */
const RESULT_SIZES = [10 * MB, 100 * MB];
/**
 * How long one big result may take through a target; past it the peak so far is reported as a lower
 * bound. supergateway 4.0.0 re-splits its whole stdout buffer on every chunk (quadratic in the message).
 */
const BIG_TIMEOUT_MS = 60_000;

/**
 * Peak RSS of the process in between, in bytes, per target (in {@link NAMES} order); `done[i]` false when
 * the result did not come within {@link BIG_TIMEOUT_MS} (the peak is then the peak until the time limit).
 */
type PeakRow = { bytes: number; hwm: number[]; done: boolean[] };

/** What the command line asked for (see the module's usage). */
interface BenchOptions {
  memoryOnly: boolean;
  /** Calls/s only, no memory part (for goals_bench.ts). */
  ratesOnly?: boolean;
  mcphubOnly: boolean;
  /** `response_budget` for mcphub; undefined = `verbatim: true`. */
  budget?: string;
}

function benchOptions(args: readonly string[]): BenchOptions {
  const budget = args.find((a) => a.startsWith("--budget="))?.slice("--budget=".length);
  return {
    memoryOnly: args.includes("--memory"),
    mcphubOnly: args.includes("--mcphub") || budget !== undefined,
    budget,
  };
}

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

/** Starts supergateway on `port` in front of `server` (a shell command line); resolves once it listens. */
async function startSupergateway(
  port: number,
  server = `node ${REAL.everything} stdio`,
): Promise<Deno.ChildProcess> {
  const child = new Deno.Command("node", {
    args: [
      SUPERGATEWAY,
      "--stdio",
      server,
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

/**
 * Over raw HTTP (Streamable HTTP, one session): initialize, then `big {bytes}`; returns the answer's bytes
 * (at least `least`: the whole result unless spooled).
 */
async function bigOverHttp(url: string, name: string, bytes: number, least = bytes): Promise<number> {
  let session: string | undefined;
  const post = async (message: Record<string, unknown>): Promise<number> => {
    const response = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-06-18",
        ...session ? { "mcp-session-id": session } : {},
      },
      body: JSON.stringify({ jsonrpc: "2.0", ...message }),
      signal: AbortSignal.timeout(BIG_TIMEOUT_MS),
    });
    if (!response.ok && response.status !== 202) {
      throw new Error(`${url}: ${message.method} answered ${response.status}: ${await response.text()}`);
    }
    session ??= response.headers.get("mcp-session-id") ?? undefined;
    let read = 0;
    let head = "";
    for await (const chunk of response.body ?? []) {
      if (head.length < 300) head += new TextDecoder().decode(chunk.subarray(0, 300));
      read += chunk.length;
    }
    if (head.includes('"error"')) throw new Error(`${url}: ${message.method} failed: ${head}`);
    return read;
  };
  await post({
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "mcphub-peer-bench", version: "1.0.0" },
    },
  });
  await post({ method: "notifications/initialized" });
  const read = await post({ id: 2, method: "tools/call", params: { name, arguments: { bytes } } });
  if (read < least) throw new Error(`${url}: the ${bytes} B result came as ${read} B`);
  return read;
}

/** Polls a raw-HTTP gateway's `list_servers` until every server is connected. */
async function waitConnectedHttp(url: string): Promise<void> {
  const client = await httpClient(url);
  try {
    await waitConnected(async () => {
      const result = await client.callTool({ name: "list_servers", arguments: {} });
      return (result.structuredContent as { servers: ServerState[] }).servers;
    });
  } finally {
    await client[Symbol.asyncDispose]();
  }
}

/**
 * Peak RSS (VmHWM) of the process in between for one `big {bytes}` result, per target in
 * {@link NAMES} order, each in fresh processes: direct (the fixture server itself, over raw pipes),
 * mcphub stdio, mcphub `--listen`, supergateway.
 */
async function peakRow(dir: string, bytes: number, options: BenchOptions): Promise<Omit<PeakRow, "bytes">> {
  const mode = options.budget === undefined ? "verbatim: true" : `response_budget: ${q(options.budget)}`;
  const config = await writeConfig(
    dir,
    `${mode}\nservers:\n  fx:\n    command: ${q(DENO)}\n    args: [run, -A, ${q(FIXTURE)}]\n`,
    "peak.yaml",
  );
  /** The least an answer must hold: the whole result, or (spooled) something. */
  const least = options.budget === undefined ? bytes : 1;
  const hwm: number[] = [];
  const done: boolean[] = [];
  /** Runs `call`; false when it timed out (a TimeoutError, or our own "No answer" rejection). */
  const within = async (call: () => Promise<unknown>): Promise<boolean> => {
    try {
      await call();
      return true;
    } catch (error) {
      const e = error as Error;
      if (e.name === "TimeoutError" || /No answer to .* within/.test(e.message)) return false;
      throw error;
    }
  };
  if (options.mcphubOnly) {
    hwm.push(NaN);
    done.push(true);
  } else {
    // direct: the server's own peak, as the reference of what producing the result costs.
    const server = new Deno.Command(DENO, {
      args: ["run", "-A", FIXTURE],
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    try {
      const writer = server.stdin.getWriter();
      const lines = server.stdout.pipeThrough(new TextDecoderStream()).getReader();
      const send = (message: Record<string, unknown>) =>
        writer.write(new TextEncoder().encode(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`));
      await send({
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "b", version: "1" } },
      });
      await send({ method: "notifications/initialized" });
      await send({ id: 2, method: "tools/call", params: { name: "big", arguments: { bytes } } });
      let read = 0;
      let tail = "";
      while (!/"id":2\}?\s*$/.test(tail) || read < bytes) {
        const { value, done } = await lines.read();
        if (done) throw new Error("The fixture server closed stdout before its answer");
        read += value.length;
        tail = (tail + value).slice(-64);
      }
      hwm.push(sampleProcess(server.pid).hwmBytes);
      done.push(true);
      await writer.close();
      await lines.cancel();
    } finally {
      await reap([server.pid]);
      await server.status.catch(() => {});
    }
  }
  {
    await using gw = await RawGateway.start(config, `${dir}/peak-stdio.db`);
    await waitConnected(async () =>
      ((await gw.callTool("list_servers", {})).structuredContent as { servers: ServerState[] }).servers
    );
    done.push(
      await within(async () => {
        const line = await gw.requestLine(
          "tools/call",
          { name: "fx__big", arguments: { bytes } },
          BIG_TIMEOUT_MS,
        );
        if (line.length < least) {
          throw new Error(`mcphub stdio: the ${bytes} B result came as ${line.length}`);
        }
      }),
    );
    hwm.push(sampleProcess(gatewayPid(gw.pid)).hwmBytes);
  }
  {
    await using listener = await startListener(config, { db: `${dir}/peak-http.db` });
    await waitConnectedHttp(listener.url);
    done.push(await within(() => bigOverHttp(listener.url, "fx__big", bytes, least)));
    hwm.push(sampleProcess(gatewayPid(listener.child.pid)).hwmBytes);
  }
  if (options.mcphubOnly) {
    hwm.push(NaN);
    done.push(true);
  } else {
    const port = freePort();
    const peer = await startSupergateway(port, `${q(DENO)} run -A ${q(FIXTURE)}`);
    try {
      done.push(await within(() => bigOverHttp(`http://127.0.0.1:${port}/mcp`, "big", bytes)));
      hwm.push(sampleProcess(peer.pid).hwmBytes);
    } finally {
      const pids = [peer.pid, ...descendants(peer.pid)];
      peer.kill("SIGTERM");
      await peer.status;
      await reap(pids);
    }
  }
  return { hwm, done };
}

/** The measuring half, inside the namespace: prints one JSON line of calls/s per target and mode. */
async function driver(options: BenchOptions): Promise<void> {
  await using dir = await tempDir("mcphub-peer-bench-");
  const config = await writeConfig(
    dir.path,
    `servers:\n  everything:\n    command: node\n    args: [${q(REAL.everything)}, stdio]\n`,
  );
  const before = new Set(descendants(Deno.pid));
  const opened: AsyncDisposable[] = [];
  let peer: Deno.ChildProcess | undefined;
  try {
    let sequential: number[] = [];
    let inFlight: number[] = [];
    if (!options.memoryOnly) {
      const direct = await connectDirect("node", [REAL.everything, "stdio"]);
      opened.push({ [Symbol.asyncDispose]: () => direct.close() });
      const stdio = await connectGateway(config, { db: `${dir.path}/stdio.db` });
      opened.push(stdio);
      const listener = await startListener(config);
      opened.push(listener);
      const http = await httpClient(listener.url);
      opened.push(http);
      const port = freePort();
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
      sequential = await throughput(targets, 1, { calls: CALLS, rounds: ROUNDS });
      inFlight = await throughput(targets, IN_FLIGHT, { calls: CALLS, rounds: ROUNDS });
      for (const item of opened.splice(0).reverse()) {
        await Promise.resolve(item[Symbol.asyncDispose]()).catch(() => {});
      }
      peer.kill("SIGTERM");
      await peer.status;
      peer = undefined;
    }
    const peaks: PeakRow[] = [];
    if (!options.ratesOnly) {
      for (const bytes of RESULT_SIZES) peaks.push({ bytes, ...await peakRow(dir.path, bytes, options) });
    }
    console.log(JSON.stringify({ sequential, inFlight, peaks }));
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

/** Calls/s of each target, in {@link NAMES} order. */
export interface PeerRates {
  sequential: number[];
  inFlight: number[];
}

/** One interleaved run of the calls/s part alone (no memory part); a string says why it cannot run. */
export async function peerRates(): Promise<PeerRates | string> {
  const skip = await namespaceUnavailable();
  if (skip) return `the peer benchmark needs a private network namespace: ${skip}`;
  await installPeers();
  const { sequential, inFlight } = await runDriver({ memoryOnly: false, mcphubOnly: false, ratesOnly: true });
  return { sequential, inFlight };
}

/** Runs the measuring half in a private network namespace; returns what it printed. */
async function runDriver(options: BenchOptions): Promise<PeerRates & { peaks: PeakRow[] }> {
  const out = await run("unshare", [
    "-n",
    "sh",
    "-c",
    'ip link set lo up && exec "$0" run -A "$1" --driver "$2"',
    Deno.execPath(),
    new URL(import.meta.url).pathname,
    JSON.stringify(options),
  ]);
  const line = out.text.split("\n").find((l) => l.startsWith("{"));
  if (out.code !== 0 || !line) throw new Error(`peer benchmark driver failed:\n${out.text.slice(-2000)}`);
  return JSON.parse(line) as PeerRates & { peaks: PeakRow[] };
}

/** Runs the benchmark and prints its figures. */
export async function main(args: readonly string[] = []): Promise<void> {
  const options = benchOptions(args);
  const skip = await namespaceUnavailable();
  if (skip) {
    console.log(`SKIP: the peer benchmark needs a private network namespace: ${skip}`);
    return;
  }
  await installPeers();
  const { sequential, inFlight, peaks } = await runDriver(options);
  const rates = options.memoryOnly
    ? []
    : [["sequential", sequential], [`${IN_FLIGHT} in flight`, inFlight]] as const;
  if (!options.memoryOnly) {
    console.log(`echo calls/s, ${CALLS} calls each, ${ROUNDS} interleaved rounds (inside unshare -n)`);
  }
  for (const [label, f] of rates) {
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
  console.log(
    options.budget === undefined
      ? "peak RSS of the process in between, one result passed through whole (direct: the server's own)"
      : `peak RSS of mcphub, one result spooled (response_budget: ${options.budget}) and answered with a receipt`,
  );
  for (const { bytes, hwm } of peaks) {
    console.log(
      `${`${bytes / MB} MB`.padEnd(12)} ${
        NAMES.map((n, i) => [n, hwm[i]!] as const).filter(([, h]) => Number.isFinite(h)).map(([n, h]) =>
          `${n} ${(h / MB).toFixed(0)} MB (${(h / bytes).toFixed(2)}x)`
        ).join(", ")
      }`,
    );
  }
}

if (import.meta.main) {
  const at = Deno.args.indexOf("--driver");
  if (at >= 0) await driver(JSON.parse(Deno.args[at + 1]!) as BenchOptions);
  else await main(Deno.args);
}
