/**
 * A 2026-07-28 HTTP server's changes through mcphub (tests/fixtures/modern_server.ts `--http --changes`:
 * the v2 server package's `createMcpHandler`, changes told only on `subscriptions/listen` streams): the
 * gateway listens to the server's list changes, and makes a host's resource subscription a listen naming
 * the URI; a listen stream that drops is listened to again; a host of either revision (a v1 client, the
 * v2 client pinned to 2026-07-28 with its own listen) sees the server's list_changed, the new tool and its
 * resources' updates; the gateway's streams are closed when a host unsubscribes, when the server is
 * removed by a reload and when the gateway stops (the fixture counts the open streams: `GET /listens`).
 *
 * @module
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client";
import {
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { Client as ModernClient } from "npm:@modelcontextprotocol/client@2.4.0";
import { StdioClientTransport } from "npm:@modelcontextprotocol/client@2.4.0/stdio";
import { type Note, Notes, within } from "../gateway/listen_helpers.ts";
import {
  connectGateway,
  DENO,
  FIXTURE,
  q,
  ROOT,
  sandboxSync,
  startHttpServer,
  tempDir,
  writeConfig,
} from "../helpers.ts";

const MODERN = `${ROOT}tests/fixtures/modern_server.ts`;
const SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId";

const text = (result: unknown) =>
  (result as { content: { text: string }[] }).content.map((c) => c.text).join("");

/** The fixture over HTTP with `--changes`; `listens(n)` waits until n listen streams are open on it. */
async function startChanging() {
  const server = await startHttpServer(MODERN, ["--http", "--changes"], {
    what: "the 2026-07-28 fixture",
    stderr: "null",
  });
  const base = `http://127.0.0.1:${server.port}`;
  return {
    url: `${base}/mcp`,
    /** Resolves once exactly `open` listen streams are open, with the number of listens served so far. */
    async listens(open: number): Promise<number> {
      const response = await within(fetch(`${base}/listens?open=${open}`), `${open} open listen streams`);
      return Number(await response.text());
    },
    [Symbol.asyncDispose]: () => server[Symbol.asyncDispose](),
  };
}

Deno.test("a 2026-07-28 HTTP server's changes reach a v1 host through mcphub; a dropped listen is listened to again", async () => {
  await using server = await startChanging();
  await using dir = await tempDir();
  const path = await writeConfig(
    dir.path,
    `servers:
  modern:
    url: ${q(server.url)}
`,
  );
  const notes = new Notes();
  const client = new Client({ name: "v1-host", version: "1.0.0" });
  client.setNotificationHandler(ToolListChangedNotificationSchema, (n) => notes.push(n as Note));
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => notes.push(n as Note));
  const gw = await connectGateway(path, { allowAll: true, client });
  let closed = false;
  try {
    const g = gw.client;
    // The gateway listens to the server's list changes (its capabilities offer tools.listChanged).
    assert.equal(await server.listens(1), 1);
    assert.ok((await g.listTools()).tools.some((t) => t.name === "modern__add_tool"));

    // The server's tools/list_changed reaches the host; the new tool is listed.
    let from = notes.seen.length;
    assert.equal(
      text(await g.callTool({ name: "modern__add_tool", arguments: { name: "fresh" } })),
      "added fresh",
    );
    await notes.next("tools/list_changed", (n) => n.method === "notifications/tools/list_changed", from);
    assert.ok((await g.listTools()).tools.some((t) => t.name === "modern__fresh"));

    // A resource subscription becomes a listen naming the URI downstream; its updates reach the host.
    const a = (await g.listResources()).resources.find((r) => r.name === "a")!.uri;
    assert.deepEqual(await g.subscribeResource({ uri: a }), {});
    assert.equal(await server.listens(2), 2);
    from = notes.seen.length;
    await g.callTool({ name: "modern__touch", arguments: { uri: "note://a" } });
    const updated = await notes.next(
      "resources/updated",
      (n) => n.method === "notifications/resources/updated",
      from,
    );
    assert.deepEqual(updated.params, { uri: a });

    // Both streams drop (no closing result): the gateway listens again, and changes arrive as before.
    assert.equal(text(await g.callTool({ name: "modern__drop_listens", arguments: {} })), "2");
    assert.equal(await server.listens(2), 4);
    from = notes.seen.length;
    await g.callTool({ name: "modern__add_tool", arguments: { name: "later" } });
    await notes.next("tools/list_changed", (n) => n.method === "notifications/tools/list_changed", from);
    assert.ok((await g.listTools()).tools.some((t) => t.name === "modern__later"));
    from = notes.seen.length;
    await g.callTool({ name: "modern__touch", arguments: { uri: "note://a" } });
    await notes.next("resources/updated", (n) => n.method === "notifications/resources/updated", from);

    // Unsubscribed: that listen's stream is closed (the revision's cancellation over HTTP).
    assert.deepEqual(await g.unsubscribeResource({ uri: a }), {});
    assert.equal(await server.listens(1), 4);

    // The gateway stops: no listen stream is left open on the server.
    await gw[Symbol.asyncDispose]();
    closed = true;
    assert.equal(await server.listens(0), 4);
  } finally {
    if (!closed) await gw[Symbol.asyncDispose]();
  }
});

