import assert from "node:assert/strict";
import { join } from "node:path";
import { type HostSandbox, hostSandbox, installHost } from "./_host_sandbox.ts";
import { nodeValue, parseJsonc } from "../../src/cli/jsonc.ts";
import { parseToml } from "../../src/cli/toml.ts";

/** A sandbox whose PATH has an `mcphub` program, so the host entry is `<its absolute path> mcp serve`. */
async function withMcphubOnPath(): Promise<HostSandbox> {
  const box = await hostSandbox();
  const bin = join(box.home, "bin");
  await Deno.mkdir(bin);
  await Deno.writeTextFile(join(bin, "mcphub"), "#!/bin/sh\nexit 0\n", { mode: 0o755 });
  box.env.set("PATH", `${bin}:${box.env.get("PATH")}`);
  return box;
}

async function importInto(box: HostSandbox, host: string): Promise<void> {
  const r = await box.run("init", "--no-describe", "--from", host);
  assert.equal(r.code, 0, r.err);
}

Deno.test("hosts lists the host configs found, their servers and whether they start mcphub", async () => {
  await using box = await withMcphubOnPath();
  await installHost(box, "claude-desktop");
  await installHost(box, "vscode");
  const r = await box.run("hosts", "--json");
  assert.equal(r.code, 0, r.err);
  assert.deepEqual(JSON.parse(r.out), {
    hosts: [
      {
        host: "claude-desktop",
        scope: "user",
        path: join(box.home, ".config/Claude/claude_desktop_config.json"),
        servers: ["filesystem", "github", "postgres db", "mcphub"],
        mcphub: ["mcphub"],
      },
      {
        host: "vscode",
        scope: "project",
        path: join(box.project, ".vscode/mcp.json"),
        servers: ["perplexity", "github", "legacy"],
        mcphub: [],
      },
    ],
  });
  const table = await box.run("hosts");
  assert.match(table.out, /^HOST {12}SCOPE {4}MCPHUB {8}SERVERS {2}FILE$/m);
  assert.match(table.out, /^vscode +project +no +3 +~\/project\/\.vscode\/mcp\.json$/m);
  assert.match(table.out, /^next: mcphub init --from vscode, then mcphub hosts use vscode$/m);
});

Deno.test("hosts use claude-desktop --move: entry written, imported servers removed, .bak kept, idempotent", async () => {
  await using box = await withMcphubOnPath();
  const [file] = await installHost(box, "claude-desktop");
  const original = await Deno.readTextFile(file!);
  // Without mcphub already in it, so the entry is added.
  const withoutHub = original.replace(/,\n {4}"mcphub": \{[^\n]*\}/, "");
  await Deno.writeTextFile(file!, withoutHub);
  await importInto(box, "claude-desktop");
  const r = await box.run("hosts", "use", "claude-desktop", "--move");
  assert.equal(r.code, 0, r.err);
  const dir = join(box.home, ".config", "Claude");
  const backups = await box.backups(dir);
  assert.equal(backups.length, 1);
  assert.equal(await Deno.readTextFile(join(dir, backups[0]!)), withoutHub);
  const text = await Deno.readTextFile(file!);
  // The secrets mcphub.yaml reads for the removed servers are in the entry: the .bak is not their only copy.
  assert.equal(
    text,
    `{
  "mcpServers": {
    "mcphub": {
      "command": "${box.home}/bin/mcphub",
      "args": ["mcp", "serve"],
      "env": {
        "GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_0123456789abcdefghijABCDEFGHIJ012345",
        "POSTGRES_DB_PASSWORD": "hunter2-secret"
      }
    }
  },
  "globalShortcut": "Ctrl+Space"
}
`,
  );
  assert.match(
    r.out,
    /^ {2}env: GITHUB_PERSONAL_ACCESS_TOKEN \(github\), POSTGRES_DB_PASSWORD \(postgres db\) set for mcphub, from this file's own values$/m,
  );
  assert.doesNotMatch(r.out, /ghp_|hunter2/);
  assert.match(
    r.out,
    /^claude-desktop \(user, ~\/\.config\/Claude\/claude_desktop_config\.json\): mcphub entry written$/m,
  );
  assert.match(r.out, /^ {2}removed postgres db \(mcphub\.yaml has it as "postgres-db"\)$/m);
  assert.match(r.out, /^backup: .*claude_desktop_config\.json\.\d{8}-\d{6}\.bak$/m);

  const again = await box.run("hosts", "use", "claude-desktop", "--move");
  assert.equal(again.code, 0, again.err);
  assert.match(again.out, /already points at mcphub\nnothing changed\n$/);
  assert.equal(await Deno.readTextFile(file!), text);
  assert.deepEqual(await box.backups(dir), backups);

  const list = JSON.parse((await box.run("hosts", "--json")).out);
  assert.deepEqual(list.hosts[0].mcphub, ["mcphub"]);
});

