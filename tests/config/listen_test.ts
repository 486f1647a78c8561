import assert from "node:assert/strict";
import {
  ConfigError,
  isLoopback,
  type LoadOptions,
  parseConfig,
  parseListen,
  tokenHash,
} from "../../src/config/mod.ts";

const OPTIONS: LoadOptions = { env: { get: () => undefined }, cwd: "/work", home: "/home/u" };

function problems(text: string): string[] {
  try {
    parseConfig(text, "mcphub.yaml", OPTIONS);
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${error}`);
    return error.message.split("\n");
  }
  assert.fail("expected a ConfigError");
}

Deno.test("parseListen() reads HOST:PORT; an empty host is loopback", () => {
  assert.deepEqual(parseListen("127.0.0.1:8080"), { hostname: "127.0.0.1", port: 8080 });
  assert.deepEqual(parseListen(":8080"), { hostname: "127.0.0.1", port: 8080 });
  assert.deepEqual(parseListen("[::1]:0"), { hostname: "::1", port: 0 });
  assert.deepEqual(parseListen("0.0.0.0:443"), { hostname: "0.0.0.0", port: 443 });
  for (const bad of ["8080", "host", "127.0.0.1:70000", "::1:80", "a b:1"]) {
    assert.throws(() => parseListen(bad), {
      name: "RangeError",
      message: new RegExp(`"${bad.replace(/[[\]]/g, "\\$&")}" is not HOST:PORT`),
    });
  }
});

Deno.test("isLoopback() knows loopback names and addresses only", () => {
  for (const host of ["127.0.0.1", "127.1.2.3", "localhost", "::1", "[::1]"]) {
    assert.ok(isLoopback(host), host);
  }
  for (const host of ["0.0.0.0", "::", "192.168.1.2", "example.com", "127.0.0.1.example.com"]) {
    assert.ok(!isLoopback(host), host);
  }
});

Deno.test("listen, allowed_hosts, session_idle and agent tokens are read and checked", () => {
  const config = parseConfig(
    [
      'listen: "127.0.0.1:9000"',
      "allowed_hosts: [MCP.example.org]",
      "session_idle: 5m",
      "agents:",
      "  ci:",
      "    token: ${CI_TOKEN}",
      "  ops:",
      `    token: sha256:${"ab".repeat(32)}`,
      "",
    ].join("\n"),
    "mcphub.yaml",
    OPTIONS,
  );
  assert.equal(config.listen, "127.0.0.1:9000");
  assert.deepEqual(config.allowedHosts, ["mcp.example.org"]);
  assert.equal(config.sessionIdleMs, 300_000);
  assert.deepEqual(config.agents.map((a) => a.token), ["${CI_TOKEN}", `sha256:${"ab".repeat(32)}`]);

  assert.deepEqual(problems('listen: "8080"\n'), [
    'mcphub.yaml:1:9: listen: "8080" is not HOST:PORT; write e.g. "127.0.0.1:8080", "[::1]:8080" or ":8080" (loopback)',
  ]);
  assert.deepEqual(problems("agents:\n  ci:\n    token: hunter2hunter2hunter2\n"), [
    "mcphub.yaml:3:12: agents.ci.token: a token written in the file is readable by anyone who can read the file; " +
    'write it as ${VAR} (set VAR in the environment) or as its hash "sha256:HEX" (printf %s "$TOKEN" | sha256sum)',
  ]);
  assert.deepEqual(problems("agents:\n  ci:\n    token: sha256:abc\n"), [
    'mcphub.yaml:3:12: agents.ci.token: expected "sha256:" and 64 lowercase hex digits (printf %s "$TOKEN" | sha256sum)',
  ]);
  assert.deepEqual(problems("metrics_token: hunter2hunter2hunter2\n"), [
    "mcphub.yaml:1:16: metrics_token: a token written in the file is readable by anyone who can read the file; " +
    'write it as ${VAR} (set VAR in the environment) or as its hash "sha256:HEX" (printf %s "$TOKEN" | sha256sum)',
  ]);
  assert.equal(
    parseConfig(`metrics_token: sha256:${"cd".repeat(32)}\n`, "mcphub.yaml", OPTIONS).metricsToken,
    `sha256:${"cd".repeat(32)}`,
  );
  assert.deepEqual(problems("allowed_hosts: [https://x.org]\n"), [
    'mcphub.yaml:1:17: allowed_hosts[0]: expected a host name without scheme or port, e.g. "mcp.example.com", got "https://x.org"',
  ]);
});

Deno.test("tokenHash() hashes the token from the environment; errors name the file, key and fix", async () => {
  const agent = { name: "ci", token: "${CI_TOKEN}" };
  const env = (value?: string) => ({ get: (key: string) => key === "CI_TOKEN" ? value : undefined });
  // printf %s 0123456789abcdef0123 | sha256sum
  assert.equal(
    await tokenHash(agent, env("0123456789abcdef0123"), "/etc/mcphub.yaml"),
    "1bd8fd47297046f993e608e398d5905b00a33e163c6b1172dd38887fed05ed6a",
  );
  await assert.rejects(tokenHash(agent, env(undefined), "/etc/mcphub.yaml"), {
    name: "RangeError",
    message:
      "/etc/mcphub.yaml: agents.ci.token: environment variable CI_TOKEN is not set; set it before starting " +
      'mcphub, or write the token\'s hash as "sha256:HEX" (printf %s "$TOKEN" | sha256sum)',
  });
  await assert.rejects(tokenHash(agent, env("short"), "/etc/mcphub.yaml"), /shorter than 16 characters/);
  assert.equal(
    await tokenHash({ name: "ops", token: `sha256:${"ab".repeat(32)}` }, env(), undefined),
    "ab".repeat(32),
  );
  assert.equal(await tokenHash({ name: "none" }, env(), undefined), undefined);
});
