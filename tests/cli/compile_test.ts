/**
 * scripts/compile.ts: the build plan, what `deno compile` embeds (permissions, baked arguments), and,
 * where deno compile can get its runtime (denort: downloaded, or DENORT_BIN), the host binary itself.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { existsSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  binaryName,
  type BuildPlan,
  hostTarget,
  planBuilds,
  RELEASE_PERMISSIONS,
  TARGETS,
} from "../../scripts/compile.ts";
import { derivePermissions, linkerEnvNames, whichCommand } from "../../src/cli/permissions.ts";
import { loadConfig } from "../../src/config/mod.ts";
import { VERSION } from "../../src/cli/mod.ts";
import { DENO, q, REAL, REAL_DENO_DIR, ROOT, tempDir, writeConfig } from "../helpers.ts";

const decoder = new TextDecoder();
const HOST = hostTarget();

function childEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env = { ...Deno.env.toObject(), ...extra };
  for (const name of linkerEnvNames(env)) delete env[name];
  return env;
}

async function script(args: string[], env: Record<string, string> = {}) {
  const out = await new Deno.Command(DENO, {
    args: ["run", "-A", `${ROOT}scripts/compile.ts`, ...args],
    cwd: ROOT,
    env: { ...Deno.env.toObject(), ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(300_000),
  }).output();
  return { code: out.code, stdout: decoder.decode(out.stdout), stderr: decoder.decode(out.stderr) };
}

// The host binary is built inside its test (never at module load, so `--filter` of another test builds
// nothing). Whether deno compile can get its runtime (denort) is decided without building: DENORT_BIN, or
// denort already in the Deno cache. It is a download from Deno's own host, which no package registry this
// project's machines reach ships, so without it the test is ignored and says how to supply it.
const BUILD_DIR = await Deno.makeTempDir({ prefix: "mcphub-compile-" });
globalThis.addEventListener("unload", () => {
  try {
    Deno.removeSync(BUILD_DIR, { recursive: true });
  } catch {
    // already gone
  }
});

type HostBuild = { binary: string } | { failed: string };

/** Why deno compile has no runtime for the host here (with what to do), or undefined. */
function runtimeMissing(): string | undefined {
  if (!HOST) return `this host (${Deno.build.target}) is not a release target`;
  const bin = Deno.env.get("DENORT_BIN");
  if (bin) return existsSync(bin) ? undefined : `DENORT_BIN=${bin} does not exist`;
  const cached = `${REAL_DENO_DIR}/dl/release/v${Deno.version.deno}/denort-${HOST}.zip`;
  if (existsSync(cached)) return undefined;
  return `deno compile's runtime (denort ${Deno.version.deno} for ${HOST}) is not in the Deno cache: set ` +
    "DENORT_BIN=/path/to/denort, or build once where dl.deno.land is reachable";
}

async function buildHost(): Promise<HostBuild> {
  const r = await script(["--target", "host", "--output", `${BUILD_DIR}/release`]);
  if (r.code !== 0) return { failed: `scripts/compile.ts exited ${r.code}:\n${r.stderr}` };
  return { binary: `${BUILD_DIR}/release/${binaryName(HOST!)}` };
}

const SKIP = runtimeMissing();
if (SKIP) console.error(`ignored: the compiled-binary test: ${SKIP}`);

async function serverConfig(dir: string): Promise<string> {
  return await writeConfig(
    dir,
    `response_budget: 1KB\nservers:\n  everything:\n    command: node\n    args: [${q(REAL.everything)}]\n`,
  );
}

/** Connects the SDK client to a gateway command; resolves with the time to the `initialize` answer. */
async function connect(command: string, args: string[]): Promise<{ client: Client; ms: number }> {
  const transport = new StdioClientTransport({ command, args, env: childEnv(), stderr: "pipe" });
  const client = new Client({ name: "mcphub-compile-test", version: "1.0.0" });
  const started = performance.now();
  await client.connect(transport);
  return { client, ms: performance.now() - started };
}