Deno.test("hosts use keeps servers mcphub.yaml does not have, and passes --config and --agent", async () => {
  await using box = await withMcphubOnPath();
  const [file] = await installHost(box, "cursor");
  const config = join(box.project, "mcphub.yaml");
  await Deno.writeTextFile(
    config,
    'version: 1\nservers:\n  gh:\n    command: npx\n    args: [-y, "@modelcontextprotocol/server-github"]\nagents:\n  coder: {}\n',
  );
  const r = await box.run("--config", "mcphub.yaml", "hosts", "use", "cursor", "--move", "--agent", "coder");
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /^ {2}removed github \(mcphub\.yaml has it as "gh"\)$/m);
  assert.match(r.out, /^ {2}kept userjot: not in mcphub\.yaml \(mcphub init --from cursor imports it\)$/m);
  const servers = nodeValue(parseJsonc(await Deno.readTextFile(file!))) as {
    mcpServers: Record<string, unknown>;
  };
  assert.deepEqual(Object.keys(servers.mcpServers), ["userjot", "notes_app", "mcphub"]);
  assert.deepEqual(servers.mcpServers.mcphub, {
    command: join(box.home, "bin", "mcphub"),
    args: ["--config", config, "mcp", "serve", "--agent", "coder"],
  });
});

Deno.test("hosts use vscode --project keeps JSONC comments and trailing commas; the entry has type stdio", async () => {
  await using box = await withMcphubOnPath();
  const [file] = await installHost(box, "vscode");
  // VS Code also accepts trailing commas: they stay.
  const fixture = await Deno.readTextFile(file!);
  await Deno.writeTextFile(file!, fixture.replace('"k-123456" } }\n  }\n}', '"k-123456" } },\n  },\n}'));
  await importInto(box, "vscode");
  const r = await box.run("hosts", "use", "vscode", "--project", "--move");
  assert.equal(r.code, 0, r.err);
  const text = await Deno.readTextFile(file!);
  assert.equal(
    text,
    `// VS Code MCP servers for this workspace
{
  "inputs": [
    { "type": "promptString", "id": "perplexity-key", "description": "Perplexity API Key", "password": true }
  ],
  "servers": {
    "mcphub": {
      "type": "stdio",
      "command": "${box.home}/bin/mcphub",
      "args": ["mcp", "serve"],
      "env": {
        "PERPLEXITY_KEY": "\${input:perplexity-key}",
        "LEGACY_X_API_KEY": "k-123456"
      }
    },
  },
}
`,
  );
  assert.equal((await box.backups(join(box.project, ".vscode"))).length, 1);
});

Deno.test("hosts use codex: TOML table appended with comments kept; --move removes tables and subtables", async () => {
  await using box = await withMcphubOnPath();
  const [file] = await installHost(box, "codex");
  await importInto(box, "codex");
  const r = await box.run("hosts", "use", "codex", "--move");
  assert.equal(r.code, 0, r.err);
  const text = await Deno.readTextFile(file!);
  assert.equal(
    text,
    `# Codex configuration
model = "gpt-5"

[profiles.fast]
model = "gpt-5-mini"

[mcp_servers.mcphub]
command = "${box.home}/bin/mcphub"
args = ["mcp", "serve"]
env = { API_KEY = "sk-proj-abcdefghijklmnop1234" }
`,
  );
  assert.deepEqual(parseToml(text).data.mcp_servers, {
    mcphub: {
      command: join(box.home, "bin", "mcphub"),
      args: ["mcp", "serve"],
      env: { API_KEY: "sk-proj-abcdefghijklmnop1234" },
    },
  });
  const again = await box.run("hosts", "use", "codex");
  assert.match(again.out, /nothing changed\n$/);
});

Deno.test("hosts use refuses a host that is not installed and an unknown name, writing nothing", async () => {
  await using box = await withMcphubOnPath();
  let r = await box.run("hosts", "use", "windsurf");
  assert.equal(r.code, 1);
  assert.equal(
    r.err,
    `error: windsurf does not seem to be installed: ${box.home}/.codeium/windsurf does not exist; install it first, or give the config file's path\n`,
  );
  r = await box.run("hosts", "use", "claude-desktop", "--project");
  assert.equal(r.code, 2);
  assert.match(r.err, /^error: claude-desktop has no project-level config; use it without --project/);
  r = await box.run("hosts", "use");
  assert.equal(r.code, 2);
  // A path works for any host: format detected, the file created when missing is not allowed.
  const path = await box.install("gemini_settings.json", "./gemini.json");
  r = await box.run("hosts", "use", path, "--dry-run");
  assert.equal(r.code, 0, r.err);
  assert.match(
    r.out,
    /"mcphub": \{\n {6}"command": "[^"]+\/bin\/mcphub",\n {6}"args": \["mcp", "serve"\]\n {4}\}\n {2}\}\n\}\n/,
  );
  assert.match(r.out, /dry run: nothing was written\n$/);
});

