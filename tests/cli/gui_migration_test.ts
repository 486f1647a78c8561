/**
 * "Done when" of the newcomer's migration: a Claude Desktop config with a server that needs a secret goes
 * through `init --from claude-desktop` and `hosts use claude-desktop --move`, and the host's mcphub entry,
 * started exactly as a desktop host starts it (`env -i`: nothing but the entry's own env, HOME and a minimal
 * PATH), serves that server's tool.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { hostSandbox } from "./_host_sandbox.ts";
import { DENO, ROOT } from "../helpers.ts";
import { nodeValue, parseJsonc } from "../../src/cli/jsonc.ts";

const SECRET_SERVER = `${ROOT}tests/fixtures/secret_server.ts`;
const TOKEN = "vlt_5f3a9c1e7b2d4068aa91WXYZ";
const GUI_PATH = "/usr/bin:/bin";

interface Entry {
  command: string;
  args: string[];
  env?: Record<string, string>;
}

/** Starts `entry` the way a desktop host does, with `env -i`, and calls `vault__whoami` with the SDK. */
async function callAsGui(entry: Entry, home: string): Promise<{ tools: string[]; text?: string }> {
  const vars = { ...entry.env, HOME: home, PATH: GUI_PATH };
  const transport = new StdioClientTransport({
    command: "/usr/bin/env",
    args: ["-i", ...Object.entries(vars).map(([k, v]) => `${k}=${v}`), entry.command, ...entry.args],
    cwd: "/",
    stderr: "pipe",
  });
  const client = new Client({ name: "claude-desktop-as-a-test", version: "1.0.0" });
  await client.connect(transport);
  try {
    const tools = (await client.listTools()).tools.map((t) => t.name);
    if (!tools.includes("vault__whoami")) return { tools };
    const result = await client.callTool({ name: "vault__whoami", arguments: {} });
    return { tools, text: (result.content as { type: string; text: string }[])[0]!.text };
  } finally {
    await client.close();
  }
}

Deno.test("a Claude Desktop server that needs a secret keeps working after init --from and hosts use --move", async () => {
  await using box = await hostSandbox();
  // The desktop's HOME has the Deno cache (mcphub runs from source here): link the test's own.
  await Deno.mkdir(join(box.home, ".cache"), { recursive: true });
  await Deno.symlink(box.env.get("DENO_DIR")!, join(box.home, ".cache", "deno"));
  const file = join(box.home, ".config", "Claude", "claude_desktop_config.json");
  await Deno.mkdir(join(box.home, ".config", "Claude"), { recursive: true });
  await Deno.writeTextFile(
    file,
    JSON.stringify(
      {
        mcpServers: {
          vault: {
            command: DENO,
            args: ["run", "--allow-env", SECRET_SERVER],
            env: { VAULT_API_TOKEN: TOKEN },
          },
        },
      },
      null,
      2,
    ) + "\n",
  );
  const init = await box.run("init", "--from", "claude-desktop");
  assert.equal(init.code, 0, init.err);
  assert.match(await Deno.readTextFile(box.config), /VAULT_API_TOKEN: \$\{VAULT_API_TOKEN\}/);
  assert.doesNotMatch(await Deno.readTextFile(box.config), /vlt_/);
  // Asked with the host's own values, the server described itself (its initialize title), marked as derived.
  assert.match(
    await Deno.readTextFile(box.config),
    /^ {4}description: Vault secrets store # derived from the server's initialize result; edit to replace$/m,
  );
  assert.match(init.out, /^ {11}note: description \(from the server\): Vault secrets store$/m);

  const db = join(box.home, "store.db");
  const use = await box.run("--db", db, "hosts", "use", "claude-desktop", "--move");
  assert.equal(use.code, 0, use.err);
  assert.match(use.out, /^ {2}removed vault \(mcphub\.yaml has it as "vault"\)$/m);
  const servers = (nodeValue(parseJsonc(await Deno.readTextFile(file))) as {
    mcpServers: Record<string, Entry>;
  }).mcpServers;
  assert.deepEqual(Object.keys(servers), ["mcphub"]);
  const entry = servers.mcphub!;
  assert.ok(entry.command.startsWith("/"), entry.command);
  assert.deepEqual(entry.env, { VAULT_API_TOKEN: TOKEN });

  const doctor = await box.run("--db", db, "doctor");
  assert.doesNotMatch(doctor.out, /BROKEN {2}"mcphub"/, doctor.out);

  const gui = await callAsGui(entry, box.home);
  assert.equal(gui.text, "authenticated as …WXYZ");

  // The control: the same entry without its env is what the migration used to write; the server is gone.
  const bare = await callAsGui({ command: entry.command, args: entry.args }, box.home);
  assert.equal(bare.text, undefined);
  assert.ok(
    bare.tools.includes("list_servers") && !bare.tools.includes("vault__whoami"),
    bare.tools.join(","),
  );
});
