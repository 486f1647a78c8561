/**
 * A stdio relay with the gateway's I/O and none of its logic, for relay_floor_bench.ts: it starts
 * `command args…` with `node:child_process` pipes, reads its own stdin as a `node:net` socket on fd 0 and
 * the child's stdout from `data` events, writes the child's stdin with `write()` and its own stdout with
 * `Deno.stdout.writeSync` (as the gateway does). `--mode raw` passes each chunk on as it came; `--mode
 * json` parses every line and serializes it again (a naive JSON-RPC proxy), one write per chunk.
 *
 * Usage: deno run -A scripts/bench/_relay.ts --mode raw|json -- command [args…]
 *
 * @module
 */
import { spawn } from "node:child_process";
import { Socket } from "node:net";
import { parseArgs } from "node:util";

/** Each complete line of `text` (after `carry`), parsed and serialized again; the rest is the new carry. */
function reserialize(carry: string, text: string): { out: string; carry: string } {
  const lines = (carry + text).split("\n");
  const rest = lines.pop()!;
  let out = "";
  for (const line of lines) if (line.trim()) out += JSON.stringify(JSON.parse(line)) + "\n";
  return { out, carry: rest };
}

function writeAll(bytes: Uint8Array): void {
  for (let at = 0; at < bytes.length;) at += Deno.stdout.writeSync(bytes.subarray(at));
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    args: Deno.args,
    options: { mode: { type: "string", default: "raw" } },
    allowPositionals: true,
  });
  const [command, ...args] = positionals;
  if (!command || (values.mode !== "raw" && values.mode !== "json")) {
    throw new RangeError("Usage: _relay.ts --mode raw|json -- command [args…]");
  }
  const child = spawn(command, args, { stdio: ["pipe", "pipe", "ignore"] });
  const input = new Socket({ fd: 0, readable: true, writable: false });
  const encoder = new TextEncoder();
  const up = new TextDecoder();
  const down = new TextDecoder();
  let upCarry = "";
  let downCarry = "";
  input.on("data", (chunk: Uint8Array) => {
    if (values.mode === "raw") return void child.stdin!.write(chunk);
    const { out, carry } = reserialize(upCarry, up.decode(chunk, { stream: true }));
    upCarry = carry;
    if (out) child.stdin!.write(encoder.encode(out));
  });
  child.stdout!.on("data", (chunk: Uint8Array) => {
    if (values.mode === "raw") return writeAll(chunk);
    const { out, carry } = reserialize(downCarry, down.decode(chunk, { stream: true }));
    downCarry = carry;
    if (out) writeAll(encoder.encode(out));
  });
  // The host closed stdin: so is the child's; once the child is gone nothing keeps this process alive.
  input.on("end", () => child.stdin!.end());
  child.on("exit", () => input.destroy());
}
