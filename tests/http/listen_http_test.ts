/**
 * `subscriptions/listen` (MCP 2026-07-28) over HTTP (`mcp serve --listen`): the v2 client pinned to
 * 2026-07-28 opens a listen (a POST answered with an event stream) and receives, stamped with its own
 * listen id, the gateway's list_changed and the updates of the resources it named, from a 2026-07-28-only
 * downstream the gateway itself listens to; each agent only what its scope holds. A config reload that
 * revokes the token ends that agent's listen with its closing result; stopping the listener ends the rest.
 *
 * @module
 */
import assert from "node:assert/strict";
import {
  Client as ModernClient,
  StreamableHTTPClientTransport,
} from "npm:@modelcontextprotocol/client@2.4.0";
import { DENO, q, tempDir, writeConfig } from "../helpers.ts";
import { notesOf, NOTIFY, within } from "../gateway/listen_helpers.ts";
import { startListener } from "./http_helpers.ts";

const ALPHA = "alpha-token-0123456789abcdef";
const ALPHA_NEW = "alpha-rotated-0123456789abcdef";
const BETA = "beta-token-0123456789abcdef";
const ENV = { TOK_ALPHA: ALPHA, TOK_ALPHA_NEW: ALPHA_NEW, TOK_BETA: BETA };
const SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId";

function yaml(alphaToken: string): string {
  return `servers:
  notes:
    command: ${q(DENO)}
    args: [run, -A, ${q(NOTIFY)}, --legacy, reject]
  other:
    command: ${q(DENO)}
    args: [run, -A, ${q(NOTIFY)}]
agents:
  alpha:
    servers: [notes]
    token: \${${alphaToken}}
  beta:
    servers: [other]
    token: \${TOK_BETA}
`;
}

/** The v2 client pinned to 2026-07-28 over HTTP with a bearer token; `notes` gets what arrives. */
async function modernHttp(url: string, token: string) {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  const client = new ModernClient(
    { name: "listen-http", version: "2.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await client.connect(transport);
  const notes = notesOf(transport);
  return {
    client,
    notes,
    async [Symbol.asyncDispose]() {
      await client.close().catch(() => {});
    },
  };
}

Deno.test("a 2026-07-28 host listens over HTTP: stamped changes in its agent's scope; revoked and stopped listens end with their result", async () => {
  await using dir = await tempDir();
  const path = await writeConfig(dir.path, yaml("TOK_ALPHA"));
  await using listener = await startListener(path, { env: ENV });
  await using alpha = await modernHttp(listener.url, ALPHA);
  await using beta = await modernHttp(listener.url, BETA);
  const a = (await alpha.client.listResources()).resources.find((r) => r.name === "a")!.uri;
  const otherA = (await beta.client.listResources()).resources.find((r) => r.name === "a")!.uri;
  assert.match(a, /^mcphub:\/\/notes\//);
  assert.match(otherA, /^mcphub:\/\/other\//);

  // alpha names its own resource and beta's: only its own is honored.
  const subA = await alpha.client.listen({ toolsListChanged: true, resourceSubscriptions: [a, otherA] });
  assert.deepEqual(subA.honoredFilter, { toolsListChanged: true, resourceSubscriptions: [a] });
  const subB = await beta.client.listen({ toolsListChanged: true, resourceSubscriptions: [otherA] });
  assert.deepEqual(subB.honoredFilter, { toolsListChanged: true, resourceSubscriptions: [otherA] });

  // An update of alpha's resource (from the 2026-07-28-only server, on the gateway's own listen).
  await alpha.client.callTool({ name: "notes__touch", arguments: { uri: "note://a" } });
  const updated = await alpha.notes.next(
    "resources/updated",
    (n) => n.method === "notifications/resources/updated",
  );
  assert.deepEqual(updated.params, { uri: a, _meta: { [SUBSCRIPTION]: "listen:0" } });
  // A tool added downstream: alpha's list changed, stamped with alpha's own listen id.
  await alpha.client.callTool({ name: "notes__add_tool", arguments: { name: "fresh" } });
  const changed = await alpha.notes.next(
    "tools/list_changed",
    (n) => n.method === "notifications/tools/list_changed",
  );
  assert.deepEqual(changed.params, { _meta: { [SUBSCRIPTION]: "listen:0" } });
  assert.ok((await alpha.client.listTools()).tools.some((t) => t.name === "notes__fresh"));
  // beta's own server changes: beta is told; what alpha saw was alpha's (no beta stamp, no other URI).
  await beta.client.callTool({ name: "other__touch", arguments: { uri: "note://a" } });
  const betaUpdated = await beta.notes.next(
    "beta's update",
    (n) => n.method === "notifications/resources/updated",
  );
  assert.deepEqual(betaUpdated.params, { uri: otherA, _meta: { [SUBSCRIPTION]: "listen:0" } });
  assert.ok(!alpha.notes.seen.some((n) => n.params?.uri === otherA));

  // alpha's token rotated: its listen ends at once with the listen's closing result (graceful).
  await Deno.writeTextFile(path, yaml("TOK_ALPHA_NEW"));
  assert.equal(await within(subA.closed, "alpha's revoked listen"), "graceful");
  await listener.waitFor("1 listen stream(s) ended: their token is no longer valid after a config reload");
  // beta's listen is untouched; stopping the gateway ends it the same way.
  const stopped = listener.stop();
  assert.equal(await within(subB.closed, "beta's listen at the stop"), "graceful");
  const code = (await stopped).code;
  if (code !== 0) console.error(listener.stderr());
  assert.equal(code, 0);
});
