import assert from "node:assert/strict";
import { join } from "node:path";
import { parse } from "yaml";
import { HOST_FIXTURES, type HostSandbox, hostSandbox, installHost, PLACES } from "./_host_sandbox.ts";
import { loadConfig } from "../../src/config/mod.ts";

/** Every literal secret in the fixture host files: none may reach mcphub.yaml or the output. */
const SECRETS = [
  "ghp_0123456789abcdefghijABCDEFGHIJ012345",
  "ghp_ZYXWVUTSRQPONMLKJIHGFEDCBA9876543210",
  "hunter2-secret",
  "sntrys_local_secret_value",
  "k-123456",
  "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
  "sk-proj-abcdefghijklmnop1234",
  "gem1n1-token-value",
];

async function withConfig(box: HostSandbox, text = "version: 1\n"): Promise<void> {
  await Deno.mkdir(join(box.home, ".config", "mcphub"), { recursive: true });
  await Deno.writeTextFile(box.config, text);
}

async function expected(host: string, box: HostSandbox): Promise<string> {
  return (await Deno.readTextFile(`${HOST_FIXTURES}expected/${host}.yaml`)).replaceAll("$HOME", box.home);
}

function assertNoSecrets(...texts: string[]): void {
  for (const text of texts) {
    for (const secret of SECRETS) assert.ok(!text.includes(secret), `leaked ${secret}`);
  }
}

Deno.test("init --from HOST imports each documented host format as the expected YAML, secrets as ${VAR}", async (t) => {
  for (const host of Object.keys(PLACES)) {
    await t.step(host, async () => {
      await using box = await hostSandbox();
      await installHost(box, host);
      await withConfig(box);
      const r = await box.run("init", "--no-describe", "--from", host);
      assert.equal(r.code, 0, r.err);
      const written = await Deno.readTextFile(box.config);
      assert.equal(written, await expected(host, box));
      assertNoSecrets(written, r.out, r.err);
      // The result is a valid config (structure; variables unexpanded).
      const { servers } = parse(written);
      assert.ok(Object.keys(servers).length >= 2);
      assert.match(r.out, /^(updated|created) .*mcphub\.yaml: \d server\(s\) added$/m);
      assert.match(r.err, /^mcphub: a running gateway \(mcphub mcp serve\) picks up this change by itself/m);
    });
  }
});

Deno.test("init --from lists the variables to export, where each value is, and which are already set", async () => {
  await using box = await hostSandbox({
    GITHUB_PERSONAL_ACCESS_TOKEN: "ghp_0123456789abcdefghijABCDEFGHIJ012345",
  });
  await installHost(box, "claude-desktop");
  await withConfig(box);
  const r = await box.run("init", "--no-describe", "--from", "claude-desktop");
  assert.equal(r.code, 0, r.err);
  assert.match(
    r.out,
    /^ {2}GITHUB_PERSONAL_ACCESS_TOKEN {2}\(already set here\) {2}<- mcpServers\.github\.env\.GITHUB_PERSONAL_ACCESS_TOKEN in claude-desktop \(user, ~\/\.config\/Claude\/claude_desktop_config\.json\)$/m,
  );
  assert.match(
    r.out,
    /^ {2}POSTGRES_DB_PASSWORD {2}<- mcpServers\.postgres db\.args\[2\] in claude-desktop/m,
  );
  assert.match(r.out, /^ {2}e\.g\. export POSTGRES_DB_PASSWORD=\.\.\./m);
  assert.match(r.out, /^ {2}skipped {2}mcphub {2}from claude-desktop .*: it is mcphub itself$/m);
  assert.match(
    r.out,
    /^ {2}added {4}postgres-db {2}from .*: renamed from "postgres db" to fit mcphub's names$/m,
  );
  // With the variables set, the imported config loads and expands to the host's values.
  box.env.set("POSTGRES_DB_PASSWORD", "hunter2-secret");
  const config = await loadConfig(box.config, { env: { get: (k) => box.env.get(k) }, cwd: box.project });
  const pg = config.servers.find((s) => s.name === "postgres-db")!;
  assert.deepEqual(pg.args, ["-y", "@modelcontextprotocol/server-postgres", "--password=hunter2-secret"]);
  assert.equal(config.servers.find((s) => s.name === "github")!.env.GITHUB_PERSONAL_ACCESS_TOKEN, SECRETS[0]);
});

