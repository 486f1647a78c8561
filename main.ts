/**
 * mcphub: the command-line entry point. Parses nothing itself; runs the CLI
 * and turns its result into the process exit code (src/cli/exit.ts: the only Deno.exit).
 *
 * @module
 */
// First, before any other module is evaluated: the JSON guard (src/json/guard.ts). V8's JSON.parse can be
// poisoned by one server's text into misreading every later escaped key, and the MCP SDK parses what HTTP
// downstreams send with the global JSON.parse and Body.json(); the guard makes both safe process-wide.
import "./src/json/install.ts";
// The CLI's light entry: `mcp serve` loads only what it needs (`src/cli/mod.ts` loads every command).
import { runCli } from "./src/cli/run.ts";
import { exitProcess } from "./src/cli/exit.ts";

/**
 * The last argument that makes this program code mode's sandbox instead of the CLI: a compiled mcphub
 * starts itself so (SANDBOX_ARG in src/code/protocol.ts; a test keeps the two equal).
 */
export const SANDBOX_ARG = "__mcphub_code_sandbox";

if (import.meta.main && Deno.args.at(-1) === SANDBOX_ARG) {
  // Loaded only here (a compiled binary carries it: the specifier is a literal). Revokes every permission
  // first, then never returns.
  const { runSandbox } = await import("./src/code/sandbox_main.ts");
  await runSandbox();
} else if (import.meta.main) {
  const encoder = new TextEncoder();
  const controller = new AbortController();
  const onSignal = () => controller.abort();
  Deno.addSignalListener("SIGINT", onSignal);
  if (Deno.build.os !== "windows") Deno.addSignalListener("SIGTERM", onSignal);
  // stdout belongs to the protocol in `mcp serve`: anything that logs through console goes to stderr.
  console.log = console.info = console.debug = console.error;
  const code = await runCli(Deno.args, {
    env: Deno.env,
    cwd: Deno.cwd(),
    out: (text) => writeAll(Deno.stdout, encoder.encode(text)),
    err: (text) => writeAll(Deno.stderr, encoder.encode(text)),
    signal: controller.signal,
  });
  // Not Deno.exit itself: with OpenTelemetry on, its flush could wait forever (src/cli/exit.ts).
  await exitProcess(code);
}

function writeAll(w: { writeSync(p: Uint8Array): number }, bytes: Uint8Array): void {
  let at = 0;
  while (at < bytes.length) at += w.writeSync(bytes.subarray(at));
}
