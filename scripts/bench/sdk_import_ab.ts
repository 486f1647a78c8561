/**
 * What loading each MCP SDK entry point costs a fresh Deno process, v1 (`@modelcontextprotocol/sdk` 1.32.2)
 * against v2 (`@modelcontextprotocol/client`, `/server`, `/core` 2.4.0), for the runtime's move to v2
 * (docs/v2-migration.md). Each variant is a process that imports the entry points and exits; variants are
 * alternated run by run so that load on a shared machine falls on all of them alike. Prints, per variant, the
 * `import()` wall time inside the process and the process's CPU time until then (user + system, from /proc,
 * Linux), both
 * as the median and as a ratio to the v1 start-up set (what `mcp serve` loads before it answers today).
 *
 * Usage: deno run -A scripts/bench/sdk_import_ab.ts [--runs N]   (default 9)
 * Uses the project's deno.json and a temporary copy of deno.lock (the specifiers the project's lock lacks,
 * `@modelcontextprotocol/core` today, are added to the copy only).
 *
 * @module
 */
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";

const V1 = "npm:@modelcontextprotocol/sdk@1.32.2";
const VARIANTS: Record<string, string[]> = {
  "empty (a process that imports nothing)": [],
  // What `mcp serve` loads before answering `initialize` today: src/mcp/sdk.ts's types and host_server.ts.
  "v1 start-up set (types, shared/protocol, zod-compat, tasks helpers)": [
    `${V1}/types.js`,
    `${V1}/shared/protocol.js`,
    `${V1}/server/zod-compat.js`,
    `${V1}/experimental/tasks/helpers.js`,
  ],
  "v1 client + Ajv (loaded at the first downstream connection)": [`${V1}/client`, `${V1}/validation/ajv`],
  "v1 HTTP transports (Streamable HTTP client/server, SSE client)": [
    `${V1}/client/streamableHttp.js`,
    `${V1}/server/webStandardStreamableHttp.js`,
    `${V1}/client/sse.js`,
  ],
  "v2 core (Zod schemas only)": ["npm:@modelcontextprotocol/core@2.4.0"],
  "v2 server (index: Server, Protocol, HTTP transport, bundled Ajv)": [
    "npm:@modelcontextprotocol/server@2.4.0",
  ],
  "v2 client (index: Client, transports, auth, bundled Ajv)": ["npm:@modelcontextprotocol/client@2.4.0"],
  "v2 client + server + client/stdio": [
    "npm:@modelcontextprotocol/client@2.4.0",
    "npm:@modelcontextprotocol/server@2.4.0",
    "npm:@modelcontextprotocol/client@2.4.0/stdio",
  ],
};

const root = fileURLToPath(new URL("../../", import.meta.url));
const { values } = parseArgs({ options: { runs: { type: "string", default: "9" } } });
const runs = Number(values.runs);
const lock = await Deno.makeTempFile({ suffix: ".lock" });
await Deno.copyFile(`${root}deno.lock`, lock);

async function once(specifiers: string[]): Promise<{ wall: number; cpu: number }> {
  // The child reports its own import() time and its CPU time so far (fields 14 and 15 of /proc/self/stat:
  // user and system time in clock ticks, 100 a second).
  const code = `const t0 = performance.now();
await Promise.all(${JSON.stringify(specifiers)}.map((s) => import(s)));
const wall = performance.now() - t0;
let cpu = NaN;
try {
  const f = Deno.readTextFileSync("/proc/self/stat").split(") ")[1].split(" ");
  cpu = (Number(f[11]) + Number(f[12])) * 10;
} catch { /* not Linux */ }
console.log(JSON.stringify({ wall, cpu }));`;
  const { success, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--config", `${root}deno.json`, `--lock=${lock}`, code],
    cwd: root,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!success) {
    const err = new TextDecoder().decode(stderr).slice(0, 400);
    throw new Error(`import of ${specifiers.join(", ")} failed: ${err}`);
  }
  return JSON.parse(new TextDecoder().decode(stdout));
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const names = Object.keys(VARIANTS);
const samples = new Map(names.map((n) => [n, { wall: [] as number[], cpu: [] as number[] }]));
await once(VARIANTS[names[1]!]!); // warm the module cache once (not counted)
for (let i = 0; i < runs; i++) {
  for (const name of i % 2 ? [...names].reverse() : names) {
    const { wall, cpu } = await once(VARIANTS[name]!);
    samples.get(name)!.wall.push(wall);
    samples.get(name)!.cpu.push(cpu);
  }
}
const base = samples.get(names[1]!)!;
const [baseWall, baseCpu] = [median(base.wall), median(base.cpu)];
console.log(`runs: ${runs} per variant, alternated; ratios against the v1 start-up set`);
console.log("variant | import() ms median | ratio | process CPU ms median | ratio");
for (const name of names) {
  const s = samples.get(name)!;
  const [w, c] = [median(s.wall), median(s.cpu)];
  console.log(
    `${name} | ${w.toFixed(1)} | ${(w / baseWall).toFixed(2)} | ${c.toFixed(0)} | ${
      (c / baseCpu).toFixed(2)
    }`,
  );
}
await Deno.remove(lock);
