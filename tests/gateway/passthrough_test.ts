/**
 * A transparent gateway: resources, prompts, completion, logging, sampling, elicitation and roots
 * through `mcphub mcp serve`, compared side by side with a direct connection to the same server
 * (server-everything), driven by the official SDK Client with host handlers.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client";
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { LoggingMessageNotification } from "@modelcontextprotocol/sdk/types.js";
import {
  connectDirect,
  connectGateway,
  DENO,
  FIXTURE,
  q,
  REAL,
  tempDir,
  until,
  within,
  writeConfig,
} from "../helpers.ts";
import { namespaceTemplate, namespaceUri, splitUri } from "../../src/hub/uris.ts";
import {
  clipBytes,
  INSTRUCTIONS_PER_SERVER_BYTES,
  INSTRUCTIONS_TOTAL_BYTES,
  serverInstructions,
} from "../../src/gateway/passthrough.ts";

const ROOTS = [{ uri: "file:///tmp/mcphub-roots-test", name: "test root" }];
/** The roots the gateway's host answers with (changed by the list_changed step). */
let hostRoots = ROOTS;

/** An SDK client as a host that offers sampling, elicitation and roots, recording what it was asked. */
function host(name: string, offer = true): { client: Client; logs: LoggingMessageNotification["params"][] } {
  const client = new Client(
    { name, version: "1.0.0" },
    offer ? { capabilities: { sampling: {}, elicitation: {}, roots: { listChanged: true } } } : {},
  );
  const logs: LoggingMessageNotification["params"][] = [];
  if (offer) {
    client.setRequestHandler(CreateMessageRequestSchema, (req) => {
      const first = req.params.messages[0]!.content as { text?: string };
      return {
        model: "test-model",
        role: "assistant" as const,
        content: { type: "text" as const, text: `sampled: ${first.text}` },
      };
    });
    client.setRequestHandler(ElicitRequestSchema, () => ({
      action: "accept" as const,
      content: { name: "Ada", check: true },
    }));
    client.setRequestHandler(
      ListRootsRequestSchema,
      () => ({ roots: name === "gateway" ? hostRoots : ROOTS }),
    );
  }
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => collect(logs, n.params));
  return { client, logs };
}

function everything(name = "everything"): string {
  return `  ${name}:\n    command: node\n    args: [${q(REAL.everything)}, stdio]\n`;
}

async function allPages<T>(
  list: (cursor?: string) => Promise<{ nextCursor?: string } & Record<string, unknown>>,
  key: string,
): Promise<{ items: T[]; pages: number }> {
  const items: T[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await list(cursor);
    items.push(...(page[key] as T[]));
    cursor = page.nextCursor;
    pages++;
  } while (cursor !== undefined);
  return { items, pages };
}

/** Fired on every item a handler collects (a log message, a resources/updated): what `waitFor` waits on. */
const arrivals = new EventTarget();

/** Adds `item` to `items` (a notification handler's record) and says so to every `waitFor`. */
function collect<T>(items: T[], item: T): void {
  items.push(item);
  arrivals.dispatchEvent(new Event("item"));
}

/**
 * Resolves with the first collected item matching `test`: one already there, or on the arrival that brings it
 * (no polling); fails loudly at the deadline, naming `what`.
 */
async function waitFor<T>(items: T[], test: (item: T) => boolean, what: string): Promise<T> {
  let check = () => {};
  try {
    return await within(
      new Promise<T>((resolve) => {
        check = () => {
          const found = items.find(test);
          if (found !== undefined) resolve(found);
        };
        arrivals.addEventListener("item", check);
        check();
      }),
      `${what} (${items.length} collected)`,
    );
  } finally {
    arrivals.removeEventListener("item", check);
  }
}

const text = (result: unknown) =>
  (result as { content: { type: string; text?: string }[] }).content.map((c) => c.text ?? c.type).join(
    "\n",
  );

