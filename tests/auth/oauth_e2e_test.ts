/**
 * OAuth end to end through the gateway with the SDK client: 401 -> needs_auth ->
 * `mcphub auth login --headless` -> calls work -> token expires -> refreshed ->
 * refresh revoked -> needs_auth -> login again; and across a restart.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import {
  connectGateway,
  DENO,
  FIXTURE,
  type GatewayClient,
  q,
  runMcphub,
  serversReady,
  stderrMatches,
  structured,
  tempDir,
  writeConfig,
} from "../helpers.ts";
import { startOAuthServer } from "../fixtures/oauth_server.ts";

interface Status {
  name: string;
  state: string;
  error?: string;
  login_command?: string;
  tools: number;
}

async function servers(gw: GatewayClient): Promise<Status[]> {
  return structured<{ servers: Status[] }>(await gw.client.callTool({ name: "list_servers", arguments: {} }))
    .servers;
}

/** Polls list_servers until `name` is in `state` (the gateway reports no event a client could await). */
async function waitForState(gw: GatewayClient, name: string, state: string): Promise<Status> {
  const rows = await serversReady(gw.client, { state, only: [name] });
  return rows.find((s) => s.name === name) as unknown as Status;
}

async function cli(
  config: string,
  db: string,
  ...args: string[]
): Promise<{ code: number; out: string; err: string }> {
  const output = await runMcphub(["--config", config, "--db", db, ...args]);
  return { code: output.code, out: output.stdout, err: output.stderr };
}

/** Moves a stored login's issue and expiry times, as if time had passed (the gateway reads them per request). */
function ageStoredTokens(db: string, server: string, at: { issuedAgoMs: number; leftMs: number }): void {
  const store = new DatabaseSync(db);
  try {
    store.exec("PRAGMA busy_timeout = 10000");
    const now = Date.now();
    const changed = store.prepare("UPDATE oauth_sessions SET tokens_at = ?, expires_at = ? WHERE server = ?")
      .run(now - at.issuedAgoMs, now + at.leftMs, server);
    assert.equal(changed.changes, 1, `one stored login of ${server}`);
  } finally {
    store.close();
  }
}

function text(result: unknown): string {
  return ((result as { content: { text: string }[] }).content[0]!).text;
}

