/**
 * The config API without the `yaml` package: finding and loading mcphub.yaml, listen addresses, agent
 * scope, units, limits and the types. `mcp serve` loads this before it answers the host's `initialize`
 * (start-up time); `mod.ts` is all of it plus parsing text you hold and comment-preserving edits, which
 * load `yaml`. A file outside the block-YAML subset (see `block_yaml.ts`) loads `yaml` when it is read.
 *
 * @module
 */
export type { AgentConfig, AgentQuota, Config, ListenLimits, OAuthConfig, ServerConfig } from "./types.ts";
export { ConfigError, type ConfigProblem } from "./errors.ts";
export { agentServers, defaultConfig, type LoadOptions } from "./read.ts";
export type { Environment } from "./interpolate.ts";
export { CONFIG_NAMES, defaultConfigPath, findConfigPath, userConfigDir } from "./lookup.ts";
export { loadConfig } from "./load.ts";
export { parseDuration, parseSize } from "./units.ts";
export { MIN_RESPONSE_BUDGET } from "./settings.ts";
export { isLoopback, type ListenAddress, parseListen, secretHash, sha256Hex, tokenHash } from "./listen.ts";
export { MAX_HINT_BYTES, MAX_HINTS, MAX_NAME_LENGTH, NAME_PATTERN, RESERVED_SERVER_NAME } from "./rules.ts";
