import assert from "node:assert/strict";
import { ROOT, runMcphub, tempDir } from "../helpers.ts";
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
  await using dir = await tempDir();
  // A fresh HOME with no config; the same Deno cache (so nothing is downloaded again).
  const denoDir = Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME")}/.cache/deno`;
  const env = { HOME: dir.path, PATH: Deno.env.get("PATH") ?? "", DENO_DIR: denoDir };
  const r = await mcphub(["list"], { env, cwd: dir.path });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /no mcphub\.yaml found.*embedded default/);
  assert.match(r.stdout, /^No servers configured/);
  const j = await mcphub(["list", "--json"], { env, cwd: dir.path });
  assert.deepEqual(JSON.parse(j.stdout), { config: null, servers: [] });
});
