/**
 * `derivePermissions()` and `mcphub permissions`: the exact flags for several configs, and the
 * gateway really running under them (`deno run <flags> main.ts mcp serve`) in front of real servers.
 */
import assert from "node:assert/strict";
import type { Client } from "@modelcontextprotocol/sdk/client";
import { type Config, parseConfig } from "../../src/config/mod.ts";
import { derivePermissions, linkerEnvNames, whichCommand } from "../../src/cli/permissions.ts";
import { RELEASE_PERMISSIONS } from "../../scripts/compile.ts";
import {
  type CliRun,
  connectGateway,
  DENO,
  FIXTURE,
  freePort,
  q,
  REAL,
  runCliHere,
  serversReady,
  startRemote,
  structured,
  tempDir,
  writeConfig,
} from "../helpers.ts";

const CONFIG = "/home/u/.config/mcphub/mcphub.yaml";
const STORE = "/home/u/.local/share/mcphub/mcphub.db";
const PATHS: Record<string, string> = { node: "/usr/bin/node", npx: "/usr/local/bin/npx" };

function config(yaml: string, options: { agent?: string; env?: Record<string, string> } = {}): Config {
  const env = options.env ?? {};
  return parseConfig(yaml, CONFIG, {
    env: { get: (key) => env[key] },
    cwd: "/work",
    home: "/home/u",
    agent: options.agent,
  });
}

function derive(yaml: string, options: { agent?: string; listen?: string; store?: string } = {}) {
  return derivePermissions(config(yaml, { agent: options.agent }), {
    storePath: options.store ?? STORE,
    agent: options.agent,
    listen: options.listen,
    cwd: "/work",
    os: "linux",
    which: (command) => PATHS[command],
  });
}

const DIRS = "/home/u/.config/mcphub,/home/u/.local/share/mcphub";

const STDIO = `servers:
  everything:
    command: node
    args: [server.js]
  fs:
    command: npx
    args: [-y, "@modelcontextprotocol/server-filesystem", /tmp]
  tool:
    command: ./bin/tool.sh
    cwd: /srv/tools
  again:
    command: node
    args: [other.js]
  off:
    command: python3
    enabled: false
`;

const REMOTE = `servers:
  api:
    url: https://api.example.com/mcp
  local:
    url: http://127.0.0.1:8931/sse
    transport: sse
  v6:
    url: http://[::1]:9000/mcp
  plain:
    url: http://mcp.example.org/mcp
`;

const BOTH = `servers:
  everything:
    command: node
    args: [server.js]
  api:
    url: https://api.example.com:8443/mcp
`;

const AGENTS = `servers:
  everything:
    command: node
  fs:
    command: npx
  api:
    url: https://api.example.com/mcp
agents:
  coder:
    servers: [everything, api]
  nothing:
    servers: []
  all: {}
`;

