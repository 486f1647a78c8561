/**
 * The listener's HTTP/1.1 server (src/http/server.ts) on its own: a keep-alive connection that serves many
 * requests keeps watching only the response in progress for its client going away (issue 41's memory per
 * session: each answered request's watcher used to stay armed, holding the request, its abort signal and its
 * response streams for as long as the connection lived, and aborting them all when it closed).
 */
import assert from "node:assert/strict";
import { serveHttp1 } from "../../src/http/server.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

/** Reads from `conn` until the text read so far contains `marker` `count` times. */
async function readUntil(conn: Deno.Conn, marker: string, count: number, sofar = ""): Promise<string> {
  const buffer = new Uint8Array(16 * 1024);
  let text = sofar;
  while (text.split(marker).length - 1 < count) {
    const n = await conn.read(buffer);
    if (n === null) {
      throw new Error(`the connection ended before ${count} × ${JSON.stringify(marker)}:\n${text}`);
    }
    text += dec.decode(buffer.subarray(0, n));
  }
  return text;
}

Deno.test("a keep-alive connection's answered requests are not aborted when it later closes", async () => {
  const signals: AbortSignal[] = [];
  const streamAborted = Promise.withResolvers<void>();
  const server = serveHttp1({
    hostname: "127.0.0.1",
    port: 0,
    maxConnections: 16,
    maxPending: 16,
    headerTimeoutMs: 30_000,
    idleTimeoutMs: 60_000,
    maxHeaderBytes: 16 * 1024,
    log: () => {},
    handler: (request) => {
      signals.push(request.signal);
      if (new URL(request.url).pathname === "/stream") {
        request.signal.addEventListener("abort", () => streamAborted.resolve());
        // An event stream that never ends on its own: the client going away ends it.
        return Promise.resolve(
          new Response(
            new ReadableStream<Uint8Array>({
              start(controller) {
                controller.enqueue(enc.encode("event: message\ndata: {}\n\n"));
              },
            }),
            { headers: { "content-type": "text/event-stream" } },
          ),
        );
      }
      return Promise.resolve(new Response(`answer ${signals.length}\n`));
    },
  });
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: server.addr.port });
  try {
    const answered = 20;
    let text = "";
    for (let i = 1; i <= answered; i++) {
      await conn.write(enc.encode(`GET /plain HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n`));
      text = await readUntil(conn, "0\r\n\r\n", i, text);
      assert.match(text, new RegExp(`answer ${i}\\n`));
    }
    await conn.write(enc.encode(`GET /stream HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n`));
    await readUntil(conn, "data: {}\n\n", 1);
    assert.equal(signals.length, answered + 1);
    conn.close();
    // The stream in progress sees its client go away...
    await streamAborted.promise;
    // ...and, once what that close set off has run, no request answered before it was aborted.
    await new Promise((resolve) => setTimeout(resolve, 0));
    assert.equal(signals.at(-1)!.aborted, true);
    assert.deepEqual(signals.slice(0, answered).map((s) => s.aborted), Array(answered).fill(false));
  } finally {
    try {
      conn.close();
    } catch {
      // closed above
    }
    server.closeAll();
  }
});
