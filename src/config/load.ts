/**
 * Loading mcphub.yaml from disk.
 *
 * @module
 */
import type { Config } from "./types.ts";
import { ConfigError } from "./errors.ts";
import { displayPath, findConfigPath } from "./lookup.ts";
import { defaultConfig, type LoadOptions, parseConfig, unknownAgent } from "./parse.ts";

/**
 * Finds ({@linkcode findConfigPath}), reads and validates the config. With no file found, returns
 * {@linkcode defaultConfig} (the caller tells the user).
 *
 * @param explicit the `--config` value
 * @throws {ConfigError} when the file is missing (explicit or `$MCPHUB_CONFIG`), unreadable or invalid,
 * or `options.agent` is not defined
 */
export async function loadConfig(explicit: string | undefined, options: LoadOptions): Promise<Config> {
  const path = findConfigPath(explicit, options);
  if (path === undefined) {
    if (options.agent !== undefined) {
      throw new ConfigError("", { detail: `${unknownAgent(options.agent, [])} (no config file was found)` });
    }
    return defaultConfig();
  }
  const file = displayPath(path, explicit, options);
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    throw new ConfigError(file, { detail: `cannot read the config file: ${(error as Error).message}` }, {
      cause: error,
    });
  }
  return parseConfig(text, file, options);
}
