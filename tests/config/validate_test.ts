import assert from "node:assert/strict";
import { ConfigError, defaultConfig, type LoadOptions, parseConfig } from "../../src/config/mod.ts";

const OPTIONS: LoadOptions = { env: { get: () => undefined }, cwd: "/work", home: "/home/u" };

function lines(...rows: string[]): string {
  return `${rows.join("\n")}\n`;
}

function parse(text: string, options: Partial<LoadOptions> = {}) {
  return parseConfig(text, "mcphub.yaml", { ...OPTIONS, ...options });
}

function problems(text: string, options: Partial<LoadOptions> = {}): string[] {
  try {
    parse(text, options);
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${error}`);
    return error.message.split("\n");
  }
  assert.fail("expected a ConfigError");
}

function assertProblem(text: string, expected: string, options: Partial<LoadOptions> = {}): void {
  const found = problems(text, options);
  assert.ok(found.includes(expected), `expected:\n  ${expected}\ngot:\n  ${found.join("\n  ")}`);
}

/** A stdio server `s` with extra setting lines (indented 4). */
function server(...rows: string[]): string {
  return lines("servers:", "  s:", "    command: x", ...rows);
}

/** A remote server `r` with extra setting lines (indented 4). */
function remote(...rows: string[]): string {
  return lines("servers:", "  r:", "    url: https://example.com/mcp", ...rows);
}

// --- defaults and top level ---------------------------------------------------------------------------

Deno.test("parseConfig() fills every default", () => {
  const config = parse(server());
  assert.deepEqual(config, {
    ...defaultConfig(),
    path: "/work/mcphub.yaml",
    servers: [{
      name: "s",
      command: "x",
      args: [],
      env: {},
      transport: "http",
      headers: {},
      enabled: true,
      tags: [],
      useWhen: [],
      toolUseWhen: {},
    }],
  });
});

Deno.test("defaultConfig() exposes all with no servers and no path", () => {
  assert.deepEqual(defaultConfig(), {
    version: 1,
    expose: "all",
    pin: [],
    responseBudget: 32768,
    verbatim: false,
    connectTimeoutMs: 30_000,
    callTimeoutMs: 1_800_000,
    startupWaitMs: 5_000,
    record: true,
    codeMode: false,
    allowedHosts: [],
    sessionIdleMs: 1_800_000,
    listenLimits: {
      maxConnections: 1024,
      maxPending: 256,
      headerTimeoutMs: 30_000,
      idleTimeoutMs: 300_000,
      eventsPerSession: 1024 * 1024,
      eventsTotal: 32 * 1024 * 1024,
      relayInFlight: 8,
      relayRequests: 64,
      relayWindowMs: 60_000,
    },
    agentQuota: { concurrentCalls: 64, requests: 60_000, windowMs: 60_000 },
    servers: [],
    agents: [],
  });
});

Deno.test("parseConfig() treats an empty file as all defaults", () => {
  assert.deepEqual(parse("# nothing yet\n"), { ...defaultConfig(), path: "/work/mcphub.yaml" });
});

Deno.test("parseConfig() reads every top-level setting", () => {
  const config = parse(lines(
    "version: 1",
    "expose: lazy",
    "pin: [s, s__*, s__search]",
    "response_budget: 1MB",
    "verbatim: true",
    "connect_timeout: 5s",
    "call_timeout: 1h30m",
    "record: false",
    "servers:",
    "  s:",
    "    command: x",
  ));
  assert.equal(config.expose, "lazy");
  assert.deepEqual(config.pin, ["s", "s__*", "s__search"]);
  assert.equal(config.responseBudget, 1048576);
  assert.equal(config.verbatim, true);
  assert.equal(config.connectTimeoutMs, 5000);
  assert.equal(config.callTimeoutMs, 5_400_000);
  assert.equal(config.record, false);
});

Deno.test("parseConfig() reads JSON", () => {
  const config = parse('{"expose": "lazy", "servers": {"s": {"command": "x", "args": ["-y"]}}}');
  assert.equal(config.expose, "lazy");
  assert.deepEqual(config.servers[0].args, ["-y"]);
});

Deno.test("parseConfig() rejects a top level that is not a mapping", () => {
  assertProblem("- a\n- b\n", "mcphub.yaml:1:1: expected a mapping of settings at the top level, got a list");
});

Deno.test("parseConfig() reports YAML syntax errors with file, line and column", () => {
  assertProblem(
    lines("servers:", "  s:", "    command: x", "   args: [a]"),
    "mcphub.yaml:4:1: invalid YAML: All mapping items must start at the same column",
  );
  assertProblem(
    "a: b: c\n",
    "mcphub.yaml:1:4: invalid YAML: Nested mappings are not allowed in compact mappings",
  );
});

Deno.test("parseConfig() rejects a duplicate key and names the first line", () => {
  assertProblem(
    lines("servers:", "  s:", "    command: x", "  s:", "    command: y"),
    'mcphub.yaml:4:3: servers.s: duplicate key; "s" is already set on line 2',
  );
});

Deno.test("parseConfig() rejects version other than 1", () => {
  assertProblem(
    "version: 2\n",
    "mcphub.yaml:1:10: version: unsupported version 2; this mcphub reads version 1",
  );
  assertProblem('version: "1"\n', "mcphub.yaml:1:10: version: expected 1, got a string");
});

Deno.test("parseConfig() rejects expose other than all or lazy", () => {
  assertProblem(
    "expose: lazzy\n",
    'mcphub.yaml:1:9: expose: expected one of "all", "lazy", "auto", got "lazzy"; did you mean "lazy"?',
  );
  assertProblem(
    "expose: 3\n",
    'mcphub.yaml:1:9: expose: expected one of "all", "lazy", "auto", got a number',
  );
});

Deno.test("parseConfig() rejects a pin that names no configured server", () => {
  assertProblem(
    lines("pin: [gihub__search]", "servers:", "  github:", "    command: x"),
    'mcphub.yaml:1:7: pin[0]: unknown server "gihub"; did you mean "github"?',
  );
  assertProblem(
    "pin: [other]\n",
    'mcphub.yaml:1:7: pin[0]: unknown server "other"; no servers are configured',
  );
});

Deno.test("parseConfig() rejects a pin that is not server, server__* or server__tool", () => {
  const head = lines("servers:", "  s:", "    command: x");
  assertProblem(
    `${head}pin: [s__]\n`,
    'mcphub.yaml:4:7: pin[0]: expected "server", "server__*" or "server__tool", got "s__"',
  );
  assertProblem(
    `${head}pin: [s__get*]\n`,
    'mcphub.yaml:4:7: pin[0]: expected "server", "server__*" or "server__tool", got "s__get*"',
  );
  assertProblem(
    `${head}pin: s\n`,
    'mcphub.yaml:4:6: pin: expected a list of pins ("server", "server__*" or "server__tool"), got a string',
  );
});

Deno.test("parseConfig() reads response_budget as a size, a number or 0 for unlimited", () => {
  assert.equal(parse('response_budget: "0"\n').responseBudget, 0);
  assert.equal(parse("response_budget: 0\n").responseBudget, 0);
  assert.equal(parse("response_budget: 2048\n").responseBudget, 2048);
  assert.equal(parse("response_budget: 512B\n").responseBudget, 512);
  assert.equal(parse("response_budget: 64 kb\n").responseBudget, 65536);
});

Deno.test("parseConfig() rejects a response_budget below 512 B and says why", () => {
  assertProblem(
    "response_budget: 100B\n",
    "mcphub.yaml:1:18: response_budget: 100 B is below the minimum of 512 B, the smallest budget a retrieval " +
      'receipt fits in; use at least "512B", or "0" for unlimited',
  );
  assertProblem(
    "response_budget: 511\n",
    "mcphub.yaml:1:18: response_budget: 511 B is below the minimum of 512 B, the smallest budget a retrieval " +
      'receipt fits in; use at least "512B", or "0" for unlimited',
  );
});

Deno.test("parseConfig() rejects a response_budget that is not a size", () => {
  const [first] = problems("response_budget: 32XB\n");
  assert.equal(
    first,
    'mcphub.yaml:1:18: response_budget: invalid size "32XB": expected a number of bytes, or a number with B, KB, MB ' +
      'or GB (base 1024), e.g. "32KB", "1MB", "512B" or "0"',
  );
  assertProblem(
    "response_budget: -1\n",
    'mcphub.yaml:1:18: response_budget: expected a whole number of bytes or a size such as "32KB", got a negative ' +
      "or fractional number",
  );
  assertProblem(
    "response_budget: [1]\n",
    'mcphub.yaml:1:18: response_budget: expected a size such as "32KB", "1MB" or a number of bytes, got a list',
  );
});

Deno.test("parseConfig() rejects verbatim and record that are not booleans", () => {
  assertProblem('verbatim: "yes"\n', "mcphub.yaml:1:11: verbatim: expected true or false, got a string");
  assertProblem("record: 1\n", "mcphub.yaml:1:9: record: expected true or false, got a number");
});

Deno.test("parseConfig() rejects a connect_timeout that is not positive", () => {
  assertProblem(
    "connect_timeout: 0s\n",
    'mcphub.yaml:1:18: connect_timeout: must be greater than 0, got "0s"',
  );
  assertProblem(
    "connect_timeout: 30\n",
    'mcphub.yaml:1:18: connect_timeout: expected a duration such as "30s", "5m" or "1h30m", got a number',
  );
});

Deno.test("parseConfig() rejects a call_timeout that is not a positive duration", () => {
  assertProblem("call_timeout: -1m\n", 'mcphub.yaml:1:15: call_timeout: must be greater than 0, got "-1m"');
  const [first] = problems("call_timeout: 30 minutes\n");
  assert.match(
    first,
    /^mcphub\.yaml:1:15: call_timeout: invalid duration "30 minutes": expected a Go-style duration/,
  );
});

Deno.test("parseConfig() rejects unknown top-level keys, suggesting a close one", () => {
  assertProblem(
    'respnse_budget: "0"\n',
    'mcphub.yaml:1:1: respnse_budget: unknown key; did you mean "response_budget"?',
  );
  assertProblem("Expose: lazy\n", 'mcphub.yaml:1:1: Expose: unknown key; did you mean "expose"?');
  assertProblem(
    "github: {command: x}\n",
    "mcphub.yaml:1:1: github: unknown key; valid keys: version, expose, expose_budget, pin, response_budget, verbatim, " +
      "connect_timeout, call_timeout, startup_wait, record, code_mode, listen, allowed_hosts, session_idle, metrics_token, " +
      "listen_limits, agent_quota, servers, agents, inherit_env, store",
  );
});

Deno.test("parseConfig() rejects servers and agents that are not mappings", () => {
  assertProblem(
    "servers: [a]\n",
    "mcphub.yaml:1:10: servers: expected a mapping of server names to settings, got a list",
  );
  assertProblem(
    "agents: a\n",
    "mcphub.yaml:1:9: agents: expected a mapping of agent names to settings, got a string",
  );
  assert.deepEqual(parse("servers:\nagents:\npin:\n").servers, []);
});

Deno.test("parseConfig() reports every problem, sorted, and keeps the first's position", () => {
  try {
    parse(lines("expose: x", "servers:", "  s:", "    comand: x", "verbatim: 1"));
    assert.fail("expected a ConfigError");
  } catch (error) {
    assert.ok(error instanceof ConfigError);
    assert.deepEqual(error.message.split("\n"), [
      'mcphub.yaml:1:9: expose: expected one of "all", "lazy", "auto", got "x"',
      'mcphub.yaml:3:3: servers.s: set exactly one of "command" or "url"',
      'mcphub.yaml:4:5: servers.s.comand: unknown key; did you mean "command"?',
      "mcphub.yaml:5:11: verbatim: expected true or false, got a number",
    ]);
    assert.equal(error.file, "mcphub.yaml");
    assert.equal(error.line, 1);
    assert.equal(error.column, 9);
    assert.equal(error.keyPath, "expose");
    assert.equal(error.problems.length, 4);
  }
});

// --- servers --------------------------------------------------------------------------------------------

Deno.test("parseConfig() requires exactly one of command or url", () => {
  assertProblem(
    lines("servers:", "  s:", "    args: [a]"),
    'mcphub.yaml:2:3: servers.s: set exactly one of "command" or "url"',
  );
  assertProblem(
    lines("servers:", "  s:", "    command: x", "    url: https://x"),
    'mcphub.yaml:2:3: servers.s: set exactly one of "command" or "url"',
  );
  assertProblem(
    lines("servers:", "  s:"),
    'mcphub.yaml:2:3: servers.s: set exactly one of "command" or "url"',
  );
});

Deno.test("parseConfig() rejects a server that is not a mapping", () => {
  assertProblem(
    lines("servers:", "  s: npx"),
    "mcphub.yaml:2:6: servers.s: expected a mapping of server settings, got a string",
  );
});

Deno.test("parseConfig() rejects an empty or non-string command", () => {
  assertProblem(
    lines("servers:", "  s:", '    command: ""'),
    "mcphub.yaml:3:14: servers.s.command: must not be empty",
  );
  assertProblem(
    lines("servers:", "  s:", "    command: [npx]"),
    "mcphub.yaml:3:14: servers.s.command: expected a string, got a list",
  );
});

Deno.test("parseConfig() reads args as strings, keeping number spelling", () => {
  assert.deepEqual(parse(server("    args: [-y, 8080, true, '0800', 0800]")).servers[0].args, [
    "-y",
    "8080",
    "true",
    "0800",
    "0800",
  ]);
});

Deno.test("parseConfig() rejects args that are not a list of strings", () => {
  assertProblem(
    server("    args: -y"),
    "mcphub.yaml:4:11: servers.s.args: expected a list of strings, got a string",
  );
  assertProblem(
    server("    args: [a, {b: c}]"),
    "mcphub.yaml:4:15: servers.s.args[1]: expected a string, number or boolean, got a mapping",
  );
});

Deno.test("parseConfig() reads env as strings and rejects non-scalar values", () => {
  assert.deepEqual(parse(server("    env: {PORT: 0800, DEBUG: true, NAME: x}")).servers[0].env, {
    PORT: "0800",
    DEBUG: "true",
    NAME: "x",
  });
  assertProblem(
    server("    env:", "      LIST: [a]"),
    "mcphub.yaml:5:13: servers.s.env.LIST: expected a string, number or boolean, got a list",
  );
  assertProblem(
    server("    env:", "      EMPTY:"),
    "mcphub.yaml:5:7: servers.s.env.EMPTY: expected a string, number or boolean, got nothing (null)",
  );
  assertProblem(
    server("    env: [A=b]"),
    "mcphub.yaml:4:10: servers.s.env: expected a mapping of variable names to values, got a list",
  );
  assertProblem(
    server("    env: {A=b: c}"),
    'mcphub.yaml:4:11: servers.s.env.A=b: environment variable names cannot contain "="',
  );
});

Deno.test("parseConfig() expands ~ in cwd to the home directory", () => {
  assert.equal(parse(server("    cwd: ~/src/app")).servers[0].cwd, "/home/u/src/app");
  assert.equal(parse(server('    cwd: "~"')).servers[0].cwd, "/home/u");
  assert.equal(parse(server("    cwd: /srv/~x")).servers[0].cwd, "/srv/~x");
  assertProblem(
    server("    cwd: ~/x"),
    'mcphub.yaml:4:10: servers.s.cwd: cannot expand "~": HOME is not set',
    {
      home: undefined,
    },
  );
  assertProblem(server("    cwd: 5"), "mcphub.yaml:4:10: servers.s.cwd: expected a string, got a number");
});

Deno.test("parseConfig() takes the home directory from HOME when not given", () => {
  const config = parse(server("    cwd: ~/x"), {
    home: undefined,
    env: { get: (key) => key === "HOME" ? "/h" : undefined },
  });
  assert.equal(config.servers[0].cwd, "/h/x");
});

Deno.test("parseConfig() requires an http or https url", () => {
  assert.equal(parse(remote()).servers[0].url, "https://example.com/mcp");
  assertProblem(
    lines("servers:", "  r:", "    url: ftp://x"),
    "mcphub.yaml:3:10: servers.r.url: expected an http:// or https:// URL",
  );
  assertProblem(
    lines("servers:", "  r:", "    url: not a url"),
    "mcphub.yaml:3:10: servers.r.url: expected an http:// or https:// URL",
  );
});

Deno.test("parseConfig() reads transport http or sse, default http", () => {
  assert.equal(parse(remote()).servers[0].transport, "http");
  assert.equal(parse(remote("    transport: sse")).servers[0].transport, "sse");
  assertProblem(
    remote("    transport: ws"),
    'mcphub.yaml:4:16: servers.r.transport: expected "http" or "sse", got "ws"',
  );
});

Deno.test("parseConfig() reads headers as strings", () => {
  assert.deepEqual(parse(remote("    headers: {X-Retries: 3, Authorization: Bearer t}")).servers[0].headers, {
    "X-Retries": "3",
    Authorization: "Bearer t",
  });
  assertProblem(
    remote("    headers: [a]"),
    "mcphub.yaml:4:14: servers.r.headers: expected a mapping of header names to values, got a list",
  );
});

Deno.test("parseConfig() rejects stdio-only keys on a url server", () => {
  const expected = (key: string, line: number) =>
    `mcphub.yaml:${line}:5: servers.r.${key}: "${key}" is only for stdio servers (with "command"); this server sets "url"`;
  const found = problems(remote("    args: [a]", "    env: {A: b}", "    cwd: /tmp"));
  assert.deepEqual(found, [expected("args", 4), expected("env", 5), expected("cwd", 6)]);
});

Deno.test("parseConfig() rejects url-only keys on a command server", () => {
  const expected = (key: string, line: number) =>
    `mcphub.yaml:${line}:5: servers.s.${key}: "${key}" is only for remote servers (with "url"); this server sets "command"`;
  const found = problems(server("    transport: sse", "    headers: {A: b}"));
  assert.deepEqual(found, [expected("transport", 4), expected("headers", 5)]);
});

Deno.test("parseConfig() rejects enabled that is not a boolean", () => {
  assert.equal(parse(server("    enabled: false")).servers[0].enabled, false);
  assertProblem(
    server("    enabled: no"),
    "mcphub.yaml:4:14: servers.s.enabled: expected true or false, got a string",
  );
});

Deno.test("parseConfig() reads namespace: false and rejects a namespace that is not a boolean", () => {
  assert.equal(parse(server("    namespace: false")).servers[0].namespace, false);
  assert.equal(parse(server("    namespace: true")).servers[0].namespace, undefined);
  assertProblem(
    server("    namespace: off"),
    "mcphub.yaml:4:16: servers.s.namespace: expected true or false, got a string",
  );
});

Deno.test("parseConfig() rejects a description that is not a string", () => {
  assert.equal(parse(server("    description: GitHub API")).servers[0].description, "GitHub API");
  assertProblem(
    server("    description: [a]"),
    "mcphub.yaml:4:18: servers.s.description: expected a string, got a list",
  );
});

Deno.test("parseConfig() rejects tags that are not a list of strings", () => {
  assert.deepEqual(parse(server("    tags: [code, git]")).servers[0].tags, ["code", "git"]);
  assertProblem(
    server("    tags: code"),
    "mcphub.yaml:4:11: servers.s.tags: expected a list of tags, got a string",
  );
  assertProblem(
    server("    tags: [code, 3]"),
    "mcphub.yaml:4:18: servers.s.tags[1]: expected a string, got a number",
  );
});

Deno.test("parseConfig() reads use_when as one hint or a list", () => {
  assert.deepEqual(parse(server("    use_when: searching code")).servers[0].useWhen, ["searching code"]);
  assert.deepEqual(parse(server("    use_when: [a, b]")).servers[0].useWhen, ["a", "b"]);
  assertProblem(
    server("    use_when: {a: b}"),
    "mcphub.yaml:4:15: servers.s.use_when: expected a hint (a string) or a list of hints, got a mapping",
  );
  assertProblem(
    server("    use_when: [a, 1]"),
    "mcphub.yaml:4:19: servers.s.use_when[1]: expected a string, got a number",
  );
});

Deno.test("parseConfig() allows at most 8 use_when hints", () => {
  assert.equal(parse(server("    use_when: [a, b, c, d, e, f, g, h]")).servers[0].useWhen.length, 8);
  assertProblem(
    server("    use_when: [a, b, c, d, e, f, g, h, i]"),
    "mcphub.yaml:4:15: servers.s.use_when: at most 8 hints are allowed, got 9",
  );
});

Deno.test("parseConfig() allows use_when hints of at most 256 UTF-8 bytes", () => {
  assert.equal(parse(server(`    use_when: ${"a".repeat(256)}`)).servers[0].useWhen[0].length, 256);
  assertProblem(
    server(`    use_when: ["${"é".repeat(129)}"]`),
    "mcphub.yaml:4:16: servers.s.use_when[0]: hint is 258 bytes; the limit is 256 bytes (UTF-8)",
  );
});

Deno.test("parseConfig() requires one-line, non-empty use_when hints", () => {
  assertProblem(
    server('    use_when: "a\\nb"'),
    "mcphub.yaml:4:15: servers.s.use_when: hint must be one line; split it into several hints",
  );
  assertProblem(server('    use_when: ["a", " "]'), "mcphub.yaml:4:21: servers.s.use_when[1]: hint is empty");
});

Deno.test("parseConfig() reads tool_use_when as tool name to hints", () => {
  const config = parse(
    server("    tool_use_when:", "      search: finding code", "      get.file: [reading, opening]"),
  );
  assert.deepEqual(config.servers[0].toolUseWhen, {
    search: ["finding code"],
    "get.file": ["reading", "opening"],
  });
  assertProblem(
    server("    tool_use_when: [a]"),
    "mcphub.yaml:4:20: servers.s.tool_use_when: expected a mapping of tool names to hints, got a list",
  );
  assertProblem(
    server("    tool_use_when:", '      search: "a\\nb"'),
    "mcphub.yaml:5:15: servers.s.tool_use_when.search: hint must be one line; split it into several hints",
  );
  assertProblem(
    server("    tool_use_when:", "      search: [a, b, c, d, e, f, g, h, i]"),
    "mcphub.yaml:5:15: servers.s.tool_use_when.search: at most 8 hints are allowed, got 9",
  );
});

Deno.test("parseConfig() rejects unknown server keys, suggesting a close one", () => {
  assertProblem(
    lines("servers:", "  github:", "    comand: npx"),
    'mcphub.yaml:3:5: servers.github.comand: unknown key; did you mean "command"?',
  );
  assertProblem(
    server("    use-when: x"),
    'mcphub.yaml:4:5: servers.s.use-when: unknown key; did you mean "use_when"?',
  );
  assertProblem(
    server("    desc: x"),
    'mcphub.yaml:4:5: servers.s.desc: unknown key; did you mean "description"?',
  );
  assertProblem(
    server("    restart: always"),
    "mcphub.yaml:4:5: servers.s.restart: unknown key; valid keys: command, args, env, cwd, url, transport, " +
      "headers, oauth, enabled, namespace, description, tags, use_when, tool_use_when, inherit_env, trust",
  );
});

Deno.test("parseConfig() rejects server names outside [A-Za-z0-9][A-Za-z0-9_-]*", () => {
  assertProblem(
    lines("servers:", "  my.server:", "    command: x"),
    'mcphub.yaml:2:3: servers.my.server: invalid server name "my.server"; use letters, digits, "_" and "-", ' +
      "starting with a letter or digit",
  );
  assertProblem(
    lines("servers:", "  _x:", "    command: x"),
    'mcphub.yaml:2:3: servers._x: invalid server name "_x"; use letters, digits, "_" and "-", starting with a ' +
      "letter or digit",
  );
});

Deno.test("parseConfig() rejects server names over 48 characters", () => {
  assert.equal(parse(lines("servers:", `  ${"a".repeat(48)}:`, "    command: x")).servers.length, 1);
  const name = "a".repeat(49);
  assertProblem(
    lines("servers:", `  ${name}:`, "    command: x"),
    `mcphub.yaml:2:3: servers.${name}: server name is 49 characters; the limit is 48`,
  );
});

Deno.test('parseConfig() rejects server names containing "__"', () => {
  assertProblem(
    lines("servers:", "  git__hub:", "    command: x"),
    'mcphub.yaml:2:3: servers.git__hub: server name must not contain "__" (it separates server and tool in public names)',
  );
});

Deno.test("parseConfig() reserves the server name mcphub in any case", () => {
  assertProblem(
    lines("servers:", "  MCPHub:", "    command: x"),
    'mcphub.yaml:2:3: servers.MCPHub: server name "MCPHub" is reserved for the gateway\'s own tools; choose another name',
  );
});

Deno.test("parseConfig() keeps servers in file order", () => {
  const config = parse(lines("servers:", "  b: {command: x}", "  a: {url: 'http://a'}", "  c: {command: y}"));
  assert.deepEqual(config.servers.map((s) => s.name), ["b", "a", "c"]);
});

// --- agents ---------------------------------------------------------------------------------------------

const TWO_SERVERS = lines("servers:", "  a: {command: x}", "  b: {command: y}");

Deno.test("parseConfig() reads agents: servers omitted means all, [] means none", () => {
  const config = parse(
    TWO_SERVERS +
      lines(
        "agents:",
        "  all: {}",
        "  none: {servers: []}",
        "  some:",
        "    servers: [b]",
        "    tools: [b__search]",
        "    pin: [b__*]",
        "    tool_schema_budget: 4KB",
        "  bare:",
      ),
  );
  assert.deepEqual(config.agents, [
    { name: "all" },
    { name: "none", servers: [] },
    { name: "some", servers: ["b"], tools: ["b__search"], pin: ["b__*"], toolSchemaBudget: 4096 },
    { name: "bare" },
  ]);
});

Deno.test("parseConfig() rejects agent servers that are not configured", () => {
  assertProblem(
    TWO_SERVERS + lines("agents:", "  x:", "    servers: [a, c]"),
    'mcphub.yaml:6:18: agents.x.servers[1]: unknown server "c"; configured servers: a, b',
  );
  assertProblem(
    TWO_SERVERS + lines("agents:", "  x:", "    servers:"),
    'mcphub.yaml:6:5: agents.x.servers: expected a list of server names ([] for none; leave "servers" out for all), got nothing (null)',
  );
});

Deno.test("parseConfig() requires agent tools to be exact server__tool names in scope", () => {
  assert.deepEqual(parse(TWO_SERVERS + lines("agents:", "  x:", "    tools: [a__t, b__u]")).agents[0].tools, [
    "a__t",
    "b__u",
  ]);
  assertProblem(
    TWO_SERVERS + lines("agents:", "  x:", "    tools: [a__*]"),
    'mcphub.yaml:6:13: agents.x.tools[0]: expected an exact public tool name "server__tool", got "a__*"; to allow ' +
      'every tool of a server, list it under "servers" and leave "tools" out',
  );
  assertProblem(
    TWO_SERVERS + lines("agents:", "  x:", "    tools: [a]"),
    'mcphub.yaml:6:13: agents.x.tools[0]: expected an exact public tool name "server__tool", got "a"; to allow ' +
      'every tool of a server, list it under "servers" and leave "tools" out',
  );
  assertProblem(
    TWO_SERVERS + lines("agents:", "  x:", "    servers: [a]", "    tools: [b__t]"),
    'mcphub.yaml:7:13: agents.x.tools[0]: server "b" is not in this agent\'s servers (a)',
  );
  assertProblem(
    TWO_SERVERS + lines("agents:", "  x:", "    tools: [c__t]"),
    'mcphub.yaml:6:13: agents.x.tools[0]: unknown server "c"; configured servers: a, b',
  );
});

Deno.test("parseConfig() requires agent pins in the agent's scope", () => {
  assertProblem(
    TWO_SERVERS + lines("agents:", "  x:", "    servers: []", "    pin: [a__t]"),
    'mcphub.yaml:7:11: agents.x.pin[0]: server "a" is not in this agent\'s servers (none)',
  );
  assertProblem(
    TWO_SERVERS + lines("agents:", "  x:", "    pin: [a__]"),
    'mcphub.yaml:6:11: agents.x.pin[0]: expected "server", "server__*" or "server__tool", got "a__"',
  );
});

Deno.test("parseConfig() reads tool_schema_budget as a size or bytes, 0 allowed", () => {
  const budget = (value: string) =>
    parse(lines("agents:", "  x:", `    tool_schema_budget: ${value}`)).agents[0].toolSchemaBudget;
  assert.equal(budget("0"), 0);
  assert.equal(budget("100"), 100);
  assert.equal(budget("8KB"), 8192);
  assertProblem(
    lines("agents:", "  x:", "    tool_schema_budget: -5"),
    'mcphub.yaml:3:25: agents.x.tool_schema_budget: expected a whole number of bytes or a size such as "32KB", ' +
      "got a negative or fractional number",
  );
  assertProblem(
    lines("agents:", "  x:", "    tool_schema_budget: lots"),
    'mcphub.yaml:3:25: agents.x.tool_schema_budget: invalid size "lots": expected a number of bytes, or a number ' +
      'with B, KB, MB or GB (base 1024), e.g. "32KB", "1MB", "512B" or "0"',
  );
});

Deno.test("parseConfig() rejects invalid agent names and unknown agent keys", () => {
  assertProblem(
    lines("agents:", "  code review: {}"),
    'mcphub.yaml:2:3: agents.code review: invalid agent name "code review"; use letters, digits, "_" and "-", ' +
      "starting with a letter or digit",
  );
  assertProblem(
    lines("agents:", "  x:", "    server: [a]"),
    'mcphub.yaml:3:5: agents.x.server: unknown key; did you mean "servers"?',
  );
  assertProblem(
    lines("agents:", "  x: [a]"),
    "mcphub.yaml:2:6: agents.x: expected a mapping of agent settings, got a list",
  );
});

Deno.test("parseConfig() rejects an unknown --agent, listing the defined ones", () => {
  assertProblem(
    TWO_SERVERS + lines("agents:", "  reviewer: {}", "  writer: {}"),
    'mcphub.yaml:4:1: agents: unknown agent "x"; defined agents: reviewer, writer',
    { agent: "x" },
  );
  assertProblem(TWO_SERVERS, 'mcphub.yaml: unknown agent "x"; no agents are defined', { agent: "x" });
  assert.equal(
    parse(TWO_SERVERS + lines("agents:", "  reviewer: {}"), { agent: "reviewer" }).agents.length,
    1,
  );
});

Deno.test("store: takes a file path or a postgres:// URL with ${VAR} expanded, and refuses a literal password", () => {
  assert.equal(parse("store: /var/lib/mcphub/mcphub.db\n").store, "/var/lib/mcphub/mcphub.db");
  assert.equal(
    parse("store: postgres://mcphub:${PGPASS}@db/mcphub?sslmode=require\n", {
      env: { get: (k) => k === "PGPASS" ? "s3cret" : undefined },
    }).store,
    "postgres://mcphub:s3cret@db/mcphub?sslmode=require",
  );
  assertProblem(
    "store: postgres://mcphub:hunter2@db/mcphub\n",
    "mcphub.yaml:1:8: store: the URL holds a literal password; write it as ${VAR} (e.g. " +
      "postgres://mcphub:${PGPASSWORD}@db/mcphub) or leave it out and set PGPASSWORD",
  );
  assertProblem(
    "store: postgres://m:${NOPE}@db/x\n",
    "mcphub.yaml:1:8: store: environment variable NOPE is not set",
  );
  assertProblem(
    "store: 5\n",
    "mcphub.yaml:1:8: store: expected a store file path or a postgres:// URL, got a number",
  );
  assert.equal(parse("{}\n").store, undefined);
});

Deno.test("listen_limits: counts and durations; an unknown key or a bad value names the fix", () => {
  const config = parse(lines(
    "listen_limits:",
    "  max_connections: 64",
    "  max_pending: 8",
    "  header_timeout: 5s",
    "  idle_timeout: 2m",
  ));
  assert.deepEqual(config.listenLimits, {
    maxConnections: 64,
    maxPending: 8,
    headerTimeoutMs: 5_000,
    idleTimeoutMs: 120_000,
    eventsPerSession: 1024 * 1024,
    eventsTotal: 32 * 1024 * 1024,
    relayInFlight: 8,
    relayRequests: 64,
    relayWindowMs: 60_000,
  });
  assertProblem(
    "listen_limits:\n  max_connections: 0\n",
    "mcphub.yaml:2:20: listen_limits.max_connections: expected a whole number of at least 1, got 0",
  );
});

Deno.test("listen_limits: the resumable events' sizes and the relay bounds; a bad value names the key and the fix", () => {
  const config = parse(lines(
    "listen_limits:",
    "  events_per_session: 256KB",
    "  events_total: 8MB",
    "  relay_in_flight: 2",
    "  relay_requests: 10",
    "  relay_window: 30s",
  ));
  assert.deepEqual(config.listenLimits, {
    maxConnections: 1024,
    maxPending: 256,
    headerTimeoutMs: 30_000,
    idleTimeoutMs: 300_000,
    eventsPerSession: 256 * 1024,
    eventsTotal: 8 * 1024 * 1024,
    relayInFlight: 2,
    relayRequests: 10,
    relayWindowMs: 30_000,
  });
  // 0 keeps no events (no resumption); a bare number is bytes.
  const none = parse(lines("listen_limits:", "  events_per_session: 0", "  events_total: 4096"));
  assert.equal(none.listenLimits.eventsPerSession, 0);
  assert.equal(none.listenLimits.eventsTotal, 4096);
  assertProblem(
    "listen_limits:\n  events_total: lots\n",
    'mcphub.yaml:2:17: listen_limits.events_total: invalid size "lots": expected a number of bytes, or a ' +
      'number with B, KB, MB or GB (base 1024), e.g. "32KB", "1MB", "512B" or "0"',
  );
  assertProblem(
    "listen_limits:\n  events_per_session: -1\n",
    "mcphub.yaml:2:23: listen_limits.events_per_session: expected a whole number of bytes or a size such as " +
      '"32KB", got a negative or fractional number',
  );
  assertProblem(
    "listen_limits:\n  relay_in_flight: 0\n",
    "mcphub.yaml:2:20: listen_limits.relay_in_flight: expected a whole number of at least 1, got 0",
  );
  assertProblem(
    'listen_limits:\n  relay_requests: "many"\n',
    "mcphub.yaml:2:19: listen_limits.relay_requests: expected a whole number of at least 1, got a string",
  );
  assertProblem(
    "listen_limits:\n  relay_window: 60\n",
    'mcphub.yaml:2:17: listen_limits.relay_window: expected a duration such as "30s", "5m" or "1h30m", got a number',
  );
  assertProblem(
    "listen_limits:\n  relay_burst: 3\n",
    "mcphub.yaml:2:3: listen_limits.relay_burst: unknown key; valid keys: max_connections, max_pending, " +
      "header_timeout, idle_timeout, events_per_session, events_total, relay_in_flight, relay_requests, relay_window",
  );
});
