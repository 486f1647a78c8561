/**
 * The gateway's stdin, read on the event loop when it is a pipe or a socket.
 *
 * `Deno.stdin.readable` reads through a blocking helper thread: every message from the host wakes that
 * thread, which then wakes the event loop (two thread hops, ~20 µs and a few µs of CPU per message on
 * the call path). Node's `net.Socket` on fd 0 reads a pipe or socket non-blocking from the event loop,
 * as Node itself reads stdin; its chunks are taken from its `data` events, with no web stream between
 * (see `readSocket` in json/lines.ts). Anything else (a file, a terminal, /dev/null, Windows) keeps Deno's
 * stdin.
 *
 * @module
 */
import { Socket } from "node:net";
import type { ByteSource } from "../json/lines.ts";

/**
 * The process's stdin, each chunk a buffer of its own (the reader may keep it). On Linux and macOS,
 * when stdin is a pipe or a socket and not the same one as stdout (one socket for both ways: making it
 * non-blocking would make stdout's synchronous writes fail), a paused socket read without Deno's helper
 * thread; otherwise `Deno.stdin.readable`.
 */
export async function hostInput(): Promise<ByteSource> {
  return await stdinSocket() ?? Deno.stdin.readable;
}

/** A non-blocking socket on fd 0, or undefined where Deno's stdin must serve. */
async function stdinSocket(): Promise<Socket | undefined> {
  if (Deno.build.os === "windows") return undefined;
  try {
    if (await sameFile()) return undefined;
    // Throws for a file, a terminal or a character device (/dev/null): those keep Deno's stdin.
    const socket = new Socket({ fd: 0, readable: true, writable: false });
    socket.pause();
    // Read to its end: nothing more will come, and the descriptor is let go.
    socket.once("end", () => socket.destroy());
    return socket;
  } catch {
    return undefined;
  }
}

/**
 * Whether fd 0 and fd 1 are one file (device and inode). Read through /dev/stdin and /dev/stdout, which
 * name the descriptors themselves on Linux and macOS: node:fs's `fstatSync` would cost ~10 ms of module
 * loading before the host's `initialize` can be read. Where they cannot be read (a locked build without
 * read permission on them), `fstatSync`.
 */
async function sameFile(): Promise<boolean> {
  let input: { dev: number; ino: number | null };
  let output: typeof input;
  try {
    // Asked first, so that a run with narrower permissions never prompts on a terminal.
    for (const path of ["/dev/stdin", "/dev/stdout"]) {
      if (Deno.permissions.querySync({ name: "read", path }).state !== "granted") throw new Error("no read");
    }
    input = Deno.statSync("/dev/stdin");
    output = Deno.statSync("/dev/stdout");
  } catch {
    const { fstatSync } = await import("node:fs");
    input = fstatSync(0);
    output = fstatSync(1);
  }
  return input.dev === output.dev && input.ino === output.ino;
}