Deno.test("derivePermissions() gives the exact flags for stdio, remote, both and agent configs", async (t) => {
  await t.step(
    "stdio only: names and PATH paths, a path command resolved against cwd, disabled left out",
    () => {
      const p = derive(STDIO);
      assert.deepEqual(p.flags, [
        "--allow-run=/srv/tools/bin/tool.sh,/usr/bin/node,/usr/local/bin/npx,node,npx",
        `--allow-read=${DIRS}`,
        `--allow-write=${DIRS}`,
        "--allow-env",
      ]);
      assert.deepEqual(p.run, [
        "/srv/tools/bin/tool.sh",
        "/usr/bin/node",
        "/usr/local/bin/npx",
        "node",
        "npx",
      ]);
      assert.deepEqual(p.net, []);
      assert.deepEqual(p.notes, []);
    },
  );
  await t.step("remote only: host:port with the scheme's default port, no --allow-run", () => {
    const p = derive(REMOTE);
    assert.deepEqual(p.flags, [
      `--allow-read=${DIRS}`,
      `--allow-write=${DIRS}`,
      "--allow-net=127.0.0.1:8931,[::1]:9000,api.example.com:443,mcp.example.org:80",
      "--allow-env",
    ]);
    assert.deepEqual(p.run, []);
  });
  await t.step("both, and the --listen address", () => {
    assert.deepEqual(derive(BOTH, { listen: "127.0.0.1:8080" }).flags, [
      "--allow-run=/usr/bin/node,node",
      `--allow-read=${DIRS}`,
      `--allow-write=${DIRS}`,
      "--allow-net=127.0.0.1:8080,api.example.com:8443",
      "--allow-env",
    ]);
    assert.deepEqual(derive(BOTH, { listen: ":9000" }).net, ["127.0.0.1:9000", "api.example.com:8443"]);
  });
  await t.step("agents: only the agent's servers; [] = none; omitted = all", () => {
    assert.deepEqual(derive(AGENTS, { agent: "coder" }).flags, [
      "--allow-run=/usr/bin/node,node",
      `--allow-read=${DIRS}`,
      `--allow-write=${DIRS}`,
      "--allow-net=api.example.com:443",
      "--allow-env",
    ]);
    assert.deepEqual(derive(AGENTS, { agent: "nothing" }).flags, [
      `--allow-read=${DIRS}`,
      `--allow-write=${DIRS}`,
      "--allow-env",
    ]);
    const all = derive(AGENTS, { agent: "all" });
    assert.deepEqual(all.run, ["/usr/bin/node", "/usr/local/bin/npx", "node", "npx"]);
    assert.deepEqual(all.net, ["api.example.com:443"]);
  });
  await t.step("a store inside the config directory is covered by it; :memory: needs nothing", () => {
    const p = derive(BOTH, { store: "/home/u/.config/mcphub/data/mcphub.db" });
    assert.deepEqual(p.read, ["/home/u/.config/mcphub"]);
    assert.deepEqual(p.write, ["/home/u/.config/mcphub"]);
    assert.deepEqual(derive(BOTH, { store: ":memory:" }).read, ["/home/u/.config/mcphub"]);
  });
  await t.step("a command not on PATH is allowed by name, with a note", () => {
    const p = derive("servers:\n  py:\n    command: uvx\n    args: [mcp-server-time]\n");
    assert.deepEqual(p.run, ["uvx"]);
    assert.match(p.notes[0]!, /server "py": "uvx" is not on PATH here; it is allowed by name only/);
  });
  await t.step("a server that sets env.PATH has its command looked up there (Deno spawns with it)", () => {
    const seen: (string | undefined)[] = [];
    const yaml = "servers:\n  x:\n    command: mytool\n    env:\n      PATH: /opt/bin\n";
    const p = derivePermissions(config(yaml), {
      storePath: STORE,
      cwd: "/work",
      os: "linux",
      which: (command, searchPath) => {
        seen.push(searchPath);
        return searchPath === "/opt/bin" ? `/opt/bin/${command}` : undefined;
      },
    });
    assert.deepEqual(seen, ["/opt/bin"]);
    assert.deepEqual(p.run, ["/opt/bin/mytool", "mytool"]);
  });
  await t.step(
    "a server whose env sets LD_* is noted: Deno refuses it under a restricted --allow-run",
    () => {
      const p = derive("servers:\n  x:\n    command: node\n    env:\n      LD_PRELOAD: /lib/x.so\n");
      assert.match(p.notes[0]!, /server "x" sets LD_PRELOAD in env/);
    },
  );
  await t.step("errors: unknown agent, bad --listen, a comma Deno cannot express", () => {
    const agents = config(AGENTS);
    const base = { storePath: STORE, cwd: "/work", which: () => undefined };
    assert.throws(
      () => derivePermissions(agents, { ...base, agent: "nope" }),
      { name: "RangeError", message: /unknown agent "nope"; defined agents: coder, nothing, all/ },
    );
    assert.throws(() => derive(BOTH, { listen: "8080" }), { name: "RangeError", message: /--listen "8080"/ });
    assert.throws(
      () => derive(BOTH, { store: "/data/a,b/mcphub.db" }),
      { name: "RangeError", message: /store directory "\/data\/a,b" contains a comma/ },
    );
  });
});

Deno.test("linkerEnvNames() finds the variables Deno will not pass under a restricted --allow-run", () => {
  assert.deepEqual(
    linkerEnvNames({ PATH: "/bin", LD_LIBRARY_PATH: "x", DYLD_INSERT_LIBRARIES: "y", LDX: "" }),
    [
      "DYLD_INSERT_LIBRARIES",
      "LD_LIBRARY_PATH",
    ],
  );
});

