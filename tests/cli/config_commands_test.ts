import assert from "node:assert/strict";
import { join } from "node:path";
import { runCliHere } from "../helpers.ts";
import { STARTER_CONFIG } from "../../src/cli/config_commands.ts";
import { derivedDescription, MAX_DERIVED } from "../../src/cli/derive.ts";
import { DENO, ROOT } from "../helpers.ts";
import { type Config, loadConfig } from "../../src/config/mod.ts";

interface Run {
  code: number;
  out: string;
  err: string;
}

interface Sandbox extends AsyncDisposable {
  dir: string;
  /** Where `init` writes: `$HOME/.config/mcphub/mcphub.yaml`. */
  home: string;
  run(...args: string[]): Promise<Run>;
  load(path?: string): Promise<Config>;
  backups(dir?: string): Promise<string[]>;
}

/** A temp HOME and working directory; `GITHUB_TOKEN` is set so loads can expand it. */
async function sandbox(): Promise<Sandbox> {
  const dir = await Deno.makeTempDir({ prefix: "mcphub_cfgcmd_" });
  const env = new Map([["HOME", dir], ["GITHUB_TOKEN", "t0ken"]]);
  const environment = { get: (key: string) => env.get(key), toObject: () => Object.fromEntries(env) };
  const home = join(dir, ".config", "mcphub", "mcphub.yaml");
  return {
    dir,
    home,
    run: (...args) => runCliHere(args, { env: Object.fromEntries(env), cwd: dir }),
    load: (path = home) => loadConfig(path, { env: environment, cwd: dir }),
    async backups(folder = join(dir, ".config", "mcphub")) {
      const names: string[] = [];
      for await (const entry of Deno.readDir(folder)) if (entry.name.endsWith(".bak")) names.push(entry.name);
      return names.sort();
    },
    [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }),
  };
}

function mode(path: string): number {
  return Deno.statSync(path).mode! & 0o777;
}

Deno.test("init writes the commented starter (0600) at the default path and never overwrites", async () => {
  await using box = await sandbox();
  const r = await box.run("init");
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /^created \.config\/mcphub\/mcphub\.yaml\n/);
  const text = await Deno.readTextFile(box.home);
  assert.equal(text, STARTER_CONFIG);
  assert.match(text, /^version: 1$/m);
  assert.match(text, /^expose: auto$/m);
  assert.match(text, /^response_budget: 32KB$/m);
  assert.match(text, /^ {2}# github:$/m);
  if (Deno.build.os !== "windows") assert.equal(mode(box.home), 0o600);
  const config = await box.load();
  assert.equal(config.expose, "auto");
  assert.deepEqual(config.servers, []);

  await Deno.writeTextFile(box.home, "version: 1\n");
  const again = await box.run("init");
  assert.equal(again.code, 1);
  assert.match(again.err, /^error: \.config\/mcphub\/mcphub\.yaml already exists/);
  assert.equal(await Deno.readTextFile(box.home), "version: 1\n");
});

Deno.test("init --config PATH writes there; a .json path gets JSON", async () => {
  await using box = await sandbox();
  const r = await box.run("--config", "sub/hub.json", "init");
  assert.equal(r.code, 0, r.err);
  const path = join(box.dir, "sub", "hub.json");
  assert.deepEqual(JSON.parse(await Deno.readTextFile(path)), {
    version: 1,
    expose: "auto",
    pin: [],
    response_budget: "32KB",
    servers: {},
  });
  assert.equal((await box.load(path)).responseBudget, 32 * 1024);
});

