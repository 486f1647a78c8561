/**
 * tests/_system.ts: a test that needs a missing system program is ignored with what to install, except
 * under CI=true on Linux, where it runs and fails.
 */
import assert from "node:assert/strict";
import { DENO, ROOT } from "../helpers.ts";

/** `ignoreWithout("X", "install x")` and `assertPresent` in a process with `env`. */
async function decide(env: Record<string, string>): Promise<{ stdout: string; stderr: string }> {
  const code = `import { assertPresent, ignoreWithout } from ${JSON.stringify(`${ROOT}tests/_system.ts`)};
console.log(ignoreWithout("the X tests", "x is missing: apt-get install x"));
try { assertPresent("the X tests", "x is missing: apt-get install x"); } catch (e) { console.log(e.message); }
console.log(ignoreWithout("the Y tests", undefined));`;
  const out = await new Deno.Command(DENO, {
    args: ["eval", code],
    env: { PATH: Deno.env.get("PATH") ?? "", ...env },
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return { stdout: new TextDecoder().decode(out.stdout), stderr: new TextDecoder().decode(out.stderr) };
}

Deno.test({
  name: "a missing system program: ignored saying what to install; under CI=true on Linux, a failure",
  ignore: Deno.build.os !== "linux",
  async fn() {
    const local = await decide({});
    assert.equal(local.stderr, "ignored: the X tests: x is missing: apt-get install x\n");
    assert.equal(
      local.stdout,
      "true\nthe X tests cannot run under CI=true: x is missing: apt-get install x\nfalse\n",
    );
    const ci = await decide({ CI: "true" });
    assert.equal(ci.stderr, "");
    assert.equal(
      ci.stdout,
      "false\nthe X tests cannot run under CI=true: x is missing: apt-get install x\nfalse\n",
    );
  },
});