Deno.test("server-everything through mcphub answers as a direct connection does", async (t) => {
  await using dir = await tempDir();
  const path = await writeConfig(dir.path, `servers:\n${everything()}`);
  const direct = host("direct");
  await connectDirect("node", [REAL.everything, "stdio"], undefined, direct.client);
  const viaHub = host("gateway");
  await using gw = await connectGateway(path, { client: viaHub.client });
  const d = direct.client;
  const g = gw.client;
  try {
    await t.step("capabilities: the union, stable from initialize", () => {
      assert.deepEqual(g.getServerCapabilities(), {
        tools: { listChanged: true },
        resources: { subscribe: true, listChanged: true },
        prompts: { listChanged: true },
        logging: {},
        completions: {},
      });
    });

    await t.step(
      "client capabilities reach the server: its sampling/elicitation/roots tools appear",
      async () => {
        const direct = (await d.listTools()).tools.map((x) => x.name).sort();
        const mounted = (await g.listTools()).tools.map((x) => x.name).filter((n) =>
          n.startsWith("everything__")
        ).map((n) => n.slice("everything__".length)).sort();
        for (const name of ["get-roots-list", "trigger-elicitation-request", "trigger-sampling-request"]) {
          assert.ok(direct.includes(name), name);
        }
        assert.deepEqual(mounted, direct);
      },
    );

    await t.step("resources/list: every page, URIs namespaced", async () => {
      const want = await allPages((cursor) => d.listResources(cursor ? { cursor } : {}), "resources");
      const got = await allPages((cursor) => g.listResources(cursor ? { cursor } : {}), "resources");
      assert.ok(want.items.length > 0);
      assert.equal(got.pages, want.pages);
      assert.deepEqual(
        got.items,
        (want.items as { uri: string }[]).map((r) => ({ ...r, uri: namespaceUri("everything", r.uri) })),
      );
    });

    await t.step("resources/templates/list, and a template expanded by the host reads back", async () => {
      const want = (await d.listResourceTemplates()).resourceTemplates;
      const got = (await g.listResourceTemplates()).resourceTemplates;
      assert.deepEqual(
        got,
        want.map((r) => ({ ...r, uriTemplate: namespaceTemplate("everything", r.uriTemplate) })),
      );
      const template = want[0]!.uriTemplate;
      const expanded = got[0]!.uriTemplate.replace(/\{[^}]*\}/, "3");
      const original = template.replace(/\{[^}]*\}/, "3");
      assert.deepEqual(splitUri(expanded), { server: "everything", uri: original });
      // The dynamic resource says when each server process made it (to the second): not compared.
      const made = (value: unknown) =>
        JSON.parse(JSON.stringify(value).replace(/created at \d{1,2}:\d\d:\d\d [AP]M/g, "created at T"));
      const a = await d.readResource({ uri: original });
      const b = await g.readResource({ uri: expanded });
      assert.match(JSON.stringify(b), /created at \d{1,2}:\d\d:\d\d [AP]M/);
      assert.deepEqual(made(b), {
        ...made(a),
        contents: a.contents.map((c) => ({ ...made(c), uri: c.uri === original ? expanded : c.uri })),
      });
    });

    await t.step("resources/read: byte for byte, text and blob", async () => {
      const listed = (await d.listResources()).resources;
      for (const r of listed) {
        const a = await d.readResource({ uri: r.uri });
        const b = await g.readResource({ uri: namespaceUri("everything", r.uri) });
        assert.deepEqual(b.contents.map((c) => ({ ...c, uri: splitUri(c.uri)!.uri })), a.contents, r.uri);
      }
    });

    await t.step("resource links in a tool result read back through the gateway", async () => {
      const a = await d.callTool({ name: "get-resource-links", arguments: { count: 2 } });
      const b = await g.callTool({ name: "everything__get-resource-links", arguments: { count: 2 } });
      const links = (b.content as { type: string; uri?: string }[]).filter((c) => c.type === "resource_link");
      const direct = (a.content as { type: string; uri?: string }[]).filter((c) =>
        c.type === "resource_link"
      );
      assert.equal(links.length, 2);
      assert.deepEqual(links.map((l) => splitUri(l.uri!)!.uri), direct.map((l) => l.uri));
      for (const [i, link] of links.entries()) {
        const x = await d.readResource({ uri: direct[i]!.uri! });
        const y = await g.readResource({ uri: link.uri! });
        assert.equal(
          JSON.stringify(y.contents.map((c) => ({ ...c, uri: splitUri(c.uri)!.uri }))),
          JSON.stringify(x.contents),
        );
      }
    });

    await t.step("prompts/list and prompts/get", async () => {
      const want = (await d.listPrompts()).prompts;
      const got = (await g.listPrompts()).prompts;
      assert.deepEqual(
        got,
        want.map((p) => ({
          ...p,
          name: `everything__${p.name}`,
          ...(p.description !== undefined ? { description: `[everything] ${p.description}` } : {}),
        })),
      );
      const a = await d.getPrompt({ name: "args-prompt", arguments: { city: "Oslo", state: "Viken" } });
      const b = await g.getPrompt({
        name: "everything__args-prompt",
        arguments: { city: "Oslo", state: "Viken" },
      });
      assert.deepEqual(b, a);
      const c = await d.getPrompt({
        name: "resource-prompt",
        arguments: { resourceType: "Text", resourceId: "2" },
      });
      const e = await g.getPrompt({
        name: "everything__resource-prompt",
        arguments: { resourceType: "Text", resourceId: "2" },
      });
      assert.equal(e.messages.length, c.messages.length);
      const embedded = e.messages.find((m) => m.content.type === "resource")!.content as {
        resource: { uri: string };
      };
      assert.equal(splitUri(embedded.resource.uri)!.server, "everything");
    });

    await t.step("completion/complete, by prompt and by resource template", async () => {
      const a = await d.complete({
        ref: { type: "ref/prompt", name: "completable-prompt" },
        argument: { name: "department", value: "E" },
      });
      const b = await g.complete({
        ref: { type: "ref/prompt", name: "everything__completable-prompt" },
        argument: { name: "department", value: "E" },
      });
      assert.ok(a.completion.values.length > 0);
      assert.deepEqual(b, a);
      const template = (await d.listResourceTemplates()).resourceTemplates[0]!.uriTemplate;
      const c = await d.complete({
        ref: { type: "ref/resource", uri: template },
        argument: { name: "resourceId", value: "" },
      });
      const e = await g.complete({
        ref: { type: "ref/resource", uri: namespaceTemplate("everything", template) },
        argument: { name: "resourceId", value: "" },
      });
      assert.deepEqual(e, c);
    });

    await t.step("sampling and elicitation: the host's answers reach the tool's result", async () => {
      const args = { prompt: "hello", maxTokens: 5 };
      const a = await d.callTool({ name: "trigger-sampling-request", arguments: args });
      const b = await g.callTool({ name: "everything__trigger-sampling-request", arguments: args });
      assert.match(text(a), /sampled: /);
      assert.equal(text(b), text(a));
      const x = await d.callTool({ name: "trigger-elicitation-request", arguments: {} });
      const y = await g.callTool({ name: "everything__trigger-elicitation-request", arguments: {} });
      assert.match(text(x), /Name: Ada/);
      assert.equal(text(y), text(x));
    });

    await t.step("roots: the server sees the host's roots; its log message comes up named", async () => {
      const a = await d.callTool({ name: "get-roots-list", arguments: {} });
      const b = await g.callTool({ name: "everything__get-roots-list", arguments: {} });
      assert.match(text(a), /mcphub-roots-test/);
      assert.equal(text(b), text(a));
      const want = await waitFor(direct.logs, (l) => /Roots updated/.test(String(l.data)), "direct log");
      const got = await waitFor(viaHub.logs, (l) => /Roots updated/.test(String(l.data)), "gateway log");
      assert.deepEqual(got, { ...want, logger: `everything/${want.logger}` });
    });

    await t.step("roots list_changed from the host reaches the server", async () => {
      hostRoots = [{ uri: "file:///tmp/mcphub-roots-changed", name: "changed" }];
      const before = viaHub.logs.length;
      await g.sendRootsListChanged();
      await waitFor(
        viaHub.logs,
        (l) => viaHub.logs.indexOf(l) >= before && /Roots updated/.test(String(l.data)),
        "roots re-read",
      );
      const b = await g.callTool({ name: "everything__get-roots-list", arguments: {} });
      assert.match(text(b), /mcphub-roots-changed/);
      hostRoots = ROOTS;
    });

    await t.step("logging/setLevel fans out; subscribe and updated notifications", async () => {
      await g.setLoggingLevel("debug");
      const updates: string[] = [];
      g.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => collect(updates, n.params.uri));
      const uri = (await d.listResources()).resources[0]!.uri;
      await g.subscribeResource({ uri: namespaceUri("everything", uri) });
      const ack = await waitFor(
        viaHub.logs,
        (l) => String(l.data).startsWith("Received Subscribe Resource request"),
        "subscribe ack",
      );
      assert.equal(ack.logger, "everything");
      assert.equal(String(ack.data).trim(), `Received Subscribe Resource request for URI: ${uri}`);
      await g.callTool({ name: "everything__toggle-subscriber-updates", arguments: {} });
      await waitFor(updates, (u) => u === namespaceUri("everything", uri), "resources/updated");
      await g.unsubscribeResource({ uri: namespaceUri("everything", uri) });
      await g.callTool({ name: "everything__toggle-subscriber-updates", arguments: {} });
    });

    await t.step("errors: an unknown URI or prompt", async () => {
      await assert.rejects(g.readResource({ uri: "demo://resource/static/document/1" }), /mcphub:\/\/SERVER/);
      await assert.rejects(g.readResource({ uri: "mcphub://nosuch/x" }), /no server "nosuch"/);
      await assert.rejects(g.getPrompt({ name: "everything__nope" }), /unknown prompt/);
    });
  } finally {
    await d.close();
  }
});

