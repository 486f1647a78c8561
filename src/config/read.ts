/**
 * Reading a parsed mcphub.yaml into a {@linkcode Config}, whichever reader parsed the text: the strict
 * block-YAML reader (`block_yaml.ts`, no `yaml` package) or `yaml` itself (`parse.ts`). A config is taken
 * from the block reader only when it has no problem at all; any problem, and any text outside that reader's
 * subset, is read again by `yaml`, so every message (file, line, column) is `yaml`'s reading.
 *
 * @module
 */
import { resolve } from "node:path";
import type { AgentConfig, Config } from "./types.ts";
import { ConfigError, type ConfigProblem, formatProblem } from "./errors.ts";
import type { Environment } from "./interpolate.ts";
import { describe, type LinePositions, type ParsedDocument, Reader } from "./reader.ts";
import { readAgent } from "./agent.ts";
import { type PendingServer, readServer } from "./server.ts";
import { readInheritEnv, readPins } from "./rules.ts";
import { readExposeBudget, readResponseBudget, readTimeout } from "./settings.ts";
import {
  defaultAgentQuota,
  defaultListenLimits,
  readAllowedHosts,
  readListen,
  readListenLimits,
  readQuota,
  readToken,
} from "./listen.ts";
import { readStore } from "./store.ts";
import { isScalar } from "./yaml_nodes.ts";
import { linePositions, readBlockYaml } from "./block_yaml.ts";

/** Where and how a config is loaded. */
export interface LoadOptions {
  /** Environment for `${VAR}` expansion and for the lookup variables (`MCPHUB_CONFIG`, `XDG_CONFIG_HOME`). */
  env: Environment;
  /** Working directory: relative paths and the first lookup location. */
  cwd: string;
  /** Home directory for `~` and `~/.config`. @default env HOME */
  home?: string;
  /**
   * The agent being served. It must be defined; servers outside its `servers` keep their `${VAR}`s as
   * written and their variables are never read.
   */
  agent?: string;
  /**
   * What a problem inside one server's entry (an unset `${VAR}`, a bad value) does: fail the whole load
   * (`"fail-load"`, for validation and edits), or fail only that server (`"fail-server"`, for commands that
   * connect: the server gets `loadError` and the others are served). Structural problems always fail the
   * load. @default "fail-load"
   */
  serverErrors?: "fail-load" | "fail-server";
}

const TOP_KEYS = [
  "version",
  "expose",
  "expose_budget",
  "pin",
  "response_budget",
  "verbatim",
  "connect_timeout",
  "call_timeout",
  "startup_wait",
  "record",
  "code_mode",
  "listen",
  "allowed_hosts",
  "session_idle",
  "metrics_token",
  "listen_limits",
  "agent_quota",
  "servers",
  "agents",
  "inherit_env",
  "store",
] as const;

/** The embedded default: no servers, expose all, every setting at its default, no path. */
export function defaultConfig(): Config {
  return {
    version: 1,
    expose: "all",
    pin: [],
    responseBudget: 32 * 1024,
    verbatim: false,
    connectTimeoutMs: 30_000,
    callTimeoutMs: 30 * 60_000,
    startupWaitMs: 5_000,
    record: true,
    codeMode: false,
    allowedHosts: [],
    sessionIdleMs: 30 * 60_000,
    listenLimits: defaultListenLimits(),
    agentQuota: defaultAgentQuota(),
    servers: [],
    agents: [],
  };
}

/** The `unknown agent` problem, listing the agents that exist. */
export function unknownAgent(name: string, agents: readonly AgentConfig[]): string {
  const defined = agents.length
    ? `defined agents: ${agents.map((agent) => agent.name).join(", ")}`
    : "no agents are defined";
  return `unknown agent "${name}"; ${defined}`;
}

/**
 * Reads config text with the block-YAML reader alone: the {@linkcode Config}, or undefined when the text is
 * outside its subset or has any problem (then `parse.ts` reads it with `yaml`, which reports them).
 */
