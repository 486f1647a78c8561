import assert from "node:assert/strict";
import {
  circles,
  importGraph,
  importsOf,
  readTree,
  roomGraph,
  roomSizes,
  strayV1Imports,
  V1_IMPORTERS,
} from "../../scripts/house.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

/** A src/ tree in a temp dir, from path → text; the house script run on it. */
async function house(files: Record<string, string>): Promise<{ code: number; stderr: string }> {
  const dir = await Deno.makeTempDir();
  try {
    for (const [path, text] of Object.entries(files)) {
      await Deno.mkdir(`${dir}/${path.slice(0, path.lastIndexOf("/"))}`, { recursive: true });
      await Deno.writeTextFile(`${dir}/${path}`, text);
    }
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-read", `${ROOT}scripts/house.ts`, "--root", "src"],
      cwd: dir,
      stdout: "piped",
      stderr: "piped",
    }).output();
    return { code: out.code, stderr: new TextDecoder().decode(out.stderr) };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("house: the repo's src/ has no import circle between files or rooms", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-read", "scripts/house.ts"],
    cwd: ROOT,
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, stderr);
  assert.match(stderr, /^house: no import circle among \d+ files in \d+ rooms of src\/\n$/);
});

Deno.test("house: a planted circle between two files fails and names both imports", async () => {
  const { code, stderr } = await house({
    "src/a/mod.ts": 'import { b } from "./b.ts";\nexport const a = () => b;\n',
    "src/a/b.ts": 'import { a } from "./mod.ts";\nexport const b = () => a;\n',
  });
  assert.equal(code, 1);
  assert.match(
    stderr,
    /import circle between files:\n {4}src\/a\/b\.ts → src\/a\/mod\.ts\n {4}src\/a\/mod\.ts → src\/a\/b\.ts/,
  );
});

Deno.test("house: a circle between rooms fails (a room importing upward), naming the imports", async () => {
  const { code, stderr } = await house({
    "src/low/mod.ts": 'import { high } from "../high/mod.ts";\nexport const low = () => high;\n',
    "src/high/mod.ts": 'import { other } from "../low/other.ts";\nexport const high = () => other;\n',
    "src/low/other.ts": "export const other = 1;\n",
  });
  assert.equal(code, 1);
  assert.match(stderr, /import circle between rooms high, low:/);
  assert.match(stderr, /src\/high\/mod\.ts → src\/low\/other\.ts/);
  assert.match(stderr, /src\/low\/mod\.ts → src\/high\/mod\.ts/);
});

Deno.test("house: a dynamic import closes a circle; a type-only import does not", async () => {
  const dynamic = await house({
    "src/a/mod.ts": 'import { b } from "./b.ts";\nexport const a = () => b;\n',
    "src/a/b.ts": 'export const b = async () => (await import("./mod.ts")).a;\n',
  });
  assert.equal(dynamic.code, 1, dynamic.stderr);
  const types = await house({
    "src/a/mod.ts": 'import { b } from "./b.ts";\nexport type A = number;\nexport const a = () => b;\n',
    "src/a/b.ts": 'import type { A } from "./mod.ts";\nimport { type A as B } from "./mod.ts";\n' +
      'export const b = (x: A, y: B) => x + y;\nexport type C = typeof import("./mod.ts");\n',
  });
  assert.equal(types.code, 0, types.stderr);
});

Deno.test("importsOf: static, re-export, bare and dynamic imports count; types and comments do not", () => {
  const text = [
    'import { x } from "./x.ts";',
    'import { type T, y } from "../y/mod.ts";',
    'import type { U } from "./u.ts";',
    'import { type V, type W } from "./vw.ts";',
    'export { z } from "./z.ts";',
    'export type { Q } from "./q.ts";',
    'import "./side.ts";',
    '// import { c } from "./comment.ts";',
    '/** @example import { d } from "./doc.ts"; */',
    'const m = await import("./lazy.ts");',
    'let t: typeof import("./typed.ts");',
    'import { n } from "npm:thing";',
  ].join("\n");
  assert.deepEqual(importsOf("src/a/f.ts", text).sort(), [
    "src/a/lazy.ts",
    "src/a/side.ts",
    "src/a/x.ts",
    "src/a/z.ts",
    "src/y/mod.ts",
  ]);
});

Deno.test("roomSizes and circles over the repo: no room over 20% of src/, every room a mod.ts", async () => {
  // The script's paths are repo-relative.
  const cwd = Deno.cwd();
  Deno.chdir(ROOT);
  try {
    const tree = await readTree("src");
    const sizes = roomSizes(tree);
    for (const r of sizes) assert.ok(r.share <= 0.2, `${r.room} is ${(100 * r.share).toFixed(1)}% of src/`);
    const rooms = new Set(sizes.map((r) => r.room));
    for (const room of rooms) assert.ok(tree.has(`src/${room}/mod.ts`), `src/${room}/ has a mod.ts`);
    const graph = importGraph(tree);
    assert.deepEqual(circles(graph), []);
    assert.deepEqual(circles(roomGraph(graph).rooms), []);
  } finally {
    Deno.chdir(cwd);
  }
});

Deno.test("house: a v1 SDK import outside the named files fails, naming the file; the repo has none", async () => {
  assert.deepEqual(strayV1Imports(await readTree("src"), V1_IMPORTERS), []);
  const planted = {
    "src/a/mod.ts": 'export { b } from "./b.ts";\n',
    "src/a/b.ts":
      'import type {\n  Tool,\n} from "@modelcontextprotocol/sdk/types.js";\nexport const b = 1;\n',
  };
  const out = await house(planted);
  assert.equal(out.code, 1, out.stderr);
  assert.match(out.stderr, /^src\/a\/b\.ts imports the v1 SDK \(@modelcontextprotocol\/sdk\)/m);
  // Each way of naming it counts (npm: specifiers, dynamic import); v2's packages and comments do not.
  const texts = [
    'export * from "npm:@modelcontextprotocol/sdk@1.32.2/types.js";',
    'const m = await import("@modelcontextprotocol/sdk/client");',
    'import { Client } from "@modelcontextprotocol/client";',
    '// import { Client } from "@modelcontextprotocol/sdk/client";',
    ' * see `import x from "@modelcontextprotocol/sdk"`',
  ];
  const found = strayV1Imports(new Map(texts.map((t, i) => [`src/x/f${i}.ts`, t])), {});
  assert.deepEqual(found, ["src/x/f0.ts", "src/x/f1.ts"]);
});
