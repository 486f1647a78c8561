/**
 * The gateway's process edge: logging to stderr, and loading the config and
 * the store paths the same way for every command.
 *
 * @module
 */
import { type Config, loadConfig } from "../config/mod.ts";
import { defaultStorePath } from "../store/mod.ts";
import type { CommandContext } from "./command.ts";

/**
 * Loads the config the global flags and environment point at; says so on stderr when none exists. A
 * problem inside one server's entry (an unset `${VAR}`) fails that server only (its `loadError`).
 */
export async function loadContextConfig(ctx: CommandContext, agent?: string): Promise<Config> {
  const config = await loadConfig(ctx.global.config, {
    env: ctx.env,
    cwd: ctx.cwd,
    agent,
    serverErrors: "fail-server",
  });
  if (!config.path) {
    ctx.err(
      "mcphub: no mcphub.yaml found (looked at --config, $MCPHUB_CONFIG, ./mcphub.{yaml,yml,json} and " +
        "~/.config/mcphub/); running on the embedded default: no servers, expose: all\n",
    );
  }
  return config;
}

/** The store path: `--db`, else `$MCPHUB_DB`, else the default under the XDG data directory. */
export function storePath(ctx: CommandContext): string {
  return ctx.global.db ?? ctx.env.get("MCPHUB_DB") ?? defaultStorePath(ctx.env);
}

/** A logger that writes `mcphub: …` lines to stderr. */
export function stderrLogger(ctx: CommandContext): (line: string) => void {
  return (line) => ctx.err(`mcphub: ${line}\n`);
}
