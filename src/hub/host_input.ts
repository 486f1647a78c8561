/**
 * The gateway's stdin as a byte stream, read on the event loop when it is a pipe or a socket.
 *
 * `Deno.stdin.readable` reads through a blocking helper thread: every message from the host wakes that
 * thread, which then wakes the event loop (two thread hops, ~20 µs and a few µs of CPU per message on
 * the call path). Node's `net.Socket` on fd 0 reads a pipe or socket non-blocking from the event loop,
 * as Node itself reads stdin. Anything else (a file, a terminal, /dev/null, Windows) keeps Deno's stdin.
 *
 * @module
 */
import { fstatSync } from "node:fs";
import { Socket } from "node:net";

/** Chunks buffered from the socket before it is paused until the reader catches up. */
const HIGH_WATER_CHUNKS = 16;

/**
 * The process's stdin as a stream of chunks, each a buffer of its own (the reader may keep it). On
 * Linux and macOS, when stdin is a pipe or a socket and not the same one as stdout (one socket for both
 * ways: making it non-blocking would make stdout's synchronous writes fail), it is read without Deno's
 * helper thread; otherwise this is `Deno.stdin.readable`.
 */
export function hostInput(): ReadableStream<Uint8Array> {
  const socket = stdinSocket();
  if (!socket) return Deno.stdin.readable;
  let ended = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      socket.on("data", (chunk: Uint8Array) => {
        controller.enqueue(chunk);
        if ((controller.desiredSize ?? 1) <= 0) socket.pause();
      });
      socket.once("end", () => {
        if (ended) return;
        ended = true;
        controller.close();
        socket.destroy();
      });
      socket.once("error", (error: Error) => {
        if (ended) return;
        ended = true;
        controller.error(error);
        socket.destroy();
      });
    },
    pull() {
      if (!ended) socket.resume();
    },
    cancel() {
      ended = true;
      socket.destroy();
    },
  }, { highWaterMark: HIGH_WATER_CHUNKS });
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
    return socket;
  } catch {
    return undefined;
  }
}
