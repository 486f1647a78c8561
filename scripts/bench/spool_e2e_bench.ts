/**
 * Spool end-to-end benchmark: a 100 MB result (`big {bytes: 100 MiB}` of the fixture server) through
 * `mcphub mcp serve`.
 *
 * - With `response_budget: "32KB"`: the time to the receipt and the gateway's peak memory.
 * - With `verbatim: true`: the time to the full result and the gateway's peak memory.
 * - Peak memory as a multiple of the payload (the goal: at most 2x, spooled or passed through).
 * - The delay of a concurrent call: `echo` calls to a second server, one after the other, while the
 *   100 MB result is read and spooled; the slowest against the median of the same calls at rest.
 * - Paging: the first 1,280 pages of 8 KiB (10 MiB) of the stored result through `get_result`, base64 and
 *   utf8, in MB/s.
 *
 * Each case runs in a fresh gateway, so its peak (VmHWM of /proc/PID/status, read after the call) is
 * that call's. The client speaks newline-delimited JSON-RPC over raw pipes rather than through the SDK
 * client, whose stdio buffer is capped at 10 MB and copies quadratically: it could not take the 100 MB
 * verbatim answer, and would time itself rather than the gateway. Every process and temp dir is gone
 * when `main()` returns.
 *
 * With `--pg`, the gateways' store is a fresh database of a throwaway local PostgreSQL cluster (see
 * `tests/store/_pg.ts`) instead of a SQLite file: the shared store's spool, measured the same way.
 *
 * Usage: deno run -A scripts/bench/spool_e2e_bench.ts [--pg]
 *
 * @module
 */
import { DENO, descendants, FIXTURE, q, ROOT, tempDir, writeConfig } from "../../tests/helpers.ts";
import {
  gatewayPid,
  MB,
  mb,
  mbDelta,
  type ProcessSample,
  reap,
  sampleProcess,
  type ServerState,
  waitConnected,
} from "./_gateway_process.ts";

const RESULT_BYTES = 100 * MB;
const PAGES = 1_280;
const CALL_TIMEOUT_MS = 300_000;

/** What one case measured. Times in ms, sizes in bytes. */
export interface CaseFigures {
  ms: number;
  /** Bytes of the JSON-RPC `result` the client received. */
  answerBytes: number;
  /** The gateway after start-up and a warm-up call, before the big call. */
  before: ProcessSample;
  /** The gateway right after the big call. */
  after: ProcessSample;
  /** `echo` calls to another server: median at rest, slowest while the big call ran (when measured). */
  echo: { restMs: number; maxMs: number; calls: number };
}

/** What one run measured. */
export interface SpoolE2eBenchReport {
  spooled: CaseFigures & { originalBytes: number };
  verbatim: CaseFigures;
  paging: { pages: number; bytes: number; base64MBps: number; utf8MBps: number };
}

interface ToolResult {
  content?: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/**
 * A gateway process and a minimal MCP client over its pipes: requests by id, one line per message, each
 * line copied once however large.
 */
export class RawGateway implements AsyncDisposable {
  #child: Deno.ChildProcess;
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #pending = new Map<number, { resolve(line: string): void; reject(error: Error): void }>();
  #nextId = 1;
  #stderr = "";
  #reading: Promise<void>;
  #stderrRead: Promise<void>;
  #closed = false;

