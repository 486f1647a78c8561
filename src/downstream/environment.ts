/**
 * The environment a stdio server starts with: least privilege. Only the platform essentials of the
 * gateway's environment are inherited, plus what `inherit_env` (top level or per server) adds, then the
 * server's own `env`. A variable the config reads through `${VAR}` reaches only servers whose entry reads
 * it, even under `inherit_env: all`.
 *
 * @module
 */
import type { Config, ServerConfig } from "../config/mod.ts";

/** Variables every stdio server inherits (when the gateway has them): POSIX and Windows essentials. */
export const ESSENTIAL_ENV = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "TERM",
  "LANG",
  "TMPDIR",
  "TZ",
  // Windows
  "SYSTEMROOT",
  "SYSTEMDRIVE",
  "WINDIR",
  "COMSPEC",
  "PATHEXT",
  "USERPROFILE",
  "USERNAME",
  "USERDOMAIN",
  "HOMEDRIVE",
  "HOMEPATH",
  "APPDATA",
  "LOCALAPPDATA",
  "PROGRAMDATA",
  "PROGRAMFILES",
  "PROGRAMFILES(X86)",
  "COMMONPROGRAMFILES",
  "TEMP",
  "TMP",
  "NUMBER_OF_PROCESSORS",
  "PROCESSOR_ARCHITECTURE",
  "OS",
  // What package runners (npx, uvx, deno) need to fetch and cache a server: their cache directory, the
  // network's proxy and the certificate authorities it trusts.
  "DENO_DIR",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  "NODE_EXTRA_CA_CERTS",
] as const;

const ESSENTIAL = new Set<string>(ESSENTIAL_ENV);

/** True for a variable every stdio server inherits: the essentials, every `LC_*` and every `XDG_*` variable. */
export function isEssential(name: string): boolean {
  // Windows variable names are case-insensitive (Path, SystemRoot).
  return ESSENTIAL.has(name) || ESSENTIAL.has(name.toUpperCase()) || name.startsWith("LC_") ||
    name.startsWith("XDG_");
}

/** `inherit_env` in effect for a server: its own, else the top level's, else none. */
export function inheritFor(config: Config, server: ServerConfig): "all" | readonly string[] {
  return server.inheritEnv ?? config.inheritEnv ?? [];
}

/**
 * The inherited part of a stdio server's environment (its own `env` is merged over it by the
 * downstream): essentials, plus `inherit_env`, minus every variable the config reads through `${VAR}`
 * for another server and not for this one.
 */
export function serverEnvironment(
  gateway: Record<string, string>,
  config: Config,
  server: ServerConfig,
): Record<string, string> {
  const inherit = inheritFor(config, server);
  const widened = inherit === "all" ? undefined : new Set(inherit);
  const own = new Set(server.envVars ?? []);
  const others = new Set<string>();
  for (const s of config.servers) {
    if (s === server) continue;
    for (const name of s.envVars ?? []) if (!own.has(name)) others.add(name);
  }
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(gateway)) {
    if (isEssential(name)) out[name] = value;
    else if (!others.has(name) && (!widened || widened.has(name))) out[name] = value;
  }
  return out;
}
