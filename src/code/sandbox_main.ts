/**
 * The sandbox's own side, in a separate Deno process with every permission denied (and revoked again
 * here, first thing, for a compiled binary that carries the gateway's own permissions). The program
 * runs in a Web Worker of this process (permissions inherited: none), so that this thread stays free
 * to watch the process's memory (ArrayBuffers live outside the V8 heap cap) and to relay the worker's
 * calls, logs and outcome as JSON lines on stdout.
 *
 * @module
 */
import type { AnswerMessage, RunMessage, SandboxMessage } from "./protocol.ts";

/** Every permission a Deno process can hold. */
const PERMISSIONS = ["read", "write", "net", "env", "run", "ffi", "sys", "import"] as const;

/** How often the resident memory is looked at, ms. */
const MEMORY_CHECK_MS = 20;

/** The exit code of a sandbox that passed its memory limit. */
export const MEMORY_EXIT_CODE = 137;

const encoder = new TextEncoder();

/** Writes one message as a line, whole (a partial write is continued). */
function writeLine(stream: typeof Deno.stdout, text: string): void {
  let bytes = encoder.encode(`${text}\n`);
  while (bytes.length) bytes = bytes.subarray(stream.writeSync(bytes));
}

/** Reads stdin line by line. */
async function* lines(): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffered = "";
  for await (const chunk of Deno.stdin.readable) {
    buffered += decoder.decode(chunk, { stream: true });
    let newline: number;
    while ((newline = buffered.indexOf("\n")) >= 0) {
      yield buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
    }
  }
}

/** Runs the sandbox: never returns (exits when the program is done, a limit is passed, or stdin closes). */
export async function runSandbox(): Promise<never> {
  for (const name of PERMISSIONS) {
    try {
      Deno.permissions.revokeSync({ name } as Deno.PermissionDescriptor);
    } catch {
      // A permission this runtime does not know is one it cannot grant either.
    }
  }
  let finished = false;
  const send = (message: SandboxMessage) => {
    if (finished) return;
    if (message.t === "done") finished = true;
    writeLine(Deno.stdout, JSON.stringify(message));
    if (finished) Deno.exit(0);
  };
  // Started before the program arrives (a spare sandbox waits ready). Its source is this module's own
  // function, as the runtime compiled it: nothing to load, nothing to include in a compiled binary.
  const source = URL.createObjectURL(
    new Blob([`(${workerMain.toString()})();`], { type: "text/javascript" }),
  );
  const worker = new Worker(source, { type: "module" });
  worker.onmessage = (event: MessageEvent<SandboxMessage>) => send(event.data);
  worker.onerror = (event) => {
    event.preventDefault();
    // An error thrown outside the program's own chain (a timer's callback): "Uncaught Error: …".
    send({ t: "done", ok: false, error: String(event.message) });
  };
  const input = lines();
  const first = await input.next();
  if (first.done) Deno.exit(0);
  const run = JSON.parse(first.value) as RunMessage;

  if (run.memoryMb) {
    const limit = run.memoryMb * 1024 * 1024;
    setInterval(() => {
      const rss = Deno.memoryUsage().rss;
      if (rss <= limit) return;
      writeLine(
        Deno.stderr,
        `mcphub sandbox: out of memory: resident memory ${
          Math.round(rss / 1048576)
        } MiB passed ${run.memoryMb} MiB`,
      );
      Deno.exit(MEMORY_EXIT_CODE);
    }, MEMORY_CHECK_MS);
  }

  worker.postMessage(run);
  for await (const line of input) worker.postMessage(JSON.parse(line) as AnswerMessage);
  // The gateway went away: nothing can be answered any more.
  Deno.exit(0);
}

/**
 * The worker: runs the program as the body of an async function with `mcp` and a capturing `console`.
 * Self-contained (it is started from its own source text): no imports, no outer names.
 */