  constructor(config: string, db: string) {
    this.#child = new Deno.Command(DENO, {
      args: ["run", "-A", `${ROOT}main.ts`, "--config", config, "--db", db, "mcp", "serve"],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.#writer = this.#child.stdin.getWriter();
    this.#reading = this.#read();
    const stderr = this.#child.stderr.pipeThrough(new TextDecoderStream());
    this.#stderrRead = (async () => {
      for await (const text of stderr) this.#stderr += text;
    })().catch(() => {});
  }

  /** Spawns the gateway and completes the MCP handshake. */
  static async start(config: string, db: string): Promise<RawGateway> {
    const gw = new RawGateway(config, db);
    try {
      await gw.request("initialize", {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "mcphub-bench", version: "1.0.0" },
      }, 30_000);
      await gw.#send({ jsonrpc: "2.0", method: "notifications/initialized" });
      return gw;
    } catch (error) {
      await gw.close();
      throw error;
    }
  }

  /** The spawned process's pid. */
  get pid(): number {
    return this.#child.pid;
  }

  /** The gateway's stderr so far. */
  stderr(): string {
    return this.#stderr;
  }

  async #read(): Promise<void> {
    let parts: Uint8Array[] = [];
    let size = 0;
    const decoder = new TextDecoder();
    const take = (): string => {
      const bytes = new Uint8Array(size);
      let at = 0;
      for (const part of parts) bytes.set(part, at), at += part.length;
      parts = [];
      size = 0;
      return decoder.decode(bytes);
    };
    try {
      for await (const chunk of this.#child.stdout) {
        let start = 0;
        for (let nl = chunk.indexOf(0x0a); nl !== -1; nl = chunk.indexOf(0x0a, start)) {
          parts.push(chunk.slice(start, nl));
          size += nl - start;
          this.#dispatch(take());
          start = nl + 1;
        }
        if (start < chunk.length) {
          parts.push(chunk.slice(start));
          size += chunk.length - start;
        }
      }
    } finally {
      for (const { reject } of this.#pending.values()) {
        reject(new Error(`The gateway closed stdout\n${this.#stderr}`));
      }
      this.#pending.clear();
    }
  }

  #dispatch(line: string): void {
    // The id is at the end of the SDK's serialization; read it without parsing a 100 MB line twice.
    const match = line.slice(-64).match(/"id":(\d+)\}\s*$/) ?? line.slice(0, 200).match(/"id":(\d+)/);
    if (!match) return;
    const waiter = this.#pending.get(Number(match[1]));
    if (!waiter) return;
    this.#pending.delete(Number(match[1]));
    waiter.resolve(line);
  }

  async #send(message: Record<string, unknown>): Promise<void> {
    await this.#writer.write(new TextEncoder().encode(`${JSON.stringify(message)}\n`));
  }

  /** Sends a request; resolves with the answer's raw line, or rejects on an error or after `timeoutMs`. */
  async requestLine(method: string, params: Record<string, unknown>, timeoutMs: number): Promise<string> {
    const id = this.#nextId++;
    const { promise, resolve, reject } = Promise.withResolvers<string>();
    this.#pending.set(id, { resolve, reject });
    const timer = setTimeout(() => {
      this.#pending.delete(id);
      reject(new Error(`No answer to ${method} within ${timeoutMs} ms\n${this.#stderr}`));
    }, timeoutMs);
    try {
      await this.#send({ jsonrpc: "2.0", id, method, params });
      return await promise;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Sends a request; resolves with its `result`. */
  async request(method: string, params: Record<string, unknown>, timeoutMs: number): Promise<unknown> {
    const message = JSON.parse(await this.requestLine(method, params, timeoutMs)) as {
      result?: unknown;
      error?: unknown;
    };
    if (message.error) throw new Error(`${method} failed: ${JSON.stringify(message.error)}`);
    return message.result;
  }

  /** `tools/call`. */
  async callTool(name: string, args: Record<string, unknown>, timeoutMs = 30_000): Promise<ToolResult> {
    return await this.request("tools/call", { name, arguments: args }, timeoutMs) as ToolResult;
  }

  /** Closes stdin, waits for the gateway and its servers to exit, and kills what lingers. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    // Listed before closing: a gateway's servers would be orphaned, not ours, if it left them behind.
    const pids = [this.#child.pid, ...descendants(this.#child.pid)];
    await this.#writer.close().catch(() => {});
    const left = await reap(pids);
    if (left) console.error(`warning: ${left} process(es) had to be killed after a spool e2e gateway`);
    await this.#child.status;
    await this.#reading.catch(() => {});
    await this.#stderrRead;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

async function listServers(gw: RawGateway): Promise<ServerState[]> {
  const result = await gw.callTool("list_servers", {});
  return (result.structuredContent as { servers: ServerState[] }).servers;
}

function fixtureConfig(extra: string): string {
  return `${extra}servers:
  fx:
    command: ${q(DENO)}
    args: [run, -A, ${q(FIXTURE)}]
  other:
    command: ${q(DENO)}
    args: [run, -A, ${q(FIXTURE)}]
record: false
`;
}

/** Latencies of `echo` calls to the second server, one after the other until `stop` resolves. */
async function echoLatencies(gw: RawGateway, stop: Promise<unknown>): Promise<number[]> {
  let stopped = false;
  stop.finally(() => stopped = true).catch(() => {});
  const out: number[] = [];
  while (!stopped) {
    const t0 = performance.now();
    await gw.callTool("other__echo", { text: "ping" });
    out.push(performance.now() - t0);
  }
  return out;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/** Starts a gateway on `config`, warms it up with one result over the budget, and times the big call. */
async function bigCall(
  dir: string,
  name: string,
  extra: string,
  then?: (gw: RawGateway, answer: ToolResult) => Promise<void>,
  concurrent = false,
  db = `${dir}/${name}.db`,
): Promise<CaseFigures & { answer: ToolResult }> {
  const config = await writeConfig(dir, fixtureConfig(extra), `${name}.yaml`);
  await using gw = await RawGateway.start(config, db);
  const pid = gatewayPid(gw.pid);
  await waitConnected(() => listServers(gw));
  // Opens the spool (lazily opened on the first oversized result) and warms the result path.
  await gw.callTool("fx__big", { bytes: 64 * 1024 });
  const rest: number[] = [];
  for (let i = 0; i < 50; i++) {
    const t = performance.now();
    await gw.callTool("other__echo", { text: "ping" });
    rest.push(performance.now() - t);
  }
  const before = sampleProcess(pid);
  const t0 = performance.now();
  const big = gw.requestLine(
    "tools/call",
    { name: "fx__big", arguments: { bytes: RESULT_BYTES } },
    CALL_TIMEOUT_MS,
  );
  const during = concurrent ? await echoLatencies(gw, big) : [];
  const line = await big;
  const message = JSON.parse(line) as { result?: ToolResult; error?: unknown };
  const ms = performance.now() - t0;
  const after = sampleProcess(pid);
  if (!message.result || message.result.isError) {
    throw new Error(
      `The 100 MB call failed: ${JSON.stringify(message.error ?? message.result).slice(0, 500)}`,
    );
  }
  const answerBytes = new TextEncoder().encode(JSON.stringify(message.result)).length;
  await then?.(gw, message.result);
  const echo = { restMs: median(rest), maxMs: Math.max(0, ...during), calls: during.length };
  return { ms, answerBytes, before, after, answer: message.result, echo };
}

/** Reads `pages` pages of a stored result from cursor 0; returns the bytes read and the ms taken. */
async function page(
  gw: RawGateway,
  callId: string,
  pages: number,
  encoding: "base64" | "utf8",
): Promise<{ bytes: number; ms: number }> {
  let cursor = 0;
  const t0 = performance.now();
  for (let i = 0; i < pages; i++) {
    const result = await gw.callTool("get_result", { callId, cursor, encoding });
    const p = result.structuredContent as { status: string; nextCursor: number; done: boolean };
    if (p?.status !== "ok") throw new Error(`get_result at cursor ${cursor}: ${JSON.stringify(result)}`);
    cursor = p.nextCursor;
    if (p.done) break;
  }
  return { bytes: cursor, ms: performance.now() - t0 };
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(2)} s`;
}

/**
 * Runs the benchmark, prints the figures and returns them. `paging: false` skips the paging part (its
 * figures are then 0), `print: false` the printing (goals_bench.ts prints its own), `db` gives the
 * spooled case's store (a `postgres://` URL; else a SQLite file).
 */
export async function main(
  { paging: pages = true, print = true, db }: { paging?: boolean; print?: boolean; db?: string } = {},
): Promise<SpoolE2eBenchReport> {
  const before = new Set(descendants(Deno.pid));
  await using dir = await tempDir("mcphub_spool_e2e_bench_");
  const log = print ? console.log : () => {};
  try {
    let paging: SpoolE2eBenchReport["paging"] | undefined;
    const spooled = await bigCall(
      dir.path,
      "spooled",
      'response_budget: "32KB"\n',
      async (gw, answer) => {
        const receipt = answer.structuredContent as { status: string; callId: string };
        if (receipt?.status !== "stored") throw new Error(`Expected a receipt: ${JSON.stringify(answer)}`);
        if (!pages) {
          paging = { pages: 0, bytes: 0, base64MBps: 0, utf8MBps: 0 };
          return;
        }
        const b64 = await page(gw, receipt.callId, PAGES, "base64");
        const utf8 = await page(gw, receipt.callId, PAGES, "utf8");
        paging = {
          pages: PAGES,
          bytes: b64.bytes,
          base64MBps: b64.bytes / MB / (b64.ms / 1000),
          utf8MBps: utf8.bytes / MB / (utf8.ms / 1000),
        };
      },
      true,
      db,
    );
    const originalBytes = (spooled.answer.structuredContent as { originalBytes: number }).originalBytes;
    const verbatim = await bigCall(dir.path, "verbatim", "verbatim: true\n");
    const text = verbatim.answer.content?.[0]?.text ?? "";
    if (text.length < RESULT_BYTES) throw new Error(`The verbatim result has ${text.length} characters`);

    log(
      `100 MB result (${mb(originalBytes)} serialized): receipt in ${seconds(spooled.ms)} ` +
        `(${spooled.answerBytes} B answer), verbatim in ${seconds(verbatim.ms)} (${
          mb(verbatim.answerBytes)
        }); ` +
        `time spooled/verbatim ${(spooled.ms / verbatim.ms).toFixed(2)}`,
    );
    const peak = (f: CaseFigures) =>
      `peak ${mb(f.after.hwmBytes)} (${mbDelta(f.after.hwmBytes - f.before.rssBytes)} over RSS ${
        mb(f.before.rssBytes)
      } before)`;
    log(
      `gateway memory: spooled ${peak(spooled)}, verbatim ${peak(verbatim)}; ` +
        `peak spooled/verbatim ${(spooled.after.hwmBytes / verbatim.after.hwmBytes).toFixed(2)}`,
    );
    const times = (f: CaseFigures) => (f.after.hwmBytes / RESULT_BYTES).toFixed(2);
    log(
      `gateway peak as a multiple of the 100 MB payload: spooled ${times(spooled)}x, verbatim ${
        times(verbatim)
      }x (goal <= 2x)`,
    );
    log(
      `a concurrent echo to another server while the 100 MB result is read and spooled: slowest ${
        spooled.echo.maxMs.toFixed(0)
      } ms of ${spooled.echo.calls} calls vs a median of ${
        spooled.echo.restMs.toFixed(1)
      } ms at rest: delay ${(spooled.echo.maxMs - spooled.echo.restMs).toFixed(0)} ms (goal <= ~50 ms)`,
    );
    log(
      `gateway RSS right after the call: spooled ${mb(spooled.after.rssBytes)}, verbatim ${
        mb(verbatim.after.rssBytes)
      }`,
    );
    if (!paging) throw new Error("Paging did not run");
    if (pages) {
      log(
        `get_result paging, first ${paging.pages} pages of ${Math.round(paging.bytes / paging.pages)} B ` +
          `(${mb(paging.bytes)}): base64 ${paging.base64MBps.toFixed(1)} MB/s, utf8 ${
            paging.utf8MBps.toFixed(1)
          } MB/s`,
      );
    }
    const strip = ({ answer: _, ...figures }: CaseFigures & { answer: ToolResult }) => figures;
    return { spooled: { ...strip(spooled), originalBytes }, verbatim: strip(verbatim), paging };
  } finally {
    const left = await reap(descendants(Deno.pid).filter((pid) => !before.has(pid)));
    if (left) console.error(`warning: ${left} leftover process(es) of the spool e2e bench were killed`);
  }
}

if (import.meta.main) {
  if (Deno.args.includes("--pg")) {
    const { pgCluster } = await import("../../tests/store/_pg.ts");
    const cluster = await pgCluster();
    try {
      console.log("store: PostgreSQL (a throwaway local cluster)");
      await main({ db: await cluster.database() });
    } finally {
      await cluster.stop();
    }
  } else await main();
}