Deno.test("OAuth: 401 -> needs_auth -> login -> refresh before expiry and on 401 -> revoked -> needs_auth", async () => {
  await using dir = await tempDir();
  await using as = await startOAuthServer();
  const db = `${dir.path}/store/mcphub.db`;
  const config = await writeConfig(
    dir.path,
    `servers:
  prot:
    url: ${q(as.url)}
  local:
    command: ${q(DENO)}
    args: [run, -A, ${q(FIXTURE)}]
`,
  );
  const login = `mcphub --config ${config} --db ${db} auth login prot`;
  await using gw = await connectGateway(config, { db });

  // 401: the gateway discovers the authorization server and waits for a login; the other server serves.
  const waiting = await waitForState(gw, "prot", "needs_auth");
  assert.deepEqual(waiting, {
    name: "prot",
    enabled: true,
    connected: false,
    state: "needs_auth",
    tools: 0,
    error: `the server requires an OAuth login (authorization server ${as.origin}); run \`${login}\``,
    login_command: login,
  });
  assert.deepEqual(text(await gw.client.callTool({ name: "local__echo", arguments: { text: "hi" } })), "hi");
  const refused = await gw.client.callTool({
    name: "call_tool",
    arguments: { server: "prot", tool: "echo" },
  });
  assert.equal(refused.isError, true);
  assert.match(
    text(refused),
    new RegExp(`server "prot" is needs_auth: .*run \`${login.replaceAll(".", "\\.")}\``),
  );
  assert.equal(as.counts.registrations, 0, "serving never registers a client");

  // Login, headless: the running gateway picks it up without a restart.
  const first = await cli(config, db, "auth", "login", "prot", "--headless");
  assert.equal(first.code, 0, first.err);
  assert.match(
    first.out,
    /^Logged in to "prot": access token expires in (?:1h0m|59m) \(.*\), scopes tools, refreshable\.\n/,
  );
  assert.deepEqual([as.counts.registrations, as.counts.authorizations, as.counts.codeGrants], [1, 1, 1]);
  await waitForState(gw, "prot", "connected");
  assert.equal(text(await gw.client.callTool({ name: "prot__echo", arguments: { text: "one" } })), "one");

  // The server expires the token early: 401, refreshed by the SDK, the call goes through once.
  as.expireAccessTokens();
  const before401 = as.counts.unauthorized;
  assert.equal(text(await gw.client.callTool({ name: "prot__echo", arguments: { text: "two" } })), "two");
  assert.deepEqual([as.counts.unauthorized - before401, as.counts.refreshGrants], [1, 1]);

  // The new token is aged into its last quarter of life in the store the gateway reads (issued 50 min ago,
  // 10 s left: no real time passes): it is refreshed before use, with no 401.
  ageStoredTokens(db, "prot", { issuedAgoMs: 50 * 60_000, leftMs: 10_000 });
  const beforeEarly = as.counts.unauthorized;
  assert.equal(
    text(await gw.client.callTool({ name: "prot__whoami", arguments: {} })).endsWith("scope tools"),
    true,
  );
  assert.deepEqual([as.counts.unauthorized - beforeEarly, as.counts.refreshGrants], [0, 2]);

  // The refresh token is revoked and the access token expires: needs_auth again, the call not run.
  as.revokeRefreshTokens();
  as.expireAccessTokens();
  const revoked = await gw.client.callTool({ name: "prot__echo", arguments: { text: "three" } });
  assert.equal(revoked.isError, true);
  assert.match(
    text(revoked),
    /^server "prot" is needs_auth: the server requires an OAuth login \(authorization server .*\); the authorization server refused the stored refresh token at .*; run `mcphub .* auth login prot` \(the server refused this call as unauthorized; it was not run\)/,
  );
  assert.equal(as.counts.refusedRefreshes, 1);
  assert.equal((await servers(gw)).find((s) => s.name === "prot")?.state, "needs_auth");
  const status = await cli(config, db, "auth", "status", "--json");
  assert.equal(status.code, 0, status.err);
  const row = JSON.parse(status.out).servers[0];
  assert.equal(row.status, "not_logged_in");
  assert.match(row.note, /^the authorization server refused the stored refresh token at /);

  // Logging in again brings it back, still without a restart.
  const second = await cli(config, db, "auth", "login", "prot", "--headless");
  assert.equal(second.code, 0, second.err);
  assert.equal(as.counts.registrations, 1, "the registered client is reused");
  await waitForState(gw, "prot", "connected");
  // The reconnect is logged on stderr, a pipe of its own: awaited while the gateway runs.
  await stderrMatches(gw, /server "prot": found a new login, reconnecting/);
  assert.equal(text(await gw.client.callTool({ name: "prot__echo", arguments: { text: "four" } })), "four");
  await gw.close();

  // A restart uses the stored login.
  await using again = await connectGateway(config, { db });
  await waitForState(again, "prot", "connected");
  assert.equal(
    text(await again.client.callTool({ name: "prot__echo", arguments: { text: "five" } })),
    "five",
  );
  await again.close();

  // No token ever shows: not in logs, list_servers, stats or auth status; the store file is private.
  const shown = [gw.stderr(), again.stderr(), first.out, first.err, second.out, second.err, status.out];
  for (const token of as.issued) for (const s of shown) assert.equal(s.includes(token), false);
  if (Deno.build.os !== "windows") assert.equal((await Deno.stat(db)).mode! & 0o777, 0o600);
});

Deno.test("OAuth client credentials: a machine-to-machine server connects with no login", async () => {
  await using dir = await tempDir();
  const secret = "cc-secret-value-1234";
  await using as = await startOAuthServer({ clients: [{ id: "m2m", secret }] });
  const db = `${dir.path}/mcphub.db`;
  const config = await writeConfig(
    dir.path,
    `servers:
  svc:
    url: ${q(as.url)}
    oauth:
      grant: client_credentials
      client_id: m2m
      client_secret: \${SVC_SECRET}
      scopes: [tools]
`,
  );
  await using gw = await connectGateway(config, { db, env: { SVC_SECRET: secret } });
  await waitForState(gw, "svc", "connected");
  assert.equal(
    text(await gw.client.callTool({ name: "svc__whoami", arguments: {} })),
    "client m2m, scope tools",
  );
  // Expired: the next request fetches a new token with the same grant.
  as.expireAccessTokens();
  assert.equal(text(await gw.client.callTool({ name: "svc__echo", arguments: { text: "x" } })), "x");
  assert.equal(as.counts.clientCredentialsGrants, 2);
  assert.equal(as.counts.registrations, 0);
  await gw.close();
  for (const s of [gw.stderr()]) {
    assert.equal(s.includes(secret), false);
    for (const token of as.issued) assert.equal(s.includes(token), false);
  }
});
