/**
 * Code mode benchmark: three multi-step tasks over the reference servers (server-memory,
 * server-filesystem, server-everything) done three ways through one gateway each: direct calls of the
 * mounted tools (`expose: all`), `call_tool` per step (as in lazy mode), and one `run_code`. For each
 * task and mode: the bytes that reach the agent (the serialized JSON of every result it receives), the
 * bytes the agent writes (the arguments, or the program), and the calls the agent makes. Discovery
 * (search/describe) is left out of every mode alike. Then the start-up cost of one `run_code` (a
 * program that returns at once: p50, p95 over N runs): through the gateway, whose spare sandbox is
 * warm; a sandbox started cold; and a direct call of `everything__echo` in the same run.
 *
 * Every process and temp dir is gone when `main()` returns.
 *
 * Usage: deno run -A scripts/bench/code_mode_bench.ts [--runs N]
 *
 * @module
 */
import { parseArgs } from "node:util";
import type { Client } from "@modelcontextprotocol/sdk/client";
import { connectGateway, descendants, q, REAL, tempDir, writeConfig } from "../../tests/helpers.ts";
import { listServers, reap, waitConnected } from "./_gateway_process.ts";
import { DEFAULT_LIMITS, runSandboxed } from "../../src/code/mod.ts";

/** Pause between two start-up samples, ms. */
const GAP_MS = 300;

/** One way of doing a task. */
export type Mode = "direct" | "call_tool" | "run_code";

/** One task done one way. */
export interface TaskFigures {
  task: string;
  mode: Mode;
  /** Calls the agent made. */
  calls: number;
  /** UTF-8 bytes of the results the agent received. */
  bytesToAgent: number;
  /** UTF-8 bytes of the arguments (or the program) the agent wrote. */
  bytesFromAgent: number;
  /** The answer the agent ends up with (the same in every mode). */
  answer: unknown;
}

/** What one run measured. */
export interface CodeModeReport {
  tasks: TaskFigures[];
  /**
   * `run_code` of `return 1` through the gateway (the spare sandbox warm), a sandbox started cold for the
   * run (in process, no gateway), and a direct `everything__echo` through the gateway, ms.
   */
  startup: {
    runs: number;
    p50Ms: number;
    p95Ms: number;
    coldP50Ms: number;
    coldP95Ms: number;
    echoP50Ms: number;
    echoP95Ms: number;
  };
}

const encoder = new TextEncoder();
const bytes = (value: unknown) => encoder.encode(JSON.stringify(value)).length;

/** The calls an agent makes, counted and measured. */
class Agent {
  calls = 0;
  bytesToAgent = 0;
  bytesFromAgent = 0;
  constructor(readonly client: Client) {}
  async call(name: string, args: Record<string, unknown>) {
    this.calls++;
    this.bytesFromAgent += bytes({ name, arguments: args });
    const result = await this.client.callTool({ name, arguments: args });
    this.bytesToAgent += bytes(result);
    if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
    return result;
  }
  /** A tool's own result, directly or through call_tool. */
  async tool(mode: Mode, name: string, args: Record<string, unknown>) {
    return mode === "direct"
      ? await this.call(name, args)
      : await this.call("call_tool", { tool: name, arguments: args });
  }
}

const text = (result: Record<string, unknown>) =>
  ((result.content ?? []) as { type: string; text?: string }[]).filter((b) => b.type === "text").map((b) =>
    b.text
  )
    .join("\n");

interface Task {
  name: string;
  /** The agent's way, one call per step. */
  steps(agent: Agent, mode: Mode, dir: string): Promise<unknown>;
  /** The same task as one program. */
  code(dir: string): string;
}

const NEW_ENTITIES = ["Ada Lovelace", "Grace Hopper", "Alan Turing"];

