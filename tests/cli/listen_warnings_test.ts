/**
 * `mcp serve --listen` prints no Deno deprecation warning in normal use: the gateway's HTTP path never reads
 * `request.signal` (Deno.serve warns about its legacy abort-on-success once a handler touched it).
 */
import assert from "node:assert/strict";
import { DENO, FIXTURE, q, tempDir, writeConfig } from "../helpers.ts";
import { httpClient, startListener } from "../http/http_helpers.ts";

Deno.test("mcp serve --listen: a session's requests succeed and stderr has no deprecation warning", async () => {
  await using dir = await tempDir();
  const path = await writeConfig(
    dir.path,
    `servers:\n  fx:\n    command: ${q(DENO)}\n    args: [run, -A, ${
      q(FIXTURE)
    }]\nagents:\n  a:\n    token: \${LISTEN_WARN_TOKEN}\n`,
  );
  const token = "listen-warning-token-0123456789";
  await using listener = await startListener(path, { env: { LISTEN_WARN_TOKEN: token } });
  {
    await using client = await httpClient(listener.url, token);
    const tools = (await client.listTools()).tools.map((t) => t.name);
    assert.ok(tools.includes("fx__echo"), tools.join(","));
    const result = await client.callTool({ name: "fx__echo", arguments: { text: "hi" } });
    assert.equal(result.isError, undefined);
  }
  await listener.stop();
  assert.doesNotMatch(listener.stderr(), /deprecat|legacy behavior|request\.signal/i, listener.stderr());
});
