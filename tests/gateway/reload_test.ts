/**
 * Hot reload: edits of mcphub.yaml (by `mcphub add`/`remove`, which rename a temp file over it, and by
 * in-place writes) reach a client connected to a running gateway: `tools/list_changed`, the new tool
 * list, the untouched server's process and in-flight call kept; an invalid edit keeps the running config
 * and shows as `config_error`; SIGHUP reloads; `--agent` scope is re-applied.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { Client } from "@modelcontextprotocol/sdk/client";
import { ToolListChangedNotificationSchema } from "../../src/mcp/sdk.ts";
import { type Config, parseConfig } from "../../src/config/mod.ts";
import { ConfigReloader } from "../../src/gateway/mod.ts";
import { Hub } from "../../src/hub/mod.ts";
import {
  alive,
  connectGateway,
  DENO,
  FIXTURE,
  q,
  runMcphub,
  stderrMatches,
  structured,
  tempDir,
  within,
  writeConfig,
} from "../helpers.ts";

/** Every `tools/list_changed` the client receives, counted, with a wait for the next one. */
class ListChanged {
  count = 0;
  #waiters: (() => void)[] = [];

  constructor(client: Client) {
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      this.count++;
      for (const wake of this.#waiters.splice(0)) wake();
    });
  }

  /** Resolves once more than `seen` notifications have arrived. */
  after(seen: number): Promise<void> {
    if (this.count > seen) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(() => this.after(seen).then(resolve)));
  }
}

async function toolNames(client: Client): Promise<string[]> {
  const names: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    names.push(...page.tools.map((t) => t.name));
    cursor = page.nextCursor;
  } while (cursor);
  return names.sort();
}

/** Lists tools again on every list_changed until `ok` holds; returns that list. */
async function toolsWhen(
  client: Client,
  changes: ListChanged,
  ok: (names: string[]) => boolean,
  what: string,
): Promise<string[]> {
  return await within(
    (async () => {
      for (;;) {
        const seen = changes.count;
        const names = await toolNames(client);
        if (ok(names)) return names;
        await changes.after(seen);
      }
    })(),
    what,
  );
}

function countIn(text: string, pattern: RegExp): number {
  return [...text.matchAll(new RegExp(pattern, "g"))].length;
}

function fixture(name: string, state: string, flags: string[] = []): string {
  return `  ${name}:\n    command: ${q(DENO)}\n    args: [run, -A, ${q(FIXTURE)}, --name, ${name}, --state, ${
    q(state)
  }${flags.map((f) => `, ${q(f)}`).join("")}]\n`;
}

async function stateDir(root: string, name: string): Promise<string> {
  const dir = `${root}/${name}`;
  await Deno.mkdir(dir, { recursive: true });
  return dir;
}

/** Runs the CLI (`deno run -A main.ts --config CONFIG ...args`) to completion. */
function cli(config: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return runMcphub(["--config", config, ...args]);
}

const FIXTURE_TOOLS = [
  "big",
  "change_tools",
  "echo",
  "exit_mid_call",
  "fail",
  "progress",
  "rpc_error",
  "wait",
];
const RELOAD_NOTE =
  "mcphub: a running gateway (mcphub mcp serve) picks up this change by itself, no restart needed\n";