Deno.test("a host without sampling, elicitation or roots: the server never sees them offered", async () => {
  await using dir = await tempDir();
  const path = await writeConfig(dir.path, `servers:\n${everything()}`);
  const direct = host("direct", false);
  await connectDirect("node", [REAL.everything, "stdio"], undefined, direct.client);
  const viaHub = host("gateway", false);
  await using gw = await connectGateway(path, { client: viaHub.client });
  try {
    const want = (await direct.client.listTools()).tools.map((x) => x.name).sort();
    const got = (await gw.client.listTools()).tools.map((x) => x.name).filter((n) =>
      n.startsWith("everything__")
    ).map((n) => n.slice("everything__".length)).sort();
    assert.ok(!want.includes("trigger-sampling-request"));
    assert.deepEqual(got, want);
  } finally {
    await direct.client.close();
  }
});

Deno.test("two servers: resources paginate across both, prompts do not collide, scope hides", async (t) => {
  await using dir = await tempDir();
  const path = await writeConfig(
    dir.path,
    `servers:\n${everything("a")}${everything("b")}agents:\n  only-a:\n    servers: [a]\n` +
      `  tools-only:\n    tools: [a__echo, b__simple-prompt]\n`,
  );
  await t.step("pagination: a's pages, then b's", async () => {
    await using gw = await connectGateway(path, { client: host("gateway").client });
    const got = await allPages(
      (cursor) => gw.client.listResources(cursor ? { cursor } : {}),
      "resources",
    );
    const servers = (got.items as { uri: string }[]).map((r) => splitUri(r.uri)!.server);
    const half = servers.length / 2;
    assert.ok(half > 0);
    assert.deepEqual(servers, [...Array(half).fill("a"), ...Array(half).fill("b")]);
    assert.ok(got.pages >= 2);
    await assert.rejects(gw.client.listResources({ cursor: "not-a-cursor" }), /invalid cursor/);
    const prompts = (await gw.client.listPrompts()).prompts.map((p) => p.name);
    assert.ok(prompts.includes("a__simple-prompt") && prompts.includes("b__simple-prompt"));
    assert.equal(new Set(prompts).size, prompts.length);
  });
  await t.step("an agent scoped to a: b's resources, prompts and completions do not exist", async () => {
    await using gw = await connectGateway(path, {
      client: host("gateway").client,
      args: ["--agent", "only-a"],
    });
    const got = await allPages((c) => gw.client.listResources(c ? { cursor: c } : {}), "resources");
    assert.ok((got.items as { uri: string }[]).every((r) => splitUri(r.uri)!.server === "a"));
    const uri = splitUri((got.items as { uri: string }[])[0]!.uri)!.uri;
    await assert.rejects(gw.client.readResource({ uri: namespaceUri("b", uri) }), /no server "b"/);
    const prompts = (await gw.client.listPrompts()).prompts.map((p) => p.name);
    assert.ok(prompts.length > 0 && prompts.every((n) => n.startsWith("a__")));
    await assert.rejects(gw.client.getPrompt({ name: "b__simple-prompt" }), /unknown prompt/);
    await assert.rejects(
      gw.client.complete({
        ref: { type: "ref/prompt", name: "b__completable-prompt" },
        argument: { name: "department", value: "E" },
      }),
      /unknown prompt/,
    );
  });
  await t.step("an agent with a tool allowlist: no resources, only the prompts it names", async () => {
    await using gw = await connectGateway(path, {
      client: host("gateway").client,
      args: ["--agent", "tools-only"],
    });
    assert.deepEqual((await gw.client.listResources()).resources, []);
    assert.deepEqual((await gw.client.listResourceTemplates()).resourceTemplates, []);
    await assert.rejects(
      gw.client.readResource({ uri: namespaceUri("a", "demo://resource/static/document/1") }),
    );
    assert.deepEqual((await gw.client.listPrompts()).prompts.map((p) => p.name), ["b__simple-prompt"]);
    await assert.rejects(gw.client.getPrompt({ name: "a__simple-prompt" }), /unknown prompt/);
  });
});

