/**
 * First contact: the time from spawning `mcphub mcp serve` (in front of server-everything, -filesystem
 * and -memory) to a complete first `tools/list` answer, with an empty store (it waits for the servers,
 * bounded by startup_wait) and with a warm one (the cached tool lists answer at once). The baseline, in
 * the same run: a host connecting to the same three servers directly, in parallel, until the last one
 * has answered its `tools/list`.
 *
 * Usage: deno run -A scripts/bench/first_list_bench.ts [--rounds N]
 *
 * @module
 */
import { Client } from "@modelcontextprotocol/sdk/client";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { parseArgs } from "node:util";
import { DENO, q, REAL, ROOT } from "../../tests/helpers.ts";

async function timeToList(command: string, args: string[], env?: Record<string, string>) {
  const t0 = performance.now();
  const transport = new StdioClientTransport({
    command,
    args,
    env: { ...Deno.env.toObject(), ...env },
    stderr: "ignore",
  });
  const client = new Client({ name: "bench", version: "1.0.0" });
  await client.connect(transport);
  const { tools } = await client.listTools();
  const ms = performance.now() - t0;
  await client.close();
  return { ms, tools: tools.length };
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** Runs the benchmark and prints one line per measure. */
export async function main(argv: string[] = []): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { rounds: { type: "string", default: "3" } } });
  const rounds = Number(values.rounds);
  const dir = await Deno.makeTempDir({ prefix: "mcphub-first-list-" });
  try {
    const servers: [string, string[], Record<string, string>][] = [
      ["everything", [REAL.everything], {}],
      ["filesystem", [REAL.filesystem, dir], {}],
      ["memory", [REAL.memory], { MEMORY_FILE_PATH: `${dir}/memory.jsonl` }],
    ];
    const config = `${dir}/mcphub.yaml`;
    await Deno.writeTextFile(
      config,
      `servers:\n${
        servers.map(([name, args, env]) =>
          `  ${name}:\n    command: node\n    args: [${args.map(q).join(", ")}]\n    env: ${
            JSON.stringify(env)
          }\n`
        ).join("")
      }`,
    );
    const direct: number[] = [];
    const cold: number[] = [];
    const warm: number[] = [];
    let expected = 0;
    for (let round = 0; round < rounds; round++) {
      const t0 = performance.now();
      const each = await Promise.all(servers.map(([, args, env]) => timeToList("node", args, env)));
      direct.push(performance.now() - t0);
      expected = each.reduce((n, r) => n + r.tools, 0);
      const db = `${dir}/store-${round}.db`;
      const gateway = ["run", "-A", `${ROOT}main.ts`, "--config", config, "--db", db, "mcp", "serve"];
      for (const into of [cold, warm]) {
        const r = await timeToList(DENO, gateway);
        // The gateway adds its eight meta-tools to the downstream tools.
        if (r.tools - 8 !== expected) {
          throw new Error(`first tools/list had ${r.tools - 8} downstream tools, expected ${expected}`);
        }
        into.push(r.ms);
      }
    }
    const d = median(direct);
    const c = median(cold);
    const w = median(warm);
    console.log(`servers: everything, filesystem, memory (${expected} tools); median of ${rounds} rounds`);
    console.log(`direct, 3 servers in parallel to the last tools/list: ${d.toFixed(0)} ms`);
    console.log(
      `mcphub, empty store, spawn to complete first tools/list: ${c.toFixed(0)} ms (${
        (c / d).toFixed(2)
      }x direct)`,
    );
    console.log(
      `mcphub, warm store, spawn to complete first tools/list: ${w.toFixed(0)} ms (${
        (w / d).toFixed(2)
      }x direct)`,
    );
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) await main(Deno.args);