export function readConfigFast(
  text: string,
  file: string,
  options: LoadOptions,
  { expand }: { expand: boolean },
): Config | undefined {
  const doc = readBlockYaml(text);
  if (!doc) return undefined;
  const reader = new Reader(doc, linePositions(text));
  const config = readConfig(reader, options, expand);
  if (reader.problems.length > 0) return undefined;
  config.path = resolve(options.cwd, file);
  return config;
}

/**
 * Reads a parsed document: the {@linkcode Config}, with `loadError` on each server that has a problem of its
 * own when `options.serverErrors` is `"fail-server"`.
 *
 * @throws {ConfigError} listing every other problem, one per line
 */
export function readParsedConfig(
  doc: ParsedDocument,
  lines: LinePositions,
  file: string,
  options: LoadOptions & { expand: boolean },
): Config {
  const reader = new Reader(doc, lines);
  const config = readConfig(reader, options, options.expand);
  config.path = resolve(options.cwd, file);
  let problems = reader.problems;
  if (options.serverErrors === "fail-server" && problems.length > 0) {
    // A problem inside one server's entry fails that server only; the rest of the config is served.
    const rest: ConfigProblem[] = [];
    const byServer = new Map<string, ConfigProblem[]>();
    for (const problem of problems) {
      const server = config.servers.find((s) => ownsProblem(s.name, problem.keyPath));
      if (!server) rest.push(problem);
      else byServer.set(server.name, [...byServer.get(server.name) ?? [], problem]);
    }
    for (const server of config.servers) {
      const own = byServer.get(server.name);
      if (own) server.loadError = sortProblems(own).map((problem) => formatProblem(file, problem)).join("; ");
    }
    problems = rest;
  }
  if (problems.length > 0) throw new ConfigError(file, sortProblems(problems));
  return config;
}