function workerMain(): void {
  const scope = self as unknown as {
    postMessage(message: unknown): void;
    onmessage: ((event: MessageEvent) => void) | null;
    addEventListener(type: string, listener: (event: PromiseRejectionEvent) => void): void;
  };
  const wrapperAt = /data:application\/typescript;base64,[^\s)]*?:(\d+):\d+/;
  const wrapperUrl = /data:application\/typescript;base64,[^\s)]*/g;
  // Lines of the wrapper module before the first line of the program.
  const wrapperLines = 1;
  const show = (value: unknown) =>
    typeof value === "string" ? value : Deno.inspect(value, { depth: 6, colors: false });
  const lineOf = (error: unknown): number | undefined => {
    const match = wrapperAt.exec(error instanceof Error ? String(error.stack ?? "") : "");
    const line = match ? Number(match[1]) - wrapperLines : 0;
    return line >= 1 ? line : undefined;
  };
  const messageOf = (error: unknown): string => {
    if (!(error instanceof Error)) return `Uncaught ${show(error)}`;
    // A program that does not parse fails its import with a TypeError whose message is the SyntaxError.
    const text = error.message.startsWith("SyntaxError: ")
      ? error.message
      : `${error.name}: ${error.message}`;
    return text.split("\n")[0]!.replace(wrapperUrl, "code");
  };
  const toBase64 = (text: string) => {
    const bytes = new TextEncoder().encode(text);
    let binary = "";
    for (let i = 0; i < bytes.length; i += 0x8000) {
      binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
    }
    return btoa(binary);
  };
  let finished = false;
  const finish = (message: Record<string, unknown>) => {
    if (finished) return;
    finished = true;
    scope.postMessage({ t: "done", ...message });
  };
  const pending = new Map<
    number,
    { resolve: (v: unknown) => void; reject: (e: Error) => void; site: Error }
  >();
  let nextId = 0;
  const call = (name: unknown, args: unknown): Promise<unknown> => {
    if (typeof name !== "string" || name === "") {
      return Promise.reject(new TypeError("mcp.call: the tool name must be a non-empty string"));
    }
    if (args !== undefined && (typeof args !== "object" || args === null || Array.isArray(args))) {
      return Promise.reject(new TypeError(`mcp.call("${name}"): the arguments must be an object`));
    }
    const id = ++nextId;
    // Created here, so that the error a failed call throws points at the program's line.
    const site = new Error();
    const waiting = Promise.withResolvers<unknown>();
    pending.set(id, { resolve: waiting.resolve, reject: waiting.reject, site });
    scope.postMessage({ t: "call", id, name, args: args ?? {} });
    return waiting.promise;
  };
  const tools = new Proxy({}, {
    get: (_target, key) =>
      typeof key === "string" && key !== "then" ? (args?: unknown) => call(key, args) : undefined,
  });
  const mcp = Object.freeze({ call, tools });
  const log = (...values: unknown[]) => scope.postMessage({ t: "log", text: values.map(show).join(" ") });
  const console = Object.freeze({ log, info: log, warn: log, error: log, debug: log, trace: log });
  Object.defineProperty(globalThis, "console", { value: console, writable: false, configurable: false });
  // A program that ends its worker (close(), Deno.exit()) ends the run at once, rather than at its time limit.
  const ended = (how: string) => () => finish({ ok: false, error: `The code ended its sandbox (${how})` });
  for (const [target, key, how] of [[self, "close", "close()"], [Deno, "exit", "Deno.exit()"]] as const) {
    try {
      Object.defineProperty(target, key, { value: ended(how), writable: false, configurable: false });
    } catch {
      // Left as it is: such a run ends at its time limit.
    }
  }
  scope.addEventListener("unhandledrejection", (event) => {
    event.preventDefault();
    finish({ ok: false, error: messageOf(event.reason) });
  });

  const start = async (code: string) => {
    const source = `export default async function (mcp, console) {\n${code}\n}\n`;
    let value: unknown;
    try {
      const module = await import(`data:application/typescript;base64,${toBase64(source)}`);
      value = await module.default(mcp, console);
    } catch (error) {
      const line = lineOf(error);
      return finish({ ok: false, error: messageOf(error), ...(line ? { line } : {}) });
    }
    let json: string | undefined;
    try {
      json = value === undefined ? undefined : JSON.stringify(value);
    } catch (error) {
      return finish({ ok: false, error: `The returned value is not JSON: ${messageOf(error)}` });
    }
    finish(json === undefined ? { ok: true } : { ok: true, value: JSON.parse(json) });
  };
  scope.onmessage = (event: MessageEvent) => {
    const message = event.data as {
      t: string;
      code?: string;
      id?: number;
      ok?: boolean;
      value?: unknown;
      error?: string;
    };
    if (message.t === "run") {
      start(String(message.code));
      return;
    }
    const waiting = pending.get(message.id!);
    if (!waiting) return;
    pending.delete(message.id!);
    if (message.ok) return waiting.resolve(message.value);
    const error = new Error(message.error ?? "the tool call failed");
    error.stack = `Error: ${error.message}\n${String(waiting.site.stack).split("\n").slice(1).join("\n")}`;
    waiting.reject(error);
  };
}

if (import.meta.main) await runSandbox();