Deno.test("add, enable, disable and remove round-trip through the starter", async () => {
  await using box = await sandbox();
  assert.equal((await box.run("init")).code, 0);
  const stdio = await box.run(
    "add",
    "github",
    "--env",
    "GITHUB_TOKEN=${GITHUB_TOKEN}",
    "--tag",
    "code",
    "--tag",
    "vcs",
    "--use-when",
    "reading GitHub issues",
    "--description",
    "GitHub API",
    "--",
    "npx",
    "-y",
    "@modelcontextprotocol/server-github",
  );
  assert.equal(stdio.code, 0, stdio.err);
  assert.equal(stdio.out, 'added server "github" to .config/mcphub/mcphub.yaml\n');
  const remote = await box.run(
    "add",
    "docs",
    "--url",
    "https://example.com/mcp",
    "--transport",
    "sse",
    "--header",
    "Authorization=Bearer x=y",
    "--disabled",
  );
  assert.equal(remote.code, 0, remote.err);
  const text = await Deno.readTextFile(box.home);
  // The starter's comments stay, the commented examples first, the new servers after them.
  assert.ok(text.startsWith(STARTER_CONFIG));
  assert.equal(
    text.slice(STARTER_CONFIG.length),
    `  github:
    command: npx
    args: [-y, "@modelcontextprotocol/server-github"]
    env:
      GITHUB_TOKEN: \${GITHUB_TOKEN}
    description: GitHub API
    tags: [code, vcs]
    use_when:
      - reading GitHub issues
  docs:
    url: https://example.com/mcp
    transport: sse
    headers:
      Authorization: Bearer x=y
    enabled: false
`,
  );
  if (Deno.build.os !== "windows") assert.equal(mode(box.home), 0o600);
  assert.equal((await box.backups()).length, 2);

  let config = await box.load();
  const github = config.servers.find((s) => s.name === "github")!;
  assert.deepEqual(
    [github.command, github.args, github.env, github.tags, github.useWhen, github.enabled],
    ["npx", ["-y", "@modelcontextprotocol/server-github"], { GITHUB_TOKEN: "t0ken" }, ["code", "vcs"], [
      "reading GitHub issues",
    ], true],
  );
  const docs = config.servers.find((s) => s.name === "docs")!;
  assert.deepEqual([docs.url, docs.transport, docs.headers, docs.enabled], [
    "https://example.com/mcp",
    "sse",
    { Authorization: "Bearer x=y" },
    false,
  ]);

  const enable = await box.run("enable", "docs");
  assert.equal(enable.out, "enabled: docs\n");
  const disable = await box.run("disable", "github", "docs");
  assert.equal(disable.out, "disabled: github, docs\n");
  config = await box.load();
  assert.deepEqual(config.servers.map((s) => [s.name, s.enabled]), [["github", false], ["docs", false]]);
  const backups = (await box.backups()).length;
  const same = await box.run("disable", "docs");
  assert.equal(same.code, 0);
  assert.equal(same.out, "nothing changed; already disabled: docs\n");
  assert.equal((await box.backups()).length, backups);

  const exists = await box.run("add", "github", "--", "node", "server.js");
  assert.equal(exists.code, 1);
  assert.match(exists.err, /Server "github" already exists in \.config\/mcphub\/mcphub\.yaml/);

  const rm = await box.run("rm", "docs");
  assert.equal(rm.code, 0, rm.err);
  assert.equal(rm.out, "removed: docs (from .config/mcphub/mcphub.yaml)\n");
  assert.deepEqual((await box.load()).servers.map((s) => s.name), ["github"]);
  const missing = await box.run("remove", "docs");
  assert.equal(missing.code, 1);
  assert.match(missing.err, /No server named "docs" in .*; configured: github/);
  const unknown = await box.run("enable", "nope");
  assert.equal(unknown.code, 1);
});

Deno.test("remove also drops the pins and agent entries naming the server", async () => {
  await using box = await sandbox();
  const path = join(box.dir, "mcphub.yaml");
  const text = `version: 1
pin: [fs, github__search, github__*] # pinned
servers:
  github:
    command: npx # the API
  fs:
    command: node
agents:
  work:
    servers: [github, fs]
    tools: [github__search, fs__read]
    pin: [github]
`;
  await Deno.writeTextFile(path, text);
  const r = await box.run("remove", "github");
  assert.equal(r.code, 0, r.err);
  assert.equal(
    r.out,
    "removed: github (from mcphub.yaml)\n" +
      "also removed: pin github__search, pin github__*, agents.work.servers github, " +
      "agents.work.tools github__search, agents.work.pin github\n",
  );
  assert.equal(
    await Deno.readTextFile(path),
    `version: 1
pin: [fs] # pinned
servers:
  fs:
    command: node
agents:
  work:
    servers: [fs]
    tools: [fs__read]
    pin: []
`,
  );
  assert.equal((await box.backups(box.dir)).length, 1);
});

