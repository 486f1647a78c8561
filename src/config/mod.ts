/**
 * mcphub.yaml: finding, loading, validating, `${VAR}` expansion and comment-preserving edits.
 *
 * `${VAR}` expands from the environment in `command`, `args`, `env` values, `cwd`, `url` and `headers`
 * values (not in descriptions or hints, which agents read). `$$` is a literal `$`, so `$${VAR}` is the
 * literal text `${VAR}`. An unset variable is an error naming it; values never appear in messages.
 * Variables of disabled servers, and of servers outside the `--agent`'s scope, are never read.
 *
 * @module
 */
export type { AgentConfig, Config, OAuthConfig, ServerConfig } from "./types.ts";
export { ConfigError, type ConfigProblem } from "./errors.ts";
export { agentServers, defaultConfig, type LoadOptions, parseConfig } from "./parse.ts";
export type { Environment } from "./interpolate.ts";
export { CONFIG_NAMES, defaultConfigPath, findConfigPath, userConfigDir } from "./lookup.ts";
export { loadConfig } from "./load.ts";
export { editConfig, type EditOptions, type EditResult, replaceFile } from "./edit.ts";
export { parseDuration, parseSize } from "./units.ts";
export { MIN_RESPONSE_BUDGET } from "./settings.ts";
export { isLoopback, type ListenAddress, parseListen, sha256Hex, tokenHash } from "./listen.ts";
export { MAX_HINT_BYTES, MAX_HINTS, MAX_NAME_LENGTH, NAME_PATTERN, RESERVED_SERVER_NAME } from "./rules.ts";