/** Reads a parsed document's settings into a {@linkcode Config}; problems are collected in `reader`. */
function readConfig(reader: Reader, options: LoadOptions, expand: boolean): Config {
  const config = defaultConfig();
  const root = reader.root();
  const entries = reader.entries(root, "a mapping of settings at the top level", {
    known: TOP_KEYS,
    allowNull: true,
  }) ?? [];
  const keys = new Map(entries.map((entry) => [entry.path, entry]));

  const version = keys.get("version");
  if (version) {
    const value = isScalar(version.node) ? version.node.value : undefined;
    if (value !== 1) {
      reader.fail(
        version,
        typeof value === "number"
          ? `unsupported version ${value}; this mcphub reads version 1`
          : `expected 1, got ${describe(version.node)}`,
      );
    }
  }
  const expose = keys.get("expose");
  if (expose) config.expose = reader.oneOf(expose, ["all", "lazy", "auto"] as const) ?? config.expose;
  const exposeBudget = keys.get("expose_budget");
  if (exposeBudget) config.exposeBudgetTokens = readExposeBudget(reader, exposeBudget);
  for (
    const [key, apply] of [
      ["verbatim", (value: boolean) => config.verbatim = value],
      ["record", (value: boolean) => config.record = value],
      ["code_mode", (value: boolean) => config.codeMode = value],
    ] as const
  ) {
    const field = keys.get(key);
    const value = field && reader.boolean(field);
    if (value !== undefined) apply(value);
  }
  const budget = keys.get("response_budget");
  if (budget) config.responseBudget = readResponseBudget(reader, budget) ?? config.responseBudget;
  const connect = keys.get("connect_timeout");
  if (connect) config.connectTimeoutMs = readTimeout(reader, connect) ?? config.connectTimeoutMs;
  const call = keys.get("call_timeout");
  if (call) config.callTimeoutMs = readTimeout(reader, call) ?? config.callTimeoutMs;
  const startup = keys.get("startup_wait");
  if (startup) {
    config.startupWaitMs = readTimeout(reader, startup, { allowZero: true }) ?? config.startupWaitMs;
  }

  const inherit = keys.get("inherit_env");
  if (inherit) config.inheritEnv = readInheritEnv(reader, inherit);
  const listen = keys.get("listen");
  if (listen) config.listen = readListen(reader, listen);
  const store = keys.get("store");
  if (store) {
    config.store = readStore(reader, store, expand ? options.env : undefined);
    const raw = isScalar(store.node) ? store.node.value : undefined;
    const vars = typeof raw === "string"
      ? [...raw.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((m) => m[1])
      : [];
    if (vars.length) config.storeVars = vars;
  }
  const hosts = keys.get("allowed_hosts");
  if (hosts) config.allowedHosts = readAllowedHosts(reader, hosts) ?? [];
  const metricsToken = keys.get("metrics_token");
  if (metricsToken) config.metricsToken = readToken(reader, metricsToken);
  const idle = keys.get("session_idle");
  if (idle) config.sessionIdleMs = readTimeout(reader, idle) ?? config.sessionIdleMs;
  const limits = keys.get("listen_limits");
  if (limits) config.listenLimits = readListenLimits(reader, limits);
  const quota = keys.get("agent_quota");
  if (quota) config.agentQuota = { ...config.agentQuota, ...readQuota(reader, quota) };

  const pending: PendingServer[] = [];
  const serversField = keys.get("servers");
  if (serversField) {
    for (
      const entry
        of reader.entries(serversField, "a mapping of server names to settings", { allowNull: true }) ?? []
    ) {
      pending.push(readServer(reader, entry, entry.path.slice("servers.".length)));
    }
  }
  config.servers = pending.map((server) => server.config);
  const names = config.servers.map((server) => server.name);

  const agentsField = keys.get("agents");
  if (agentsField) {
    for (
      const entry
        of reader.entries(agentsField, "a mapping of agent names to settings", { allowNull: true }) ?? []
    ) {
      config.agents.push(readAgent(reader, entry, entry.path.slice("agents.".length), names));
    }
  }

  const pin = keys.get("pin");
  if (pin) config.pin = readPins(reader, pin, names) ?? [];

  let scope: readonly string[] | undefined = names;
  if (options.agent !== undefined) {
    const agent = config.agents.find((candidate) => candidate.name === options.agent);
    if (agent) scope = agentServers(agent, names);
    else {
      reader.report(
        agentsField?.key,
        agentsField ? "agents" : undefined,
        unknownAgent(options.agent, config.agents),
      );
      scope = [];
    }
  }
  const home = options.home ?? options.env.get("HOME");
  for (const server of pending) {
    // Disabled and out-of-scope servers never start, so their variables (often secrets) are not read.
    const inScope = expand && server.config.enabled && scope.includes(server.config.name);
    server.finish(reader, inScope ? options.env : undefined, home);
  }
  return config;
}

/**
 * The servers an agent can reach: its `servers`, narrowed by `tools` to the servers those tools belong
 * to (so an agent scoped by tools alone neither starts nor reads the variables of any other server).
 */
export function agentServers(agent: AgentConfig, names: readonly string[]): readonly string[] {
  let scope = agent.servers ?? names;
  if (agent.tools) {
    const owners = new Set(agent.tools.map((t) => t.slice(0, t.indexOf("__"))));
    scope = scope.filter((name) => owners.has(name));
  }
  return scope;
}

/** True when a problem's key path lies inside `servers.<name>`. */
function ownsProblem(name: string, keyPath: string | undefined): boolean {
  if (keyPath === undefined) return false;
  const prefix = `servers.${name}`;
  return keyPath === prefix || keyPath.startsWith(`${prefix}.`) || keyPath.startsWith(`${prefix}[`);
}

function sortProblems(problems: ConfigProblem[]): ConfigProblem[] {
  return problems
    .map((problem, index) => ({ problem, index }))
    .sort((a, b) =>
      (a.problem.line ?? 0) - (b.problem.line ?? 0) ||
      (a.problem.column ?? 0) - (b.problem.column ?? 0) ||
      a.index - b.index
    )
    .map(({ problem }) => problem);
}
