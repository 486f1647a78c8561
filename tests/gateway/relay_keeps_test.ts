/**
 * The relay keeps what it does not model: a server's requests, templates, logs and tool order reach the
 * host through mcphub as they do directly (tests/fixtures/relay_server.ts, the official SDK client).
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client";
// @ts-types="@modelcontextprotocol/sdk/types"
import { ElicitRequestSchema, LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { connectDirect, connectGateway, DENO, q, ROOT, tempDir, writeConfig } from "../helpers.ts";
import { httpClient, startListener } from "../http/http_helpers.ts";
import { splitUri } from "../../src/hub/uris.ts";
import { MISSING, NEEDS_URL, REQUESTED_SCHEMA } from "../fixtures/relay_server.ts";

const RELAY = `${ROOT}tests/fixtures/relay_server.ts`;
const SERVER_ARGS = ["run", "-A", RELAY];
const CONFIG = `servers:\n  relay:\n    command: ${q(DENO)}\n    args: [run, -A, ${q(RELAY)}]\n`;

/** A host offering elicitation that records the raw params of every request it is sent. */
function host(name: string): { client: Client; raw: Record<string, unknown>[]; record(): void } {
  const client = new Client({ name, version: "1.0.0" }, { capabilities: { elicitation: { form: {} } } });
  client.setRequestHandler(
    ElicitRequestSchema,
    () => ({ action: "accept" as const, content: { name: "Ada" } }),
  );
  const raw: Record<string, unknown>[] = [];
  return {
    client,
    raw,
    record() {
      const transport = client.transport!;
      const onmessage = transport.onmessage!;
      transport.onmessage = (message, extra) => {
        const m = message as { method?: string; id?: unknown; params?: Record<string, unknown> };
        if (m.method && m.id !== undefined) raw.push(structuredClone({ method: m.method, params: m.params }));
        onmessage(message, extra);
      };
    },
  };
}