Deno.test("config edits reach a connected client: add, change, remove, an invalid edit; the untouched server keeps its process and in-flight call", async () => {
  await using dir = await tempDir();
  const keep = await stateDir(dir.path, "keep");
  const change = await stateDir(dir.path, "change");
  const added = await stateDir(dir.path, "added");
  const head = fixture("keep", keep, ["--hold"]);
  const config = await writeConfig(
    dir.path,
    `servers:\n${head}${fixture("change", change, ["--tools", "alpha"])}`,
  );
  await using gw = await connectGateway(config);
  const changes = new ListChanged(gw.client);
  const keepTools = [...FIXTURE_TOOLS, "hold"].map((t) => `keep__${t}`);
  const meta = (await toolNames(gw.client)).filter((n) => !n.includes("__"));
  const first = await toolsWhen(
    gw.client,
    changes,
    (names) => names.includes("keep__hold") && names.includes("change__alpha"),
    "both servers",
  );
  // (change__change_tools is listed as change__tools: the server name is not repeated.)
  const changeTools = (
    extra: string,
  ) => [...first.filter((n) => n.startsWith("change__") && n !== "change__alpha"), `change__${extra}`];
  assert.deepEqual(first, [...meta, ...keepTools, ...changeTools("alpha")].sort());
  const keepPid = await Deno.readTextFile(`${keep}/pid`);
  assert.ok(alive(Number(keepPid)));

  // A call to the untouched server that stays open across every reload below.
  const held = gw.client.callTool({ name: "keep__hold", arguments: {} });

  // Add, with `mcphub add` (editConfig: temp file renamed over mcphub.yaml).
  let before = changes.count;
  const add = await cli(config, [
    "add",
    "added",
    "--no-describe",
    "--",
    DENO,
    "run",
    "-A",
    FIXTURE,
    "--name",
    "added",
    "--state",
    added,
    "--tools",
    "beta",
  ]);
  assert.equal(add.code, 0, add.stderr);
  assert.equal(add.stderr, RELOAD_NOTE);
  let names = await toolsWhen(
    gw.client,
    changes,
    (n) => n.includes("added__beta"),
    "the added server's tools",
  );
  assert.ok(changes.count > before);
  assert.deepEqual(
    names,
    [...meta, ...keepTools, ...changeTools("alpha"), ...[...FIXTURE_TOOLS, "beta"].map((t) => `added__${t}`)]
      .sort(),
  );
  await stderrMatches(gw, /mcphub: config reloaded \(file changed\): started added\n/);

  // Change one server's args with an in-place write (how many editors save).
  before = changes.count;
  const text = await Deno.readTextFile(config);
  assert.ok(text.includes('"alpha"'));
  await Deno.writeTextFile(config, text.replace('"alpha"', '"gamma"'));
  names = await toolsWhen(
    gw.client,
    changes,
    (n) => n.includes("change__gamma") && !n.includes("change__alpha"),
    "the changed server's new tools",
  );
  assert.ok(changes.count > before);
  assert.deepEqual(names.filter((n) => n.startsWith("change__")), changeTools("gamma").sort());
  assert.equal(await Deno.readTextFile(`${change}/starts`), "2");
  await stderrMatches(gw, /mcphub: config reloaded \(file changed\): reconnected change\n/);

  // Remove, with `mcphub remove`.
  before = changes.count;
  const remove = await cli(config, ["remove", "added"]);
  assert.equal(remove.code, 0, remove.stderr);
  assert.equal(remove.stderr, RELOAD_NOTE);
  names = await toolsWhen(gw.client, changes, (n) => !n.some((t) => t.startsWith("added__")), "removal");
  assert.ok(changes.count > before);
  assert.deepEqual(names, [...meta, ...keepTools, ...changeTools("gamma")].sort());
  await stderrMatches(gw, /mcphub: config reloaded \(file changed\): stopped added\n/);

  // An invalid edit: logged with file:line:col, the running config kept, config_error until fixed.
  const valid = await Deno.readTextFile(config);
  const rejected = countIn(gw.stderr(), /config not reloaded/);
  await Deno.writeTextFile(config, `response_budget: 12\n${valid}`);
  await stderrMatches(gw, /config not reloaded/, rejected);
  assert.match(
    gw.stderr(),
    new RegExp(
      `mcphub: config not reloaded \\(file changed\\); the running config stays in effect:\\n  ${
        config.replaceAll(/[.*+?^${}()|[\]\\/]/g, "\\$&")
      }:1:18: response_budget: `,
    ),
  );
  let listed = structured<{ config_error?: string; servers: { name: string; state: string }[] }>(
    await gw.client.callTool({ name: "list_servers", arguments: {} }),
  );
  assert.ok(listed.config_error?.startsWith(`${config}:1:18: response_budget: `), listed.config_error);
  assert.deepEqual(listed.servers.map((s) => [s.name, s.state]), [["keep", "connected"], [
    "change",
    "connected",
  ]]);
  assert.deepEqual(await toolNames(gw.client), names);

  const reloaded = countIn(gw.stderr(), /config reloaded/);
  await Deno.writeTextFile(config, valid);
  await stderrMatches(gw, /config reloaded/, reloaded);
  listed = structured(await gw.client.callTool({ name: "list_servers", arguments: {} }));
  assert.equal(listed.config_error, undefined);

  // The untouched server: same process, started once, and its call still open, now answered.
  await Deno.writeTextFile(`${keep}/release`, "");
  const result = await within(held, "the held call");
  assert.deepEqual(result.content, [{ type: "text", text: "released" }]);
  assert.equal(result.isError, undefined);
  assert.equal(await Deno.readTextFile(`${keep}/pid`), keepPid);
  assert.equal(await Deno.readTextFile(`${keep}/starts`), "1");
  assert.ok(alive(Number(keepPid)));
});