Deno.test("cancellation flows both ways through a relayed sampling request", async (t) => {
  await using dir = await tempDir();
  const state = `${dir.path}/state`;
  await Deno.mkdir(state);
  const path = await writeConfig(
    dir.path,
    `servers:\n  fx:\n    command: ${q(DENO)}\n    args: [run, -A, ${q(FIXTURE)}, --state, ${q(state)}]\n`,
  );
  // The host's sampling handler answers its first request (the SDK ignores the cancellation of a request
  // with id 0, directly as through the gateway), then never answers; it records when a request is cancelled.
  const client = new Client({ name: "host", version: "1.0.0" }, { capabilities: { sampling: {} } });
  let asked = Promise.withResolvers<void>();
  let aborted = Promise.withResolvers<string>();
  let first = true;
  client.setRequestHandler(CreateMessageRequestSchema, (_req, extra) => {
    if (first) {
      first = false;
      return { model: "m", role: "assistant" as const, content: { type: "text" as const, text: "warm" } };
    }
    asked.resolve();
    return new Promise((_, reject) => {
      extra.signal.addEventListener("abort", () => {
        aborted.resolve(String(extra.signal.reason));
        reject(new Error("cancelled"));
      });
    });
  });
  await using _gw = await connectGateway(path, { client });
  const warm = await client.callTool({ name: "fx__sample", arguments: {} });
  assert.equal(text(warm), 'sampled: {"type":"text","text":"warm"}');
  await t.step("the server gives up (its timeout): the host's request is cancelled", async () => {
    const result = await client.callTool({ name: "fx__sample", arguments: { timeout_ms: 300 } });
    assert.equal(result.isError, true);
    assert.match(text(result), /sampling failed: .*timed out/i);
    await aborted.promise;
  });
  await t.step(
    "the host cancels the call: the server's call and its sampling request are cancelled",
    async () => {
      asked = Promise.withResolvers<void>();
      aborted = Promise.withResolvers<string>();
      const controller = new AbortController();
      const call = client.callTool({ name: "fx__sample", arguments: {} }, undefined, {
        signal: controller.signal,
      });
      await asked.promise;
      controller.abort("host gave up");
      await assert.rejects(call, /host gave up/);
      await aborted.promise;
      assert.ok((await Deno.readTextFile(`${state}/cancelled`)).length > 0);
    },
  );
});