const TASKS: Task[] = [
  {
    name: "create 3 entities, read back only their names",
    async steps(agent, mode) {
      await agent.tool(mode, "memory__create_entities", {
        entities: NEW_ENTITIES.map((name) => ({
          name,
          entityType: "person",
          observations: [`${name} is a computing pioneer`],
        })),
      });
      const graph = JSON.parse(text(await agent.tool(mode, "memory__read_graph", {})));
      return (graph.entities as { name: string }[]).map((e) => e.name).filter((n) =>
        NEW_ENTITIES.includes(n)
      );
    },
    code: () =>
      `const names = ${JSON.stringify(NEW_ENTITIES)};
await mcp.tools.memory__create_entities({ entities: names.map((name) => ({ name, entityType: "person",
  observations: [name + " is a computing pioneer"] })) });
const graph = await mcp.tools.memory__read_graph({});
return graph.entities.map((e) => e.name).filter((n) => names.includes(n));`,
  },
  {
    name: "read 3 files, return only the matching lines",
    async steps(agent, mode, dir) {
      const out: string[] = [];
      for (const name of ["a", "b", "c"]) {
        const file = text(
          await agent.tool(mode, "filesystem__read_text_file", { path: `${dir}/files/${name}.log` }),
        );
        out.push(...file.split("\n").filter((l) => l.includes("ERROR")));
      }
      return out;
    },
    code: (dir) =>
      `const out = [];
for (const name of ["a", "b", "c"]) {
  const file = await mcp.tools.filesystem__read_text_file({ path: ${q(`${dir}/files/`)} + name + ".log" });
  out.push(...file.content.split("\\n").filter((l) => l.includes("ERROR")));
}
return out;`,
  },
  {
    name: "sum values from 5 calls",
    async steps(agent, mode) {
      let total = 0;
      for (let i = 1; i <= 5; i++) {
        const answer = text(await agent.tool(mode, "everything__get-sum", { a: i * 10, b: i }));
        total += Number(/(\d+)\.?$/.exec(answer)![1]);
      }
      return total;
    },
    code: () =>
      `let total = 0;
for (let i = 1; i <= 5; i++) {
  const answer = await mcp.tools["everything__get-sum"]({ a: i * 10, b: i });
  total += Number(/(\\d+)\\.?$/.exec(String(answer))[1]);
}
return total;`,
  },
];

function config(dir: string): string {
  return `code_mode: true
record: false
servers:
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
`;
}