Deno.test("a 2026-07-28 host listening through mcphub to a 2026-07-28 HTTP server; a reload removing the server closes its streams", async () => {
  await using server = await startChanging();
  await using dir = await tempDir();
  const modern = `  modern:
    url: ${q(server.url)}
`;
  const legacy = `  legacy:
    command: ${q(DENO)}
    args: [run, -A, ${q(FIXTURE)}]
`;
  const path = await writeConfig(dir.path, `servers:\n${modern}${legacy}`);
  const box = sandboxSync();
  const transport = new StdioClientTransport({
    command: DENO,
    args: ["run", "-A", `${ROOT}main.ts`, "--config", path, "--db", box.db, "mcp", "serve"],
    env: box.env,
    stderr: "ignore",
  });
  const client = new ModernClient(
    { name: "listen-host", version: "2.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  try {
    await client.connect(transport);
    const notes = new Notes();
    const onmessage = transport.onmessage!;
    transport.onmessage = (message) => {
      const m = message as Note & { id?: unknown };
      if (m.method !== undefined && m.id === undefined) notes.push(structuredClone(m));
      onmessage(message);
    };
    const a = (await client.listResources()).resources.find((r) => r.name === "a")!.uri;
    assert.equal(await server.listens(1), 1);
    const sub = await client.listen({ toolsListChanged: true, resourceSubscriptions: [a] });
    assert.deepEqual(sub.honoredFilter, { toolsListChanged: true, resourceSubscriptions: [a] });
    // The host's URI is subscribed downstream: a listen naming it.
    assert.equal(await server.listens(2), 2);

    let from = notes.seen.length;
    await client.callTool({ name: "modern__add_tool", arguments: { name: "fresh" } });
    const changed = await notes.next(
      "tools/list_changed",
      (n) => n.method === "notifications/tools/list_changed",
      from,
    );
    assert.deepEqual(changed.params, { _meta: { [SUBSCRIPTION]: "listen:0" } });
    assert.ok((await client.listTools()).tools.some((t) => t.name === "modern__fresh"));

    from = notes.seen.length;
    await client.callTool({ name: "modern__touch", arguments: { uri: "note://a" } });
    const updated = await notes.next(
      "resources/updated",
      (n) => n.method === "notifications/resources/updated",
      from,
    );
    assert.deepEqual(updated.params, { uri: a, _meta: { [SUBSCRIPTION]: "listen:0" } });

    // A reload removes the server: its listen streams are closed, nothing keeps listening to it.
    from = notes.seen.length;
    await Deno.writeTextFile(path, `servers:\n${legacy}`);
    await notes.next("tools/list_changed", (n) => n.method === "notifications/tools/list_changed", from);
    assert.equal(await server.listens(0), 2);
    await sub.close();
  } finally {
    await client.close().catch(() => {});
    await box[Symbol.asyncDispose]();
  }
});
