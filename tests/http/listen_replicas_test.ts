/**
 * `subscriptions/listen` across two `--listen` replicas on one store: the v2 client pinned to 2026-07-28
 * (no session) holds its listen on one replica while its calls go to the other. A downstream server both
 * replicas share (tests/fixtures/modern_server.ts `--http --changes`, a 2026-07-28 HTTP server) changes
 * its tools and a resource through a call on the other replica: the listen, on its replica, gets the
 * stamped `notifications/tools/list_changed` and the update of the resource it named; a config reload
 * removing a server (each replica reloads the same file) is told on it too.
 *
 * @module
 */
import assert from "node:assert/strict";
import {
  Client as ModernClient,
  StreamableHTTPClientTransport,
} from "npm:@modelcontextprotocol/client@2.4.0";
import { notesOf, within } from "../gateway/listen_helpers.ts";
import { DENO, FIXTURE, q, ROOT, startHttpServer, tempDir, writeConfig } from "../helpers.ts";
import { startListener } from "./http_helpers.ts";

const MODERN = `${ROOT}tests/fixtures/modern_server.ts`;
const SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId";

Deno.test("a 2026-07-28 host's listen on one replica gets the list_changed and resource update of a change made through the other", async () => {
  const server = await startHttpServer(MODERN, ["--http", "--changes"], {
    what: "the 2026-07-28 fixture",
    stderr: "null",
  });
  await using _server = server;
  const base = `http://127.0.0.1:${server.port}`;
  /** Resolves once exactly `open` listen streams are open on the shared server. */
  const listens = async (open: number) => {
    const response = await within(fetch(`${base}/listens?open=${open}`), `${open} open listen streams`);
    return Number(await response.text());
  };
  await using dir = await tempDir();
  const path = await writeConfig(
    dir.path,
    `servers:\n  shared:\n    url: ${q(`${base}/mcp`)}\n  more:\n    command: ${
      q(DENO)
    }\n    args: [run, -A, ${q(FIXTURE)}]\n`,
  );
  const db = `${dir.path}/shared.db`;
  await using a = await startListener(path, { db });
  await using b = await startListener(path, { db });
  // Each replica listens to the shared server's list changes (its own gateway's listen).
  await listens(2);

  // A load balancer with no affinity: the listen goes to A, every call to B, the rest alternate.
  let turn = 0;
  const posted: { origin: string; method: string | null }[] = [];
  const route = (input: string | URL | Request, init?: RequestInit) => {
    const headers = new Headers(init?.headers);
    const method = headers.get("mcp-method");
    const target = new URL(
      method === "subscriptions/listen"
        ? a.url
        : method === "tools/call"
        ? b.url
        : [a.url, b.url][turn++ % 2]!,
    );
    const url = new URL(input instanceof Request ? input.url : String(input));
    url.host = target.host;
    posted.push({ origin: url.origin, method });
    return fetch(url, init);
  };
  const transport = new StreamableHTTPClientTransport(new URL(a.url), { fetch: route });
  const client = new ModernClient(
    { name: "listen-replicas", version: "2.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await client.connect(transport);
  const notes = notesOf(transport);
  try {
    const uri = (await client.listResources()).resources.find((r) => r.name === "a")!.uri;
    assert.match(uri, /^mcphub:\/\/shared\//);
    const listen = await client.listen({ toolsListChanged: true, resourceSubscriptions: [uri] });
    assert.deepEqual(listen.honoredFilter, { toolsListChanged: true, resourceSubscriptions: [uri] });
    // A subscribed the URI downstream: a third listen stream on the shared server.
    await listens(3);

    // Through B: a resource update, then a new tool.
    await client.callTool({ name: "shared__touch", arguments: { uri: "note://a" } });
    const updated = await notes.next(
      "resources/updated",
      (n) => n.method === "notifications/resources/updated",
    );
    assert.deepEqual(updated.params, { uri, _meta: { [SUBSCRIPTION]: "listen:0" } });
    await client.callTool({ name: "shared__add_tool", arguments: { name: "fresh" } });
    const changed = await notes.next(
      "tools/list_changed",
      (n) => n.method === "notifications/tools/list_changed",
    );
    assert.deepEqual(changed.params, { _meta: { [SUBSCRIPTION]: "listen:0" } });
    // Listed on either replica, the new tool is there.
    for (let i = 0; i < 2; i++) {
      assert.ok((await client.listTools()).tools.some((t) => t.name === "shared__fresh"));
    }

    // A config reload removing a server (a stdio one: each replica runs its own) is told on A too.
    const from = notes.seen.length;
    await Deno.writeTextFile(path, `servers:\n  shared:\n    url: ${q(`${base}/mcp`)}\n`);
    await notes.next(
      "tools/list_changed after the reload",
      (n) => n.method === "notifications/tools/list_changed",
      from,
    );
    assert.ok(!(await client.listTools()).tools.some((t) => t.name === "more__echo"));

    // The listen was held by A; the calls were answered by B; lists went to both.
    const origin = (
      method: string,
    ) => [...new Set(posted.filter((p) => p.method === method).map((p) => p.origin))];
    assert.deepEqual(origin("subscriptions/listen"), [a.origin]);
    assert.deepEqual(origin("tools/call"), [b.origin]);
    assert.deepEqual(origin("tools/list").sort(), [a.origin, b.origin].sort());
  } finally {
    await client.close().catch(() => {});
  }
});