Deno.test("hosts use --no-secrets --move keeps and names the servers whose secrets would be stranded", async () => {
  await using box = await withMcphubOnPath();
  const [file] = await installHost(box, "claude-desktop");
  await importInto(box, "claude-desktop");
  const r = await box.run("hosts", "use", "claude-desktop", "--move", "--no-secrets");
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /^ {2}removed filesystem \(mcphub\.yaml has it as "filesystem"\)$/m);
  assert.match(
    r.out,
    /^ {2}kept github: its secret GITHUB_PERSONAL_ACCESS_TOKEN \(--no-secrets\) would be left only in the \.bak; set it in the mcphub entry's env \(or run without --no-secrets\), then --move again$/m,
  );
  assert.match(
    r.out,
    /^ {2}kept postgres db: its secret POSTGRES_DB_PASSWORD \(--no-secrets\) would be left/m,
  );
  const servers = (nodeValue(parseJsonc(await Deno.readTextFile(file!))) as {
    mcpServers: Record<string, { env?: Record<string, string> }>;
  }).mcpServers;
  assert.deepEqual(Object.keys(servers), ["github", "postgres db", "mcphub"]);
  assert.equal(servers.mcphub!.env, undefined);
  assert.equal(servers.github!.env!.GITHUB_PERSONAL_ACCESS_TOKEN, "ghp_0123456789abcdefghijABCDEFGHIJ012345");
  // Once the entry has the value (set by hand, or by hosts use without --no-secrets), --move removes it.
  const again = await box.run("hosts", "use", "claude-desktop", "--move");
  assert.match(again.out, /^ {2}removed github /m);
  assert.deepEqual(
    Object.keys((nodeValue(parseJsonc(await Deno.readTextFile(file!))) as { mcpServers: object }).mcpServers),
    ["mcphub"],
  );
});

Deno.test("hosts use writes absolute paths: a deno install shim becomes this deno with its arguments", async (t) => {
  await t.step("a deno install shim that runs a bare deno", async () => {
    await using box = await hostSandbox();
    const bin = join(box.home, "bin");
    await Deno.mkdir(bin);
    await Deno.writeTextFile(
      join(bin, "mcphub"),
      "#!/bin/sh\n# generated by deno install\nexec deno run --allow-run --no-prompt --config " +
        `${bin}/.mcphub/deno.json 'file:///src/mcphub/main.ts' "$@"\n`,
      { mode: 0o755 },
    );
    box.env.set("PATH", `${bin}:/usr/bin:/bin`);
    const r = await box.run("hosts", "use", join(box.project, "hosts.json"), "--dry-run");
    assert.equal(r.code, 2, "a missing file is not a host");
    await Deno.writeTextFile(join(box.project, "hosts.json"), "{}\n");
    const dry = await box.run("hosts", "use", "hosts.json", "--dry-run");
    assert.equal(dry.code, 0, dry.err);
    const entry = (JSON.parse(dry.out.slice(0, dry.out.lastIndexOf("}") + 1)) as {
      mcpServers: { mcphub: { command: string; args: string[] } };
    }).mcpServers.mcphub;
    assert.deepEqual(entry, {
      command: Deno.execPath(),
      args: [
        "run",
        "--allow-run",
        "--no-prompt",
        "--config",
        `${bin}/.mcphub/deno.json`,
        "file:///src/mcphub/main.ts",
        "mcp",
        "serve",
      ],
    });
  });
  await t.step("from source: this deno, run -A and the checkout's main.ts", async () => {
    await using box = await hostSandbox({ PATH: "/usr/bin:/bin" });
    await Deno.writeTextFile(join(box.project, "hosts.json"), "{}\n");
    const dry = await box.run("hosts", "use", "hosts.json", "--dry-run");
    assert.equal(dry.code, 0, dry.err);
    const entry = JSON.parse(dry.out.slice(0, dry.out.lastIndexOf("}") + 1)).mcpServers.mcphub;
    assert.deepEqual(entry, {
      command: Deno.execPath(),
      args: ["run", "-A", new URL("../../main.ts", import.meta.url).pathname, "mcp", "serve"],
    });
    assert.ok(entry.command.startsWith("/"));
  });
});
