/**
 * Cold start of two checkouts in one run: spawn to the answer of the host's first message (a 2025
 * `initialize`, and for the second checkout also a 2026-07-28 `server/discover`), alternated run by run,
 * with the same three reference servers configured (none is started before the answer). Prints the wall
 * time (median, min) and the CPU time (user + system, from /proc, Linux) each process used until it
 * answered: on a shared machine the CPU time is the steadier figure.
 *
 * Usage: deno run -A scripts/bench/cold_ab.ts --base DIR --head DIR [--runs N]   (default 15)
 * where DIR is a checkout (for instance `git archive COMMIT | tar -x -C DIR`).
 *
 * @module
 */
import { parseArgs } from "node:util";
import { q, REAL, tempDir, writeConfig } from "../../tests/helpers.ts";

const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "cold-ab", version: "1" } },
};
const DISCOVER = {
  jsonrpc: "2.0",
  id: 1,
  method: "server/discover",
  params: {
    _meta: {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {},
    },
  },
};

/** One start: wall and CPU milliseconds to the answer of `message`. */
async function start(root: string, config: string, db: string, message: unknown) {
  const t0 = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${root}/main.ts`, "--config", config, "--db", db, "mcp", "serve"],
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(`${JSON.stringify(message)}\n`));
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
  }
  const wall = performance.now() - t0;
  if (!text.includes('"id":1')) throw new Error(`${root}: no answer (${text.slice(0, 200)})`);
  // Fields 14 and 15 of /proc/PID/stat: user and system time in clock ticks (100 a second).
  const fields = Deno.readTextFileSync(`/proc/${child.pid}/stat`).split(") ")[1]!.split(" ");
  const cpu = (Number(fields[11]) + Number(fields[12])) * 10;
  await writer.close().catch(() => {});
  await reader.cancel().catch(() => {});
  await child.status;
  return { wall, cpu };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** Runs the comparison and prints it. */
export async function main(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { base: { type: "string" }, head: { type: "string" }, runs: { type: "string", default: "15" } },
  });
  if (!values.base || !values.head) throw new TypeError("Usage: cold_ab.ts --base DIR --head DIR [--runs N]");
  await using dir = await tempDir("mcphub_cold_ab_");
  await Deno.mkdir(`${dir.path}/files`);
  const config = await writeConfig(
    dir.path,
    `servers:
  everything:
    command: node
    args: [${q(REAL.everything)}, stdio]
  filesystem:
    command: node
    args: [${q(REAL.filesystem)}, ${q(`${dir.path}/files`)}]
  memory:
    command: node
    args: [${q(REAL.memory)}]
`,
  );
  const targets = [
    { label: "base, initialize", root: values.base, db: "base", message: INITIALIZE },
    { label: "head, initialize", root: values.head, db: "head", message: INITIALIZE },
    { label: "head, server/discover", root: values.head, db: "head", message: DISCOVER },
  ];
  // One unmeasured start each fills Deno's caches and makes the database.
  for (const t of targets) await start(t.root, config, `${dir.path}/${t.db}.db`, t.message);
  const wall = targets.map(() => [] as number[]);
  const cpu = targets.map(() => [] as number[]);
  for (let i = 0; i < Number(values.runs); i++) {
    for (const [k, t] of targets.entries()) {
      const r = await start(t.root, config, `${dir.path}/${t.db}.db`, t.message);
      wall[k]!.push(r.wall);
      cpu[k]!.push(r.cpu);
    }
  }
  for (const [k, t] of targets.entries()) {
    console.log(
      `${t.label}: wall median ${median(wall[k]!).toFixed(1)} ms (min ${
        Math.min(...wall[k]!).toFixed(1)
      }), ` +
        `CPU mean ${mean(cpu[k]!).toFixed(1)} ms, ${wall[k]!.length} runs`,
    );
  }
  console.log(
    `head/base: wall ${(median(wall[1]!) / median(wall[0]!)).toFixed(3)}x, CPU ${
      (mean(cpu[1]!) / mean(cpu[0]!)).toFixed(3)
    }x`,
  );
}

if (import.meta.main) await main(Deno.args);
