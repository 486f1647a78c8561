/**
 * A soak of `mcp serve --listen` (issue 41), under `ulimit -n 512`: SESSIONS idle sessions across four
 * agents, then a well-behaved agent's calls timed alone, during a flood of bare connections, and during
 * another agent's quota exhaustion; a token rotated by a config edit mid-run. Prints the gateway's RSS
 * per idle session, the refused counts, and p50/p99 of the well-behaved agent's calls in each phase (and
 * each phase's p99 over the quiet one: the machine is shared, so ratios from one run are what compare).
 *
 *   deno run -A scripts/bench/listener_soak.ts [--sessions 100] [--calls 300] [--flood 2000]
 *
 * @module
 */
import { parseArgs } from "node:util";
import type { Client } from "@modelcontextprotocol/sdk/client";
import { rssOf, session, startListener } from "./listener_memory.ts";

const HERE = new URL("../../", import.meta.url).pathname;
const TOKENS: Record<string, string> = {
  TOK_GOOD: "good-token-0123456789abcdef",
  TOK_GREEDY: "greedy-token-0123456789abcdef",
  TOK_IDLE: "idle-token-0123456789abcdef",
  TOK_ROT_OLD: "rotating-old-0123456789abcdef",
  TOK_ROT_NEW: "rotating-new-0123456789abcdef",
};

function yaml(rotating: string): string {
  return `listen_limits:
  max_pending: 64
  header_timeout: 10s
servers:
  fx:
    command: ${JSON.stringify(Deno.execPath())}
    args: [run, -A, ${JSON.stringify(`${HERE}tests/fixtures/fixture_server.ts`)}]
agents:
  good:
    token: \${TOK_GOOD}
  greedy:
    token: \${TOK_GREEDY}
    quota: { concurrent_calls: 4, requests: 500, window: 1m }
  idle:
    token: \${TOK_IDLE}
  rotating:
    token: \${${rotating}}
`;
}

function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
}

async function timedCalls(
  client: Client,
  n: number,
): Promise<{ ms: number[]; failed: number; first?: string }> {
  const ms: number[] = [];
  let failed = 0;
  let first: string | undefined;
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    try {
      await client.callTool({ name: "fx__echo", arguments: { text: `c${i}` } });
      ms.push(performance.now() - t0);
    } catch (error) {
      failed++;
      first ??= (error as Error).message.slice(0, 300);
    }
  }
  return { ms, failed, first };
}

function line(name: string, run: { ms: number[]; failed: number; first?: string }, base?: number): string {
  const p99 = percentile(run.ms, 0.99);
  return `${name.padEnd(34)} p50 ${percentile(run.ms, 0.5).toFixed(2)} ms  p99 ${p99.toFixed(2)} ms${
    base ? `  (p99 ×${(p99 / base).toFixed(2)} of quiet)` : ""
  }  failed ${run.failed}${run.first ? ` (first: ${run.first})` : ""}`;
}

let unhandled = 0;
let firstUnhandled = "";
let phase = "start";
const fds: string[] = [];
function countFds(pid: number, at: string): void {
  try {
    fds.push(`${at} ${[...Deno.readDirSync(`/proc/${pid}/fd`)].length}`);
  } catch {
    fds.push(`${at} ?`);
  }
}