Deno.test("init --from --keep-secrets copies values literally", async () => {
  await using box = await hostSandbox();
  await installHost(box, "cursor");
  await withConfig(box);
  const r = await box.run("init", "--no-describe", "--from", "cursor", "--keep-secrets");
  assert.equal(r.code, 0, r.err);
  const servers = parse(await Deno.readTextFile(box.config)).servers;
  assert.equal(servers.github.env.GITHUB_PERSONAL_ACCESS_TOKEN, SECRETS[1]);
  // Host variables still become mcphub variables; a literal "$" stays literal.
  assert.equal(servers.userjot.headers.Authorization, "Bearer ${USERJOT_API_TOKEN}");
  assert.deepEqual(servers.notes_app.args, [`${box.project}/tools/notes.js`, "--cost=$5"]);
  assert.doesNotMatch(r.out, /Secrets were not copied/);
});

Deno.test("init --from --dry-run prints the resulting file and writes nothing", async () => {
  await using box = await hostSandbox();
  await installHost(box, "windsurf");
  const r = await box.run("init", "--no-describe", "--from", "windsurf", "--dry-run");
  assert.equal(r.code, 0, r.err);
  assert.ok(r.out.startsWith("# mcphub configuration, created by `mcphub init`."));
  assert.match(
    r.out,
    /^ {2}github:\n {4}url: https:\/\/api\.githubcopilot\.com\/mcp\/\n {4}headers:\n {6}Authorization: Bearer \$\{GITHUB_TOKEN\}$/m,
  );
  assert.match(r.out, /^dry run: 2 server\(s\) would be added to .*; nothing was written$/m);
  await assert.rejects(Deno.stat(box.config), Deno.errors.NotFound);
});

