/**
 * The `oauth:` config key, the store's OAuth table, and the permission flags a
 * stored login adds.
 */
import assert from "node:assert/strict";
import { ConfigError, type LoadOptions, parseConfig } from "../../src/config/mod.ts";
import { authMigrations, AuthStore } from "../../src/auth/mod.ts";
import { openStore } from "../../src/store/mod.ts";
import { derivePermissions } from "../../src/cli/permissions.ts";

const OPTIONS: LoadOptions = {
  env: { get: (k) => ({ SECRET: "s3cret-value" } as Record<string, string>)[k] },
  cwd: "/work",
  home: "/home/u",
};

function remote(...rows: string[]): string {
  return ["servers:", "  r:", "    url: https://example.com/mcp", ...rows, ""].join("\n");
}

function problems(text: string): string[] {
  try {
    parseConfig(text, "mcphub.yaml", OPTIONS);
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error.message.split("\n");
  }
  return [];
}

Deno.test("oauth: parsed with defaults, the secret expanded and redacted", () => {
  const config = parseConfig(
    remote(
      "    oauth:",
      "      client_id: abc",
      "      client_secret: ${SECRET}",
      "      scopes: [read, write]",
    ),
    "mcphub.yaml",
    OPTIONS,
  );
  assert.deepEqual(config.servers[0]!.oauth, {
    scopes: ["read", "write"],
    grant: "authorization_code",
    clientId: "abc",
    clientSecret: "s3cret-value",
  });
  assert.ok(config.servers[0]!.secrets?.includes("s3cret-value"));
  const literal = parseConfig(
    remote(
      "    oauth:",
      "      client_id: abc",
      "      client_secret: literal-secret",
      "      redirect_port: 8765",
    ),
    "mcphub.yaml",
    OPTIONS,
  );
  assert.equal(literal.servers[0]!.oauth?.redirectPort, 8765);
  assert.ok(literal.servers[0]!.secrets?.includes("literal-secret"), "a literal secret is redacted too");
  assert.deepEqual(parseConfig(remote("    oauth:"), "mcphub.yaml", OPTIONS).servers[0]!.oauth, {
    scopes: [],
    grant: "authorization_code",
  });
});

Deno.test("oauth: every mistake names the key and the fix", () => {
  assert.deepEqual(problems(remote("    oauth:", "      client_secret: x")), [
    'mcphub.yaml:4:5: servers.r.oauth: "client_secret" needs "client_id" (the client it belongs to)',
  ]);
  assert.deepEqual(problems(remote("    oauth:", "      grant: client_credentials", "      client_id: a")), [
    'mcphub.yaml:4:5: servers.r.oauth: grant: client_credentials needs "client_id" and "client_secret"',
  ]);
  assert.deepEqual(problems(remote("    oauth:", "      grant: password")), [
    'mcphub.yaml:5:14: servers.r.oauth.grant: expected "authorization_code" or "client_credentials", got "password"',
  ]);
  assert.deepEqual(problems(remote("    oauth:", "      scope: [a]")), [
    'mcphub.yaml:5:7: servers.r.oauth.scope: unknown key; did you mean "scopes"?',
  ]);
  assert.deepEqual(problems(remote("    oauth:", "      scopes: [a b]")), [
    'mcphub.yaml:5:15: servers.r.oauth.scopes: scope "a b" contains a space; list each scope separately',
  ]);
  assert.deepEqual(problems(remote("    oauth:", "      redirect_port: 70000")), [
    "mcphub.yaml:5:22: servers.r.oauth.redirect_port: expected a port number from 1 to 65535, got a number",
  ]);
  assert.deepEqual(
    problems(remote("    headers: { Authorization: Bearer x }", "    oauth: { client_id: a }")),
    [
      'mcphub.yaml:5:5: servers.r.oauth: set either "oauth" or an Authorization header in "headers", not both',
    ],
  );
  assert.deepEqual(
    problems(["servers:", "  s:", "    command: x", "    oauth: { client_id: a }", ""].join("\n")),
    [
      'mcphub.yaml:4:5: servers.s.oauth: "oauth" is only for remote servers (with "url"); this server sets "command"',
    ],
  );
});

Deno.test("the auth store: rows per server and URL, refused tokens dropped only if still current", () => {
  const db = openStore(":memory:", { migrations: authMigrations });
  let now = 1000;
  const store = new AuthStore(db, () => now);
  assert.equal(store.get("r", "https://a/mcp"), undefined);
  store.update("r", "https://a/mcp", { tokens: { access_token: "A1", refresh_token: "R1" }, tokensAt: 5 });
  store.update("r", "https://a/mcp", { scope: "read" });
  store.update("r", "https://other/mcp", { client: { client_id: "c" } });
  assert.deepEqual(store.get("r", "https://a/mcp"), {
    server: "r",
    url: "https://a/mcp",
    tokens: { access_token: "A1", refresh_token: "R1" },
    tokensAt: 5,
    scope: "read",
    updatedAt: 1000,
  });
  // Another process stored newer tokens after this one read R0: they stay.
  assert.equal(store.dropTokens("r", "https://a/mcp", { refresh: "R0" }, "refused"), false);
  now = 2000;
  assert.equal(store.dropTokens("r", "https://a/mcp", { refresh: "R1" }, "refused at T"), true);
  assert.deepEqual(store.get("r", "https://a/mcp"), {
    server: "r",
    url: "https://a/mcp",
    scope: "read",
    note: "refused at T",
    updatedAt: 2000,
  });
  assert.deepEqual(store.list().map((r) => r.url), ["https://a/mcp", "https://other/mcp"]);
  assert.equal(store.delete("r"), 2);
  assert.deepEqual(store.list(), []);
  db.close();
});

Deno.test("permissions: a stored login's authorization server is allowed; a login still missing is a note", () => {
  const config = parseConfig(
    [
      "servers:",
      "  r:",
      "    url: https://mcp.example.com/mcp",
      "  o:",
      "    url: https://other.example.com/mcp",
      "    oauth: {}",
      "",
    ].join("\n"),
    "/c/mcphub.yaml",
    OPTIONS,
  );
  const permissions = derivePermissions(config, {
    storePath: "/d/mcphub.db",
    cwd: "/",
    which: () => undefined,
    os: "linux",
    authUrls: (s) =>
      s.name === "r" ? ["https://auth.example.com", "https://auth.example.com:8443/token"] : [],
  });
  assert.deepEqual(permissions.net, [
    "auth.example.com:443",
    "auth.example.com:8443",
    "mcp.example.com:443",
    "other.example.com:443",
  ]);
  assert.deepEqual(permissions.notes, [
    'server "o" uses OAuth but has no login in the store yet: if its authorization server is on another host, ' +
    "run `mcphub auth login o` first and derive the flags again",
  ]);
});
