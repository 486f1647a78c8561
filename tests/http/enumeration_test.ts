/**
 * No enumeration (issue 41): with tokens configured, `/mcp/AGENT` answers an unknown agent exactly as
 * it answers a real one without a valid token (status, headers and body), with no token and with a
 * wrong one.
 */
import assert from "node:assert/strict";
import { parseConfig } from "../../src/config/mod.ts";
import { listen } from "../../src/http/mod.ts";
import { tempDir } from "../helpers.ts";
import { INITIALIZE } from "./http_helpers.ts";

const TOKEN = "alpha-token-0123456789abcdef";

async function answer(url: string, token?: string): Promise<string> {
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...token ? { authorization: `Bearer ${token}` } : {},
    },
    body: INITIALIZE,
  });
  const headers = [...response.headers].filter(([name]) => name !== "date" && name !== "content-length");
  return JSON.stringify({ status: response.status, headers, body: await response.text() });
}

Deno.test("an unknown agent and a real one without a valid token get the same answer", async () => {
  await using dir = await tempDir();
  const config = parseConfig(
    "agents:\n  alpha:\n    token: ${TOK}\n  beta:\n    token: sha256:" + "0".repeat(64) + "\n",
    `${dir.path}/mcphub.yaml`,
    { env: { get: () => undefined }, cwd: dir.path },
  );
  const listener = await listen({
    config,
    env: {},
    tokenEnv: { get: (key) => key === "TOK" ? TOKEN : undefined },
    version: "test",
    log: () => {},
    address: { hostname: "127.0.0.1", port: 0 },
    storePath: `${dir.path}/store.db`,
  });
  try {
    const base = `${listener.origin}/mcp`;
    for (const token of [undefined, "wrong-token-0123456789abcdef", TOKEN]) {
      const real = await answer(`${base}/beta`, token);
      assert.equal(await answer(`${base}/nobody`, token), real, `token ${token}`);
      assert.match(real, /"status":401/);
    }
  } finally {
    await listener.stop();
  }
});
