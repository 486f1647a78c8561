/**
 * The sandbox's own side: run in a separate Deno process with every permission denied (and revoked
 * again here, first thing, for a compiled binary that carries the gateway's own permissions). Reads
 * one program, runs it as the body of an async function with `mcp` and a capturing `console`, and
 * sends its calls, logs and outcome as JSON lines on stdout.
 *
 * @module
 */
import type { AnswerMessage, RunMessage, SandboxMessage } from "./protocol.ts";

/** Every permission a Deno process can hold. */
const PERMISSIONS = ["read", "write", "net", "env", "run", "ffi", "sys", "import"] as const;

/** Lines of the wrapper module before the first line of the program. */
const WRAPPER_LINES = 1;

const encoder = new TextEncoder();

/** Writes one message as a line, whole (a partial write is continued). */
function send(message: SandboxMessage): void {
  let bytes = encoder.encode(`${JSON.stringify(message)}\n`);
  while (bytes.length) bytes = bytes.subarray(Deno.stdout.writeSync(bytes));
}

/** A console argument as text: strings as they are, anything else inspected. */
function show(value: unknown): string {
  return typeof value === "string" ? value : Deno.inspect(value, { depth: 6, colors: false });
}

/** A location in the wrapper module as a stack shows it (Deno abbreviates a long `data:` URL). */
const WRAPPER_AT = /data:application\/typescript;base64,[^\s)]*?:(\d+):\d+/;

/** The wrapper module's URL wherever a message names it. */
const WRAPPER_URL = /data:application\/typescript;base64,[^\s)]*/g;

/** The line of the program in an error's stack (the first frame in the wrapper module). */
function lineOf(error: unknown): number | undefined {
  const stack = error instanceof Error ? String(error.stack ?? "") : "";
  const match = WRAPPER_AT.exec(stack);
  if (!match) return undefined;
  const line = Number(match[1]) - WRAPPER_LINES;
  return line >= 1 ? line : undefined;
}

/** An uncaught error as one line: its name and message (a syntax error's code frame left out). */
function messageOf(error: unknown): string {
  if (!(error instanceof Error)) return `Uncaught ${show(error)}`;
  // A program that does not parse fails its import with a TypeError whose message is the SyntaxError.
  const text = error.message.startsWith("SyntaxError: ") ? error.message : `${error.name}: ${error.message}`;
  return text.split("\n")[0]!.replace(WRAPPER_URL, "code");
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

/** Runs the sandbox: never returns (exits when the program is done or stdin closes). */
export async function runSandbox(): Promise<never> {
  for (const name of PERMISSIONS) {
    try {
      Deno.permissions.revokeSync({ name } as Deno.PermissionDescriptor);
    } catch {
      // A permission this runtime does not know is one it cannot grant either.
    }
  }
  const pending = new Map<
    number,
    { resolve: (value: unknown) => void; reject: (error: Error) => void; site: Error }
  >();
  let nextId = 0;
  let finished = false;
  const finish = (message: SandboxMessage): never => {
    if (!finished) {
      finished = true;
      send(message);
    }
    Deno.exit(0);
  };
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
    send({ t: "call", id, name, args: (args ?? {}) as Record<string, unknown> });
    return waiting.promise;
  };
  const tools = new Proxy({}, {
    get: (_target, key) =>
      typeof key === "string" && key !== "then" ? (args?: unknown) => call(key, args) : undefined,
  });
  const mcp = Object.freeze({ call, tools });
  const log = (...values: unknown[]) => send({ t: "log", text: values.map(show).join(" ") });
  const console = Object.freeze({ log, info: log, warn: log, error: log, debug: log, trace: log });
  Object.defineProperty(globalThis, "console", { value: console, writable: false, configurable: false });
  globalThis.addEventListener("unhandledrejection", (event) => {
    event.preventDefault();
    finish({ t: "done", ok: false, error: messageOf(event.reason) });
  });

  const input = lines();
  const first = await input.next();
  if (first.done) Deno.exit(0);
  const run = JSON.parse(first.value) as RunMessage;
  // Answers to inner calls, read while the program runs.
  (async () => {
    for await (const line of input) {
      const answer = JSON.parse(line) as AnswerMessage;
      const waiting = pending.get(answer.id);
      if (!waiting) continue;
      pending.delete(answer.id);
      if (answer.ok) waiting.resolve(answer.value);
      else {
        const error = new Error(answer.error ?? "the tool call failed");
        error.stack = `Error: ${error.message}\n${
          String(waiting.site.stack).split("\n").slice(1).join("\n")
        }`;
        waiting.reject(error);
      }
    }
    // The gateway went away: nothing can be answered any more.
    Deno.exit(0);
  })();

  const source = `export default async function (mcp, console) {\n${run.code}\n}\n`;
  const url = `data:application/typescript;base64,${toBase64(source)}`;
  let value: unknown;
  try {
    const module = await import(url);
    value = await module.default(mcp, console);
  } catch (error) {
    const line = lineOf(error);
    return finish({ t: "done", ok: false, error: messageOf(error), ...(line ? { line } : {}) });
  }
  let json: string | undefined;
  try {
    json = value === undefined ? undefined : JSON.stringify(value);
  } catch (error) {
    return finish({ t: "done", ok: false, error: `The returned value is not JSON: ${messageOf(error)}` });
  }
  return finish(
    json === undefined ? { t: "done", ok: true } : { t: "done", ok: true, value: JSON.parse(json) },
  );
}

function toBase64(text: string): string {
  const bytes = encoder.encode(text);
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

if (import.meta.main) await runSandbox();
