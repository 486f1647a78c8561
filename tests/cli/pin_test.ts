import assert from "node:assert/strict";
import { join } from "node:path";
import { runCliHere } from "../helpers.ts";
import { openStore } from "../../src/store/mod.ts";
import { intelligenceMigrations, Recorder } from "../../src/intelligence/mod.ts";

const DAY = 86_400_000;

const CONFIG = `# my hub — hand written
version: 1
expose: lazy # discover on demand

# always listed
pin:
  - github # the whole server
  - fs__read_file

servers:
  # the GitHub API
  github:
    command: npx
    args: [-y, "@modelcontextprotocol/server-github"]
    env:
      GITHUB_TOKEN: \${GITHUB_TOKEN} # from the shell
  fs:
    command: node
    description: files
  memory:
    url: https://example.com/mcp # remote

agents:
  work:
    servers: [github, fs]
`;

interface Run {
  code: number;
  out: string;
  err: string;
}

interface Sandbox extends AsyncDisposable {
  dir: string;
  config: string;
  db: string;
  run(...args: string[]): Promise<Run>;
  read(): Promise<string>;
  backups(): Promise<string[]>;
}

/** A temp HOME with `mcphub.yaml` (when `text` is given) in the working directory. */
async function sandbox(text?: string): Promise<Sandbox> {
  const dir = await Deno.makeTempDir({ prefix: "mcphub_pin_" });
  const config = join(dir, "mcphub.yaml");
  if (text !== undefined) await Deno.writeTextFile(config, text, { mode: 0o640 });
  const env = new Map([["HOME", dir]]);
  return {
    dir,
    config,
    db: join(dir, "store", "mcphub.db"),
    run: (...args) => runCliHere(args, { env: Object.fromEntries(env), cwd: dir }),
    read: () => Deno.readTextFile(config),
    async backups() {
      const names: string[] = [];
      for await (const entry of Deno.readDir(dir)) if (entry.name.endsWith(".bak")) names.push(entry.name);
      return names.sort();
    },
    [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }),
  };
}

/** Records `count` calls of `server__tool` at `ts` into the store at `path`. */
async function record(path: string, calls: [server: string, tool: string, count: number, ts: number][]) {
  const db = openStore(path, { migrations: intelligenceMigrations });
  const recorder = new Recorder(db);
  try {
    for (const [server, tool, count, ts] of calls) {
      for (let i = 0; i < count; i++) {
        recorder.record({
          ts: ts + i,
          server,
          tool,
          namespaced: `${server}__${tool}`,
          durationMs: 5,
          ok: true,
          argsBytes: 10,
          resultBytes: 100,
          via: "mount",
          spooled: false,
          returnedBytes: 100,
        });
      }
    }
  } finally {
    await recorder.close();
    db.close();
  }
}

async function sampleStore(path: string): Promise<void> {
  const now = Date.now();
  await record(path, [
    ["old", "tool", 10, now - DAY], // server no longer configured
    ["memory", "recall", 6, now - DAY],
    ["fs", "write_file", 5, now - DAY],
    ["github", "search", 4, now - DAY], // covered by the "github" pin
    ["fs", "read_file", 3, now - DAY], // already pinned
    ["memory", "store", 20, now - 30 * DAY], // outside --since 7d
  ]);
}

Deno.test("pin --top N --since D pins the most-called configured tools, keeping the rest of the file", async () => {
  await using box = await sandbox(CONFIG);
  await sampleStore(box.db);
  const r = await box.run("--db", box.db, "pin", "--top", "4", "--since", "7d");
  assert.equal(r.code, 0, r.err);
  assert.equal(
    r.out,
    "pinned: fs__write_file, memory__recall\nalready pinned: github__search, fs__read_file\n",
  );
  assert.match(r.err, /skipped tools of servers no longer configured: old/);
  assert.equal(
    await box.read(),
    CONFIG.replace(
      "  - github # the whole server\n  - fs__read_file\n",
      "  - fs__read_file\n  - fs__write_file\n  - github # the whole server\n  - memory__recall\n",
    ),
  );
  const backups = await box.backups();
  assert.equal(backups.length, 1);
  assert.match(backups[0]!, /^mcphub\.yaml\.\d{8}-\d{6}\.bak$/);
  assert.equal(await Deno.readTextFile(join(box.dir, backups[0]!)), CONFIG);
  if (Deno.build.os !== "windows") assert.equal((await Deno.stat(box.config)).mode! & 0o777, 0o640);

  // Nothing new to pin: no write, no second backup.
  const again = await box.run("--db", box.db, "pin", "--top", "4", "--since", "7d");
  assert.equal(again.code, 0);
  assert.match(again.out, /nothing changed\n$/);
  assert.equal((await box.backups()).length, 1);
});

Deno.test("pin --top N counts all time without --since and dedupes into a sorted list", async () => {
  await using box = await sandbox(CONFIG.replace("  - fs__read_file\n", "  - fs__read_file\n  - github\n"));
  await sampleStore(box.db);
  const r = await box.run("pin", "--top", "2", "memory__store", "fs__*");
  // $MCPHUB_DB is not set and --db not given: the default store holds nothing here.
  assert.equal(r.code, 0, r.err);
  assert.match(r.err, /no calls are recorded yet/);
  assert.equal(r.out, "pinned: fs__*, memory__store\n");
  assert.match(
    await box.read(),
    /pin:\n {2}- fs__\*\n {2}- fs__read_file\n {2}- github # the whole server\n {2}- memory__store\n\n/,
  );

  const top = await box.run("--db", box.db, "pin", "--top", "1");
  assert.equal(top.code, 0, top.err);
  // memory__store (20 calls, a month ago) is the most-called of all time, and already pinned.
  assert.equal(top.out, "already pinned: memory__store\nnothing changed\n");
});