Deno.test("SIGHUP reloads the config (mcp serve --no-watch)", async () => {
  await using dir = await tempDir();
  const keep = await stateDir(dir.path, "keep");
  const added = await stateDir(dir.path, "added");
  const config = await writeConfig(dir.path, `servers:\n${fixture("keep", keep)}`);
  await using gw = await connectGateway(config, { args: ["--no-watch"] });
  const changes = new ListChanged(gw.client);
  await toolsWhen(gw.client, changes, (n) => n.includes("keep__echo"), "keep");
  const keepPid = await Deno.readTextFile(`${keep}/pid`);

  // An unchanged file: the signal is handled (SIGHUP's default would end the process) and says so.
  const pid = gw.transport.pid!;
  Deno.kill(pid, "SIGHUP");
  await stderrMatches(gw, /config reloaded \(SIGHUP\): no change/, 0);

  await Deno.writeTextFile(
    config,
    `servers:\n${fixture("keep", keep)}${fixture("added", added, ["--tools", "beta"])}`,
  );
  const before = changes.count;
  Deno.kill(pid, "SIGHUP");
  const names = await toolsWhen(gw.client, changes, (n) => n.includes("added__beta"), "the added server");
  assert.ok(changes.count > before);
  assert.ok(names.includes("keep__echo"));
  await stderrMatches(gw, /mcphub: config reloaded \(SIGHUP\): started added\n/);
  assert.equal(await Deno.readTextFile(`${keep}/pid`), keepPid);
  assert.equal(await Deno.readTextFile(`${keep}/starts`), "1");
});

Deno.test("a lazy gateway: `mcphub pin` and an edit of expose change the advertised tools from the next list", async () => {
  await using dir = await tempDir();
  const keep = await stateDir(dir.path, "keep");
  const config = await writeConfig(dir.path, `expose: lazy\nservers:\n${fixture("keep", keep)}`);
  await using gw = await connectGateway(config);
  const changes = new ListChanged(gw.client);
  const meta = await toolNames(gw.client);
  assert.ok(!meta.some((n) => n.includes("__")));
  const pinned = await cli(config, ["pin", "keep__echo"]);
  assert.equal(pinned.code, 0, pinned.stderr);
  assert.equal(pinned.stderr, RELOAD_NOTE);
  let names = await toolsWhen(gw.client, changes, (n) => n.includes("keep__echo"), "the pinned tool");
  assert.deepEqual(names, [...meta, "keep__echo"].sort());
  await Deno.writeTextFile(config, `expose: all\nservers:\n${fixture("keep", keep)}`);
  names = await toolsWhen(gw.client, changes, (n) => n.includes("keep__wait"), "every tool");
  assert.deepEqual(names, [...meta, ...FIXTURE_TOOLS.map((t) => `keep__${t}`)].sort());
  assert.equal(await Deno.readTextFile(`${keep}/starts`), "1");
});

// ---- Hub.reconfigure, in process ----

function load(text: string, agent?: string): Config {
  return parseConfig(text, "mcphub.yaml", {
    env: { get: () => undefined },
    cwd: "/",
    agent,
    serverErrors: "fail-server",
  });
}

function hubOf(config: Config, agent?: string): Hub {
  return new Hub({ config, agent, env: Deno.env.toObject(), version: "test", log: () => {} });
}

Deno.test("Hub.reconfigure(): a description-only change keeps the server; a changed env value reconnects it", async () => {
  const entry = (extra: string) => `servers:\n  a:\n    command: x\n${extra}  b:\n    command: y\n`;
  const hub = hubOf(load(entry("")));
  const a = hub.downstream("a")!;
  const b = hub.downstream("b");
  let applied = hub.reconfigure(load(`response_budget: 1024\n${entry("    description: the A server\n")}`));
  await applied.done;
  assert.deepEqual(applied.summary, { added: [], changed: [], removed: [], kept: ["a", "b"] });
  assert.equal(hub.downstream("a"), a);
  assert.equal(hub.downstream("a")!.config.description, "the A server");
  assert.equal(hub.config.responseBudget, 1024);

  applied = hub.reconfigure(load(entry("    env: {TOKEN: one}\n")));
  await applied.done;
  assert.deepEqual(applied.summary, { added: [], changed: ["a"], removed: [], kept: ["b"] });
  const a2 = hub.downstream("a")!;
  assert.notEqual(a2, a);
  applied = hub.reconfigure(load(entry("    env: {TOKEN: two}\n")));
  await applied.done;
  assert.deepEqual(applied.summary.changed, ["a"]);
  assert.notEqual(hub.downstream("a"), a2);
  assert.equal(hub.downstream("b"), b);
  // Closed servers are not started again; a removed one is gone from the list.
  assert.equal(a.state, "closed");
  applied = hub.reconfigure(load("servers:\n  b:\n    command: y\n"));
  await applied.done;
  assert.deepEqual(applied.summary, { added: [], changed: [], removed: ["a"], kept: ["b"] });
  assert.deepEqual(hub.servers().map((s) => s.name), ["b"]);
  await hub.close();
});