async function toolsListWorks(client: Client): Promise<void> {
  // mcp serve answers at once; the server's tools arrive as it connects.
  for (let i = 0; i < 400; i++) {
    const { tools } = await client.listTools();
    if (tools.some((tool) => tool.name === "everything__echo")) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const { tools } = await client.listTools();
  assert.ok(tools.some((tool) => tool.name === "everything__echo"), tools.map((t) => t.name).join(","));
  const r = await client.callTool({ name: "everything__echo", arguments: { message: "compiled" } });
  assert.deepEqual(r.content, [{ type: "text", text: "Echo: compiled" }]);
  // The resolver and its generated data (the WordNet lexicon, the Chinese glossary) load on first use:
  // the binary must carry them.
  const found = await client.callTool({
    name: "search_tools",
    arguments: { query: "add two numbers together" },
  });
  const matches = (found.structuredContent as { matches: { namespaced: string }[] }).matches;
  assert.equal(matches[0]?.namespaced, "everything__get-sum", JSON.stringify(matches.slice(0, 3)));
}

Deno.test({
  name: "the compiled host binary reports its version and target and serves tools/list (release and locked)",
  ignore: SKIP !== undefined,
  async fn() {
    const build = await buildHost();
    if ("failed" in build) assert.fail(build.failed);
    const binary = build.binary;
    const version = await new Deno.Command(binary, { args: ["--version"], stdout: "piped" }).output();
    assert.equal(decoder.decode(version.stdout), `mcphub ${VERSION} (deno ${Deno.version.deno}, ${HOST})\n`);
    const sums = await Deno.readTextFile(`${BUILD_DIR}/release/SHA256SUMS`);
    assert.match(sums, new RegExp(`^[0-9a-f]{64} {2}${binaryName(HOST!)}\\n$`));

    await using dir = await tempDir();
    const config = await serverConfig(dir.path);
    const db = `${dir.path}/mcphub.db`;
    const compiled = await connect(binary, ["--config", config, "--db", db, "mcp", "serve"]);
    try {
      await toolsListWorks(compiled.client);
    } finally {
      await compiled.client.close();
    }
    const flags = RELEASE_PERMISSIONS;
    const source = await connect(DENO, [
      "run",
      ...flags,
      `${ROOT}main.ts`,
      "--config",
      config,
      "--db",
      db,
      "mcp",
      "serve",
    ]);
    await source.client.close();
    const size = (await Deno.stat(binary)).size;
    console.log(
      `compiled ${binaryName(HOST!)}: ${(size / 1024 / 1024).toFixed(1)} MiB; cold start to the initialize ` +
        `answer: compiled ${compiled.ms.toFixed(0)} ms, deno run ${source.ms.toFixed(0)} ms`,
    );

    // Locked to this config: its flags and --config/--db baked in, so `mcp serve` alone serves it.
    const locked = await script(["--config", config, "--db", db, "--output", `${BUILD_DIR}/locked`]);
    assert.equal(locked.code, 0, locked.stderr);
    const lockedBinary = `${BUILD_DIR}/locked/${binaryName(HOST!)}`;
    const served = await connect(lockedBinary, ["mcp", "serve"]);
    try {
      await toolsListWorks(served.client);
    } finally {
      await served.client.close();
    }
  },
});

Deno.test("planBuilds(): every target with the release permissions, never -A, --allow-ffi or --allow-sys", () => {
  const plans = planBuilds({ outputDir: "/out" });
  assert.deepEqual(plans.map((p) => p.target), [...TARGETS]);
  assert.deepEqual(plans.map((p) => p.output), [
    "/out/mcphub-x86_64-unknown-linux-gnu",
    "/out/mcphub-aarch64-unknown-linux-gnu",
    "/out/mcphub-x86_64-apple-darwin",
    "/out/mcphub-aarch64-apple-darwin",
    "/out/mcphub-x86_64-pc-windows-msvc.exe",
  ]);
  for (const plan of plans) {
    assert.deepEqual(plan.args, [
      "compile",
      "--allow-run",
      "--allow-read",
      "--allow-write",
      "--allow-net",
      "--allow-env",
      "--no-prompt",
      "--target",
      plan.target,
      "--output",
      plan.output,
      "--include",
      `${ROOT}src/resolver/index_worker_main.ts`,
      "--include",
      `${ROOT}src/resolver/index_worker.ts`,
      `${ROOT}main.ts`,
    ]);
  }
});

Deno.test("planBuilds(): a locked build takes the derived flags and bakes in --config and --db", () => {
  const [plan] = planBuilds({
    targets: ["x86_64-unknown-linux-gnu"],
    outputDir: "/out",
    locked: {
      flags: ["--allow-run=/usr/bin/node,node", "--allow-read=/c,/s", "--allow-write=/c,/s", "--allow-env"],
      config: "/c/mcphub.yaml",
      store: "/s/mcphub.db",
    },
  });
  assert.deepEqual(plan!.args, [
    "compile",
    "--allow-run=/usr/bin/node,node",
    "--allow-read=/c,/s",
    "--allow-write=/c,/s",
    "--allow-env",
    "--no-prompt",
    "--target",
    "x86_64-unknown-linux-gnu",
    "--output",
    "/out/mcphub-x86_64-unknown-linux-gnu",
    "--include",
    `${ROOT}src/resolver/index_worker_main.ts`,
    "--include",
    `${ROOT}src/resolver/index_worker.ts`,
    `${ROOT}main.ts`,
    "--config",
    "/c/mcphub.yaml",
    "--db",
    "/s/mcphub.db",
  ]);
});

Deno.test("scripts/compile.ts --dry-run: all targets by default; DENORT_BIN means one target", async () => {
  const all = await script(["--dry-run"], { DENORT_BIN: "" });
  assert.equal(all.code, 0, all.stderr);
  assert.equal(all.stdout.trim().split("\n").length, TARGETS.length);
  const offline = await script(["--dry-run"], { DENORT_BIN: "/opt/denort" });
  assert.equal(offline.code, 0, offline.stderr);
  if (HOST) assert.match(offline.stdout, new RegExp(`^\\S+ compile .* --target ${HOST} `));
  assert.equal(offline.stdout.trim().split("\n").length, 1);
  const many = await script(["--dry-run", "--target", "all"], { DENORT_BIN: "/opt/denort" });
  assert.equal(many.code, 2);
  assert.match(many.stderr, /DENORT_BIN \(\/opt\/denort\) is the runtime of one target/);
  const bad = await script(["--target", "sparc"]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /Unknown target "sparc"/);
});

/** The JSON value after the last `"key":` in a compiled binary's embedded metadata. */
function embedded(bytes: Uint8Array, key: string): unknown {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const at = buffer.lastIndexOf(`"${key}":`);
  assert.ok(at >= 0, `no "${key}" in the binary's metadata`);
  const text = decoder.decode(bytes.subarray(at + key.length + 3, at + key.length + 3 + 65536));
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") {
      if (--depth === 0) return JSON.parse(text.slice(0, i + 1));
    }
  }
  throw new Error(`unterminated "${key}" in the binary's metadata`);
}

