import assert from "node:assert/strict";
import { join } from "node:path";
import { isSeq } from "yaml";
import { ConfigError, editConfig, type LoadOptions } from "../../src/config/mod.ts";
import { KEEP_BACKUPS } from "../../src/config/edit.ts";

const ORIGINAL = `# mcphub config — hand written
version: 1
expose: lazy # agents discover tools on demand

# always mounted
pin:
  - github__search_code

servers:
  # the GitHub API
  github:
    command: npx
    args: [-y, "@modelcontextprotocol/server-github"]
    env:
      GITHUB_TOKEN: \${GITHUB_TOKEN} # from the shell
  fs:
    command: node
    description: "Reads and writes files in the project tree; use it for anything that touches local files, never for the network"
    env: {A: "1", B: "2"}
`;

async function tempDir(): Promise<{ dir: string; [Symbol.asyncDispose](): Promise<void> }> {
  const dir = await Deno.makeTempDir({ prefix: "mcphub_edit_" });
  return { dir, [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }) };
}

function options(dir: string): LoadOptions {
  return { env: { get: () => undefined }, cwd: dir, home: dir };
}

async function backups(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(dir)) if (entry.name.endsWith(".bak")) names.push(entry.name);
  return names.sort();
}

function addPin(pin: string) {
  return (doc: import("yaml").Document) => {
    const pins = doc.get("pin");
    if (isSeq(pins)) pins.add(doc.createNode(pin));
    else doc.set("pin", [pin]);
  };
}

Deno.test("editConfig() keeps comments and key order through a pin edit", async () => {
  await using tmp = await tempDir();
  const path = join(tmp.dir, "mcphub.yaml");
  await Deno.writeTextFile(path, ORIGINAL);
  const { before, after } = await editConfig(path, addPin("fs__*"), options(tmp.dir));
  const text = await Deno.readTextFile(path);
  assert.equal(text, ORIGINAL.replace("  - github__search_code\n", "  - github__search_code\n  - fs__*\n"));
  assert.deepEqual(before.pin, ["github__search_code"]);
  assert.deepEqual(after.pin, ["github__search_code", "fs__*"]);
  assert.equal(after.path, path);
});

Deno.test("editConfig() does not need (or expand) ${VAR}s", async () => {
  await using tmp = await tempDir();
  const path = join(tmp.dir, "mcphub.yaml");
  await Deno.writeTextFile(path, ORIGINAL);
  const read: string[] = [];
  const env = { get: (key: string) => (read.push(key), undefined) };
  const { after } = await editConfig(path, addPin("fs"), { ...options(tmp.dir), env, agent: "nobody" });
  assert.deepEqual(after.servers[0].env, { GITHUB_TOKEN: "${GITHUB_TOKEN}" });
  assert.ok(!read.includes("GITHUB_TOKEN"));
});

Deno.test("editConfig() keeps a timestamped .bak of the old file", async () => {
  await using tmp = await tempDir();
  const path = join(tmp.dir, "mcphub.yaml");
  await Deno.writeTextFile(path, ORIGINAL);
  await editConfig(path, addPin("fs"), options(tmp.dir));
  await editConfig(path, addPin("github"), options(tmp.dir));
  const names = await backups(tmp.dir);
  assert.equal(names.length, 2);
  for (const name of names) assert.match(name, /^mcphub\.yaml\.\d{8}-\d{6}(-2)?\.bak$/);
  const contents = await Promise.all(names.map((name) => Deno.readTextFile(join(tmp.dir, name))));
  assert.ok(contents.includes(ORIGINAL));
  const stamp = names[0].slice("mcphub.yaml.".length, "mcphub.yaml.".length + 15);
  const now = new Date().toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  assert.ok(
    Math.abs(Number(stamp.replace("-", "")) - Number(now.replace("-", ""))) <= 100,
    `${stamp} vs ${now}`,
  );
});

Deno.test("editConfig() keeps only the newest 5 .bak copies of the file it edits", async () => {
  assert.equal(KEEP_BACKUPS, 5);
  await using tmp = await tempDir();
  const path = join(tmp.dir, "mcphub.yaml");
  await Deno.writeTextFile(path, ORIGINAL);
  // Older copies, including a same-second "-10" that sorts after "-2", and another file's copy.
  const old = ["mcphub.yaml.20200101-000000.bak", "mcphub.yaml.20200101-000000-2.bak"];
  for (const name of [...old, "mcphub.yaml.20200101-000000-10.bak", "notes.yaml.20200101-000000.bak"]) {
    await Deno.writeTextFile(join(tmp.dir, name), name);
  }
  const seen: string[] = [];
  for (const pin of ["fs", "github", "fs__a", "fs__b"]) {
    seen.push(await Deno.readTextFile(path));
    await editConfig(path, addPin(pin), options(tmp.dir));
  }
  const names = await backups(tmp.dir);
  assert.equal(names.filter((n) => n.startsWith("mcphub.yaml.")).length, 5);
  assert.ok(names.includes("notes.yaml.20200101-000000.bak"));
  assert.ok(names.includes("mcphub.yaml.20200101-000000-10.bak"));
  for (const name of old) assert.ok(!names.includes(name), `${name} should be removed`);
  const kept = await Promise.all(
    names.filter((n) => !n.startsWith("mcphub.yaml.2020") && !n.startsWith("notes"))
      .map((n) => Deno.readTextFile(join(tmp.dir, n))),
  );
  assert.deepEqual(kept.sort(), seen.sort());
});