/** RFC 6570 simple string expansion of one value: everything but unreserved characters percent-encoded. */
function encode(value: string): string {
  return [...new TextEncoder().encode(value)].map((b) => {
    const c = String.fromCharCode(b);
    return /[A-Za-z0-9\-._~]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, "0")}`;
  }).join("");
}

/** A template with `{id}` and `{/path}` expanded as a host does. */
function expand(template: string, value: string): string {
  return template.replace("{id}", encode(value)).replace("{/path}", `/${encode(value)}`);
}

const text = (result: unknown) => (result as { content: { text: string }[] }).content[0]!.text;

Deno.test("the relay keeps what it does not model (direct vs gateway, stdio)", async (t) => {
  await using dir = await tempDir();
  const path = await writeConfig(dir.path, CONFIG);
  const direct = host("direct");
  await connectDirect(DENO, SERVER_ARGS, undefined, direct.client);
  direct.record();
  const viaHub = host("gateway");
  await using gw = await connectGateway(path, { client: viaHub.client, allowAll: true });
  viaHub.record();
  const d = direct.client;
  const g = gw.client;
  try {
    await t.step(
      "an elicitation's requestedSchema keeps $schema, title, description, unknown keys",
      async () => {
        const a = await d.callTool({ name: "elicit", arguments: {} });
        const b = await g.callTool({ name: "relay__elicit", arguments: {} });
        assert.equal(text(b), text(a));
        const sent = (raw: Record<string, unknown>[]) =>
          raw.filter((r) => r.method === "elicitation/create").map((r) => {
            const params = { ...(r.params as Record<string, unknown>) };
            delete params._meta;
            return params;
          });
        assert.deepEqual(sent(direct.raw), [{
          mode: "form",
          message: "Who?",
          requestedSchema: REQUESTED_SCHEMA,
        }]);
        assert.deepEqual(sent(viaHub.raw), sent(direct.raw));
      },
    );

    await t.step(
      "template values with reserved characters and %41 reach the server as directly",
      async () => {
        const directTemplates = (await d.listResourceTemplates()).resourceTemplates.map((r) => r.uriTemplate);
        const gatewayTemplates = (await g.listResourceTemplates()).resourceTemplates.map((r) =>
          r.uriTemplate
        );
        assert.equal(gatewayTemplates.length, directTemplates.length);
        for (const value of ["a&b", "x,y", "p/q", "what?", "h#1", "%41", "A", "sp ace", "100%"]) {
          for (const [i, template] of directTemplates.entries()) {
            const a = await d.readResource({ uri: expand(template, value) });
            const published = expand(gatewayTemplates[i]!, value);
            const b = await g.readResource({ uri: published });
            const got = b.contents[0] as { uri: string; text: string };
            const want = a.contents[0] as { uri: string; text: string };
            assert.equal(got.text, want.text, `${template} with ${JSON.stringify(value)}`);
            // The URI read comes back as the host sent it, as directly.
            assert.equal(got.uri, published);
            assert.equal(splitUri(got.uri)?.uri, want.uri);
          }
        }
      },
    );

    await t.step("tools/list keeps the server's order", async () => {
      const want = (await d.listTools()).tools.map((x) => x.name);
      assert.deepEqual(want, ["zeta", "alpha", "elicit", "log", "middle", "fail"]);
      const got = (await g.listTools()).tools.map((x) => x.name).filter((n) => n.startsWith("relay__"));
      assert.deepEqual(got, want.map((n) => `relay__${n}`));
    });

    await t.step(
      "a server's -32002 and -32042 errors reach the host with their code, message and data",
      async () => {
        // The errors as they arrive at each host, before its SDK client reads them (v1's rebuilds a -32042
        // with its elicitations only).
        const wire = (client: Client) => {
          const errors: unknown[] = [];
          const transport = client.transport!;
          const next = transport.onmessage!;
          transport.onmessage = (message, extra) => {
            if ("error" in message) errors.push(structuredClone(message.error));
            next(message, extra);
          };
          return errors;
        };
        const direct = wire(d);
        const viaHub = wire(g);
        const fails = (p: Promise<unknown>) => p.then(() => assert.fail("resolved"), () => {});
        const template = (await g.listResourceTemplates()).resourceTemplates[0]!.uriTemplate;
        for (const [id, error] of [["missing", MISSING], ["needs-url", NEEDS_URL]] as const) {
          // resources/read: the SDK client's path (the v2 client keeps the error as the server sent it).
          await fails(d.readResource({ uri: `echo://item/${id}` }));
          await fails(g.readResource({ uri: expand(template, id) }));
          // tools/call: the fast path (bytes).
          await fails(d.callTool({ name: "fail", arguments: error }));
          await fails(g.callTool({ name: "relay__fail", arguments: error }));
        }
        assert.deepEqual(direct, [MISSING, MISSING, NEEDS_URL, NEEDS_URL]);
        assert.deepEqual(viaHub, direct);
      },
    );
  } finally {
    await d.close();
  }
});

Deno.test("a call's log messages reach only the session that made the call (HTTP, two sessions)", async () => {
  await using dir = await tempDir();
  const path = await writeConfig(dir.path, CONFIG);
  await using listener = await startListener(path);
  await using a = await httpClient(listener.url, undefined, "a");
  await using b = await httpClient(listener.url, undefined, "b");
  const logs = { a: [] as string[], b: [] as string[] };
  const seen = { a: Promise.withResolvers<void>(), b: Promise.withResolvers<void>() };
  for (const [name, client] of [["a", a], ["b", b]] as const) {
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      logs[name].push(String(n.params.data));
      if (n.params.data === `from ${name}`) seen[name].resolve();
    });
  }
  assert.equal(text(await a.callTool({ name: "relay__log", arguments: { text: "from a" } })), "logged");
  await seen.a.promise;
  // b's own message comes after a's on the same path: had a's reached b, it would be there first.
  assert.equal(text(await b.callTool({ name: "relay__log", arguments: { text: "from b" } })), "logged");
  await seen.b.promise;
  assert.deepEqual(logs, { a: ["from a"], b: ["from b"] });
});
