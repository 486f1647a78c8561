/**
 * One HTTP gateway, many hosts: each upstream session has its own client capabilities, log level and
 * subscriptions over the one set of downstream sessions. Server-to-client requests reach the session
 * whose call caused them; log messages reach every session at its own level; resource updates reach
 * the sessions that subscribed. The hosts are the official SDK client over Streamable HTTP; the servers
 * are our conformance fixture (written from the suite's requirement texts) and server-everything.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  type LoggingMessageNotification,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { DENO, q, REAL, ROOT, serversReady, tempDir, until, writeConfig } from "../helpers.ts";
import { startListener } from "./http_helpers.ts";

const CONFORMANCE = `${ROOT}tests/fixtures/conformance_server.ts`;

interface Host extends AsyncDisposable {
  client: Client;
  logs: LoggingMessageNotification["params"][];
  updates: string[];
  /** Sampling requests this host was asked. */
  sampled: string[];
}

/**
 * An SDK client over HTTP named `name`; with `offer`, it offers sampling and elicitation and answers
 * them with its own name (sampling: the second request and later once `gate` resolves).
 */
async function host(url: string, name: string, offer: boolean, gate?: Promise<void>): Promise<Host> {
  const client = new Client(
    { name, version: "1.0.0" },
    offer ? { capabilities: { sampling: {}, elicitation: {} } } : {},
  );
  const logs: LoggingMessageNotification["params"][] = [];
  const updates: string[] = [];
  const sampled: string[] = [];
  if (offer) {
    client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
      sampled.push((req.params.messages[0]!.content as { text: string }).text);
      if (sampled.length > 1) await gate;
      return {
        model: "m",
        role: "assistant" as const,
        content: { type: "text" as const, text: `from ${name}` },
      };
    });
    client.setRequestHandler(ElicitRequestSchema, () => ({
      action: "accept" as const,
      content: { username: name, email: `${name}@example.com` },
    }));
  }
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(n.params));
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updates.push(n.params.uri));
  const transport = new StreamableHTTPClientTransport(new URL(url));
  await client.connect(transport);
  return {
    client,
    logs,
    updates,
    sampled,
    async [Symbol.asyncDispose]() {
      await transport.terminateSession().catch(() => {});
      await client.close().catch(() => {});
    },
  };
}

function text(result: unknown): string {
  return ((result as { content: { text: string }[] }).content[0]!).text;
}

async function config(dir: string, extra = ""): Promise<string> {
  return await writeConfig(
    dir,
    `servers:
  conf:
    command: ${q(DENO)}
    args: [run, -A, ${q(CONFORMANCE)}]
  everything:
    command: node
    args: [${q(REAL.everything)}, stdio]
${extra}`,
  );
}

Deno.test("HTTP sessions: a server's sampling and elicitation reach the host whose call asked, never another", async () => {
  await using dir = await tempDir();
  await using listener = await startListener(await config(dir.path));
  const gate = Promise.withResolvers<void>();
  await using a = await host(listener.url, "alpha", true, gate.promise);
  await using b = await host(listener.url, "beta", true);
  await using c = await host(listener.url, "gamma", false);

  for (const h of [b, a]) {
    // Only one session's call runs on the server: its request is that session's.
    const result = await h.client.callTool({ name: "conf__test_sampling", arguments: { prompt: "hello" } });
    assert.equal(text(result), `LLM response: from ${h === a ? "alpha" : "beta"}`);
  }
  const ea = await a.client.callTool({ name: "conf__test_elicitation", arguments: { message: "who?" } });
  assert.match(text(ea), /"username":"alpha"/);
  const eb = await b.client.callTool({ name: "conf__test_elicitation", arguments: { message: "who?" } });
  assert.match(text(eb), /"username":"beta"/);

  // a's call waits for its host's answer (held); meanwhile b calls the same server. MCP does not tie
  // the server's second request to b's call, so it goes to neither host, and b's call fails saying so.
  const held = a.client.callTool({ name: "conf__test_sampling", arguments: { prompt: "held" } });
  await until("a's held request", () => Promise.resolve(a.sampled.length === 2 ? true : undefined));
  await assert.rejects(
    b.client.callTool({ name: "conf__test_sampling", arguments: { prompt: "second" } }),
    /sampling\/createMessage not relayed: calls of 2 sessions are running on server "conf"/,
  );
  gate.resolve();
  assert.equal(text(await held), "LLM response: from alpha");
  assert.deepEqual([a.sampled, b.sampled], [["hello", "held"], ["hello"]]);

  // The shared downstream session offers sampling (other hosts have it); this host does not: the
  // server's request is answered as a host without sampling answers it.
  await assert.rejects(
    c.client.callTool({ name: "conf__test_sampling", arguments: { prompt: "x" } }),
    /-32601.*sampling\/createMessage: the host of this session does not offer sampling/,
  );
});

