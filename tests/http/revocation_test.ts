/**
 * A config reload revokes at once (issue 41): tokens and scopes are re-derived from the file, and the
 * next request of a session that is already open is checked against them. A rotated or removed token is
 * refused (its sessions are ended), a narrowed scope applies to lists and calls, and the host hears
 * `notifications/tools/list_changed`.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { DENO, FIXTURE, q, tempDir, until, writeConfig } from "../helpers.ts";
import { httpClient, INITIALIZE, startListener } from "./http_helpers.ts";

const ALPHA = "alpha-token-0123456789abcdef";
const ALPHA_NEW = "alpha-rotated-0123456789abcdef";
const BETA = "beta-token-0123456789abcdef";
const GAMMA = "gamma-token-0123456789abcdef";
const ENV = { TOK_ALPHA: ALPHA, TOK_ALPHA_NEW: ALPHA_NEW, TOK_BETA: BETA, TOK_GAMMA: GAMMA };

function yaml(dir: string, agents: string): string {
  return `servers:
  fx:
    command: ${q(DENO)}
    args: [run, -A, ${q(FIXTURE)}, --state, ${q(dir)}]
agents:
${agents}`;
}

const BEFORE = `  alpha:
    token: \${TOK_ALPHA}
  beta:
    servers: [fx]
    token: \${TOK_BETA}
  gamma:
    token: \${TOK_GAMMA}
`;

// alpha's token rotated, beta's scope cut to nothing, gamma deleted.
const AFTER = `  alpha:
    token: \${TOK_ALPHA_NEW}
  beta:
    servers: []
    token: \${TOK_BETA}
`;

async function status(url: string, token: string): Promise<number> {
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${token}`,
    },
    body: INITIALIZE,
  });
  await response.body?.cancel();
  return response.status;
}

Deno.test("a reload revokes: a rotated or deleted token is refused on open sessions, a cut scope applies at once", async () => {
  await using dir = await tempDir();
  const path = await writeConfig(dir.path, yaml(dir.path, BEFORE));
  await using listener = await startListener(path, { env: ENV });
  await using alpha = await httpClient(listener.url, ALPHA, "alpha-host");
  await using gamma = await httpClient(listener.url, GAMMA, "gamma-host");
  const transport = new StreamableHTTPClientTransport(new URL(listener.url), {
    requestInit: { headers: { authorization: `Bearer ${BETA}` } },
  });
  const beta = new Client({ name: "beta-host", version: "1.0.0" });
  let changed = 0;
  beta.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed++);
  await beta.connect(transport);
  try {
    assert.ok((await beta.listTools()).tools.some((t) => t.name === "fx__echo"));
    assert.ok((await alpha.listTools()).tools.some((t) => t.name === "fx__echo"));
    assert.ok((await gamma.listTools()).tools.some((t) => t.name === "fx__echo"));
    // The new token is not valid yet.
    assert.equal(await status(listener.url, ALPHA_NEW), 401);

    // Counted from the edit on: fx's start-up list_changed may still arrive after the lists above.
    const seen = changed;
    await Deno.writeTextFile(path, yaml(dir.path, AFTER));
    await listener.waitFor("config reloaded (file changed)");
    await until("list_changed after the reload", () => Promise.resolve(changed > seen ? true : undefined));

    // beta's open session: the cut scope applies to lists and calls.
    const tools = (await beta.listTools()).tools.map((t) => t.name);
    assert.ok(!tools.some((name) => name.startsWith("fx__")), tools.join(", "));
    const call = await beta.callTool({ name: "fx__echo", arguments: { text: "x" } }).catch((e: Error) => e);
    assert.match(call instanceof Error ? call.message : JSON.stringify(call), /fx__echo/);
    assert.ok(!(call as { content?: unknown[] }).content?.some((c) => JSON.stringify(c).includes('"x"')));

    // alpha's old token and gamma's token: refused on their open sessions and for new ones.
    await assert.rejects(alpha.listTools(), /401|Unauthorized|Session not found/);
    await assert.rejects(gamma.listTools(), /401|Unauthorized|Session not found/);
    assert.equal(await status(listener.url, ALPHA), 401);
    assert.equal(await status(listener.url, GAMMA), 401);
    // The rotated token works.
    await using rotated = await httpClient(listener.url, ALPHA_NEW, "alpha-rotated");
    assert.ok((await rotated.listTools()).tools.some((t) => t.name === "fx__echo"));
  } finally {
    await transport.terminateSession().catch(() => {});
    await beta.close();
  }
});