Deno.test("init --from merges identical servers, suffixes different ones, and is idempotent", async () => {
  await using box = await hostSandbox();
  await installHost(box, "claude-desktop");
  await installHost(box, "cursor");
  await installHost(box, "claude-code");
  await withConfig(
    box,
    'version: 1\n# my servers\nservers:\n  memory:\n    command: npx\n    args: [-y, "@modelcontextprotocol/server-memory"]\n',
  );
  const r = await box.run(
    "init",
    "--no-describe",
    "--from",
    "claude-desktop",
    "--from",
    "cursor",
    "--from",
    "claude-code",
  );
  assert.equal(r.code, 0, r.err);
  const servers = parse(await Deno.readTextFile(box.config)).servers;
  // The same name with a different token: suffixed with the host, its own variable.
  assert.equal(servers.github.env.GITHUB_PERSONAL_ACCESS_TOKEN, "${GITHUB_PERSONAL_ACCESS_TOKEN}");
  assert.equal(
    servers["github-cursor"].env.GITHUB_PERSONAL_ACCESS_TOKEN,
    "${GITHUB_GITHUB_PERSONAL_ACCESS_TOKEN}",
  );
  assert.match(
    r.out,
    /^ {2}added {4}github-cursor {2}from cursor .*: "github" is taken by a different server$/m,
  );
  // Identical to what the config already has: kept once.
  assert.match(
    r.out,
    /^ {2}kept {5}memory {2}from claude-code \(user, ~\/\.claude\.json\): already in the config, identical$/m,
  );
  assert.match(
    r.out,
    /^ {2}kept {5}memory {2}from claude-code \(project, .*\): already in the config, identical$/m,
  );
  assert.deepEqual(Object.keys(servers), [
    "memory",
    "filesystem",
    "github",
    "postgres-db",
    "github-cursor",
    "userjot",
    "notes_app",
    "sentry",
    "api-server",
  ]);
  assert.match(await Deno.readTextFile(box.config), /^# my servers$/m);
  const backups = await box.backups(join(box.home, ".config", "mcphub"));
  assert.equal(backups.length, 1);

  const again = await box.run(
    "init",
    "--from",
    "claude-desktop",
    "--from",
    "cursor",
    "--from",
    "claude-code",
  );
  assert.equal(again.code, 0, again.err);
  assert.match(again.out, /^nothing to add to /m);
  assert.doesNotMatch(again.out, /^ {2}added/m);
  assert.deepEqual(await box.backups(join(box.home, ".config", "mcphub")), backups);
});

Deno.test("init --from all imports every host config found; a path's format is detected", async () => {
  await using box = await hostSandbox();
  for (const host of Object.keys(PLACES)) await installHost(box, host);
  const r = await box.run("init", "--no-describe", "--from", "all");
  assert.equal(r.code, 0, r.err);
  assert.match(
    r.out,
    /^created \.config\/mcphub\/mcphub\.yaml|^created .*mcphub\.yaml: \d+ server\(s\) added$/m,
  );
  for (const host of Object.keys(PLACES)) assert.match(r.out, new RegExp(`^read: .*${host} \\(`, "m"));
  assertNoSecrets(await Deno.readTextFile(box.config), r.out);

  await using other = await hostSandbox();
  const toml = await other.install("codex_config.toml", "./some/where.toml");
  const jsonc = await other.install("vscode_mcp.jsonc", "./shared/servers.jsonc");
  const p = await other.run("init", "--no-describe", "--from", toml, "--from", jsonc, "--dry-run");
  assert.equal(p.code, 0, p.err);
  assert.match(p.out, /^ {2}figma:\n {4}url: https:\/\/mcp\.figma\.com\/mcp$/m);
  assert.match(p.out, /^ {2}perplexity:\n {4}command: npx$/m);
});

Deno.test("init --from skips an entry mcphub cannot take, saying why, and imports the rest", async () => {
  await using box = await hostSandbox();
  await box.install("cursor_mcp.json", "~/.cursor/mcp.json");
  const path = join(box.home, ".cursor", "mcp.json");
  const text = await Deno.readTextFile(path);
  await Deno.writeTextFile(
    path,
    text.replace('"mcpServers": {', '"mcpServers": {\n    "socket": { "url": "ws://127.0.0.1:9000/mcp" },'),
  );
  const r = await box.run("init", "--no-describe", "--from", "cursor");
  assert.equal(r.code, 0, r.err);
  assert.match(
    r.out,
    /^ {2}skipped {2}socket {2}from cursor \(user, ~\/\.cursor\/mcp\.json\): not valid in mcphub\.yaml: url: expected an http:\/\/ or https:\/\/ URL$/m,
  );
  assert.match(r.out, /: 3 server\(s\) added$/m);
});

Deno.test("init --from fails without writing when a source is missing, unknown or unreadable", async () => {
  await using box = await hostSandbox();
  let r = await box.run("init", "--no-describe", "--from", "cursor");
  assert.equal(r.code, 1);
  assert.equal(
    r.err,
    `error: no cursor config found (looked at ${box.home}/.cursor/mcp.json, ${box.project}/.cursor/mcp.json)\nnothing was written\n`,
  );
  r = await box.run("init", "--no-describe", "--from", "zed");
  assert.equal(r.code, 1);
  assert.match(
    r.err,
    /^error: "zed" is neither a host \(claude-desktop, claude-code, cursor, vscode, windsurf, codex, gemini, all\) nor a file that exists/,
  );
  await box.install("cursor_mcp.json", "~/.cursor/mcp.json");
  await Deno.writeTextFile(
    join(box.home, ".cursor", "mcp.json"),
    '{\n  "mcpServers": {\n    "a": { "command": "x" }\n    "b": {}\n  }\n}\n',
  );
  r = await box.run("init", "--no-describe", "--from", "cursor");
  assert.equal(r.code, 1);
  assert.equal(
    r.err,
    `error: cannot read ${box.home}/.cursor/mcp.json: line 4:5: expected "," or "}"\nnothing was written\n`,
  );
  await assert.rejects(Deno.stat(box.config), Deno.errors.NotFound);
  r = await box.run("init", "--dry-run");
  assert.equal(r.code, 2);
  assert.match(r.err, /^error: --dry-run, --keep-secrets and --no-describe go with --from SOURCE/);
});