Deno.test("instructions: each server's own, bounded, from the second start on (cached), in both modes", async () => {
  await using dir = await tempDir();
  const direct = await connectDirect("node", [REAL.everything, "stdio"]);
  const own = direct.getInstructions()!;
  await direct.close();
  assert.ok(own.length > 0);
  const db = `${dir.path}/store.db`;
  for (const expose of ["all", "lazy"]) {
    const path = await writeConfig(dir.path, `expose: ${expose}\nservers:\n${everything()}`);
    {
      // The first start learns them (servers connect after initialize) and lists them in list_servers.
      await using gw = await connectGateway(path, { db });
      await gw.client.listResources(); // waits for the first connection attempts
      const listed = await gw.client.callTool({ name: "list_servers", arguments: {} });
      const servers = (listed.structuredContent as { servers: { instructions?: string }[] }).servers;
      assert.equal(servers[0]!.instructions, clipBytes(own, 16 * 1024));
    }
    await using gw = await connectGateway(path, { db });
    const got = gw.client.getInstructions()!;
    const section = serverInstructions([{ name: "everything", instructions: own }]);
    assert.ok(got.endsWith(`\n${section}`), got.slice(-300));
    assert.ok(section.startsWith(`Server instructions:\n[everything] ${own.trim().slice(0, 100)}`));
  }
});

