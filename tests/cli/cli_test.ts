import assert from "node:assert/strict";
import { REAL_DENO_DIR, ROOT, runMcphub, sandbox, SANDBOX_PASSED_ENV, tempDir } from "../helpers.ts";
import { VERSION } from "../../src/cli/mod.ts";

const mcphub = runMcphub;

Deno.test("mcphub --version prints the version of deno.json and the target", async () => {
  const deno = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`));
  assert.equal(VERSION, deno.version);
  const r = await mcphub(["--version"]);
  assert.equal(r.code, 0);
  assert.equal(r.stdout, `mcphub ${VERSION} (deno ${Deno.version.deno}, ${Deno.build.target})\n`);
});

Deno.test("mcphub --help and help COMMAND print help on stdout with exit 0", async () => {
  const r = await mcphub(["--help"]);
  assert.equal(r.code, 0);
  assert.match(r.stdout, /^Usage: mcphub \[--config PATH\] \[--db PATH\] \[--json\] <command>/m);
  assert.match(r.stdout, /^ {2}mcp serve\s+Run the gateway/m);
  const h = await mcphub(["help", "mcp", "serve"]);
  assert.equal(h.code, 0);
  assert.match(h.stdout, /^Usage: mcphub mcp serve/);
  assert.match(h.stdout, /"command": "mcphub", "args": \["mcp", "serve"\]/);
});

Deno.test("a usage error prints the command's help on stderr and exits 2", async () => {
  const r = await mcphub(["list", "--bogus"]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /^error: Unknown option '--bogus'/);
  assert.match(r.stderr, /Usage: mcphub list/);
  assert.equal(r.stdout, "");
  const u = await mcphub(["frobnicate"]);
  assert.equal(u.code, 2);
  assert.match(u.stderr, /^error: unknown command "frobnicate"/);
  const none = await mcphub([]);
  assert.equal(none.code, 2);
  assert.match(none.stderr, /^mcphub \d/);
});

Deno.test("a failure prints one error line and exits 1", async () => {
  await using dir = await tempDir();
  const r = await mcphub(["--config", `${dir.path}/nope.yaml`, "list"]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^error: .*nope\.yaml/);
  assert.equal(r.stderr.trim().split("\n").length, 1);
});

Deno.test("mcphub list without any config runs on the embedded default and says so", async () => {
  // A fresh HOME with no config (the default sandbox); the same Deno cache (so nothing is downloaded again).
  await using box = await sandbox();
  const r = await mcphub(["list"], { sandbox: box, cwd: box.home });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /no mcphub\.yaml found.*embedded default/);
  assert.match(r.stdout, /^No servers configured/);
  const j = await mcphub(["list", "--json"], { sandbox: box, cwd: box.home });
  assert.deepEqual(JSON.parse(j.stdout), { config: null, servers: [] });
});

Deno.test("runMcphub runs the CLI in a sandbox: a temp HOME and XDG dirs, never the user's config or store", async () => {
  const realHome = Deno.env.get("HOME") ?? "/root";
  // The default: a fresh sandbox per run. doctor says where the CLI looks for a config and keeps its store.
  const r = await runMcphub(["doctor", "--json"]);
  assert.equal(r.code, 0, r.stderr);
  const report = JSON.parse(r.stdout) as {
    config: { lookup: { path: string; source: string }[] };
    store: { path: string; exists: boolean };
  };
  const home = report.store.path.replace(/\/\.local\/share\/mcphub\/mcphub\.db$/, "");
  assert.match(home, /^\/tmp\/mcphub-home-[^/]+$/, report.store.path);
  assert.notEqual(home, realHome);
  assert.ok(!report.store.path.startsWith(`${realHome}/`), report.store.path);
  assert.deepEqual(
    report.config.lookup.filter((l) => l.source === "user config directory").map((l) => l.path),
    ["yaml", "yml", "json"].map((ext) => `${home}/.config/mcphub/mcphub.${ext}`),
  );
  // The sandbox is removed after the run.
  await assert.rejects(Deno.stat(home), Deno.errors.NotFound);

  // The environment is the minimal one: nothing of the test's own but what Deno and npm need.
  await using box = await sandbox();
  assert.deepEqual(
    Object.keys(box.env).filter((k) => !(SANDBOX_PASSED_ENV as readonly string[]).includes(k)).sort(),
    [
      "DENO_DIR",
      "HOME",
      "XDG_CACHE_HOME",
      "XDG_CONFIG_HOME",
      "XDG_DATA_HOME",
      "XDG_STATE_HOME",
      "npm_config_cache",
    ],
  );
  assert.equal(box.env.DENO_DIR, REAL_DENO_DIR);
  for (const name of ["XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"]) {
    assert.ok(box.env[name]!.startsWith(`${box.home}/`), name);
  }
  // A store a CLI command creates lands in the sandbox.
  const stats = await runMcphub(["stats", "--json"], { sandbox: box });
  assert.equal(stats.code, 0, stats.stderr);
  const listed = JSON.parse((await runMcphub(["doctor", "--json"], { sandbox: box })).stdout);
  assert.equal(listed.store.path, `${box.home}/.local/share/mcphub/mcphub.db`);
});
