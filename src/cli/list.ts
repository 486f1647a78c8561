/**
 * `mcphub list`: every configured server, connected once to report its state.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { type Command, type CommandContext, parseCommandArgs } from "./command.ts";
import { loadContextConfig } from "./host.ts";
import { VERSION } from "./version.ts";
import { DEFAULT_RESTART_POLICY } from "../downstream/mod.ts";

/** A one-shot command connects once: no restarts. */
const ONE_SHOT = { ...DEFAULT_RESTART_POLICY, maxFailures: 0 };
import { Hub, type ServerStatus } from "../hub/mod.ts";
import { formatTable } from "./table.ts";
import { showConnectProgress } from "./progress.ts";
import { storePath } from "./host.ts";
import { loginCommandFor } from "./serve.ts";
import { openStore } from "../store/mod.ts";
import { authMigrations, AuthStore } from "../auth/mod.ts";

const HELP = `Usage: mcphub list [--json] [--config PATH]

Connects to every enabled server in mcphub.yaml (each bounded by connect_timeout)
and prints one row per server: SERVER STATE KIND TARGET TAGS DESCRIPTION.
A failed server's reason follows the table. --json prints the same as JSON.
`;

/** `list` / `ls`. */
export const listCommand: Command = {
  name: "list",
  aliases: ["ls"],
  summary: "List the configured servers and their state",
  help: HELP,
  async run(ctx: CommandContext): Promise<number> {
    const { values } = parseCommandArgs(
      "list",
      () => parseArgs({ args: ctx.args, options: { json: { type: "boolean" } }, strict: true }),
    );
    const json = values.json || ctx.global.json;
    const config = await loadContextConfig(ctx);
    // OAuth tokens of remote servers; without the store a 401 is an ordinary failure.
    let db: ReturnType<typeof openStore> | undefined;
    try {
      db = openStore(storePath(ctx), { migrations: authMigrations });
    } catch {
      db = undefined;
    }
    const hub = new Hub({
      config,
      env: ctx.env.toObject(),
      version: VERSION,
      restartPolicy: ONE_SHOT,
      authStore: db ? new AuthStore(db) : undefined,
      loginCommand: (server) => loginCommandFor(ctx, config.path, server),
      // Failures are shown in the table; the log would repeat them.
      log: () => {},
    });
    const progressDone = showConnectProgress(hub, ctx);
    try {
      await hub.start();
      progressDone();
      // A failed server's stderr tail (redacted) says why, in its own words.
      const tail = (name: string) =>
        hub.downstream(name)?.stderrTail().trim().split("\n").slice(-10).join("\n");
      const servers: (ServerStatus & { stderr_tail?: string })[] = hub.servers().map((s) =>
        s.error ? { ...s, stderr_tail: tail(s.name) || undefined } : s
      );
      if (json) {
        ctx.out(JSON.stringify({ config: config.path ?? null, servers }, null, 2) + "\n");
        return 0;
      }
      if (servers.length === 0) {
        ctx.out(
          `No servers configured${config.path ? ` in ${config.path}` : ""}. Add one with a servers: entry ` +
            "in mcphub.yaml (see README).\n",
        );
        return 0;
      }
      ctx.out(formatTable(
        ["SERVER", "STATE", "KIND", "TARGET", "TAGS", "DESCRIPTION"],
        servers.map((s) => [
          s.name,
          s.state === "connected" ? `connected (${s.tools} tools)` : s.state,
          s.kind,
          s.target,
          (s.tags ?? []).join(","),
          s.description ?? "",
        ]),
      ));
      const failed = servers.filter((s) => s.error);
      if (failed.length) {
        ctx.out("\n");
        for (const s of failed) {
          ctx.out(`${s.name}: ${s.error}\n`);
          if (s.stderr_tail) ctx.out(`  stderr:\n${s.stderr_tail.replace(/^/gm, "    ")}\n`);
        }
      }
      return 0;
    } finally {
      progressDone();
      await hub.close();
      db?.close();
    }
  },
};
