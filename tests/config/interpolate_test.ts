import assert from "node:assert/strict";
import { ConfigError, type LoadOptions, parseConfig } from "../../src/config/mod.ts";

function lines(...rows: string[]): string {
  return `${rows.join("\n")}\n`;
}

/** An environment that records which variables were read. */
function environment(vars: Record<string, string>) {
  const read: string[] = [];
  return {
    read,
    get(key: string): string | undefined {
      read.push(key);
      return Object.hasOwn(vars, key) ? vars[key] : undefined;
    },
  };
}

function parse(text: string, vars: Record<string, string>, options: Partial<LoadOptions> = {}) {
  return parseConfig(text, "mcphub.yaml", {
    env: environment(vars),
    cwd: "/work",
    home: "/home/u",
    ...options,
  });
}

function message(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${error}`);
    return error.message;
  }
  assert.fail("expected a ConfigError");
}

Deno.test("parseConfig() expands ${VAR} in command, args, env, cwd, url and headers", () => {
  const config = parse(
    lines(
      "servers:",
      "  s:",
      "    command: ${BIN}/server",
      "    args: ['--token=${TOKEN}', '${PORT}']",
      "    env: {TOKEN: '${TOKEN}', MIXED: 'a-${PORT}-b'}",
      "    cwd: ${DIR}/x",
      "  r:",
      "    url: https://${HOST}/mcp",
      "    headers:",
      "      Authorization: Bearer ${TOKEN}",
    ),
    { BIN: "/opt/bin", TOKEN: "t0k", PORT: "8080", DIR: "/srv", HOST: "api.example.com" },
  );
  const [s, r] = config.servers;
  assert.equal(s.command, "/opt/bin/server");
  assert.deepEqual(s.args, ["--token=t0k", "8080"]);
  assert.deepEqual(s.env, { TOKEN: "t0k", MIXED: "a-8080-b" });
  assert.equal(s.cwd, "/srv/x");
  assert.equal(r.url, "https://api.example.com/mcp");
  assert.deepEqual(r.headers, { Authorization: "Bearer t0k" });
});

Deno.test("parseConfig() expands a variable set to the empty string", () => {
  const config = parse(lines("servers:", "  s:", "    command: x", "    args: ['a${EMPTY}b']"), {
    EMPTY: "",
  });
  assert.deepEqual(config.servers[0].args, ["ab"]);
});

Deno.test("parseConfig() leaves description, tags and hints unexpanded", () => {
  const config = parse(
    lines(
      "servers:",
      "  s:",
      "    command: x",
      "    description: costs ${PRICE}",
      "    use_when: ['pay ${PRICE}']",
    ),
    { PRICE: "secret" },
  );
  assert.equal(config.servers[0].description, "costs ${PRICE}");
  assert.deepEqual(config.servers[0].useWhen, ["pay ${PRICE}"]);
});

Deno.test("parseConfig() reports an unset variable with the key that uses it", () => {
  const text = lines(
    "servers:",
    "  github:",
    "    command: npx",
    "    env:",
    "      GITHUB_TOKEN: ${GITHUB_TOKEN}",
  );
  assert.equal(
    message(() => parse(text, {})),
    "mcphub.yaml:5:21: servers.github.env.GITHUB_TOKEN: environment variable GITHUB_TOKEN is not set",
  );
  assert.equal(
    message(() => parse(lines("servers:", "  s:", "    command: x", "    args: [a, '${MISSING}']"), {})),
    "mcphub.yaml:4:15: servers.s.args[1]: environment variable MISSING is not set",
  );
});

Deno.test("parseConfig() reads $$ as a literal $ and leaves a bare $ alone", () => {
  const config = parse(
    lines(
      "servers:",
      "  s:",
      "    command: x",
      "    args: ['$${HOME}', 'a$$b', '$HOME', 'cost: 5$', '$$$${X}']",
    ),
    { HOME: "/home/u" },
  );
  assert.deepEqual(config.servers[0].args, ["${HOME}", "a$b", "$HOME", "cost: 5$", "$${X}"]);
});

Deno.test("parseConfig() rejects a malformed ${...} reference", () => {
  const expected = (column: number) =>
    `mcphub.yaml:4:${column}: servers.s.args[0]: malformed variable reference; write \${NAME} (letters, digits and "_") ` +
    'or "$$" for a literal "$"';
  assert.equal(
    message(() => parse(lines("servers:", "  s:", "    command: x", "    args: ['${1X}']"), {})),
    expected(12),
  );
  assert.equal(
    message(() => parse(lines("servers:", "  s:", "    command: x", "    args: ['${X']"), {})),
    expected(12),
  );
  assert.equal(
    message(() => parse(lines("servers:", "  s:", "    command: x", "    args: ['${}']"), {})),
    expected(12),
  );
});

Deno.test("parseConfig() never puts a variable's value in an error message", () => {
  const secret = "hunter2-very-secret";
  const text = lines(
    "servers:",
    "  r:",
    "    url: ${SECRET}",
    "    headers: {A: '${SECRET}${UNSET}'}",
    "  s:",
    "    command: ${SECRET}",
    "    enabled: maybe",
  );
  const found = message(() => parse(text, { SECRET: secret }));
  assert.ok(!found.includes(secret), found);
  assert.match(found, /servers\.r\.url: expected an http:\/\/ or https:\/\/ URL/);
  assert.match(found, /servers\.r\.headers\.A: environment variable UNSET is not set/);
});

Deno.test("parseConfig() does not read variables of servers outside the agent's scope", () => {
  const text = lines(
    "servers:",
    "  a:",
    "    command: ${A_BIN}",
    "  b:",
    "    command: x",
    "    env: {B_TOKEN: '${B_TOKEN}'}",
    "  c:",
    "    url: https://${C_HOST}/mcp",
    "agents:",
    "  only-a:",
    "    servers: [a]",
  );
  const env = environment({ A_BIN: "/bin/a" });
  const config = parseConfig(text, "mcphub.yaml", { env, cwd: "/work", agent: "only-a" });
  assert.equal(config.servers[0].command, "/bin/a");
  assert.deepEqual(config.servers[1].env, { B_TOKEN: "${B_TOKEN}" });
  assert.equal(config.servers[2].url, "https://${C_HOST}/mcp");
  assert.ok(!env.read.includes("B_TOKEN"), `read ${env.read}`);
  assert.ok(!env.read.includes("C_HOST"), `read ${env.read}`);
  // Without an agent, everything expands and the unset variables are errors.
  const all = message(() => parse(text, { A_BIN: "/bin/a" }));
  assert.deepEqual(all.split("\n"), [
    "mcphub.yaml:6:20: servers.b.env.B_TOKEN: environment variable B_TOKEN is not set",
    "mcphub.yaml:8:10: servers.c.url: environment variable C_HOST is not set",
  ]);
});

Deno.test("parseConfig() expands every server for an agent with all servers in scope", () => {
  const text = lines("servers:", "  a:", "    command: ${A_BIN}", "agents:", "  all: {}");
  assert.equal(
    message(() => parse(text, {}, { agent: "all" })),
    "mcphub.yaml:3:14: servers.a.command: environment variable A_BIN is not set",
  );
});

Deno.test("parseConfig() still validates the structure of out-of-scope servers", () => {
  const text = lines(
    "servers:",
    "  a: {command: x}",
    "  b: {command: '${B}', comand: y}",
    "agents:",
    "  x: {servers: [a]}",
  );
  assert.equal(
    message(() => parse(text, {}, { agent: "x" })),
    'mcphub.yaml:3:24: servers.b.comand: unknown key; did you mean "command"?',
  );
});

Deno.test("parseConfig() does not read variables of disabled servers", () => {
  const env = environment({});
  const text = lines(
    "servers:",
    "  off:",
    "    command: x",
    "    enabled: false",
    "    env: {T: '${OFF_TOKEN}'}",
  );
  const config = parseConfig(text, "mcphub.yaml", { env, cwd: "/work" });
  assert.deepEqual(config.servers[0].env, { T: "${OFF_TOKEN}" });
  assert.ok(!env.read.includes("OFF_TOKEN"));
});

Deno.test("parseConfig() does not read any server variable for an unknown agent", () => {
  const env = environment({});
  const text = lines("servers:", "  a:", "    command: ${A_BIN}");
  assert.equal(
    message(() => parseConfig(text, "mcphub.yaml", { env, cwd: "/work", agent: "ghost" })),
    'mcphub.yaml: unknown agent "ghost"; no agents are defined',
  );
  assert.ok(!env.read.includes("A_BIN"));
});

Deno.test("parseConfig() says to quote ${VAR} inside a flow list", () => {
  const found = message(() =>
    parse(lines("servers:", "  s:", "    command: x", "    args: [--t=${T}]"), { T: "1" })
  );
  assert.match(
    found.split("\n")[0],
    /^mcphub\.yaml:4:\d+: invalid YAML: .*; quote values that contain "\$\{" inside \[ \] or \{ \}$/,
  );
});
