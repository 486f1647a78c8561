/**
 * The gateway's side of the sandbox: starts a Deno process with no permissions, hands it the program,
 * answers its tool calls, and enforces the limits (time, V8 heap, output, inner calls). A limit
 * exceeded kills the process and is named in the outcome; the gateway itself never waits on the code.
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import type { AnswerMessage, SandboxMessage } from "./protocol.ts";
import { SANDBOX_ARG } from "./protocol.ts";

/** The limits of one run. */
export interface SandboxLimits {
  /** Wall-clock time of the whole run, ms. */
  timeoutMs: number;
  /** The V8 heap cap of the sandbox process, MiB; its resident memory may reach twice this plus 128 MiB. */
  heapMb: number;
  /** Bytes the program may send back (logs, calls and the returned value together). */
  maxOutputBytes: number;
  /** Tool calls the program may make. */
  maxCalls: number;
}

/** Default limits besides the time (which the caller sets). */
export const DEFAULT_LIMITS: Omit<SandboxLimits, "timeoutMs"> = {
  heapMb: 128,
  maxOutputBytes: 4 * 1024 * 1024,
  maxCalls: 1000,
};

/** Which limit ended a run. */
export type LimitName = "timeout" | "memory" | "output" | "calls";

/** What a run came to. */
export interface SandboxOutcome {
  ok: boolean;
  /** The returned value (undefined when the program returned nothing). */
  value?: unknown;
  /** Why it failed: the uncaught error, or the limit hit. */
  error?: string;
  /** The program line of an uncaught error. */
  line?: number;
  /** The limit that killed the run. */
  limit?: LimitName;
  logs: string[];
  /** Inner tool calls the program made. */
  calls: number;
}

/** Options of {@linkcode runSandboxed}. */
export interface RunOptions {
  limits: SandboxLimits;
  /** Serves one inner call: resolves to the value the program sees, rejects with the error it sees. */
  call: (name: string, args: Record<string, unknown>, signal: AbortSignal) => Promise<unknown>;
  /** Ends the run (a cancelled request, a shutdown). */
  signal?: AbortSignal;
  /** How the sandbox is started. @default sandboxCommand(limits.heapMb) */
  command?: { path: string; args: string[]; env: Record<string, string> };
  /** Where a started sandbox is taken from. @default a new process for this run */
  pool?: SandboxPool;
}

/** The resident memory a sandbox may reach: its heap cap twice (program and relay) plus the runtime's own. */
export function residentLimitMb(heapMb: number): number {
  return 2 * heapMb + 128;
}

/** Inner calls of one run that may be under way at once. */
export const MAX_IN_FLIGHT = 16;

/** Bytes of the sandbox's stderr kept (to tell an out-of-memory death from another). */
const STDERR_KEEP = 16 * 1024;

/** How the sandbox process is started: this runtime, with the sandbox entry and no permission flags. */
export function sandboxCommand(
  heapMb: number,
): { path: string; args: string[]; env: Record<string, string> } {
  const heapFlag = `--max-old-space-size=${heapMb}`;
  const env: Record<string, string> = { NO_COLOR: "1", DENO_NO_PROMPT: "1" };
  if (Deno.build.standalone) {
    // A compiled mcphub carries the sandbox entry: it starts itself with the hidden argument, and the
    // entry revokes the binary's permissions before it reads the program.
    return { path: Deno.execPath(), args: [SANDBOX_ARG], env: { ...env, DENO_V8_FLAGS: heapFlag } };
  }
  const entry = new URL("./sandbox_main.ts", import.meta.url);
  return {
    path: Deno.execPath(),
    args: [
      "run",
      "--quiet",
      "--no-prompt",
      "--no-config",
      "--no-lock",
      "--no-remote",
      "--no-npm",
      "--deny-import",
      `--v8-flags=${heapFlag}`,
      entry.protocol === "file:" ? fileURLToPath(entry) : entry.href,
    ],
    env,
  };
}