Deno.test("serverInstructions: bounded per server and in all, naming what is left out", () => {
  assert.equal(serverInstructions([{ name: "a" }, { name: "b", instructions: "  " }]), "");
  assert.equal(
    serverInstructions([{ name: "a", instructions: "Use x." }]),
    "Server instructions:\n[a] Use x.",
  );
  const long = "é".repeat(INSTRUCTIONS_PER_SERVER_BYTES);
  const one = serverInstructions([{ name: "a", instructions: long }]);
  assert.ok(one.endsWith("\nSome instructions were cut (…); list_servers shows them whole."));
  const line = one.split("\n")[1]!;
  assert.ok(new TextEncoder().encode(line).length <= INSTRUCTIONS_PER_SERVER_BYTES + 4);
  const many = serverInstructions(
    Array.from({ length: 6 }, (_, i) => ({ name: `s${i}`, instructions: "x".repeat(1000) })),
  );
  assert.ok(new TextEncoder().encode(many).length <= INSTRUCTIONS_TOTAL_BYTES + 200);
  assert.match(
    many,
    /Instructions of s4, s5 left out \(size\); list_servers shows every server's instructions\.$/,
  );
});

Deno.test("an oversized resources/read is stored whole and answered with a receipt; pages equal the read", async () => {
  await using dir = await tempDir();
  const path = await writeConfig(dir.path, `response_budget: 1024\nservers:\n${everything()}`);
  const direct = await connectDirect("node", [REAL.everything, "stdio"]);
  await using gw = await connectGateway(path);
  try {
    const listed = (await direct.listResources()).resources;
    const big = listed.find((r) => r.name === "architecture.md")!;
    const want = await direct.readResource({ uri: big.uri });
    const namespaced = namespaceUri("everything", big.uri);
    const whole = JSON.stringify({
      ...want,
      contents: want.contents.map((c) => ({ ...c, uri: namespaceUri("everything", c.uri) })),
    });
    assert.ok(new TextEncoder().encode(whole).length > 1024);
    const got = await gw.client.readResource({ uri: namespaced });
    assert.equal(got.contents.length, 1);
    const content = got.contents[0] as { uri: string; mimeType: string; text: string };
    assert.equal(content.uri, namespaced);
    assert.equal(content.mimeType, "application/json");
    assert.ok(new TextEncoder().encode(JSON.stringify(got)).length <= 1024 + 200);
    const receipt = JSON.parse(content.text) as { status: string; callId: string; originalBytes: number };
    assert.equal(receipt.status, "stored");
    assert.equal(receipt.originalBytes, new TextEncoder().encode(whole).length);
    let text = "";
    let cursor = 0;
    for (;;) {
      const page = (await gw.client.callTool({
        name: "get_result",
        arguments: { callId: receipt.callId, cursor, encoding: "utf8" },
      })).structuredContent as { text: string; nextCursor: number; done: boolean };
      text += page.text;
      if (page.done) break;
      cursor = page.nextCursor;
    }
    assert.equal(text, whole);
  } finally {
    await direct.close();
  }
});

