/**
 * URL-mode elicitation (MCP 2025-11-25) through mcphub, compared with a direct connection: a server's
 * `elicitation/create` in URL mode reaches a host that declared `elicitation.url` with its params as sent,
 * and `notifications/elicitation/complete` follows it; a host that did not declare URL mode gets it refused
 * by name (-32602, as its own SDK refuses it directly); a -32042 "URL elicitation required" error passes
 * with its elicitations. A 2026-07-28 host gets it as `input_required` (or refused by name); a
 * 2026-07-28-only server's URL elicitation (no elicitationId in that revision) reaches a 2025 host with
 * an elicitationId of the gateway's.
 *
 * @module
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client";
import {
  ElicitationCompleteNotificationSchema,
  ElicitRequestSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import { Client as ModernClient } from "npm:@modelcontextprotocol/client@2.4.0";
import { StdioClientTransport } from "npm:@modelcontextprotocol/client@2.4.0/stdio";
import {
  connectDirect,
  connectGateway,
  DENO,
  q,
  ROOT,
  sandboxSync,
  tempDir,
  writeConfig,
} from "../helpers.ts";
import { REQUIRED_ELICITATION, URL_ELICITATION } from "../fixtures/url_elicit_server.ts";
import { Notes, NOTIFY } from "./listen_helpers.ts";

const SERVER = `${ROOT}tests/fixtures/url_elicit_server.ts`;
const text = (result: unknown) =>
  (result as { content: { text: string }[] }).content.map((c) => c.text).join("");

/** A v1 host declaring `elicitation` as given; records what it is asked and told. */
function host(elicitation: Record<string, unknown>) {
  const client = new Client({ name: "url-host", version: "1.0.0" }, { capabilities: { elicitation } });
  const asked: Record<string, unknown>[] = [];
  const notes = new Notes();
  client.setRequestHandler(ElicitRequestSchema, (request) => {
    asked.push(request.params as Record<string, unknown>);
    return { action: "accept" };
  });
  client.setNotificationHandler(ElicitationCompleteNotificationSchema, (n) => notes.push(n));
  return { client, asked, notes };
}

async function config(dir: string): Promise<string> {
  return await writeConfig(
    dir,
    `servers:
  auth:
    command: ${q(DENO)}
    args: [run, -A, ${q(SERVER)}]
  notes:
    command: ${q(DENO)}
    args: [run, -A, ${q(NOTIFY)}, --legacy, reject]
`,
  );
}

Deno.test("URL-mode elicitation reaches a host that offers it as directly, and its completion follows", async () => {
  await using dir = await tempDir();
  const path = await config(dir.path);
  const direct = host({ form: {}, url: {} });
  await connectDirect(DENO, ["run", "-A", SERVER], undefined, direct.client);
  const via = host({ form: {}, url: {} });
  await using _gw = await connectGateway(path, { allowAll: true, client: via.client });
  try {
    const directResult = text(await direct.client.callTool({ name: "connect", arguments: {} }));
    const viaResult = text(await via.client.callTool({ name: "auth__connect", arguments: {} }));
    assert.equal(viaResult, directResult);
    assert.deepEqual(JSON.parse(viaResult), { action: "accept" });
    // The request as the server sent it (URL, its reserved characters, the id), on both paths.
    assert.deepEqual(direct.asked, [URL_ELICITATION]);
    assert.deepEqual(via.asked, direct.asked);
    const complete = { method: "notifications/elicitation/complete", params: { elicitationId: "el-1" } };
    assert.deepEqual(await direct.notes.next("direct completion", () => true), complete);
    assert.deepEqual(await via.notes.next("relayed completion", () => true), complete);

    // -32042: the error and its elicitations as the server sent them; then their completion.
    const directError = await direct.client.callTool({ name: "needs_auth", arguments: {} }).catch((e) => e);
    const viaError = await via.client.callTool({ name: "auth__needs_auth", arguments: {} }).catch((e) => e);
    assert.ok(directError instanceof McpError && viaError instanceof McpError, String(viaError));
    assert.equal(viaError.code, -32042);
    assert.equal(viaError.code, directError.code);
    // (The gateway's relay drops the doubled "MCP error -32042: " the server's own message carries.)
    assert.equal(viaError.message, "MCP error -32042: URL elicitation required");
    assert.ok(directError.message.endsWith(viaError.message), directError.message);
    assert.deepEqual(viaError.data, { elicitations: [REQUIRED_ELICITATION] });
    assert.deepEqual(viaError.data, directError.data);
    await direct.client.callTool({ name: "finish_auth", arguments: {} });
    await via.client.callTool({ name: "auth__finish_auth", arguments: {} });
    const el2 = (n: { params?: Record<string, unknown> }) => n.params?.elicitationId === "el-2";
    assert.deepEqual((await direct.notes.next("direct el-2", el2)).params, { elicitationId: "el-2" });
    assert.deepEqual((await via.notes.next("relayed el-2", el2)).params, { elicitationId: "el-2" });

    // A 2026-07-28-only server's URL elicitation (input_required, no id in that revision): an id of ours.
    const visited = text(
      await via.client.callTool({ name: "notes__visit", arguments: { url: "https://example.com/go?a=1" } }),
    );
    assert.equal(visited, "visited: accept");
    const modern = via.asked.at(-1)!;
    assert.equal(typeof modern.elicitationId, "string");
    assert.deepEqual({ ...modern, elicitationId: "" }, {
      mode: "url",
      message: "Open the page",
      url: "https://example.com/go?a=1",
      elicitationId: "",
    });
  } finally {
    await direct.client.close();
  }
});