/** A memory graph of 40 people with a few observations each, and three 60-line logs. */
async function seed(dir: string): Promise<void> {
  await Deno.mkdir(`${dir}/files`, { recursive: true });
  const lines: string[] = [];
  for (let i = 0; i < 40; i++) {
    lines.push(JSON.stringify({
      type: "entity",
      name: `Person ${i}`,
      entityType: "person",
      observations: [`works on project ${i % 7}`, `joined in ${2000 + (i % 20)}`, `likes topic ${i % 11}`],
    }));
  }
  await Deno.writeTextFile(`${dir}/memory.jsonl`, lines.join("\n") + "\n");
  for (const [n, name] of ["a", "b", "c"].entries()) {
    const log = Array.from({ length: 60 }, (_, i) => {
      const level = (i + n) % 20 === 0 ? "ERROR" : i % 3 ? "INFO" : "DEBUG";
      return `2026-12-06T01:${String(i).padStart(2, "0")}:00Z ${level} worker-${n} handled request ${
        i * 17 + n
      }`;
    });
    await Deno.writeTextFile(`${dir}/files/${name}.log`, log.join("\n") + "\n");
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** One task one way, on a fresh gateway and fresh data. */
async function measure(task: Task, mode: Mode): Promise<TaskFigures> {
  await using dir = await tempDir("mcphub-code-bench-");
  await seed(dir.path);
  const path = await writeConfig(dir.path, config(dir.path));
  await using gw = await connectGateway(path, { db: `${dir.path}/store.db` });
  await waitConnected(() => listServers(gw.client));
  const agent = new Agent(gw.client);
  let answer: unknown;
  if (mode === "run_code") {
    const result = await agent.call("run_code", { code: task.code(dir.path) });
    answer = (result.structuredContent as { result: unknown }).result;
  } else {
    answer = await task.steps(agent, mode, dir.path);
  }
  return {
    task: task.name,
    mode,
    calls: agent.calls,
    bytesToAgent: agent.bytesToAgent,
    bytesFromAgent: agent.bytesFromAgent,
    answer,
  };
}

/** Start-up cost of `return 1`: warm (the gateway's spare sandbox) and cold (a new process), against echo. */
async function startup(runs: number): Promise<CodeModeReport["startup"]> {
  await using dir = await tempDir("mcphub-code-bench-");
  await seed(dir.path);
  const path = await writeConfig(dir.path, config(dir.path));
  await using gw = await connectGateway(path, { db: `${dir.path}/store.db` });
  await waitConnected(() => listServers(gw.client));
  const code: number[] = [];
  const echo: number[] = [];
  const cold: number[] = [];
  const limits = { ...DEFAULT_LIMITS, timeoutMs: 30_000 };
  for (let i = 0; i < runs + 2; i++) {
    // A pause as between two model turns (far shorter, in fact): the spare started behind the last run is up.
    await new Promise((r) => setTimeout(r, GAP_MS));
    let t0 = performance.now();
    await gw.client.callTool({ name: "run_code", arguments: { code: "return 1;" } });
    const c = performance.now() - t0;
    t0 = performance.now();
    await gw.client.callTool({ name: "everything__echo", arguments: { message: "x" } });
    const e = performance.now() - t0;
    t0 = performance.now();
    await runSandboxed("return 1;", { limits, call: () => Promise.resolve(null) });
    const k = performance.now() - t0;
    // The first two of each warm up (the sandbox entry's transpile cache, the connection).
    if (i >= 2) (code.push(c), echo.push(e), cold.push(k));
  }
  const round = (n: number) => Math.round(n * 10) / 10;
  const p = (values: number[], at: number) => round(percentile(values.sort((a, b) => a - b), at));
  return {
    runs,
    p50Ms: p(code, 50),
    p95Ms: p(code, 95),
    coldP50Ms: p(cold, 50),
    coldP95Ms: p(cold, 95),
    echoP50Ms: p(echo, 50),
    echoP95Ms: p(echo, 95),
  };
}

/** Runs the benchmark and prints the table. */
export async function main(options: { runs?: number } = {}): Promise<CodeModeReport> {
  const before = new Set(descendants(Deno.pid));
  try {
    const tasks: TaskFigures[] = [];
    for (const task of TASKS) {
      for (const mode of ["direct", "call_tool", "run_code"] as const) tasks.push(await measure(task, mode));
      const answers = new Set(tasks.slice(-3).map((t) => JSON.stringify(t.answer)));
      if (answers.size !== 1) {
        throw new Error(`"${task.name}": the modes disagree: ${[...answers].join(" vs ")}`);
      }
    }
    const report: CodeModeReport = { tasks, startup: await startup(options.runs ?? 30) };
    print(report);
    return report;
  } finally {
    await reap(descendants(Deno.pid).filter((pid) => !before.has(pid)));
  }
}

function print(report: CodeModeReport): void {
  const rows = [
    "| task | mode | agent calls | bytes to agent | bytes from agent | to agent vs direct |",
    "|---|---|---:|---:|---:|---:|",
  ];
  for (const t of report.tasks) {
    const direct = report.tasks.find((d) => d.task === t.task && d.mode === "direct")!;
    const share = t.bytesToAgent / direct.bytesToAgent;
    rows.push(
      `| ${t.task} | ${t.mode} | ${t.calls} | ${t.bytesToAgent} | ${t.bytesFromAgent} | ${
        t.mode === "direct" ? "1.00" : share.toFixed(2)
      } |`,
    );
  }
  const s = report.startup;
  console.log(rows.join("\n"));
  console.log(
    `\nrun_code start-up (return 1), ${s.runs} runs ${GAP_MS} ms apart: through the gateway (spare sandbox warm) ` +
      `p50 ${s.p50Ms} ms, p95 ${s.p95Ms} ms; a sandbox started cold p50 ${s.coldP50Ms} ms, p95 ${s.coldP95Ms} ms; ` +
      `a direct everything__echo through the gateway p50 ${s.echoP50Ms} ms, p95 ${s.echoP95Ms} ms`,
  );
}

if (import.meta.main) {
  const { values } = parseArgs({ args: Deno.args, options: { runs: { type: "string" } } });
  await main({ runs: values.runs ? Number(values.runs) : undefined });
}