Deno.test("add NAME -- COMMAND ARGS…: everything after -- is the command, even words like --config or --json", async () => {
  await using box = await sandbox();
  const r = await box.run(
    "add",
    "memory",
    "--no-describe",
    "--",
    "npx",
    "-y",
    "@modelcontextprotocol/server-memory",
  );
  assert.equal(r.code, 0, r.err);
  assert.equal(r.out, 'created .config/mcphub/mcphub.yaml with server "memory"\n');
  const g = await box.run(
    "--json",
    "add",
    "tool",
    "--tag",
    "x",
    "--no-describe",
    "--",
    "node",
    "s.js",
    "--config",
    "c.yaml",
    "--json",
    "-h",
  );
  assert.equal(g.code, 0, g.err);
  const servers = (await box.load()).servers;
  assert.deepEqual(servers.map((s) => [s.name, s.command, s.args]), [
    ["memory", "npx", ["-y", "@modelcontextprotocol/server-memory"]],
    ["tool", "node", ["s.js", "--config", "c.yaml", "--json", "-h"]],
  ]);
  assert.deepEqual(servers[1]!.tags, ["x"]);
});

Deno.test("add creates the config from the starter when there is none", async () => {
  await using box = await sandbox();
  const r = await box.run("add", "fs", "--cwd", "~/work", "--", "node", "server.js");
  assert.equal(r.code, 0, r.err);
  assert.equal(r.out, 'created .config/mcphub/mcphub.yaml with server "fs"\n');
  // Just created: no running gateway reads it yet, so no "picks up this change" note.
  assert.doesNotMatch(r.err, /picks up this change/);
  const text = await Deno.readTextFile(box.home);
  assert.ok(text.startsWith(STARTER_CONFIG));
  assert.ok(text.endsWith("  fs:\n    command: node\n    args: [server.js]\n    cwd: ~/work\n"));
  if (Deno.build.os !== "windows") assert.equal(mode(box.home), 0o600);
  assert.deepEqual(await box.backups(), []);
  assert.equal((await box.load()).servers[0]!.cwd, join(box.dir, "work"));
});

Deno.test("an edit that would make the config invalid writes nothing", async () => {
  await using box = await sandbox();
  const path = join(box.dir, "mcphub.yaml");
  const text = "# mine\nversion: 1\nservers:\n  fs:\n    command: node\n";
  await Deno.writeTextFile(path, text);
  const hints = Array.from({ length: 9 }, (_, i) => ["--use-when", `hint ${i}`]).flat();
  for (
    const [args, pattern] of [
      [
        ["add", "web", "--url", "https://x.example", ...hints],
        /^error: mcphub\.yaml:\d+:\d+: servers\.web\.use_when: after the edit: at most 8 hints/,
      ],
      [
        ["add", "bad__name", "--", "node"],
        /^error: mcphub\.yaml:\d+:\d+: servers\.bad__name: after the edit: server name must not contain "__"/,
      ],
      [
        ["add", "mcphub", "--", "node"],
        /^error: mcphub\.yaml:\d+:\d+: servers\.mcphub: after the edit: .*reserved/,
      ],
    ] as const
  ) {
    const r = await box.run(...args);
    assert.equal(r.code, 1, args.join(" "));
    assert.match(r.err, pattern);
    assert.equal(await Deno.readTextFile(path), text);
    assert.deepEqual(await box.backups(box.dir), []);
  }
});