export async function main(argv: string[] = Deno.args): Promise<void> {
  // A client's background stream that fails (its session ended, a connection shed) must not end the run.
  globalThis.addEventListener("unhandledrejection", (event) => {
    event.preventDefault();
    if (unhandled++ === 0) firstUnhandled = `${phase}: ${String(event.reason).slice(0, 300)}`;
  });
  const { values } = parseArgs({
    args: argv,
    options: {
      sessions: { type: "string", default: "100" },
      calls: { type: "string", default: "300" },
      flood: { type: "string", default: "2000" },
    },
  });
  const sessions = Number(values.sessions);
  const calls = Number(values.calls);
  const dir = await Deno.makeTempDir({ prefix: "mcphub-listener-soak-" });
  const config = `${dir}/mcphub.yaml`;
  await Deno.writeTextFile(config, yaml("TOK_ROT_OLD"));
  const listener = await startListener(config, {
    env: { ...Deno.env.toObject(), ...TOKENS },
    openFiles: 512,
  });
  const clients: Client[] = [];
  const conns: Deno.Conn[] = [];
  try {
    // Each agent's hosts have their own connection pool, as hosts in their own processes do.
    const pools = new Map<string, Deno.HttpClient>();
    const poolOf = (token: string) => {
      let pool = pools.get(token);
      if (!pool) pools.set(token, pool = Deno.createHttpClient({}));
      return pool;
    };
    const good = await session(listener.url, TOKENS.TOK_GOOD, "good", poolOf("good"));
    clients.push(good);
    await timedCalls(good, 50); // warm-up
    await new Promise((r) => setTimeout(r, 500));
    const rss0 = rssOf(listener.pid);
    // Idle sessions across agents.
    const agents = ["TOK_IDLE", "TOK_ROT_OLD", "TOK_GREEDY", "TOK_GOOD"];
    for (let i = 0; i < sessions; i++) {
      const agent = agents[i % agents.length];
      const client = await session(listener.url, TOKENS[agent], `idle-${i}`, poolOf(agent));
      await client.listTools();
      clients.push(client);
    }
    await new Promise((r) => setTimeout(r, 1000));
    const rss1 = rssOf(listener.pid);

    phase = "quiet";
    countFds(listener.pid, phase);
    const quiet = await timedCalls(good, calls);
    const base = percentile(quiet.ms, 0.99);

    // A flood of bare connections that never send a request, held open while the good agent calls.
    let flooding = true;
    let refusedConnects = 0;
    const flooder = (async () => {
      while (flooding && Number(values.flood) > 0) {
        try {
          conns.push(await Deno.connect({ hostname: "127.0.0.1", port: Number(new URL(listener.url).port) }));
        } catch {
          refusedConnects++;
          await new Promise((r) => setTimeout(r, 5));
        }
        if (conns.length >= Number(values.flood)) await new Promise((r) => setTimeout(r, 20));
      }
    })();
    await new Promise((r) => setTimeout(r, 300));
    phase = "flood";
    countFds(listener.pid, phase);
    const duringFlood = await timedCalls(good, calls);
    flooding = false;
    await flooder;
    const opened = conns.length;
    for (const conn of conns.splice(0)) {
      try {
        conn.close();
      } catch {
        // shed by the server
      }
    }

    // Another agent exhausts its quota (concurrent calls and requests per window) while the good one calls.
    const greedy = await session(listener.url, TOKENS.TOK_GREEDY, "greedy", poolOf("TOK_GREEDY"));
    clients.push(greedy);
    let greedyRefused = 0;
    let greedyServed = 0;
    let hammering = true;
    const hammer = Array.from({ length: 8 }, async () => {
      while (hammering) {
        try {
          await greedy.callTool({ name: "fx__echo", arguments: { text: "g" } });
          greedyServed++;
        } catch {
          greedyRefused++;
        }
      }
    });
    await new Promise((r) => setTimeout(r, 200));
    phase = "quota";
    countFds(listener.pid, phase);
    const duringQuota = await timedCalls(good, calls);
    hammering = false;
    await Promise.all(hammer);

    // Token rotation mid-run: the old token's session is refused, the new one served.
    phase = "rotation";
    countFds(listener.pid, phase);
    const rotOld = clients[2];
    await Deno.writeTextFile(config, yaml("TOK_ROT_NEW"));
    const reloadSeen = Date.now();
    while (!/config reloaded \(file changed\)/.test(listener.stderr()) && Date.now() - reloadSeen < 10_000) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const oldRefused = await rotOld.listTools().then(() => false, () => true);
    // A new connection may meet one the gateway sheds at its limit: a client retries.
    let newServed = false;
    let tries = 0;
    while (!newServed && tries++ < 5) {
      try {
        const rotNew = await session(listener.url, TOKENS.TOK_ROT_NEW, "rotated", poolOf("TOK_ROT_NEW"));
        clients.push(rotNew);
        newServed = (await rotNew.listTools()).tools.length > 0;
      } catch {
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    phase = "after rotation";
    countFds(listener.pid, phase);
    const afterRotation = await timedCalls(good, 50);

    const stderr = listener.stderr();
    const mb = (n: number) => (n / 1024 / 1024).toFixed(1);
    console.log(
      `listener soak: ulimit -n 512, ${sessions} idle sessions across 4 agents, ${calls} timed calls a phase`,
    );
    console.log(
      `RSS: ${mb(rss0)} MB with one session; ${mb(rss1)} MB with ${sessions} more idle; ` +
        `${((rss1 - rss0) / sessions / 1024).toFixed(0)} KB per idle session`,
    );
    console.log(line("good agent, quiet", quiet));
    console.log(line(`good agent, during a flood`, duringFlood, base));
    console.log(line("good agent, during greedy's quota", duringQuota, base));
    console.log(line("good agent, after token rotation", afterRotation, base));
    console.log(
      `flood: ${opened} bare connections opened (${refusedConnects} connects failed); listener log: ` +
        `${(stderr.match(/^.*(shed|accept).*$/gm) ?? []).length} lines about it`,
    );
    console.log(`greedy: ${greedyServed} calls served, ${greedyRefused} refused by its quota`);
    console.log(
      `rotation: old token refused on its open session: ${oldRefused}; new token served: ${newServed}`,
    );
    const health = await fetch(listener.url.replace("/mcp", "/healthz")).then(
      (r) => r.status,
      (e) => String(e),
    );
    console.log(`listener /healthz at the end: ${health}`);
    console.log(
      `client-side background failures: ${unhandled}${unhandled ? ` (first: ${firstUnhandled})` : ""}`,
    );
  } finally {
    console.log(`gateway open files at the start of each phase: ${fds.join(", ")}`);
    if (Deno.env.get("SOAK_STDERR")) console.log(listener.stderr().slice(-6000));
    for (const conn of conns) {
      try {
        conn.close();
      } catch {
        // closed
      }
    }
    await Promise.allSettled(clients.map((c) => c.close()));
    await listener.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) {
  try {
    await main();
  } catch (error) {
    console.error(`listener soak failed in phase "${phase}":`, error);
    Deno.exit(1);
  }
}
