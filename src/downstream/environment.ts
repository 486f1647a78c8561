/**
 * The environment a stdio server starts with: least privilege. Only the platform essentials of the
 * gateway's environment are inherited, plus what `inherit_env` (top level or per server) adds, then the
 * server's own `env`. A variable the config reads through `${VAR}` reaches only servers whose entry reads
 * it, even under `inherit_env: all`; the gateway's own secrets ({@linkcode gatewayPrivateVars}) are never
 * inherited at all.
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

const VAR = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/**
 * Variables only the gateway reads, inherited by no server under any `inherit_env`: those of
 * `agents.*.token`, `store:` and OAuth `client_secret`s, `$MCPHUB_DB` and `$MCPHUB_TOKEN` (the store
 * and `mcp connect`'s token), and with a PostgreSQL store the variables its client reads a password from.
 */
export function gatewayPrivateVars(gateway: Record<string, string>, config: Config): Set<string> {
  const names = new Set<string>(["MCPHUB_DB", "MCPHUB_TOKEN"]);
  for (const agent of config.agents) {
    for (const match of (agent.token ?? "").matchAll(VAR)) names.add(match[1]);
  }
  for (const name of config.storeVars ?? []) names.add(name);
  for (const server of config.servers) for (const name of server.privateVars ?? []) names.add(name);
  const postgres = /^postgres(?:ql)?:\/\//i;
  if (postgres.test(config.store ?? "") || postgres.test(gateway.MCPHUB_DB ?? "")) {
    for (const name of ["PGPASSWORD", "PGPASSFILE"]) {
      names.add(name);
    }
  }
  return names;
}

/**
 * The inherited part of a stdio server's environment (its own `env` is merged over it by the
 * downstream): essentials, plus `inherit_env`, minus every variable the config reads through `${VAR}`
 * for another server and not for this one, minus the gateway's own secrets.
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
  const private_ = gatewayPrivateVars(gateway, config);
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(gateway)) {
    if (private_.has(name)) continue;
    if (isEssential(name)) out[name] = value;
    else if (!others.has(name) && (!widened || widened.has(name))) out[name] = value;
  }
  return out;
}