Deno.test("URL-mode elicitation to a host that did not declare it: refused by name, as directly", async () => {
  await using dir = await tempDir();
  const path = await config(dir.path);
  const direct = host({ form: {} });
  await connectDirect(DENO, ["run", "-A", SERVER], undefined, direct.client);
  const via = host({ form: {} });
  await using _gw = await connectGateway(path, { allowAll: true, client: via.client });
  try {
    const directResult = text(await direct.client.callTool({ name: "connect", arguments: {} }));
    const viaResult = text(await via.client.callTool({ name: "auth__connect", arguments: {} }));
    assert.equal(
      directResult,
      "error -32602: MCP error -32602: MCP error -32602: Client does not support URL-mode elicitation requests",
    );
    // The same code; the message names the mode, the missing capability and why.
    assert.match(viaResult, /^error -32602: /);
    assert.match(
      viaResult,
      /elicitation\/create \(mode "url"\) not relayed: the host does not offer URL-mode elicitation \(its capabilities have no "elicitation\.url"\)/,
    );
    assert.deepEqual(via.asked, []);
    assert.deepEqual(direct.asked, []);
  } finally {
    await direct.client.close();
  }
});

/** The v2 client pinned to 2026-07-28 over stdio to the gateway, declaring `elicitation` as given. */
async function modernHost(
  path: string,
  elicitation: { form?: Record<string, never>; url?: Record<string, never> },
) {
  const box = sandboxSync();
  const transport = new StdioClientTransport({
    command: DENO,
    args: ["run", "-A", `${ROOT}main.ts`, "--config", path, "--db", box.db, "mcp", "serve"],
    env: box.env,
    stderr: "ignore",
  });
  const client = new ModernClient(
    { name: "modern-url-host", version: "2.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } }, capabilities: { elicitation } },
  );
  const asked: unknown[] = [];
  client.setRequestHandler("elicitation/create", (request) => {
    asked.push(request.params);
    return { action: "accept" };
  });
  await client.connect(transport);
  return {
    client,
    asked,
    async [Symbol.asyncDispose]() {
      await client.close().catch(() => {});
      await box[Symbol.asyncDispose]();
    },
  };
}

Deno.test("a 2026-07-28 host: URL-mode elicitation as input_required when declared, refused by name when not", async () => {
  await using dir = await tempDir();
  const path = await config(dir.path);
  {
    await using h = await modernHost(path, { form: {}, url: {} });
    const result = text(await h.client.callTool({ name: "auth__connect", arguments: {} }));
    assert.deepEqual(JSON.parse(result), { action: "accept" });
    assert.equal(h.asked.length, 1);
    const { mode, message, url } = h.asked[0] as Record<string, unknown>;
    assert.deepEqual({ mode, message, url }, {
      mode: URL_ELICITATION.mode,
      message: URL_ELICITATION.message,
      url: URL_ELICITATION.url,
    });
  }
  {
    await using h = await modernHost(path, { form: {} });
    const result = text(await h.client.callTool({ name: "auth__connect", arguments: {} }));
    assert.match(
      result,
      /^error -32602: .*elicitation\/create \(mode "url"\) cannot reach this host: the host does not offer URL-mode elicitation/,
    );
    assert.deepEqual(h.asked, []);
  }
});