Deno.test({
  name: "whichCommand() finds the first executable on PATH, unresolved like Deno's",
  // Windows has no executable bit to tell the two apart.
  ignore: Deno.build.os === "windows",
}, async () => {
  await using a = await tempDir();
  await using b = await tempDir();
  await Deno.writeTextFile(`${a.path}/tool`, "#!/bin/sh\n", { mode: 0o644 });
  await Deno.writeTextFile(`${b.path}/tool`, "#!/bin/sh\n", { mode: 0o755 });
  await Deno.writeTextFile(`${a.path}/tool.CMD`, "@echo off\n");
  assert.equal(whichCommand("tool", { PATH: `${a.path}:${b.path}` }, "linux"), `${b.path}/tool`);
  assert.equal(whichCommand("missing", { PATH: `${a.path}:${b.path}` }, "linux"), undefined);
  assert.equal(whichCommand("tool", { PATH: a.path, PATHEXT: ".CMD" }, "windows"), `${a.path}/tool`);
});

function cli(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return runCliHere(args, { env });
}

Deno.test("mcphub permissions prints the flags on one line, --json the lists, notes on stderr", async () => {
  await using dir = await tempDir();
  await using data = await tempDir();
  const path = await writeConfig(
    dir.path,
    `servers:\n  everything:\n    command: node\n    args: [${
      q(REAL.everything)
    }]\n  off:\n    command: nope\n    enabled: false\n`,
  );
  const db = `${data.path}/store/mcphub.db`;
  const env = { PATH: Deno.env.get("PATH") ?? "", HOME: "/nonexistent-home" };
  const node = whichCommand("node", env);
  assert.ok(node, "node is on PATH");
  const text = await cli(["--config", path, "--db", db, "permissions"], env);
  assert.equal(text.code, 0, text.err);
  const dirs = [dir.path, `${data.path}/store`].sort().join(",");
  // (Windows shells quote differently; the JSON below is the same everywhere.)
  if (Deno.build.os !== "windows") {
    assert.equal(
      text.out,
      `--allow-run=${
        [node, "node"].sort().join(",")
      } --allow-read=${dirs} --allow-write=${dirs} --allow-env\n`,
    );
  }
  assert.equal(text.err, "");

  const json = await cli([
    "--config",
    path,
    "--db",
    db,
    "permissions",
    "--json",
    "--listen",
    "127.0.0.1:7777",
  ], {
    ...env,
    LD_LIBRARY_PATH: "/opt/lib",
  });
  assert.equal(json.code, 0, json.err);
  const parsed = JSON.parse(json.out);
  assert.equal(parsed.config, path);
  assert.equal(parsed.store, db);
  assert.deepEqual(parsed.net, ["127.0.0.1:7777"]);
  assert.deepEqual(parsed.run, [node, "node"].sort());
  assert.match(json.err, /note: this environment sets LD_LIBRARY_PATH: Deno starts children/);

  const bad = await cli(["--config", path, "permissions", "--listen", "nope"], env);
  assert.equal(bad.code, 2);
  assert.match(bad.err, /^error: Cannot derive permissions: --listen "nope" is not HOST:PORT/);
  const agent = await cli(["--config", path, "permissions", "--agent", "ghost"], env);
  assert.equal(agent.code, 1);
  assert.match(agent.err, /unknown agent "ghost"/);
});

/** The environment without LD_ and DYLD_ variables (which Deno refuses to pass to children under a restricted --allow-run). */
function childEnv(): Record<string, string> {
  const env = Deno.env.toObject();
  for (const name of linkerEnvNames(env)) delete env[name];
  return env;
}

interface ServerRow {
  name: string;
  state: string;
  error?: string;
}

async function settled(client: Client): Promise<ServerRow[]> {
  return await serversReady(client) as ServerRow[];
}

async function echo(client: Client, tool: string, message: string): Promise<unknown> {
  return (await client.callTool({ name: tool, arguments: { message } })).content;
}