Deno.test("pin --top without a store says so and creates no database", async () => {
  await using box = await sandbox(CONFIG);
  const r = await box.run("--db", box.db, "pin", "--top", "3");
  assert.equal(r.code, 0);
  assert.equal(r.out, "nothing changed\n");
  assert.match(r.err, /no calls are recorded yet \(no store at .*mcphub\.db\)/);
  await assert.rejects(Deno.stat(box.db), Deno.errors.NotFound);
  assert.equal(await box.read(), CONFIG);
});

Deno.test("pin naming an unknown server fails validation and writes nothing", async () => {
  await using box = await sandbox(CONFIG);
  const r = await box.run("pin", "memory__recall", "nope__search");
  assert.equal(r.code, 1);
  assert.equal(r.out, "");
  assert.match(r.err, /^error: mcphub\.yaml:\d+:\d+: pin\[\d\]: after the edit: unknown server "nope"/);
  assert.equal(await box.read(), CONFIG);
  assert.deepEqual(await box.backups(), []);
});

Deno.test("pin with no arguments lists the pins", async (t) => {
  await t.step("one per line", async () => {
    await using box = await sandbox(CONFIG);
    const r = await box.run("pin");
    assert.equal(r.code, 0);
    assert.equal(r.out, "github\nfs__read_file\n");
  });
  await t.step("as JSON", async () => {
    await using box = await sandbox(CONFIG);
    const r = await box.run("pin", "--json");
    assert.deepEqual(JSON.parse(r.out), { config: box.config, pin: ["github", "fs__read_file"] });
  });
  await t.step("a sentence when there are none", async () => {
    await using box = await sandbox("version: 1\nservers:\n  fs:\n    command: node\n");
    const r = await box.run("pin");
    assert.equal(r.code, 0);
    assert.match(r.out, /^No pins in mcphub\.yaml\. Add some with: mcphub pin/);
    assert.deepEqual(await box.backups(), []);
  });
});

Deno.test("pin adds a pin list after expose when the file has none", async () => {
  const text = "# hub\nversion: 1\nexpose: lazy\n\nservers:\n  fs:\n    command: node\n";
  await using box = await sandbox(text);
  const r = await box.run("pin", "fs__write", "fs__read", "fs__write");
  assert.equal(r.code, 0, r.err);
  assert.equal(r.out, "pinned: fs__read, fs__write\n");
  assert.equal(
    await box.read(),
    "# hub\nversion: 1\nexpose: lazy\n\npin:\n  - fs__read\n  - fs__write\n\nservers:\n  fs:\n    command: node\n",
  );
});

Deno.test("unpin of a bare server removes all of its pins and nothing else", async () => {
  const text = CONFIG
    .replace("  - fs__read_file\n", "  - fs__read_file\n  - github__search\n  - github__*\n  - hub-2__x\n")
    .replace("  memory:\n", "  hub-2:\n    command: hub\n  memory:\n");
  await using box = await sandbox(text);
  const r = await box.run("unpin", "github", "memory");
  assert.equal(r.code, 0, r.err);
  assert.equal(r.out, "unpinned: github, github__search, github__*\nnot pinned: memory\n");
  assert.equal(
    await box.read(),
    text.replace("  - github # the whole server\n", "").replace("  - github__search\n  - github__*\n", ""),
  );
  const none = await box.run("unpin", "fs__write_file");
  assert.equal(none.out, "not pinned: fs__write_file\nnothing changed\n");
  assert.equal((await box.backups()).length, 1);
});

Deno.test("pin and unpin without a config file say how to create one", async () => {
  await using box = await sandbox();
  for (const args of [["pin"], ["pin", "fs"], ["unpin", "fs"]]) {
    const r = await box.run(...args);
    assert.equal(r.code, 1);
    assert.match(r.err, /no config file found .*create one with: mcphub init \(writes .*mcphub\.yaml\)/);
  }
  const explicit = await box.run("--config", "other.yaml", "pin");
  assert.equal(explicit.code, 1);
  assert.match(
    explicit.err,
    /other\.yaml: config file not found; create it with: mcphub --config other\.yaml init/,
  );
});

Deno.test("pin and unpin usage errors exit 2 with the help", async (t) => {
  await using box = await sandbox(CONFIG);
  for (
    const args of [
      ["pin", "--top", "0"],
      ["pin", "--top", "three"],
      ["pin", "--top", "-1"],
      ["pin", "--top", "2", "--since", "7x"],
      ["pin", "--since", "7d"],
      ["pin", "--bogus"],
      ["unpin"],
      ["unpin", "--all"],
    ]
  ) {
    await t.step(args.join(" "), async () => {
      const r = await box.run(...args);
      assert.equal(r.code, 2);
      assert.match(r.err, /^error: [^]*\n\nUsage: mcphub (un)?pin/);
    });
  }
  assert.equal(await box.read(), CONFIG);
  assert.deepEqual(await box.backups(), []);
});
