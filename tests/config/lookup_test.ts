import assert from "node:assert/strict";
import { join } from "node:path";
import {
  ConfigError,
  defaultConfig,
  defaultConfigPath,
  findConfigPath,
  loadConfig,
  type LoadOptions,
} from "../../src/config/mod.ts";

interface Sandbox {
  root: string;
  cwd: string;
  home: string;
  options(vars?: Record<string, string>, extra?: Partial<LoadOptions>): LoadOptions;
  write(path: string, text?: string): string;
  [Symbol.asyncDispose](): Promise<void>;
}

/** A temp dir with `work/` as cwd and `home/` as HOME; removed on dispose. */
async function sandbox(): Promise<Sandbox> {
  const root = await Deno.makeTempDir({ prefix: "mcphub_config_" });
  const cwd = join(root, "work");
  const home = join(root, "home");
  await Deno.mkdir(cwd);
  await Deno.mkdir(home);
  return {
    root,
    cwd,
    home,
    options: (vars = {}, extra = {}) => ({ env: { get: (key) => vars[key] }, cwd, home, ...extra }),
    write(path, text = "servers: {}\n") {
      const full = join(root, path);
      Deno.mkdirSync(join(full, ".."), { recursive: true });
      Deno.writeTextFileSync(full, text);
      return full;
    },
    [Symbol.asyncDispose]: () => Deno.remove(root, { recursive: true }),
  };
}

