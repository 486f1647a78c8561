/**
 * A ready/go handshake between a test and the worker processes it starts, so workers that must run at the
 * same time start together whatever the machine's load (not at a wall-clock time): each worker says
 * `ready` (a line on stdout) once it is set up and waits for `go` (a line on stdin); the test waits for
 * every worker's `ready`, then says `go` to all. Both sides are here; the worker's side imports nothing else.
 *
 * @module
 */

/** The worker's side: says `ready` on stdout, then resolves on the test's `go` (throws on anything else). */
export async function readyThenGo(): Promise<void> {
  console.log("ready");
  const { value } = await Deno.stdin.readable.pipeThrough(new TextDecoderStream()).getReader().read();
  if (!value?.startsWith("go")) throw new Error(`expected "go" on stdin, got ${JSON.stringify(value)}`);
}

/** A started worker: `ready` once it said so; `go()` starts it; `done` is its exit with what it wrote after `ready`. */
export interface Worker {
  ready: Promise<void>;
  go(): Promise<void>;
  done: Promise<{ code: number; stdout: string; stderr: string }>;
}

/** Starts `deno run -A script ...args` as a {@linkcode Worker}. */
export function startWorker(script: string, args: string[], signal: AbortSignal): Worker {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", script, ...args],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    signal,
  }).spawn();
  const stderr = new Response(child.stderr).text();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let stdout = "";
  const ready = (async () => {
    while (!stdout.includes("ready\n")) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`${script} ${args.join(" ")} exited before it was ready: ${await stderr}`);
      stdout += value;
    }
    stdout = stdout.slice(stdout.indexOf("ready\n") + 6);
  })();
  const done = (async () => {
    await ready.catch(() => {});
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      stdout += value;
    }
    const { code } = await child.status;
    return { code, stdout, stderr: await stderr };
  })();
  const go = async () => {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode("go\n"));
    await writer.close();
  };
  return { ready, go, done };
}

/** Starts the workers, waits until every one is ready, says go to all; resolves with their exits. */
export async function startTogether(
  script: string,
  argsOfEach: string[][],
  signal: AbortSignal,
): Promise<{ code: number; stdout: string; stderr: string }[]> {
  const workers = argsOfEach.map((args) => startWorker(script, args, signal));
  const done = Promise.all(workers.map((w) => w.done));
  try {
    await Promise.all(workers.map((w) => w.ready));
  } catch (error) {
    // One died before it was ready: the others are let go (they fail or finish alone), then the error.
    for (const w of workers) await w.go().catch(() => {});
    await done;
    throw error;
  }
  for (const w of workers) await w.go();
  return await done;
}
