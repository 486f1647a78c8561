/**
 * `subscriptions/listen` (MCP 2026-07-28) on mcphub's stdio: the v2 client pinned to 2026-07-28 listens
 * to the gateway and receives its list_changed (a downstream's own, and a hot reload adding a server) and
 * the updates of the resources it named, stamped with its listen's id, scoped to its agent; a
 * 2026-07-28-only downstream (tests/fixtures/notify_server.ts with `--legacy reject`) is listened to by
 * the gateway, so its changes reach hosts of either revision (a v1 host as ordinary notifications).
 *
 * @module
 */
import assert from "node:assert/strict";
import { Client as ModernClient } from "npm:@modelcontextprotocol/client@2.4.0";
import { StdioClientTransport } from "npm:@modelcontextprotocol/client@2.4.0/stdio";
import { Client } from "@modelcontextprotocol/sdk/client";
import { type Note, Notes, NOTIFY, within } from "./listen_helpers.ts";
import {
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { connectGateway, DENO, FIXTURE, q, ROOT, sandboxSync, tempDir, writeConfig } from "../helpers.ts";

const SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId";

const text = (result: unknown) =>
  (result as { content: { text: string }[] }).content.map((c) => c.text).join("");

/** The v2 client pinned to 2026-07-28 over stdio to `mcphub mcp serve`; `notes` gets what arrives raw. */
async function modernHost(path: string, args: string[] = []) {
  const box = sandboxSync();
  const transport = new StdioClientTransport({
    command: DENO,
    args: ["run", "-A", `${ROOT}main.ts`, "--config", path, "--db", box.db, "mcp", "serve", ...args],
    env: box.env,
    stderr: "ignore",
  });
  const client = new ModernClient(
    { name: "listen-host", version: "2.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await client.connect(transport);
  const notes = new Notes();
  const onmessage = transport.onmessage!;
  transport.onmessage = (message) => {
    const m = message as Note & { id?: unknown };
    if (m.method !== undefined && m.id === undefined) notes.push(structuredClone(m));
    onmessage(message);
  };
  return {
    client,
    notes,
    pid: transport.pid!,
    async [Symbol.asyncDispose]() {
      await client.close().catch(() => {});
      await box[Symbol.asyncDispose]();
    },
  };
}

for (const legacy of ["serve", "reject"]) {
  const downstream = legacy === "serve" ? "a server of both eras" : "a 2026-07-28-only server";
  Deno.test(`a 2026-07-28 host listens on stdio (${downstream}): list_changed (downstream's, reload's) and its resources' updates`, async () => {
    await using dir = await tempDir();
    const servers = `servers:
  notes:
    command: ${q(DENO)}
    args: [run, -A, ${q(NOTIFY)}, --legacy, ${legacy}]
  other:
    command: ${q(DENO)}
    args: [run, -A, ${q(NOTIFY)}]
`;
    const agents = (names: string) =>
      `agents:
  a:
    servers: [${names}]
`;
    const path = await writeConfig(dir.path, servers + agents("notes"));
    await using host = await modernHost(path, ["--agent", "a"]);
    const c = host.client;
    const resources = (await c.listResources()).resources;
    const a = resources.find((r) => r.name === "a")!.uri;
    assert.match(a, /^mcphub:\/\/notes\//);
    assert.ok(!resources.some((r) => r.uri.startsWith("mcphub://other/")), "other is outside agent a");
    const outside = a.replace("mcphub://notes/", "mcphub://other/");
    const sub = await c.listen({
      toolsListChanged: true,
      promptsListChanged: true,
      resourcesListChanged: true,
      resourceSubscriptions: [a, outside],
    });
    // What the gateway honors: its list changes, and the URI in the agent's scope only.
    assert.deepEqual(sub.honoredFilter, {
      toolsListChanged: true,
      promptsListChanged: true,
      resourcesListChanged: true,
      resourceSubscriptions: [a],
    });
    const ack = host.notes.seen.find((n) => n.method === "notifications/subscriptions/acknowledged")!;
    assert.equal(
      ack.params?._meta && (ack.params._meta as Record<string, unknown>)[SUBSCRIPTION],
      "listen:0",
    );

    // A resource update of the server reaches the host under the URI it named, stamped.
    let from = host.notes.seen.length;
    assert.equal(
      text(await c.callTool({ name: "notes__touch", arguments: { uri: "note://a" } })),
      "touched note://a",
    );
    const updated = await host.notes.next(
      "resources/updated",
      (n) => n.method === "notifications/resources/updated",
      from,
    );
    assert.deepEqual(updated.params, { uri: a, _meta: { [SUBSCRIPTION]: "listen:0" } });

    // The server's own tools/list_changed: the gateway's list changed, so the host is told.
    from = host.notes.seen.length;
    await c.callTool({ name: "notes__add_tool", arguments: { name: "fresh" } });
    const changed = await host.notes.next(
      "tools/list_changed",
      (n) => n.method === "notifications/tools/list_changed",
      from,
    );
    assert.deepEqual(changed.params, { _meta: { [SUBSCRIPTION]: "listen:0" } });
    assert.ok((await c.listTools()).tools.some((t) => t.name === "notes__fresh"));

    // A hot reload adds a server to the agent: list_changed again, and its tools are listed.
    from = host.notes.seen.length;
    await Deno.writeTextFile(
      path,
      servers + `  legacy:
    command: ${q(DENO)}
    args: [run, -A, ${q(FIXTURE)}]
` + agents("notes, legacy"),
    );
    await host.notes.next(
      "tools/list_changed after reload",
      (n) => n.method === "notifications/tools/list_changed",
      from,
    );
    // (Listed after each list_changed until the new server's tools are in: it may still be connecting.)
    for (;;) {
      const mark = host.notes.seen.length;
      if ((await c.listTools()).tools.some((t) => t.name === "legacy__echo")) break;
      await host.notes.next(
        "the next list_changed",
        (n) => n.method === "notifications/tools/list_changed",
        mark,
      );
    }

    // Closed by the host: its subscription ends (the gateway gives the server's subscription back).
    await sub.close();
    assert.equal(await within(sub.closed, "the closed listen"), "local");
    // Still open when the gateway stops (SIGTERM): it ends with the listen's closing result.
    const last = await c.listen({ toolsListChanged: true });
    Deno.kill(host.pid, "SIGTERM");
    assert.equal(await within(last.closed, "the listen ended by the stop"), "graceful");
  });
}

Deno.test("a v1 host in front of a 2026-07-28-only server gets its changes as ordinary notifications", async () => {
  await using dir = await tempDir();
  const path = await writeConfig(
    dir.path,
    `servers:
  notes:
    command: ${q(DENO)}
    args: [run, -A, ${q(NOTIFY)}, --legacy, reject]
`,
  );
  const notes = new Notes();
  const client = new Client({ name: "v1-host", version: "1.0.0" });
  client.setNotificationHandler(ToolListChangedNotificationSchema, (n) => notes.push(n));
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => notes.push(n));
  client.setNotificationHandler(ResourceListChangedNotificationSchema, (n) => notes.push(n));
  await using gw = await connectGateway(path, { allowAll: true, client });
  const g = gw.client;
  const a = (await g.listResources()).resources.find((r) => r.name === "a")!.uri;
  await g.listTools();
  // resources/subscribe becomes a listen naming the URI downstream; its updates come back as 2025's.
  assert.deepEqual(await g.subscribeResource({ uri: a }), {});
  await g.callTool({ name: "notes__touch", arguments: { uri: "note://a" } });
  const updated = await notes.next(
    "resources/updated",
    (n) => n.method === "notifications/resources/updated",
  );
  assert.deepEqual(updated.params, { uri: a });
  // The server's tools/list_changed (on the gateway's own listen) reaches the host as the gateway's.
  await g.callTool({ name: "notes__add_tool", arguments: { name: "fresh" } });
  const changed = await notes.next(
    "tools/list_changed",
    (n) => n.method === "notifications/tools/list_changed",
  );
  assert.equal(changed.params, undefined);
  assert.ok((await g.listTools()).tools.some((t) => t.name === "notes__fresh"));
  // Its resources/list_changed too.
  await g.callTool({ name: "notes__add_resource", arguments: { name: "c" } });
  await notes.next("resources/list_changed", (n) => n.method === "notifications/resources/list_changed");
  assert.ok((await g.listResources()).resources.some((r) => r.name === "c"));
  // Unsubscribed: its listen is cancelled downstream; a touch after it reaches no one.
  assert.deepEqual(await g.unsubscribeResource({ uri: a }), {});
  const before = notes.seen.length;
  await g.callTool({ name: "notes__touch", arguments: { uri: "note://a" } });
  // A later change that does arrive shows the order: the touch's update would have come before it.
  await g.callTool({ name: "notes__add_tool", arguments: { name: "later" } });
  await notes.next("tools/list_changed", (n) => n.method === "notifications/tools/list_changed", before);
  assert.ok(!notes.seen.slice(before).some((n) => n.method === "notifications/resources/updated"));
});

Deno.test("the v2 client's own listChanged option (an automatic listen) refreshes its tools through mcphub", async () => {
  await using dir = await tempDir();
  const path = await writeConfig(
    dir.path,
    `servers:
  notes:
    command: ${q(DENO)}
    args: [run, -A, ${q(NOTIFY)}, --legacy, reject]
`,
  );
  const box = sandboxSync();
  const transport = new StdioClientTransport({
    command: DENO,
    args: ["run", "-A", `${ROOT}main.ts`, "--config", path, "--db", box.db, "mcp", "serve"],
    env: box.env,
    stderr: "ignore",
  });
  const lists: string[][] = [];
  let changed: () => void = () => {};
  const client = new ModernClient({ name: "auto-listen", version: "2.0.0" }, {
    versionNegotiation: { mode: { pin: "2026-07-28" } },
    listChanged: {
      tools: {
        debounceMs: 0,
        onChanged: (_error, tools) => {
          lists.push((tools ?? []).map((t) => t.name));
          changed();
        },
      },
    },
  });
  try {
    await client.connect(transport);
    await client.listTools();
    const sub = client.autoOpenedSubscription!;
    assert.ok(sub, "the client opened its listen");
    assert.deepEqual(sub.honoredFilter, { toolsListChanged: true });
    await client.callTool({ name: "notes__add_tool", arguments: { name: "auto" } });
    // Each refresh the client makes on a list_changed (an earlier one may come from servers connecting).
    while (!lists.at(-1)?.includes("notes__auto")) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await new Promise<void>((resolve, reject) => {
        changed = resolve;
        timer = setTimeout(
          () => reject(new Error(`no refresh with notes__auto: ${JSON.stringify(lists)}`)),
          60_000,
        );
      }).finally(() => clearTimeout(timer));
    }
  } finally {
    await client.close().catch(() => {});
    await box[Symbol.asyncDispose]();
  }
});