function configError(run: () => unknown): ConfigError {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${error}`);
    return error;
  }
  assert.fail("expected a ConfigError");
}

Deno.test("findConfigPath() prefers --config over everything", async () => {
  await using box = await sandbox();
  const explicit = box.write("elsewhere/custom.yaml");
  box.write("work/mcphub.yaml");
  const env = box.write("env.yaml");
  assert.equal(findConfigPath("../elsewhere/custom.yaml", box.options({ MCPHUB_CONFIG: env })), explicit);
  assert.equal(findConfigPath(explicit, box.options()), explicit);
});

Deno.test("findConfigPath() fails when --config names a missing file", async () => {
  await using box = await sandbox();
  box.write("work/mcphub.yaml");
  const error = configError(() => findConfigPath("nope.yaml", box.options()));
  assert.equal(error.message, "nope.yaml: config file not found (given with --config); check the path");
  assert.equal(error.file, "nope.yaml");
});

Deno.test("findConfigPath() uses $MCPHUB_CONFIG before the working directory", async () => {
  await using box = await sandbox();
  box.write("work/mcphub.yaml");
  const env = box.write("env.yaml");
  assert.equal(findConfigPath(undefined, box.options({ MCPHUB_CONFIG: env })), env);
});

Deno.test("findConfigPath() fails when $MCPHUB_CONFIG names a missing file", async () => {
  await using box = await sandbox();
  box.write("work/mcphub.yaml");
  const missing = join(box.root, "missing.yaml");
  const error = configError(() => findConfigPath(undefined, box.options({ MCPHUB_CONFIG: missing })));
  assert.equal(error.message, `${missing}: config file not found (set by MCPHUB_CONFIG); check the path`);
});

Deno.test("findConfigPath() fails when --config names a directory", async () => {
  await using box = await sandbox();
  const error = configError(() => findConfigPath(".", box.options()));
  assert.equal(error.message, ".: config path is not a file (given with --config); check the path");
});

Deno.test("findConfigPath() looks for mcphub.yaml, .yml, .json in that order in the working directory", async () => {
  await using box = await sandbox();
  box.write("home/.config/mcphub/mcphub.yaml");
  const json = box.write("work/mcphub.json", "{}");
  assert.equal(findConfigPath(undefined, box.options()), json);
  const yml = box.write("work/mcphub.yml");
  assert.equal(findConfigPath(undefined, box.options()), yml);
  const yaml = box.write("work/mcphub.yaml");
  assert.equal(findConfigPath(undefined, box.options()), yaml);
});

Deno.test("findConfigPath() falls back to ~/.config/mcphub", async () => {
  await using box = await sandbox();
  const json = box.write("home/.config/mcphub/mcphub.json", "{}");
  assert.equal(findConfigPath(undefined, box.options()), json);
  const yml = box.write("home/.config/mcphub/mcphub.yml");
  assert.equal(findConfigPath(undefined, box.options()), yml);
  // HOME from the environment when no home is given.
  assert.equal(findConfigPath(undefined, box.options({ HOME: box.home }, { home: undefined })), yml);
});

Deno.test("findConfigPath() uses $XDG_CONFIG_HOME instead of ~/.config", async () => {
  await using box = await sandbox();
  box.write("home/.config/mcphub/mcphub.yaml");
  const xdg = box.write("xdg/mcphub/mcphub.yaml");
  assert.equal(findConfigPath(undefined, box.options({ XDG_CONFIG_HOME: join(box.root, "xdg") })), xdg);
  assert.equal(
    defaultConfigPath(box.options({ XDG_CONFIG_HOME: join(box.root, "xdg") })),
    join(box.root, "xdg", "mcphub", "mcphub.yaml"),
  );
  assert.equal(defaultConfigPath(box.options()), join(box.home, ".config", "mcphub", "mcphub.yaml"));
});

Deno.test("findConfigPath() returns undefined when no file exists", async () => {
  await using box = await sandbox();
  assert.equal(findConfigPath(undefined, box.options()), undefined);
  assert.equal(findConfigPath(undefined, box.options({}, { home: undefined })), undefined);
});

Deno.test("loadConfig() returns the embedded default when no file exists", async () => {
  await using box = await sandbox();
  assert.deepEqual(await loadConfig(undefined, box.options()), defaultConfig());
});

Deno.test("loadConfig() rejects --agent when no file exists", async () => {
  await using box = await sandbox();
  await assert.rejects(loadConfig(undefined, box.options({}, { agent: "x" })), (error: unknown) => {
    assert.ok(error instanceof ConfigError);
    assert.equal(error.message, 'unknown agent "x"; no agents are defined (no config file was found)');
    return true;
  });
});

Deno.test("loadConfig() reads the file found, with an absolute path and messages relative to cwd", async () => {
  await using box = await sandbox();
  const path = box.write("work/mcphub.yaml", "expose: lazy\nservers:\n  s: {command: x}\n");
  const config = await loadConfig(undefined, box.options());
  assert.equal(config.path, path);
  assert.equal(config.expose, "lazy");
  box.write("work/mcphub.yaml", "expose: lazzy\n");
  await assert.rejects(loadConfig(undefined, box.options()), (error: unknown) => {
    assert.ok(error instanceof ConfigError);
    assert.equal(
      error.message,
      'mcphub.yaml:1:9: expose: expected one of "all", "lazy", "auto", got "lazzy"; did you mean "lazy"?',
    );
    return true;
  });
});

Deno.test("loadConfig() names the file as given with --config", async () => {
  await using box = await sandbox();
  box.write("work/conf/hub.yaml", "verbatim: 1\n");
  await assert.rejects(loadConfig("conf/hub.yaml", box.options()), (error: unknown) => {
    assert.ok(error instanceof ConfigError);
    assert.equal(error.message, "conf/hub.yaml:1:11: verbatim: expected true or false, got a number");
    return true;
  });
});

Deno.test("loadConfig() names a user-level file by its absolute path", async () => {
  await using box = await sandbox();
  const path = box.write("home/.config/mcphub/mcphub.yaml", "record: 1\n");
  await assert.rejects(loadConfig(undefined, box.options()), (error: unknown) => {
    assert.ok(error instanceof ConfigError);
    assert.equal(error.message, `${path}:1:9: record: expected true or false, got a number`);
    return true;
  });
});

Deno.test("loadConfig() reads mcphub.json", async () => {
  await using box = await sandbox();
  box.write(
    "work/mcphub.json",
    '{\n  "expose": "lazy",\n  "servers": {"s": {"url": "http://localhost:1"}}\n}\n',
  );
  const config = await loadConfig(undefined, box.options());
  assert.equal(config.expose, "lazy");
  assert.equal(config.servers[0].url, "http://localhost:1");
  box.write(
    "work/mcphub.json",
    '{\n  "expose": "lazy",\n  "servers": {"s": {"uri": "http://localhost:1"}}\n}\n',
  );
  await assert.rejects(
    loadConfig(undefined, box.options()),
    /mcphub\.json:3:21: servers\.s\.uri: unknown key; did you mean "url"\?/,
  );
});