/** Starts a sandbox process: it waits on stdin for its program. */
function spawnSandbox(
  command: { path: string; args: string[]; env: Record<string, string> },
): Deno.ChildProcess {
  return new Deno.Command(command.path, {
    args: command.args,
    env: command.env,
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

/**
 * One sandbox process started ahead, so that a run does not wait for a runtime to start: each run
 * takes the spare (used once, never reused) and another is started behind it. An idle spare holds
 * nothing of any run, and ends by itself when the gateway does (its stdin closes).
 */
export class SandboxPool {
  #spare?: { heapMb: number; child: Deno.ChildProcess };
  #closed = false;

  /** A started sandbox with this heap cap: the spare when it matches, else a new one. */
  take(heapMb: number): Deno.ChildProcess {
    const spare = this.#spare;
    this.#spare = undefined;
    if (spare && spare.heapMb === heapMb) return spare.child;
    if (spare) kill(spare.child);
    return spawnSandbox(sandboxCommand(heapMb));
  }

  /**
   * Starts the next spare, when there is none: after a run rather than at its start, so that a runtime
   * starting does not compete with the program for the CPU.
   */
  refill(heapMb: number): void {
    if (this.#closed || this.#spare) return;
    try {
      const child = spawnSandbox(sandboxCommand(heapMb));
      // Its output is read only once it runs a program; its exit is awaited when it is killed.
      child.status.catch(() => {});
      this.#spare = { heapMb, child };
    } catch {
      // No spare: the next run starts its own.
    }
  }

  /** Ends the spare; later runs start their own. */
  async close(): Promise<void> {
    this.#closed = true;
    const spare = this.#spare;
    this.#spare = undefined;
    if (!spare) return;
    kill(spare.child);
    await spare.child.status.catch(() => {});
    await Promise.allSettled([
      spare.child.stdout.cancel(),
      spare.child.stderr.cancel(),
      spare.child.stdin.close(),
    ]);
  }
}

function kill(child: Deno.ChildProcess): void {
  try {
    child.kill("SIGKILL");
  } catch {
    // Exited already.
  }
}

/** Runs `code` in a sandbox process (a new one, or the pool's spare) and settles once it is done or killed. */
export async function runSandboxed(code: string, options: RunOptions): Promise<SandboxOutcome> {
  const { limits } = options;
  let child: Deno.ChildProcess;
  try {
    child = options.command
      ? spawnSandbox(options.command)
      : options.pool?.take(limits.heapMb) ?? spawnSandbox(sandboxCommand(limits.heapMb));
  } catch (error) {
    // Typically a gateway started under a permission set derived before code mode was turned on.
    return {
      ok: false,
      error: `The sandbox could not be started (${(error as Error).message}). mcphub needs to run ${
        JSON.stringify(Deno.execPath())
      } for code mode: derive its permissions again (mcphub permissions) and restart it`,
      logs: [],
      calls: 0,
    };
  }
  const logs: string[] = [];
  let calls = 0;
  let outputBytes = 0;
  let outcome: SandboxOutcome | undefined;
  const innerCalls = new AbortController();
  const ended = Promise.withResolvers<void>();
  const end = (result: Omit<SandboxOutcome, "logs" | "calls">) => {
    if (outcome) return;
    outcome = { ...result, logs, calls };
    innerCalls.abort();
    try {
      child.kill("SIGKILL");
    } catch {
      // Exited already.
    }
    ended.resolve();
  };
  const limitHit = (limit: LimitName, error: string) => end({ ok: false, limit, error });

  const writer = child.stdin.getWriter();
  const encoder = new TextEncoder();
  let writing = Promise.resolve();
  const write = (message: unknown) => {
    const bytes = encoder.encode(`${JSON.stringify(message)}\n`);
    writing = writing.then(() => writer.write(bytes)).catch(() => {});
  };

  const timer = setTimeout(
    () =>
      limitHit("timeout", `The code ran longer than its time limit (${limits.timeoutMs} ms) and was stopped`),
    limits.timeoutMs,
  );
  const onAbort = () => end({ ok: false, error: "The run was cancelled" });
  options.signal?.addEventListener("abort", onAbort, { once: true });
  if (options.signal?.aborted) onAbort();

  let inFlight = 0;
  const turns: (() => void)[] = [];
  const serve = async (message: SandboxMessage) => {
    if (message.t === "log") {
      logs.push(String(message.text));
      return;
    }
    if (message.t === "done") {
      if (message.ok) end({ ok: true, value: message.value });
      else {
        end({
          ok: false,
          error: String(message.error ?? "The code failed"),
          ...(typeof message.line === "number" ? { line: message.line } : {}),
        });
      }
      return;
    }
    if (message.t !== "call" || typeof message.id !== "number") throw new SyntaxError("unknown message");
    if (++calls > limits.maxCalls) {
      calls = limits.maxCalls;
      return limitHit("calls", `The code made more than ${limits.maxCalls} tool calls and was stopped`);
    }
    const args = typeof message.args === "object" && message.args !== null && !Array.isArray(message.args)
      ? message.args
      : {};
    let answer: AnswerMessage;
    // At most MAX_IN_FLIGHT calls of one run go downstream at once; the others wait their turn, in order.
    while (inFlight >= MAX_IN_FLIGHT) await new Promise<void>((resolve) => turns.push(resolve));
    inFlight++;
    try {
      if (outcome) return;
      const value = await options.call(String(message.name), args, innerCalls.signal);
      answer = { t: "answer", id: message.id, ok: true, value };
    } catch (error) {
      answer = { t: "answer", id: message.id, ok: false, error: (error as Error).message ?? String(error) };
    } finally {
      inFlight--;
      turns.shift()?.();
    }
    if (!outcome) write(answer);
  };

  const reading = (async () => {
    const decoder = new TextDecoder();
    let buffered = "";
    for await (const chunk of child.stdout) {
      outputBytes += chunk.length;
      if (outputBytes > limits.maxOutputBytes) {
        return limitHit(
          "output",
          `The code sent back more than ${limits.maxOutputBytes} bytes (logs and result) and was stopped`,
        );
      }
      buffered += decoder.decode(chunk, { stream: true });
      let newline: number;
      while ((newline = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        let message: SandboxMessage;
        try {
          message = JSON.parse(line);
        } catch {
          return end({ ok: false, error: "The sandbox sent a line that is not JSON" });
        }
        serve(message).catch((error) =>
          end({ ok: false, error: `The sandbox misbehaved: ${error.message}` })
        );
      }
    }
  })();
  const stderr = (async () => {
    const kept: Uint8Array[] = [];
    let size = 0;
    for await (const chunk of child.stderr) {
      if (size < STDERR_KEEP) {
        kept.push(chunk.subarray(0, STDERR_KEEP - size));
        size += Math.min(chunk.length, STDERR_KEEP - size);
      }
    }
    return new TextDecoder().decode(concat(kept));
  })();

  write({ t: "run", code, memoryMb: residentLimitMb(limits.heapMb) });
  try {
    const status = await Promise.race([child.status, ended.promise.then(() => undefined)]);
    if (status && !outcome) {
      // Exited without a result: drain what it said, then tell why.
      await reading.catch(() => {});
      if (!outcome) {
        const text = await stderr.catch(() => "");
        if (/out of memory|heap limit|allocation failed/i.test(text)) {
          limitHit(
            "memory",
            `The code used more than its memory limit (${limits.heapMb} MiB heap, ${
              residentLimitMb(limits.heapMb)
            } MiB resident) and was stopped`,
          );
        } else {
          const detail = text.trim().split("\n").slice(-3).join(" ").slice(0, 500);
          end({
            ok: false,
            error: `The sandbox exited with code ${status.code} before the code finished${
              detail ? `: ${detail}` : ""
            }`,
          });
        }
      }
    }
    await ended.promise;
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
    await writer.close().catch(() => {});
    await child.status.catch(() => {});
    await Promise.allSettled([reading, stderr, writing]);
    options.pool?.refill(limits.heapMb);
  }
  return outcome!;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