Deno.test("Hub.reconfigure(): --agent scope is re-applied; an edit that drops the agent is refused whole", async () => {
  const text = (servers: string) =>
    `servers:\n  a:\n    command: x\n  b:\n    command: y\nagents:\n  dev:\n    servers: [${servers}]\n`;
  const hub = hubOf(load(text("a"), "dev"), "dev");
  assert.deepEqual(hub.servers().map((s) => s.name), ["a"]);
  const applied = hub.reconfigure(load(text("b"), "dev"));
  await applied.done;
  assert.deepEqual(applied.summary, { added: ["b"], changed: [], removed: ["a"], kept: [] });
  assert.deepEqual(hub.scope?.servers, ["b"]);
  assert.deepEqual(hub.servers().map((s) => s.name), ["b"]);
  assert.throws(
    () => hub.reconfigure(load("servers:\n  a:\n    command: x\n")),
    { name: "RangeError", message: 'unknown agent "dev"; no agents are defined' },
  );
  assert.deepEqual(hub.servers().map((s) => s.name), ["b"]);
  await hub.close();
});

Deno.test("Hub.reconfigure() on a started hub: a server that leaves the scope is stopped, one that enters starts", async () => {
  await using dir = await tempDir();
  const aState = await stateDir(dir.path, "a");
  const bState = await stateDir(dir.path, "b");
  const text = (servers: string) =>
    `servers:\n${fixture("a", aState)}${fixture("b", bState)}agents:\n  dev:\n    servers: [${servers}]\n`;
  const hub = hubOf(load(text("a"), "dev"), "dev");
  try {
    await hub.start();
    assert.equal(hub.downstream("a")!.state, "connected");
    const aPid = Number(await Deno.readTextFile(`${aState}/pid`));
    const applied = hub.reconfigure(load(text("b"), "dev"));
    await applied.done;
    assert.equal(alive(aPid), false);
    await hub.downstream("b")!.ready;
    assert.equal(hub.downstream("b")!.state, "connected");
    assert.deepEqual(
      hub.catalog().map((t) => t.namespaced).sort(),
      FIXTURE_TOOLS.map((t) => `b__${t}`),
    );
  } finally {
    await hub.close();
  }
});

Deno.test("a call running on a server that an edit removes ends as outcome unknown, not replayed", async () => {
  await using dir = await tempDir();
  const keep = await stateDir(dir.path, "keep");
  const gone = await stateDir(dir.path, "gone");
  const config = await writeConfig(
    dir.path,
    `servers:\n${fixture("keep", keep)}${fixture("gone", gone, ["--hold"])}`,
  );
  await using gw = await connectGateway(config);
  const changes = new ListChanged(gw.client);
  await toolsWhen(gw.client, changes, (n) => n.includes("gone__hold") && n.includes("keep__echo"), "both");
  const held = gw.client.callTool({ name: "gone__hold", arguments: {} });
  const reloaded = countIn(gw.stderr(), /config reloaded/);
  await Deno.writeTextFile(config, `servers:\n${fixture("keep", keep)}`);
  await stderrMatches(gw, /config reloaded/, reloaded);
  const result = await within(held, "the cut call");
  assert.equal(result.isError, true);
  assert.match(
    (result.content as { text: string }[])[0]!.text,
    /^Outcome unknown: the connection to server "gone" broke during the call to gone__hold \(.*\)\. The request was not retried, because it may already have taken effect; a reload of the config stopped or reconnected the server meanwhile\.$/,
  );
  assert.equal(await Deno.readTextFile(`${gone}/calls-hold`), "1");
});

Deno.test("ConfigReloader polls, never watches, a config that shares its directory with the store", async () => {
  await using dir = await tempDir();
  const path = `${dir.path}/mcphub.yaml`;
  await Deno.writeTextFile(path, "servers: {}\n");
  let loaded = Promise.withResolvers<void>();
  let loads = 0;
  const hub = { configError: undefined, rejectConfig: () => {} } as unknown as Hub;
  const reloader = new ConfigReloader({
    hub,
    path,
    load: () => {
      loads++;
      loaded.resolve();
      return Promise.reject(new Error("not read in this test"));
    },
    log: () => {},
    keepOut: [`${dir.path}/mcphub.db`],
    pollMs: 20,
    debounceMs: 10,
  });
  try {
    // The store's files change all the time: no reload, and (a poll opens nothing) no lost lock.
    await Deno.writeTextFile(`${dir.path}/mcphub.db-wal`, "x");
    await Deno.writeTextFile(`${dir.path}/other.txt`, "x");
    // An editor's save: a temp file renamed over the config.
    await Deno.writeTextFile(`${dir.path}/.mcphub.yaml.tmp`, "servers: {}\nrecord: false\n");
    await Deno.rename(`${dir.path}/.mcphub.yaml.tmp`, path);
    await loaded.promise;
    assert.equal(loads, 1);
    loaded = Promise.withResolvers<void>();
    await Deno.writeTextFile(path, "servers: {}\nrecord: true\n");
    await loaded.promise;
    assert.equal(loads, 2);
  } finally {
    reloader.close();
  }
});