Deno.test("lazy mode: resources and prompts are listed as usual; discovery stays tool-only", async () => {
  await using dir = await tempDir();
  const path = await writeConfig(dir.path, `expose: lazy\nservers:\n${everything()}`);
  await using gw = await connectGateway(path, { client: host("gateway").client });
  const tools = (await gw.client.listTools()).tools.map((t) => t.name);
  assert.ok(tools.every((n) => !n.startsWith("everything__")));
  assert.ok((await gw.client.listResources()).resources.length > 0);
  const prompts = (await gw.client.listPrompts()).prompts.map((p) => p.name);
  assert.ok(prompts.includes("everything__simple-prompt"));
  const found = await gw.client.callTool({ name: "search_tools", arguments: { query: "simple prompt" } });
  assert.ok(!JSON.stringify(found.structuredContent).includes("everything__simple-prompt"));
  const got = await gw.client.getPrompt({ name: "everything__simple-prompt" });
  assert.ok(got.messages.length > 0);
});

Deno.test("namespace: false publishes names and URIs unchanged; collisions are not published and named", async (t) => {
  await using dir = await tempDir();
  await t.step(
    "one server: tools, resources, prompts and completions as a direct connection has them",
    async () => {
      const path = await writeConfig(dir.path, `servers:\n${everything()}    namespace: false\n`, "one.yaml");
      const direct = host("direct");
      await connectDirect("node", [REAL.everything, "stdio"], undefined, direct.client);
      await using gw = await connectGateway(path, { client: host("gateway").client });
      const d = direct.client;
      const g = gw.client;
      try {
        const want = (await d.listTools()).tools.map((x) => x.name).sort();
        const got = (await g.listTools()).tools.map((x) => x.name).filter((n) => want.includes(n)).sort();
        assert.deepEqual(got, want);
        const a = await d.callTool({ name: "get-resource-links", arguments: { count: 2 } });
        const b = await g.callTool({ name: "get-resource-links", arguments: { count: 2 } });
        assert.deepEqual(b, a);
        const resources = (await d.listResources()).resources;
        assert.deepEqual((await g.listResources()).resources, resources);
        assert.deepEqual(
          await g.readResource({ uri: resources[0]!.uri }),
          await d.readResource({ uri: resources[0]!.uri }),
        );
        assert.deepEqual(
          (await g.listResourceTemplates()).resourceTemplates,
          (await d.listResourceTemplates()).resourceTemplates,
        );
        assert.deepEqual((await g.listPrompts()).prompts, (await d.listPrompts()).prompts);
        const args = { city: "Oslo", state: "Viken" };
        assert.deepEqual(
          await g.getPrompt({ name: "args-prompt", arguments: args }),
          await d.getPrompt({ name: "args-prompt", arguments: args }),
        );
        const ref = { type: "ref/prompt" as const, name: "completable-prompt" };
        assert.deepEqual(
          await g.complete({ ref, argument: { name: "department", value: "E" } }),
          await d.complete({ ref, argument: { name: "department", value: "E" } }),
        );
      } finally {
        await d.close();
      }
    },
  );
  await t.step("collisions with another server and with a meta-tool", async () => {
    const path = await writeConfig(
      dir.path,
      `servers:\n${everything("a")}    namespace: false\n${everything("b")}    namespace: false\n` +
        `  fx:\n    command: ${q(DENO)}\n    args: [run, -A, ${
          q(FIXTURE)
        }, --tools, call_tool]\n    namespace: false\n`,
      "clash.yaml",
    );
    await using gw = await connectGateway(path);
    const tools = (await gw.client.listTools()).tools.map((x) => x.name);
    assert.ok(!tools.includes("echo"), "echo of a and b collides: neither is published");
    assert.equal(tools.filter((n) => n === "call_tool").length, 1);
    assert.ok(tools.includes("wait"), "the fixture's other tools are published unchanged");
    await gw.client.listResources(); // waits for the first connection attempts
    const listed = await gw.client.callTool({ name: "list_servers", arguments: {} });
    const servers = (listed.structuredContent as { servers: { name: string; error?: string }[] }).servers;
    const error = (name: string) => servers.find((s) => s.name === name)!.error ?? "";
    assert.match(
      error("a"),
      /^server "a" \(namespace: false\): \d+ tool names collide and are not published: "echo" \(with server "b", server "fx"\), .*, and \d+ more; remove servers\.a\.namespace or rename the other$/,
    );
    assert.match(error("b"), /"echo" \(with server "a", server "fx"\)/);
    assert.match(error("fx"), /"call_tool" \(with mcphub's meta-tool\)/);
    assert.match(error("fx"), /"echo" \(with server "a", server "b"\)/);
    const prompts = (await gw.client.listPrompts()).prompts.map((p) => p.name);
    assert.ok(!prompts.includes("simple-prompt"));
  });
});

Deno.test("filesystem and memory: the roots the host offers are the filesystem server's allowed directories", async () => {
  await using dir = await tempDir();
  const start = `${dir.path}/start`;
  const offered = `${dir.path}/offered`;
  await Deno.mkdir(start);
  await Deno.mkdir(offered);
  const roots = [{ uri: `file://${offered}`, name: "offered" }];
  const rootsHost = (name: string) => {
    const client = new Client({ name, version: "1.0.0" }, { capabilities: { roots: { listChanged: true } } });
    client.setRequestHandler(ListRootsRequestSchema, () => ({ roots }));
    return client;
  };
  const path = await writeConfig(
    dir.path,
    `servers:\n  filesystem:\n    command: node\n    args: [${q(REAL.filesystem)}, ${q(start)}]\n` +
      `  memory:\n    command: node\n    args: [${q(REAL.memory)}]\n    env:\n      MEMORY_FILE_PATH: ${
        q(`${dir.path}/memory.jsonl`)
      }\n`,
  );
  const direct = await connectDirect("node", [REAL.filesystem, start], undefined, rootsHost("direct"));
  await using gw = await connectGateway(path, { client: rootsHost("gateway") });
  try {
    // The server asks for roots after initialized and says nothing when it has them: only its answer shows
    // it, so poll that (both ways alike), failing loudly at the deadline.
    const allowed = (who: string, call: () => Promise<unknown>) =>
      until(`${who}: the offered root among the allowed directories`, async () => {
        const got = text(await call());
        return got.includes(offered) ? got : undefined;
      });
    const want = await allowed(
      "direct",
      () => direct.callTool({ name: "list_allowed_directories", arguments: {} }),
    );
    assert.match(want, new RegExp(offered));
    const got = await allowed(
      "gateway",
      () => gw.client.callTool({ name: "filesystem__list_allowed_directories", arguments: {} }),
    );
    assert.equal(got, want);
    // The memory server's resource (its knowledge graph) reads as it does directly.
    await gw.client.callTool({
      name: "memory__create_entities",
      arguments: { entities: [{ name: "Ada", entityType: "person", observations: ["wrote notes"] }] },
    });
    const mem = await connectDirect("node", [REAL.memory], { MEMORY_FILE_PATH: `${dir.path}/memory.jsonl` });
    try {
      const listed = (await mem.listResources()).resources;
      assert.deepEqual(
        (await gw.client.listResources()).resources,
        listed.map((r) => ({ ...r, uri: namespaceUri("memory", r.uri) })),
      );
      const a = await mem.readResource({ uri: listed[0]!.uri });
      assert.match(JSON.stringify(a), /Ada/);
      const b = await gw.client.readResource({ uri: namespaceUri("memory", listed[0]!.uri) });
      assert.deepEqual(b.contents.map((c) => ({ ...c, uri: splitUri(c.uri)!.uri })), a.contents);
    } finally {
      await mem.close();
    }
    const memory = await gw.client.callTool({ name: "memory__read_graph", arguments: {} });
    assert.equal(memory.isError, undefined);
  } finally {
    await direct.close();
  }
});
