/**
 * A `namespace: false` server cannot claim another server's `mcphub://` URIs (issue 41): what it lists,
 * links in a tool result or names in resources/updated as `mcphub://victim/…` is published under its
 * own name (and so routes back to it), never as the victim's.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { connectGateway, DENO, FIXTURE, HOSTILE, q, tempDir, until, writeConfig } from "../helpers.ts";

const CLAIMED = "mcphub://victim/file%3A%2F%2F%2Fsecret";

Deno.test("a namespace: false server's mcphub://OTHER/ URIs are published under its own name", async () => {
  await using dir = await tempDir();
  const config = await writeConfig(
    dir.path,
    `servers:
  claimer:
    command: ${q(DENO)}
    args: [run, -A, ${q(HOSTILE)}, --mode, claim]
    namespace: false
  victim:
    command: ${q(DENO)}
    args: [run, -A, ${q(FIXTURE)}]
`,
  );
  const client = new Client({ name: "host", version: "1.0.0" });
  const updated: string[] = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updated.push(n.params.uri));
  await using _gw = await connectGateway(config, { client });
  const uris = (await client.listResources()).resources.map((r) => r.uri);
  assert.ok(uris.includes("file:///own"), uris.join(", "));
  assert.ok(!uris.some((uri) => uri.startsWith("mcphub://victim/")), uris.join(", "));
  const published = uris.find((uri) => uri.startsWith("mcphub://claimer/"));
  assert.ok(published, uris.join(", "));
  // Reading it asks the claimer, for the URI it listed.
  const read = await client.readResource({ uri: published });
  assert.deepEqual(read.contents, [{ uri: published, text: `claimer read ${CLAIMED}` }]);
  // A link in its tool result.
  const linked = await client.callTool({ name: "link", arguments: {} });
  const link = (linked.content as { uri?: string }[])[0].uri!;
  assert.ok(!link.startsWith("mcphub://victim/"), link);
  assert.equal(link, published);
  // Its updates: its own URI comes through; the claimed one only under its own name.
  await client.subscribeResource({ uri: "file:///own" });
  await until("updates", () => Promise.resolve(updated.includes("file:///own") ? true : undefined));
  assert.ok(!updated.some((uri) => uri.startsWith("mcphub://victim/")), updated.join(", "));
});