Deno.test("the gateway runs under its derived flags; servers outside them fail as not permitted", async () => {
  await using dir = await tempDir();
  await using remote = await startRemote("streamableHttp");
  const servers = `servers:
  everything:
    command: node
    args: [${q(REAL.everything)}]
  web:
    url: ${q(`http://127.0.0.1:${remote.port}/mcp`)}
`;
  const path = await writeConfig(dir.path, `response_budget: 1KB\n${servers}`);
  const db = `${dir.path}/store/mcphub.db`;
  const derived = await cli(["--config", path, "--db", db, "permissions", "--json"], childEnv());
  assert.equal(derived.code, 0, derived.err);
  const { flags } = JSON.parse(derived.out) as { flags: string[] };
  assert.ok(!flags.some((f) => /^(-A|--allow-all|--allow-ffi|--allow-sys)/.test(f)), flags.join(" "));

  {
    await using gw = await connectGateway(path, { db, flags });
    const rows = await settled(gw.client);
    assert.deepEqual(rows.map((s) => [s.name, s.state, s.error]), [
      ["everything", "connected", undefined],
      ["web", "connected", undefined],
    ], gw.stderr());
    const { tools } = await gw.client.listTools();
    assert.ok(tools.some((tool) => tool.name === "everything__echo"));
    assert.deepEqual(await echo(gw.client, "everything__echo", "hi"), [{ type: "text", text: "Echo: hi" }]);
    assert.deepEqual(await echo(gw.client, "web__echo", "there"), [{ type: "text", text: "Echo: there" }]);
    // The store (node:sqlite, WAL) works under the flags: an oversized result is stored and paged back.
    const big = await gw.client.callTool({
      name: "everything__echo",
      arguments: { message: "x".repeat(3000) },
    });
    const receipt = structured<{ status: string; callId: string }>(big);
    assert.equal(receipt.status, "stored", gw.stderr());
    const page = structured<{ status: string }>(
      await gw.client.callTool({ name: "get_result", arguments: { callId: receipt.callId } }),
    );
    assert.equal(page.status, "ok");
    assert.doesNotMatch(gw.stderr(), /Requires|NotCapable|warning/, gw.stderr());
  }

  // The same flags in front of a config that gained a program and an address they do not allow.
  await Deno.writeTextFile(
    path,
    `response_budget: 1KB\n${servers}  other:
    command: ${q(DENO)}
    args: [run, -A, ${q(FIXTURE)}]
  far:
    url: http://127.0.0.1:${freePort()}/mcp
`,
  );
  {
    await using gw = await connectGateway(path, { db, flags });
    const rows = await settled(gw.client);
    assert.deepEqual(rows.map((s) => [s.name, s.state]), [
      ["everything", "connected"],
      ["web", "connected"],
      ["other", "failed"],
      ["far", "failed"],
    ]);
    const other = rows.find((s) => s.name === "other")!;
    const far = rows.find((s) => s.name === "far")!;
    assert.match(
      other.error!,
      /^not permitted to run ".*": this gateway's permissions do not include it/,
      other.error,
    );
    assert.match(other.error!, /deno task compile --config/, other.error);
    assert.match(other.error!, new RegExp(DENO.replaceAll(/[.*+?^${}()|[\]\\]/g, "\\$&")), other.error);
    assert.match(far.error!, /^not permitted to connect to 127\.0\.0\.1:\d+ /, far.error);
    assert.deepEqual(await echo(gw.client, "everything__echo", "still"), [{
      type: "text",
      text: "Echo: still",
    }]);
  }
});

Deno.test("the release permission set runs the gateway without -A, --allow-ffi or --allow-sys", async () => {
  await using dir = await tempDir();
  const path = await writeConfig(
    dir.path,
    `response_budget: 1KB\nservers:\n  everything:\n    command: node\n    args: [${q(REAL.everything)}]\n`,
  );
  const flags = RELEASE_PERMISSIONS.filter((flag) => flag !== "--no-prompt");
  await using gw = await connectGateway(path, { db: `${dir.path}/mcphub.db`, flags });
  assert.deepEqual((await settled(gw.client)).map((s) => [s.name, s.state]), [["everything", "connected"]]);
  const big = await gw.client.callTool({
    name: "everything__echo",
    arguments: { message: "y".repeat(3000) },
  });
  const receipt = structured<{ status: string; callId: string }>(big);
  assert.equal(receipt.status, "stored");
  const stats = structured<{ totals: { calls: number } }>(
    await gw.client.callTool({ name: "stats", arguments: {} }),
  );
  assert.equal(stats.totals.calls, 1);
  assert.doesNotMatch(gw.stderr(), /Requires|NotCapable|warning/, gw.stderr());
});
