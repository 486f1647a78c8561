import assert from "node:assert/strict";
import { DENO, ROOT, sandboxEnv, tempDir } from "../helpers.ts";
import { VERSION } from "../../src/cli/mod.ts";

/** The install line of the README's install section (the sh block after the install-line marker). */
async function readmeInstallLine(): Promise<string[]> {
  const readme = await Deno.readTextFile(`${ROOT}README.md`);
  const at = readme.indexOf("<!-- install-line:");
  assert.ok(at >= 0, "README has the install-line marker");
  const block = /```sh\n(deno [^\n]+)\n```/.exec(readme.slice(at));
  assert.ok(block, "an sh block with the deno install line follows the marker");
  return block[1]!.split(/\s+/);
}

Deno.test("the README's install line installs a working mcphub, pinned to deno.lock, in a fresh HOME", async () => {
  const words = await readmeInstallLine();
  assert.deepEqual(words, ["deno", "task", "install"]);
  await using home = await tempDir("mcphub-install-");
  // A fresh HOME and install root in the CLI sandbox's environment (certificates, proxies and the test's
  // Deno cache kept, so nothing is downloaded again; nothing that points at another config).
  const env = { ...sandboxEnv(home.path), DENO_INSTALL_ROOT: `${home.path}/.deno` };
  const install = await new Deno.Command(DENO, { args: words.slice(1), cwd: ROOT, env, clearEnv: true })
    .output();
  const dec = new TextDecoder();
  assert.equal(install.code, 0, dec.decode(install.stderr));
  // The launcher runs this deno by absolute path, frozen to the checkout's lockfile, without -A.
  const launcher = await Deno.readTextFile(`${home.path}/.deno/bin/mcphub`);
  const exec = /^exec (.+) "\$@"$/m.exec(launcher)![1]!.split(" ").map((w) => w.replace(/^'|'$/g, ""));
  assert.equal(exec[0], DENO);
  assert.ok(exec.includes("--frozen"), launcher);
  assert.ok(exec.includes(`--lock=${ROOT}deno.lock`), launcher);
  assert.ok(!exec.includes("-A") && !exec.includes("--allow-all"), launcher);
  const bin = `${home.path}/.deno/bin/mcphub`;
  const work = `${home.path}/work`;
  await Deno.mkdir(work);
  const run = async (...args: string[]) => {
    const out = await new Deno.Command(bin, { args, cwd: work, env, clearEnv: true }).output();
    return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
  };
  const version = await run("--version");
  assert.equal(version.code, 0, version.stderr);
  assert.equal(version.stdout, `mcphub ${VERSION} (deno ${Deno.version.deno}, ${Deno.build.target})\n`);
  const list = await run("list");
  assert.equal(list.code, 0, list.stderr);
  assert.match(list.stdout, /^No servers configured/);
  const init = await run("init");
  assert.equal(init.code, 0, init.stderr);
  assert.match(init.stdout, /next: mcphub add NAME -- COMMAND/);
  const add = await run("add", "fx", "--", DENO, "run", "-A", `${ROOT}tests/fixtures/fixture_server.ts`);
  assert.equal(add.code, 0, add.stderr);
  const listed = await run("list");
  assert.equal(listed.code, 0, listed.stderr);
  assert.match(listed.stdout, /^fx\s+connected \(\d+ tools\)\s+stdio/m);
});
