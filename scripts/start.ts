/**
 * `deno task start`: runs the gateway (`mcp serve`) under exactly the Deno
 * permissions derived from its config (what `mcphub permissions` prints), not -A.
 *
 *   deno run -A scripts/start.ts [--config PATH] [--db PATH] [--agent NAME]
 *
 * Defaults: --config examples/mcphub.yaml, --db $MCPHUB_DB or the default store.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { loadConfig } from "../src/config/mod.ts";
import { defaultStorePath } from "../src/store/mod.ts";
import { derivePermissions, whichCommand } from "../src/cli/permissions.ts";

const root = fileURLToPath(new URL("../", import.meta.url));
const { values } = parseArgs({
  args: Deno.args,
  options: { config: { type: "string" }, db: { type: "string" }, agent: { type: "string" } },
});
const cwd = Deno.cwd();
const configPath = resolve(cwd, values.config ?? `${root}examples/mcphub.yaml`);
const db = resolve(cwd, values.db ?? Deno.env.get("MCPHUB_DB") ?? defaultStorePath(Deno.env));
const env = Deno.env.toObject();
let derived: ReturnType<typeof derivePermissions>;
try {
  const config = await loadConfig(configPath, { env: Deno.env, cwd, agent: values.agent });
  derived = derivePermissions(config, {
    storePath: db,
    agent: values.agent,
    cwd,
    which: (command, searchPath) => whichCommand(command, { ...env, PATH: searchPath ?? env.PATH }),
  });
} catch (error) {
  // The CLI's style (`error: …`, exit 1), not an uncaught exception's stack.
  console.error(`error: ${(error as Error).message}`);
  Deno.exit(1);
}
const { flags, notes } = derived;
for (const note of notes) console.error(`mcphub: note: ${note}`);
console.error(`mcphub: running the gateway with ${flags.join(" ")}`);
const args = [
  "run",
  "--no-prompt",
  ...flags,
  `${root}main.ts`,
  "--config",
  configPath,
  "--db",
  db,
  "mcp",
  "serve",
  ...(values.agent ? ["--agent", values.agent] : []),
];
// A person ran this (stdin is a terminal): say how a host would start the same gateway. stderr only:
// stdout is the protocol.
if (Deno.stdin.isTerminal()) {
  const snippet = { mcpServers: { mcphub: { command: Deno.execPath(), args } } };
  console.error(
    "mcphub: from this checkout (nothing to install), an MCP host starts this same gateway with:\n" +
      JSON.stringify(snippet, null, 2),
  );
}
const child = new Deno.Command(Deno.execPath(), {
  args,
  stdin: "inherit",
  stdout: "inherit",
  stderr: "inherit",
}).spawn();
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  if (Deno.build.os === "windows" && sig === "SIGTERM") continue;
  Deno.addSignalListener(sig, () => child.kill(sig));
}
const status = await child.status;
Deno.exit(status.code);
