/**
 * The gateway's own secrets never reach a stdio server, under any `inherit_env` (issue 41): the
 * variables read by `agents.*.token`, by `store:`, by an OAuth `client_secret`, `$MCPHUB_DB`,
 * `$MCPHUB_TOKEN`, and the PostgreSQL password variables of a PostgreSQL store.
 */
import assert from "node:assert/strict";
import { parseConfig } from "../../src/config/mod.ts";
import { serverEnvironment } from "../../src/downstream/environment.ts";

const ENV: Record<string, string> = {
  PATH: "/bin",
  HOME: "/h",
  ADMIN_TOKEN: "admin-token-0123456789abcdef",
  LOW_TOKEN: "low-token-0123456789abcdef",
  PG_PASS: "store-password",
  OAUTH_SECRET: "oauth-client-secret",
  MCPHUB_DB: "postgres://mcphub@db/mcphub",
  MCPHUB_TOKEN: "bridge-token-0123456789abcdef",
  PGPASSWORD: "pg-password",
  EXTRA: "1",
};

Deno.test("agent tokens, the store's variables and OAuth client secrets reach no server under inherit_env: all or a list", () => {
  const yaml = `store: postgres://mcphub:\${PG_PASS}@db/mcphub
inherit_env: all
servers:
  open:
    command: x
  listed:
    command: y
    inherit_env: [ADMIN_TOKEN, LOW_TOKEN, PG_PASS, OAUTH_SECRET, MCPHUB_DB, MCPHUB_TOKEN, PGPASSWORD, EXTRA]
  remote:
    url: https://example.com/mcp
    oauth:
      client_id: mcphub
      client_secret: \${OAUTH_SECRET}
agents:
  admin:
    token: \${ADMIN_TOKEN}
  low:
    servers: [open]
    token: \${LOW_TOKEN}
`;
  const config = parseConfig(yaml, "/work/mcphub.yaml", { env: { get: (key) => ENV[key] }, cwd: "/work" });
  const [open, listed] = config.servers;
  for (const server of [open!, listed!]) {
    assert.deepEqual(
      serverEnvironment(ENV, config, server),
      { PATH: "/bin", HOME: "/h", EXTRA: "1" },
      server.name,
    );
  }
});
