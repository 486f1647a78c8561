/**
 * Start-up of `mcp serve --listen` in two checkouts in one run: spawn to `/readyz` answering 200, and
 * spawn to the answer of the first `initialize` POSTed to `/mcp` (a new session: the Streamable HTTP
 * transport loaded and serving), alternated run by run. The config names one server (server-memory),
 * disabled, so no child's start-up is measured; with `--server` it is enabled, and /readyz waits for it. Prints the wall time (median, min) and the CPU time (user + system of the
 * gateway process, from /proc, Linux) at the answer: on a shared machine the CPU time is the steadier
 * figure.
 *
 * Usage: deno run -A scripts/bench/listen_start_ab.ts --base DIR --head DIR [--runs N] [--server]   (default 15)
 * where DIR is a checkout (for instance `git worktree add --detach DIR main`).
 *
 * @module
 */
import { parseArgs } from "node:util";
import { q, REAL, tempDir, writeConfig } from "../../tests/helpers.ts";

const INITIALIZE = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "listen-ab", version: "1" },
  },
});

/** CPU milliseconds process `pid` has used (fields 14 and 15 of /proc/PID/stat, 100 ticks a second). */
function cpuOf(pid: number): number {
  const fields = Deno.readTextFileSync(`/proc/${pid}/stat`).split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** One start: wall ms to /readyz 200 and to the initialize answer, CPU ms at the answer. */
async function start(root: string, config: string, db: string) {
  const t0 = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      `${root}/main.ts`,
      "--config",
      config,
      "--db",
      db,
      "mcp",
      "serve",
      "--listen",
      "127.0.0.1:0",
    ],
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  let origin: string | undefined;
  while (origin === undefined) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`${root}: exited before listening:\n${text}`);
    text += value;
    origin = /listening on (http:\/\/\S+)\/mcp/.exec(text)?.[1];
  }
  // The rest of stderr is drained (a full pipe would stall the gateway).
  const draining = (async () => {
    while (!(await reader.read()).done);
  })().catch(() => {});
  // 503 while a server is connecting: asked again (a bench, not a test: polling is the probe's own use).
  for (let tries = 0;; tries++) {
    const ready = await fetch(`${origin}/readyz`);
    await ready.body?.cancel();
    if (ready.status === 200) break;
    if (ready.status !== 503 || tries > 6000) throw new Error(`${root}: /readyz answered ${ready.status}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const readyMs = performance.now() - t0;
  const response = await fetch(`${origin}/mcp`, {
    method: "POST",
    headers: { accept: "application/json, text/event-stream", "content-type": "application/json" },
    body: INITIALIZE,
  });
  const body = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let answer = "";
  while (!answer.includes('"id":1')) {
    const { value, done } = await body.read();
    if (done) break;
    answer += value;
  }
  const initializeMs = performance.now() - t0;
  const cpu = cpuOf(child.pid);
  await body.cancel().catch(() => {});
  if (!answer.includes('"protocolVersion"')) {
    throw new Error(`${root}: no initialize answer (${answer.slice(0, 200)})`);
  }
  child.kill("SIGTERM");
  await child.status;
  await draining;
  return { readyMs, initializeMs, cpu };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** Runs the comparison and prints it. */
export async function main(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      base: { type: "string" },
      head: { type: "string" },
      runs: { type: "string", default: "15" },
      server: { type: "boolean", default: false },
    },
  });
  if (!values.base || !values.head) {
    throw new TypeError("Usage: listen_start_ab.ts --base DIR --head DIR [--runs N] [--server]");
  }
  await using dir = await tempDir("mcphub_listen_ab_");
  const config = await writeConfig(
    dir.path,
    `servers:
  memory:
    command: node
    args: [${q(REAL.memory)}]
    enabled: ${values.server}
`,
  );
  const targets = [{ label: "base", root: values.base }, { label: "head", root: values.head }];
  // One unmeasured start each fills Deno's caches and makes the database.
  for (const t of targets) await start(t.root, config, `${dir.path}/${t.label}.db`);
  const figures = targets.map(() => ({
    ready: [] as number[],
    initialize: [] as number[],
    cpu: [] as number[],
  }));
  for (let i = 0; i < Number(values.runs); i++) {
    for (const [k, t] of targets.entries()) {
      const r = await start(t.root, config, `${dir.path}/${t.label}.db`);
      figures[k]!.ready.push(r.readyMs);
      figures[k]!.initialize.push(r.initializeMs);
      figures[k]!.cpu.push(r.cpu);
    }
  }
  for (const [k, t] of targets.entries()) {
    const f = figures[k]!;
    console.log(
      `${t.label}: /readyz 200 wall median ${median(f.ready).toFixed(1)} ms (min ${
        Math.min(...f.ready).toFixed(1)
      }), ` +
        `first initialize answered wall median ${median(f.initialize).toFixed(1)} ms (min ${
          Math.min(...f.initialize).toFixed(1)
        }), CPU at the answer mean ${mean(f.cpu).toFixed(1)} ms, ${f.cpu.length} runs`,
    );
  }
  const [b, h] = figures as [typeof figures[0], typeof figures[0]];
  console.log(
    `head/base: /readyz wall ${(median(h.ready) / median(b.ready)).toFixed(3)}x, initialize wall ${
      (median(h.initialize) / median(b.initialize)).toFixed(3)
    }x, CPU ${(mean(h.cpu) / mean(b.cpu)).toFixed(3)}x`,
  );
}

if (import.meta.main) await main(Deno.args);