Deno.test("config command usage errors exit 2 with the command's help", async (t) => {
  await using box = await sandbox();
  const path = join(box.dir, "mcphub.yaml");
  const text = "version: 1\nservers:\n  fs:\n    command: node\n";
  await Deno.writeTextFile(path, text);
  for (
    const [args, usage] of [
      [["add"], "add"],
      [["add", "web"], "add"],
      [["add", "web", "node", "--url", "https://x.example"], "add"],
      [["add", "web", "node", "--transport", "sse"], "add"],
      [["add", "web", "--url", "https://x.example", "--env", "A=1"], "add"],
      [["add", "web", "--url", "https://x.example", "--transport", "ws"], "add"],
      [["add", "web", "--url", "https://x.example", "--header", "novalue"], "add"],
      [["add", "fs2", "npx", "-y", "pkg"], "add"],
      [["add", "foo", "npx", "some-server"], "add"],
      [["remove"], "remove"],
      [["rm", "--force", "fs"], "remove"],
      [["enable"], "enable"],
      [["disable", "-x"], "disable"],
      [["init", "here.yaml"], "init"],
    ] as const
  ) {
    await t.step(args.join(" "), async () => {
      const r = await box.run(...args);
      assert.equal(r.code, 2, r.err);
      assert.match(r.err, new RegExp(`^error: [^]*\\n\\nUsage: mcphub ${usage} `));
    });
  }
  assert.equal(await Deno.readTextFile(path), text);
  assert.deepEqual(await box.backups(box.dir), []);
  const bare = await box.run("add", "foo", "npx", "some-server");
  assert.match(
    bare.err,
    /^error: put "--" before the server's command: mcphub add foo \[options\] -- npx some-server\n/,
  );
  const dash = await box.run("add", "fs2", "npx", "-y", "pkg");
  assert.match(
    dash.err,
    /^error: Unknown option '-y'; put the options first and the server command after "--"/,
  );
});

Deno.test("add without --description writes the server's own, marked as derived; --description wins", async () => {
  await using box = await sandbox();
  const secret = `${ROOT}tests/fixtures/secret_server.ts`;
  const r = await box.run(
    "add",
    "vault",
    "--env",
    "VAULT_API_TOKEN=vlt_x",
    "--tag",
    "keys",
    "--",
    DENO,
    "run",
    "--allow-env",
    secret,
  );
  assert.equal(r.code, 0, r.err);
  assert.equal(
    r.out,
    'created .config/mcphub/mcphub.yaml with server "vault"\ndescription (from the server): Vault secrets store\n',
  );
  const text = await Deno.readTextFile(box.home);
  assert.ok(
    text.endsWith(
      `  vault:\n    command: ${DENO}\n    args: [run, --allow-env, ${secret}]\n    env:\n      VAULT_API_TOKEN: vlt_x\n` +
        "    description: Vault secrets store # derived from the server's initialize result; edit to replace\n" +
        "    tags: [keys]\n",
    ),
    text,
  );
  assert.equal((await box.load()).servers[0]!.description, "Vault secrets store");
  // A server that cannot start gets none (and add still succeeds); --description is never replaced.
  const failing = await box.run("add", "vault2", "--", DENO, "run", secret);
  assert.equal(failing.code, 0, failing.err);
  assert.equal(failing.out, 'added server "vault2" to .config/mcphub/mcphub.yaml\n');
  const given = await box.run(
    "add",
    "vault3",
    "--description",
    "Mine",
    "--env",
    "VAULT_API_TOKEN=y",
    "--",
    DENO,
    "run",
    "--allow-env",
    secret,
  );
  assert.equal(given.out, 'added server "vault3" to .config/mcphub/mcphub.yaml\n');
  assert.deepEqual((await box.load()).servers.map((s) => [s.name, s.description]), [
    ["vault", "Vault secrets store"],
    ["vault2", undefined],
    ["vault3", "Mine"],
  ]);
});

Deno.test("derivedDescription(): the title unless it repeats the name, else the first sentence, bounded", () => {
  assert.equal(derivedDescription("gh", { name: "github-mcp", title: "GitHub" }, "Use it."), "GitHub");
  assert.equal(
    derivedDescription(
      "memory",
      { name: "memory-server", title: "Memory Server" },
      "# Memory\n\nStores **facts** in a graph. Ask it later.",
    ),
    "Stores facts in a graph",
  );
  assert.equal(
    derivedDescription(
      "memory",
      { name: "memory", title: "memory" },
      "Stores **facts** in a graph. Ask it later.",
    ),
    "Stores facts in a graph",
  );
  assert.equal(derivedDescription("x", { name: "x" }, undefined), undefined);
  const long = derivedDescription("x", { name: "x" }, `${"word ".repeat(60)}end.`)!;
  assert.equal([...long].length <= MAX_DERIVED, true);
  assert.match(long, /^word( word)+…$/);
});
