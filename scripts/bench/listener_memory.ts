/**
 * The listener's memory per session (issue 41): `mcp serve --listen` with the fixture server; SESSIONS
 * sessions (the official SDK client over Streamable HTTP) each make CALLS calls whose results are BYTES
 * bytes, and stay open. Prints the gateway's RSS after one warm-up session, 1 s after the last call, the
 * growth and the growth per session; then again after `--settle` seconds with the sessions open and idle
 * (V8 gives back its young generation, grown by the traffic, some 10 s after the traffic stops: the first
 * figure counts it, the second does not). The issue's goal: 200 × 40 × 30 KB grows RSS by ≤ 150 MB.
 *
 *   deno run -A scripts/bench/listener_memory.ts [--sessions 200] [--calls 40] [--bytes 30000] [--settle 15]
 *     [--events-total SIZE] [--root DIR] [--probe [--sample]] [--v8-flags FLAGS]
 *
 * `--events-total` sets `listen_limits.events_total` (the resumable events all sessions keep; default 32MB).
 *
 * `--root` runs another checkout's main.ts (e.g. the start commit, for a baseline).
 *
 * `--probe` starts the gateway with `--inspect` and prints, at each point and after a forced full GC, its own
 * `Deno.memoryUsage()` and V8's space sizes (what RSS is made of: young/old generation, external buffers, the
 * rest is the allocator's); `--sample` adds the traffic's top allocation sites (V8's sampling heap profiler,
 * collected objects included). The inspector costs a little memory: compare probed runs with probed runs.
 * `--v8-flags` sets `DENO_V8_FLAGS` for the gateway (and the fixture server it spawns): experiments only.
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
  options: { root?: string; env?: Record<string, string>; openFiles?: number; inspect?: number } = {},
): Promise<StartedListener> {
  const root = options.root ?? HERE;
  const args = [
    "run",
    "-A",
    ...(options.inspect ? [`--inspect=127.0.0.1:${options.inspect}`] : []),
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

/** The gateway's own view of its memory, read over the V8 inspector (`--inspect`; the bench's `--probe`). */
export class MemoryProbe {
  #ws: WebSocket;
  #next = 0;
  #pending = new Map<number, (value: Record<string, unknown>) => void>();
  private constructor(ws: WebSocket) {
    this.#ws = ws;
    ws.onmessage = (event) => {
      const message = JSON.parse(event.data as string);
      const done = this.#pending.get(message.id);
      if (done) this.#pending.delete(message.id), done(message.result ?? { error: message.error });
    };
  }

  static async open(port: number): Promise<MemoryProbe> {
    const list = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
    const ws = new WebSocket(list[0].webSocketDebuggerUrl);
    await new Promise((resolve, reject) => ((ws.onopen = resolve), (ws.onerror = reject)));
    return new MemoryProbe(ws);
  }

  call(method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const id = ++this.#next;
    const { promise, resolve } = Promise.withResolvers<Record<string, unknown>>();
    this.#pending.set(id, resolve);
    this.#ws.send(JSON.stringify({ id, method, params }));
    return promise;
  }

  /** `Deno.memoryUsage()` and V8's young/old/large-object space sizes, in bytes. */
  async read(): Promise<Record<string, number>> {
    const expression = `import("node:v8").then((v8) => {
      const out = { ...Deno.memoryUsage() };
      for (const s of v8.getHeapSpaceStatistics()) {
        if (s.space_size) out[s.space_name] = s.space_size, out[s.space_name + "_used"] = s.space_used_size;
      }
      return JSON.stringify(out);
    })`;
    const answer = await this.call("Runtime.evaluate", {
      expression,
      awaitPromise: true,
      returnByValue: true,
    });
    return JSON.parse((answer.result as { value: string }).value);
  }

  /** V8's sampling heap profiler: started, then stopped with the top `n` allocation sites (self bytes). */
  async startSampling(): Promise<void> {
    await this.call("HeapProfiler.startSampling", {
      samplingInterval: 16384,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
  }

  async stopSampling(n = 12): Promise<string[]> {
    interface Node {
      callFrame: { functionName: string; url: string; lineNumber: number };
      selfSize: number;
      children: Node[];
    }
    const { profile } = await this.call("HeapProfiler.stopSampling") as { profile: { head: Node } };
    const sites = new Map<string, number>();
    const walk = (node: Node, path: string[]) => {
      const f = node.callFrame;
      const here = `${f.functionName || "(anon)"} ${f.url.replace(/^.*\/(src|npm|ext)\//, "$1/")}:${
        f.lineNumber + 1
      }`;
      const next = [...path, here].slice(-3);
      if (node.selfSize) sites.set(next.join(" < "), (sites.get(next.join(" < ")) ?? 0) + node.selfSize);
      for (const child of node.children) walk(child, next);
    };
    walk(profile.head, []);
    const total = [...sites.values()].reduce((a, b) => a + b, 0);
    return [
      `sampled allocations: ${(total / 1024 / 1024).toFixed(0)} MB`,
      ...[...sites].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, v]) =>
        `${(v / 1024 / 1024).toFixed(1).padStart(7)} MB  ${k.split(" < ").reverse().join(" < ")}`
      ),
    ];
  }

  /** A full garbage collection in the gateway. */
  async gc(): Promise<void> {
    await this.call("HeapProfiler.collectGarbage");
  }

  close(): void {
    this.#ws.close();
  }
}

/** One line of a probe reading: RSS, V8's heap (used/committed), external memory and the spaces, in MB. */
export function describeMemory(m: Record<string, number>): string {
  const mb = (n = 0) => (n / 1024 / 1024).toFixed(1);
  return `rss ${mb(m.rss)}, heap used ${mb(m.heapUsed)} of ${mb(m.heapTotal)}, external ${mb(m.external)}; ` +
    `new ${mb(m.new_space_used)} of ${mb(m.new_space)}, old ${mb(m.old_space_used)} of ${mb(m.old_space)}, ` +
    `large ${mb(m.large_object_space_used)} of ${mb(m.large_object_space)} MB`;
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
      probe: { type: "boolean", default: false },
      sample: { type: "boolean", default: false },
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
  const inspect = values.probe ? 20_000 + Math.floor(Math.random() * 20_000) : undefined;
  const listener = await startListener(config, { root: values.root, env, inspect });
  const probe = inspect ? await MemoryProbe.open(inspect) : undefined;
  const probes: string[] = [];
  const read = async (when: string) => {
    if (probe) probes.push(`${when}: ${describeMemory(await probe.read())}`);
  };
  const clients: Client[] = [];
  try {
    const warm = await session(listener.url, undefined, "warm-up");
    for (let i = 0; i < 5; i++) await warm.callTool({ name: "fx__big", arguments: { bytes } });
    clients.push(warm);
    await new Promise((r) => setTimeout(r, 500));
    const before = rssOf(listener.pid);
    await read("after warm-up");
    if (probe && values.sample) await probe.startSampling();
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
    await read("1 s after");
    if (probe && values.sample) probes.push(...await probe.stopSampling());
    const settleSeconds = Number(values.settle);
    await new Promise((r) => setTimeout(r, settleSeconds * 1000));
    const settled = rssOf(listener.pid);
    await read(`after ${settleSeconds} s idle`);
    if (probe) {
      await probe.gc();
      await read("then a full GC");
    }
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
    for (const line of probes) console.log(line);
  } finally {
    probe?.close();
    await Promise.allSettled(clients.map((c) => c.close()));
    await listener.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) await main();
