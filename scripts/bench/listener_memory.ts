/**
 * The listener's memory per session (issue 41): `mcp serve --listen` with the fixture server; SESSIONS
 * sessions (the official SDK client over Streamable HTTP) each make CALLS calls whose results are BYTES
 * bytes, and stay open. Prints the gateway's RSS after one warm-up session, 1 s after the last call, the
 * growth and the growth per session; then again after `--settle` seconds with the sessions open and idle
 * (V8 gives back its young generation, grown by the traffic, some 10 s after the traffic stops: the first
 * figure counts it, the second does not). The issue's goal: 200 × 40 × 30 KB grows RSS by ≤ 150 MB.
 *
 *   deno run -A scripts/bench/listener_memory.ts [--sessions 200] [--calls 40] [--bytes 30000] [--settle 15]
 *     [--events-total SIZE] [--root DIR]
 *
 * `--events-total` sets `listen_limits.events_total` (the resumable events all sessions keep; default 32MB).
 *
 * `--root` runs another checkout's main.ts (e.g. the start commit, for a baseline).
 *
 * @module
 */
import { parseArgs } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const HERE = new URL("../../", import.meta.url).pathname;

export function rssOf(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

export interface StartedListener {
  child: Deno.ChildProcess;
  url: string;
  pid: number;
  stderr(): string;
  stop(): Promise<void>;
}

/** Starts `mcp serve --listen 127.0.0.1:0` on `config` (under `bash -c 'ulimit -n N'` when given). */
export async function startListener(
  config: string,
  options: { root?: string; env?: Record<string, string>; openFiles?: number } = {},
): Promise<StartedListener> {
  const root = options.root ?? HERE;
  const args = [
    "run",
    "-A",
    `${root}main.ts`,
    "--config",
    config,
    "--db",
    `${config}.db`,
    "mcp",
    "serve",
    "--listen",
    "127.0.0.1:0",
  ];
  const child = new Deno.Command(options.openFiles ? "bash" : Deno.execPath(), {
    args: options.openFiles
      ? ["-c", `ulimit -n ${options.openFiles} && exec "$0" "$@"`, Deno.execPath(), ...args]
      : args,
    env: options.env,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let text = "";
  const seen = Promise.withResolvers<string>();
  (async () => {
    const dec = new TextDecoder();
    for await (const chunk of child.stderr) {
      text += dec.decode(chunk, { stream: true });
      const match = /listening on (http:\/\/\S+\/mcp)/.exec(text);
      if (match) seen.resolve(match[1]);
    }
    seen.reject(new Error(`the listener exited:\n${text}`));
  })();
  const url = await seen.promise;
  return {
    child,
    url,
    pid: child.pid,
    stderr: () => text,
    async stop() {
      try {
        child.kill("SIGTERM");
      } catch {
        // gone
      }
      await child.status;
    },
  };
}

/** An SDK client session over Streamable HTTP. */
export async function session(
  url: string,
  token?: string,
  name = "bench",
  pool?: Deno.HttpClient,
): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: token ? { authorization: `Bearer ${token}` } : {} },
    // Its own connection pool (as a host in its own process has).
    ...(pool
      ? { fetch: (input: string | URL, init?: RequestInit) => fetch(input, { ...init, client: pool }) }
      : {}),
  });
  const client = new Client({ name, version: "1.0.0" });
  await client.connect(transport);
  return client;
}

export async function main(argv: string[] = Deno.args): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      sessions: { type: "string", default: "200" },
      calls: { type: "string", default: "40" },
      bytes: { type: "string", default: "30000" },
      settle: { type: "string", default: "15" },
      "events-total": { type: "string" },
      root: { type: "string" },
      "v8-flags": { type: "string" },
    },
  });
  const sessions = Number(values.sessions);
  const calls = Number(values.calls);
  const bytes = Number(values.bytes);
  const dir = await Deno.makeTempDir({ prefix: "mcphub-listener-memory-" });
  const config = `${dir}/mcphub.yaml`;
  await Deno.writeTextFile(
    config,
    `response_budget: "0"
${
      values["events-total"]
        ? `listen_limits:\n  events_total: ${JSON.stringify(values["events-total"])}\n`
        : ""
    }servers:
  fx:
    command: ${JSON.stringify(Deno.execPath())}
    args: [run, -A, ${JSON.stringify(`${HERE}tests/fixtures/fixture_server.ts`)}]
`,
  );
  const env = values["v8-flags"] ? { ...Deno.env.toObject(), DENO_V8_FLAGS: values["v8-flags"] } : undefined;
  const listener = await startListener(config, { root: values.root, env });
  const clients: Client[] = [];
  try {
    const warm = await session(listener.url, undefined, "warm-up");
    for (let i = 0; i < 5; i++) await warm.callTool({ name: "fx__big", arguments: { bytes } });
    clients.push(warm);
    await new Promise((r) => setTimeout(r, 500));
    const before = rssOf(listener.pid);
    const batch = 20;
    for (let at = 0; at < sessions; at += batch) {
      await Promise.all(
        Array.from({ length: Math.min(batch, sessions - at) }, async () => {
          const client = await session(listener.url);
          clients.push(client);
          for (let c = 0; c < calls; c++) await client.callTool({ name: "fx__big", arguments: { bytes } });
        }),
      );
    }
    await new Promise((r) => setTimeout(r, 1000));
    const after = rssOf(listener.pid);
    const settleSeconds = Number(values.settle);
    await new Promise((r) => setTimeout(r, settleSeconds * 1000));
    const settled = rssOf(listener.pid);
    const mb = (n: number) => (n / 1024 / 1024).toFixed(1);
    const perSession = (n: number) => (n / sessions / 1024).toFixed(0);
    console.log(`root: ${values.root ?? HERE}`);
    console.log(
      `${sessions} sessions × ${calls} calls × ${bytes} B results (sessions left open)` +
        (values["events-total"] ? `; events_total: ${values["events-total"]}` : ""),
    );
    console.log(`RSS after warm-up: ${mb(before)} MB; after: ${mb(after)} MB`);
    console.log(
      `growth: ${mb(after - before)} MB (goal ≤ 150 MB); per session: ${perSession(after - before)} KB`,
    );
    console.log(
      `after ${settleSeconds} s idle: RSS ${mb(settled)} MB, growth ${
        mb(settled - before)
      } MB; per session: ${perSession(settled - before)} KB`,
    );
  } finally {
    await Promise.allSettled(clients.map((c) => c.close()));
    await listener.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) await main();