/** Runs a plan's `deno compile` with the deno binary standing in for denort: the metadata is real. */
async function compileWithStandIn(plan: BuildPlan): Promise<Uint8Array> {
  const args = plan.args.toSpliced(1, 0, "--no-check");
  const out = await new Deno.Command(DENO, {
    args,
    cwd: ROOT,
    env: { ...Deno.env.toObject(), DENORT_BIN: Deno.execPath() },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, decoder.decode(out.stderr));
  return await Deno.readFile(plan.output);
}

Deno.test({
  name: "deno compile embeds exactly the planned permissions and baked arguments (release and locked)",
  ignore: HOST === undefined,
  async fn() {
    await using dir = await tempDir();
    // Not runnable (the runtime is the full deno CLI), but the embedded metadata is deno compile's own.
    const [release] = planBuilds({ targets: [HOST!], outputDir: `${dir.path}/release` });
    const releaseBytes = await compileWithStandIn(release!);
    const releasePermissions = embedded(releaseBytes, "permissions") as Record<string, unknown>;
    assert.deepEqual(
      [
        releasePermissions.allow_run,
        releasePermissions.allow_read,
        releasePermissions.allow_write,
        releasePermissions.allow_net,
        releasePermissions.allow_env,
      ],
      [[], [], [], [], []],
      "an empty list is the unrestricted permission",
    );
    assert.equal(releasePermissions.allow_ffi, null);
    assert.equal(releasePermissions.allow_sys, null);
    assert.equal(releasePermissions.prompt, false);
    assert.deepEqual(embedded(releaseBytes, "argv"), []);
    // The index worker (started with new Worker(), not imported) is embedded too.
    assert.ok(Buffer.from(releaseBytes).includes("function workerHandler"), "index_worker.ts is embedded");

    const config = await serverConfig(dir.path);
    const store = `${dir.path}/data/mcphub.db`;
    const loaded = await loadConfig(config, { env: Deno.env, cwd: dir.path });
    const env = Deno.env.toObject();
    const derived = derivePermissions(loaded, {
      storePath: store,
      cwd: dir.path,
      which: (command) => whichCommand(command, env),
    });
    const [locked] = planBuilds({
      targets: [HOST!],
      outputDir: `${dir.path}/locked`,
      locked: { flags: derived.flags, config, store },
    });
    const lockedBytes = await compileWithStandIn(locked!);
    const permissions = embedded(lockedBytes, "permissions") as Record<string, unknown>;
    assert.deepEqual(permissions.allow_run, derived.run);
    assert.deepEqual(permissions.allow_read, derived.read);
    assert.deepEqual(permissions.allow_write, derived.write);
    assert.equal(permissions.allow_net, null);
    assert.equal(permissions.allow_ffi, null);
    assert.equal(permissions.allow_sys, null);
    assert.equal(permissions.prompt, false);
    assert.deepEqual(embedded(lockedBytes, "argv"), ["--config", config, "--db", store]);
  },
});