Deno.test("HTTP sessions: each has its own log level; messages come up named, filtered per session", async () => {
  await using dir = await tempDir();
  await using listener = await startListener(await config(dir.path));
  await using a = await host(listener.url, "alpha", false);
  await using b = await host(listener.url, "beta", false);
  await a.client.setLoggingLevel("warning");
  await b.client.setLoggingLevel("debug");
  // The server logs three info messages during b's call: b (debug) gets them, a (warning) does not.
  await b.client.callTool({ name: "conf__test_tool_with_logging", arguments: {} });
  const mine = (h: Host) => h.logs.filter((l) => l.logger === "conf");
  await until("b's three messages", () => Promise.resolve(mine(b).length >= 3 ? true : undefined));
  assert.deepEqual(mine(b).slice(0, 3).map((l) => [l.level, l.data]), [
    ["info", "Tool execution started"],
    ["info", "Tool processing data"],
    ["info", "Tool execution completed"],
  ]);
  // a lowers its level and calls: its stream is ordered, so anything of b's call it had been sent
  // would come before these three.
  await a.client.setLoggingLevel("info");
  await a.client.callTool({ name: "conf__test_tool_with_logging", arguments: {} });
  await until("a's three messages", () => Promise.resolve(mine(a).length >= 3 ? true : undefined));
  assert.deepEqual(mine(a).map((l) => l.data), [
    "Tool execution started",
    "Tool processing data",
    "Tool execution completed",
  ]);
});

Deno.test("HTTP sessions: resource updates reach the sessions that subscribed; one leaving keeps the other's subscription", async () => {
  await using dir = await tempDir();
  await using listener = await startListener(await config(dir.path));
  await using a = await host(listener.url, "alpha", false);
  await using b = await host(listener.url, "beta", false);
  // Merged in config order, one server a page: page on to everything's.
  const listed: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await a.client.listResources(cursor ? { cursor } : {});
    listed.push(...page.resources.map((r) => r.uri).filter((u) => u.startsWith("mcphub://everything/")));
    cursor = page.nextCursor;
  } while (cursor !== undefined && listed.length < 2);
  const [one, two] = [listed[0]!, listed[1]!];
  await a.client.subscribeResource({ uri: one });
  await b.client.subscribeResource({ uri: two });
  // server-everything sends an update for every subscribed URI when updates are switched on, then every 5 s.
  const toggle = () => a.client.callTool({ name: "everything__toggle-subscriber-updates", arguments: {} });
  await toggle();
  await until("both updates", () => Promise.resolve(a.updates.length && b.updates.length ? true : undefined));
  assert.deepEqual(b.updates, [two]); // `one` is sent first: had b been sent it, it would be here already
  await toggle(); // off
  await toggle(); // on: the second round
  await until("a's second update", () => Promise.resolve(a.updates.length >= 2 ? true : undefined));
  assert.deepEqual(a.updates.slice(0, 2), [one, one]);

  // b subscribes to `one` too, then a unsubscribes: the server keeps the subscription for b.
  await b.client.subscribeResource({ uri: one });
  await a.client.unsubscribeResource({ uri: one });
  await toggle(); // off
  const before = b.updates.length;
  await toggle(); // on
  await until(
    "b's update of one",
    () => Promise.resolve(b.updates.slice(before).includes(one) ? true : undefined),
  );
  await toggle(); // off
});

Deno.test("HTTP sessions: a config edit reaches every agent's sessions (views follow hot reload)", async () => {
  await using dir = await tempDir();
  const token = "gamma-token-0123456789abcdef";
  const agents = `agents:\n  gamma:\n    token: \${TOK}\n`;
  const path = await config(dir.path, agents);
  await using listener = await startListener(path, { env: { TOK: token } });
  const transport = new StreamableHTTPClientTransport(new URL(listener.url), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: "gamma-host", version: "1.0.0" });
  let changed = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed++);
  await client.connect(transport);
  try {
    // Both servers connected first: a list_changed from one connecting late (under load, after tools/list's
    // start-up wait) would otherwise pass for the reload's.
    await serversReady(client, { state: "connected" });
    const before = (await client.listTools()).tools.map((t) => t.name);
    assert.ok(
      before.includes("conf__test_simple_text") && before.includes("everything__echo"),
      before.join(),
    );
    const seen = changed;
    // Remove conf: gamma's view drops it and the session hears list_changed.
    await Deno.writeTextFile(
      path,
      `servers:\n  everything:\n    command: node\n    args: [${q(REAL.everything)}, stdio]\n${agents}`,
    );
    await listener.waitFor("config reloaded (file changed)");
    await until("list_changed after the reload", () => Promise.resolve(changed > seen ? true : undefined));
    const after = (await client.listTools()).tools.map((t) => t.name);
    assert.ok(!after.some((n) => n.startsWith("conf__")), after.join(", "));
    assert.ok(after.includes("everything__echo"));
    await assert.rejects(
      client.callTool({ name: "conf__test_simple_text", arguments: {} }),
      /conf__test_simple_text/,
    );
  } finally {
    await transport.terminateSession().catch(() => {});
    await client.close();
  }
});
