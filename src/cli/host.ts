/**
 * The gateway's process edge: logging to stderr, and loading the config and
 * the store paths the same way for every command.
 *
 * @module
 */
import { type Config, loadConfig } from "../config/light.ts";
import { defaultStorePath, isPostgresUrl } from "../store/mod.ts";
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

/**
 * Where the store is: `--db`, else `$MCPHUB_DB`, else the config's `store:`, else the default file under
 * the XDG data directory. A SQLite file path or a `postgres://` URL.
 */
export function storeLocation(ctx: CommandContext, config?: Config): string {
  return ctx.global.db ?? ctx.env.get("MCPHUB_DB") ?? config?.store ?? defaultStorePath(ctx.env);
}

/**
 * {@linkcode storeLocation} for a command that does not otherwise load the config: reads `store:` from
 * the config file when neither `--db` nor `$MCPHUB_DB` is set (quietly; a broken config is ignored here,
 * other commands report it).
 */
export async function storeLocationOf(ctx: CommandContext): Promise<string> {
  if (ctx.global.db ?? ctx.env.get("MCPHUB_DB")) return storeLocation(ctx);
  try {
    const config = await loadConfig(ctx.global.config, {
      env: ctx.env,
      cwd: ctx.cwd,
      serverErrors: "fail-server",
    });
    return storeLocation(ctx, config);
  } catch {
    return storeLocation(ctx);
  }
}

/**
 * The local store file (OAuth tokens of remote servers, and everything when the store is a file):
 * {@linkcode storeLocation}, or the default file when that is a PostgreSQL URL — tokens stay on the machine.
 */
export function storePath(ctx: CommandContext, config?: Config): string {
  const location = storeLocation(ctx, config);
  return isPostgresUrl(location) ? defaultStorePath(ctx.env) : location;
}

/** A logger that writes `mcphub: …` lines to stderr. */
export function stderrLogger(ctx: CommandContext): (line: string) => void {
  return (line) => ctx.err(`mcphub: ${line}\n`);
}
