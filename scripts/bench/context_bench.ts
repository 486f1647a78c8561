/**
 * Context benchmark: what an agent reads before its first call. The bytes of the `tools/list` answer
 * (the serialized JSON of its result, every page) of a gateway in front of server-everything,
 * server-filesystem and server-memory, with `expose: all` and with `expose: lazy`; the ratio; and an
 * estimate in tokens (bytes / 4). Lazy mode moves a short summary of the servers into the `initialize`
 * instructions, so those are printed too, and the sum of both.
 *
 * Every process and temp dir is gone when `main()` returns.
 *
 * Usage: deno run -A scripts/bench/context_bench.ts
 *
 * @module
 */
import type { Client } from "@modelcontextprotocol/sdk/client";
import { connectGateway, descendants, q, REAL, tempDir, writeConfig } from "../../tests/helpers.ts";
import { listServers, reap, waitConnected } from "./_gateway_process.ts";

/** Bytes per token of the estimate. */
const BYTES_PER_TOKEN = 4;

/** What one gateway advertises. Sizes in UTF-8 bytes. */
export interface ExposeFigures {
  tools: number;
  toolsListBytes: number;
  instructionsBytes: number;
}

/** What one run measured. */
export interface ContextBenchReport {
  all: ExposeFigures;
  lazy: ExposeFigures;
  /** toolsListBytes all / lazy */
  ratio: number;
  /** (toolsListBytes + instructionsBytes) all / lazy */
  ratioWithInstructions: number;
}

function byteLength(text: string): number {
  return new TextEncoder().encode(text).length;
}

function config(dir: string, expose: "all" | "lazy"): string {
  return `servers:
  everything:
    command: node
    args: [${q(REAL.everything)}, stdio]
  filesystem:
    command: node
    args: [${q(REAL.filesystem)}, ${q(`${dir}/files`)}]
  memory:
    command: node
    args: [${q(REAL.memory)}]
    env:
      MEMORY_FILE_PATH: ${q(`${dir}/memory.jsonl`)}
expose: ${expose}
record: false
`;
}

/** Every page of `tools/list`: the tool count and the bytes of each result, summed. */
async function toolsList(client: Client): Promise<{ tools: number; bytes: number }> {
  let tools = 0;
  let bytes = 0;
  let cursor: string | undefined;
  do {
    const result = await client.listTools(cursor === undefined ? undefined : { cursor });
    tools += result.tools.length;
    bytes += byteLength(JSON.stringify(result));
    cursor = result.nextCursor;
  } while (cursor !== undefined);
  return { tools, bytes };
}

async function measure(dir: string, expose: "all" | "lazy"): Promise<ExposeFigures> {
  const path = await writeConfig(dir, config(dir, expose), `${expose}.yaml`);
  const before = new Set(descendants(Deno.pid));
  const gw = await connectGateway(path);
  try {
    await waitConnected(() => listServers(gw.client));
    const { tools, bytes } = await toolsList(gw.client);
    return {
      tools,
      toolsListBytes: bytes,
      instructionsBytes: byteLength(gw.client.getInstructions() ?? ""),
    };
  } finally {
    // Listed before closing: a gateway's servers would be orphaned, not ours, if it left them behind.
    const pids = descendants(Deno.pid).filter((pid) => !before.has(pid));
    await gw.close();
    const left = await reap(pids);
    if (left) console.error(`warning: ${left} process(es) had to be killed after the ${expose} gateway`);
  }
}

function sized(bytes: number): string {
  return `${bytes} B (~${Math.round(bytes / BYTES_PER_TOKEN)} tokens)`;
}

/** Runs the benchmark, prints the figures and returns them. */
export async function main(): Promise<ContextBenchReport> {
  const before = new Set(descendants(Deno.pid));
  await using dir = await tempDir("mcphub_context_bench_");
  try {
    await Deno.mkdir(`${dir.path}/files`);
    const all = await measure(dir.path, "all");
    const lazy = await measure(dir.path, "lazy");
    const ratio = all.toolsListBytes / lazy.toolsListBytes;
    const withAll = all.toolsListBytes + all.instructionsBytes;
    const withLazy = lazy.toolsListBytes + lazy.instructionsBytes;
    console.log(
      `tools/list, everything + filesystem + memory: expose all ${all.tools} tools ${
        sized(all.toolsListBytes)
      }, ` +
        `expose lazy ${lazy.tools} tools ${sized(lazy.toolsListBytes)}; ratio all/lazy ${
          ratio.toFixed(1)
        }, ` +
        `saved ${sized(all.toolsListBytes - lazy.toolsListBytes)}`,
    );
    console.log(
      `with the initialize instructions: all ${sized(withAll)} (instructions ${all.instructionsBytes} B), ` +
        `lazy ${sized(withLazy)} (instructions ${lazy.instructionsBytes} B); ratio all/lazy ${
          (withAll / withLazy).toFixed(1)
        }`,
    );
    return { all, lazy, ratio, ratioWithInstructions: withAll / withLazy };
  } finally {
    const left = await reap(descendants(Deno.pid).filter((pid) => !before.has(pid)));
    if (left) console.error(`warning: ${left} leftover process(es) of the context bench were killed`);
  }
}

if (import.meta.main) await main();