Deno.test("editConfig() keeps the file mode", { ignore: Deno.build.os === "windows" }, async () => {
  await using tmp = await tempDir();
  const path = join(tmp.dir, "mcphub.yaml");
  await Deno.writeTextFile(path, ORIGINAL);
  await Deno.chmod(path, 0o640);
  await editConfig(path, addPin("fs"), options(tmp.dir));
  assert.equal((await Deno.stat(path)).mode! & 0o777, 0o640);
  const [backup] = await backups(tmp.dir);
  assert.equal((await Deno.stat(join(tmp.dir, backup))).mode! & 0o777, 0o640);
});

Deno.test(
  "editConfig() creates a missing file with mode 0600",
  { ignore: Deno.build.os === "windows" },
  async () => {
    await using tmp = await tempDir();
    const path = join(tmp.dir, "nested", "mcphub.yaml");
    const { before, after } = await editConfig(path, (doc) => {
      doc.set("version", 1);
      doc.setIn(["servers", "fs"], doc.createNode({ command: "node", args: ["fs.js"] }));
    }, options(tmp.dir));
    assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    assert.deepEqual(before.servers, []);
    assert.equal(after.servers[0].command, "node");
    assert.equal(
      await Deno.readTextFile(path),
      "version: 1\nservers:\n  fs:\n    command: node\n    args:\n      - fs.js\n",
    );
    assert.deepEqual(await backups(join(tmp.dir, "nested")), []);
  },
);

Deno.test("editConfig() writes nothing when the edit makes the config invalid", async () => {
  await using tmp = await tempDir();
  const path = join(tmp.dir, "mcphub.yaml");
  await Deno.writeTextFile(path, ORIGINAL);
  await assert.rejects(editConfig(path, addPin("nope__x"), options(tmp.dir)), (error: unknown) => {
    assert.ok(error instanceof ConfigError);
    assert.equal(
      error.message,
      `${path}:8:5: pin[1]: after the edit: unknown server "nope"; configured servers: github, fs`,
    );
    return true;
  });
  assert.equal(await Deno.readTextFile(path), ORIGINAL);
  const left = [];
  for await (const entry of Deno.readDir(tmp.dir)) left.push(entry.name);
  assert.deepEqual(left, ["mcphub.yaml"]);
});

Deno.test("editConfig() refuses to edit a file that is already invalid", async () => {
  await using tmp = await tempDir();
  const path = join(tmp.dir, "mcphub.yaml");
  await Deno.writeTextFile(path, "expose: sometimes\n");
  let called = false;
  await assert.rejects(
    editConfig(path, () => called = true, options(tmp.dir)),
    /mcphub\.yaml:1:9: expose: expected one of "all", "lazy", "auto", got "sometimes"/,
  );
  assert.equal(called, false);
  assert.equal(await Deno.readTextFile(path), "expose: sometimes\n");
});

Deno.test("editConfig() writes a .json config back as JSON", async () => {
  await using tmp = await tempDir();
  const path = join(tmp.dir, "mcphub.json");
  await Deno.writeTextFile(path, '{"servers": {"fs": {"command": "node"}}}\n');
  await editConfig(path, addPin("fs"), options(tmp.dir));
  assert.deepEqual(JSON.parse(await Deno.readTextFile(path)), {
    servers: { fs: { command: "node" } },
    pin: ["fs"],
  });
});

Deno.test("editConfig() edits the target of a symlink and keeps the link", {
  ignore: Deno.build.os === "windows",
}, async () => {
  await using tmp = await tempDir();
  const real = join(tmp.dir, "real.yaml");
  const link = join(tmp.dir, "mcphub.yaml");
  await Deno.writeTextFile(real, ORIGINAL);
  await Deno.symlink(real, link);
  await editConfig(link, addPin("fs"), options(tmp.dir));
  assert.ok((await Deno.lstat(link)).isSymlink);
  assert.match(await Deno.readTextFile(real), /- fs\n/);
  assert.deepEqual((await backups(tmp.dir)).length, 1);
});
