/**
 * Loading mcphub.yaml from disk.
 *
 * @module
 */
import type { Config } from "./types.ts";
import { ConfigError } from "./errors.ts";
import { displayPath, findConfigPath } from "./lookup.ts";
import { defaultConfig, type LoadOptions, readConfigFast, unknownAgent } from "./read.ts";

/**
 * Finds ({@linkcode findConfigPath}), reads and validates the config. With no file found, returns
 * {@linkcode defaultConfig} (the caller tells the user). A file in the block-YAML subset with no problem is
 * read without the `yaml` package (start-up time: `mcp serve` answers `initialize` sooner); any other is
 * read by `parse.ts`, loaded then, which reports every problem.
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
  const fast = readConfigFast(text, file, options, { expand: true });
  if (fast) return fast;
  const { parseConfig } = await import("./parse.ts");
  return parseConfig(text, file, options);
}
