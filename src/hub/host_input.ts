/**
 * The gateway's stdin, read on the event loop when it is a pipe or a socket.
 *
 * `Deno.stdin.readable` reads through a blocking helper thread: every message from the host wakes that
 * thread, which then wakes the event loop (two thread hops, ~20 µs and a few µs of CPU per message on
 * the call path). Node's `net.Socket` on fd 0 reads a pipe or socket non-blocking from the event loop,
 * as Node itself reads stdin; its chunks are taken from its `data` events, with no web stream between
 * (see `readSocket` in stdio.ts). Anything else (a file, a terminal, /dev/null, Windows) keeps Deno's
 * stdin.
 *
 * @module
 */
import { fstatSync } from "node:fs";
import { Socket } from "node:net";
import type { ByteSource } from "./stdio.ts";

/**
 * The process's stdin, each chunk a buffer of its own (the reader may keep it). On Linux and macOS,
 * when stdin is a pipe or a socket and not the same one as stdout (one socket for both ways: making it
 * non-blocking would make stdout's synchronous writes fail), a paused socket read without Deno's helper
 * thread; otherwise `Deno.stdin.readable`.
 */
export function hostInput(): ByteSource {
  return stdinSocket() ?? Deno.stdin.readable;
}

/** A non-blocking socket on fd 0, or undefined where Deno's stdin must serve. */
function stdinSocket(): Socket | undefined {
  if (Deno.build.os === "windows") return undefined;
  try {
    const input = fstatSync(0);
    const output = fstatSync(1);
    if (input.dev === output.dev && input.ino === output.ino) return undefined;
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
