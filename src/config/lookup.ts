/**
 * Where mcphub.yaml is: `--config`, `$MCPHUB_CONFIG`, the working directory, then the user config dir.
 *
 * @module
 */
import { isAbsolute, join, relative, resolve } from "node:path";
import { ConfigError } from "./errors.ts";
import type { LoadOptions } from "./read.ts";

/** File names looked for in each directory, in order. */
export const CONFIG_NAMES = ["mcphub.yaml", "mcphub.yml", "mcphub.json"] as const;

/** `$XDG_CONFIG_HOME/mcphub` (default `~/.config/mcphub`); undefined when neither is known. */
export function userConfigDir(options: LoadOptions): string | undefined {
  const xdg = options.env.get("XDG_CONFIG_HOME");
  if (xdg && isAbsolute(xdg)) return join(xdg, "mcphub");
  const home = options.home ?? options.env.get("HOME");
  return home ? join(home, ".config", "mcphub") : undefined;
}

/** Where `init` creates the config: `<user config dir>/mcphub.yaml`. */
export function defaultConfigPath(options: LoadOptions): string | undefined {
  const dir = userConfigDir(options);
  return dir === undefined ? undefined : join(dir, CONFIG_NAMES[0]);
}

function kind(path: string): "file" | "other" | "missing" {
  try {
    return Deno.statSync(path).isFile ? "file" : "other";
  } catch (error) {
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) return "missing";
    throw error;
  }
}

function required(path: string, options: LoadOptions, source: string): string {
  const absolute = resolve(options.cwd, path);
  const found = kind(absolute);
  if (found === "file") return absolute;
  const detail = found === "missing" ? "config file not found" : "config path is not a file";
  throw new ConfigError(path, { detail: `${detail} (${source}); check the path` });
}

/**
 * Finds the config file: `explicit` (`--config`), then `$MCPHUB_CONFIG`, then the first of
 * `mcphub.yaml`, `mcphub.yml`, `mcphub.json` in `cwd`, then the same in the user config dir.
 *
 * @param explicit the `--config` value
 * @returns an absolute path, or undefined when no file exists
 * @throws {ConfigError} when `explicit` or `$MCPHUB_CONFIG` names a file that does not exist
 */
export function findConfigPath(explicit: string | undefined, options: LoadOptions): string | undefined {
  if (explicit !== undefined) return required(explicit, options, "given with --config");
  const fromEnv = options.env.get("MCPHUB_CONFIG");
  if (fromEnv) return required(fromEnv, options, "set by MCPHUB_CONFIG");
  const dirs = [options.cwd, userConfigDir(options)].filter((dir) => dir !== undefined);
  for (const dir of dirs) {
    for (const name of CONFIG_NAMES) {
      const path = resolve(options.cwd, dir, name);
      if (kind(path) === "file") return path;
    }
  }
  return undefined;
}

/** The path to show in messages: as the user typed it, else relative to cwd when inside it. */
export function displayPath(found: string, explicit: string | undefined, options: LoadOptions): string {
  if (explicit !== undefined) return explicit;
  const fromEnv = options.env.get("MCPHUB_CONFIG");
  if (fromEnv) return fromEnv;
  const rel = relative(options.cwd, found);
  return rel && !rel.startsWith("..") && !isAbsolute(rel) ? rel : found;
}
