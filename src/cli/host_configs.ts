/**
 * The MCP host configs mcphub can read and write: where each host keeps its servers (per OS and scope),
 * how to read them into one neutral shape, and whether an entry already points at mcphub.
 *
 * Formats, from each host's documentation:
 * - Claude Desktop: `claude_desktop_config.json`, `{"mcpServers": {NAME: {command, args, env}}}`, in
 *   `~/Library/Application Support/Claude/` (macOS), `%APPDATA%\Claude\` (Windows) and, for the Linux
 *   builds, `$XDG_CONFIG_HOME/Claude/` (modelcontextprotocol.io user quickstart). No variable expansion.
 * - Claude Code (code.claude.com/docs/en/mcp, "MCP installation scopes"): user scope in `~/.claude.json`
 *   `mcpServers`, local scope in `~/.claude.json` `projects[<project dir>].mcpServers`, project scope in
 *   `<project>/.mcp.json`; entries have `type` (`stdio`, `http`, `sse`), `command`/`args`/`env` or
 *   `url`/`headers`; `${VAR}` and `${VAR:-default}` expand in command, args, env, url and headers.
 * - Cursor (cursor.com/docs/mcp): `~/.cursor/mcp.json` and `<project>/.cursor/mcp.json`, `mcpServers` with
 *   `command`/`args`/`env`/`envFile` or `url`/`headers`; `${env:NAME}`, `${userHome}`, `${workspaceFolder}`.
 * - VS Code (code.visualstudio.com/docs/copilot/reference/mcp-configuration): `.vscode/mcp.json` and the
 *   user profile's `mcp.json` (JSONC), `{"servers": {NAME: {type, command, args, env, envFile} | {type:
 *   "http" | "sse", url, headers}}, "inputs": [{id, type: "promptString", password}]}`; `${input:ID}`,
 *   `${env:NAME}`, `${workspaceFolder}`, `${userHome}`.
 * - Windsurf (docs.windsurf.com/windsurf/cascade/mcp): `~/.codeium/windsurf/mcp_config.json`, `mcpServers`
 *   with `command`/`args`/`env` or `serverUrl` (or `url`)/`headers`, `disabled`; `${env:NAME}`.
 * - Codex (developers.openai.com/codex/mcp; codex-rs/config/src/mcp_types.rs): `$CODEX_HOME/config.toml`
 *   (default `~/.codex/`) and `<project>/.codex/config.toml`, `[mcp_servers.NAME]` with `command`, `args`,
 *   `env`, `cwd`, or `url` with `bearer_token_env_var`, `http_headers`, `env_http_headers`; `enabled`.
 * - Gemini CLI (geminicli.com/docs/tools/mcp-server): `~/.gemini/settings.json` and
 *   `<project>/.gemini/settings.json`, `mcpServers` with `command`/`args`/`env`/`cwd`, `httpUrl`
 *   (Streamable HTTP) or `url` (SSE), `headers`; `$VAR` and `${VAR}` expand.
 *
 * @module
 */
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { findNode, JsoncError, nodeValue, parseJsonc } from "./jsonc.ts";
import { parseToml, TomlError } from "./toml.ts";

/** Hosts known by name. */
export const HOSTS = [
  "claude-desktop",
  "claude-code",
  "cursor",
  "vscode",
  "windsurf",
  "codex",
  "gemini",
] as const;

/** A host known by name. */
export type HostName = typeof HOSTS[number];

/** How a file lays out its servers. */
export type HostFormat = "mcpServers" | "vscode" | "codex";

/** One place where a host keeps servers. */
export interface HostLocation {
  /** The host, or `"file"` for a path given by the user. */
  host: HostName | "file";
  /** `user` (all projects), `project` (a file in the project), `local` (Claude Code: yours, this project). */
  scope: "user" | "project" | "local";
  /** Absolute. */
  path: string;
  format: HostFormat;
  /** Object keys to the servers mapping (`["mcpServers"]`, `["servers"]`, `["mcp_servers"]`, …). */
  serversPath: string[];
  /** The project directory, for `${workspaceFolder}`. */
  project?: string;
}

/** Where a command finds host files: the user's directories, the OS and the project. */
export interface HostEnvironment {
  home: string;
  cwd: string;
  os: typeof Deno.build.os;
  env: { get(key: string): string | undefined };
}

/** A server read from a host file, its values already in mcphub's `${VAR}` syntax. */
export interface HostServer {
  /** The name in the host file. */
  name: string;
  location: HostLocation;
  enabled: boolean;
  command?: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  url?: string;
  transport?: "http" | "sse";
  headers: Record<string, string>;
  /** Variables the values refer to (host `${env:X}`, `${input:Y}`, …, now `${X}`). */
  variables: string[];
  /** Each variable's reference as the host wrote it (`X` -> `${env:X}`, `Y` -> `${input:y}`). */
  references: Record<string, string>;
  /** What could not be carried over (envFile, OAuth, a variable default, …). */
  notes: string[];
}

/** A host file that exists, with its servers (or why they could not be read). */
export interface HostFile {
  location: HostLocation;
  servers: HostServer[];
  error?: string;
}

function userDataDir(env: HostEnvironment): string {
  if (env.os === "darwin") return join(env.home, "Library", "Application Support");
  if (env.os === "windows") return env.env.get("APPDATA") ?? join(env.home, "AppData", "Roaming");
  return env.env.get("XDG_CONFIG_HOME") || join(env.home, ".config");
}

/** Every place `host` may keep servers, user scope first. */
export function hostLocations(host: HostName, env: HostEnvironment): HostLocation[] {
  const { home, cwd } = env;
  const at = (scope: HostLocation["scope"], path: string, format: HostFormat, serversPath: string[]) => ({
    host,
    scope,
    path,
    format,
    serversPath,
    // A user-scope file's ${workspaceFolder} means the project it is used in: the one we run in.
    project: cwd,
  });
  switch (host) {
    case "claude-desktop":
      return [
        at("user", join(userDataDir(env), "Claude", "claude_desktop_config.json"), "mcpServers", [
          "mcpServers",
        ]),
      ];
    case "claude-code":
      return [
        at("user", join(home, ".claude.json"), "mcpServers", ["mcpServers"]),
        at("local", join(home, ".claude.json"), "mcpServers", ["projects", cwd, "mcpServers"]),
        at("project", join(cwd, ".mcp.json"), "mcpServers", ["mcpServers"]),
      ];
    case "cursor":
      return [
        at("user", join(home, ".cursor", "mcp.json"), "mcpServers", ["mcpServers"]),
        at("project", join(cwd, ".cursor", "mcp.json"), "mcpServers", ["mcpServers"]),
      ];
    case "vscode":
      return [
        at("user", join(userDataDir(env), "Code", "User", "mcp.json"), "vscode", ["servers"]),
        at("project", join(cwd, ".vscode", "mcp.json"), "vscode", ["servers"]),
      ];
    case "windsurf":
      return [
        at("user", join(home, ".codeium", "windsurf", "mcp_config.json"), "mcpServers", ["mcpServers"]),
      ];
    case "codex":
      return [
        at("user", join(env.env.get("CODEX_HOME") || join(home, ".codex"), "config.toml"), "codex", [
          "mcp_servers",
        ]),
        at("project", join(cwd, ".codex", "config.toml"), "codex", ["mcp_servers"]),
      ];
    case "gemini":
      return [
        at("user", join(home, ".gemini", "settings.json"), "mcpServers", ["mcpServers"]),
        at("project", join(cwd, ".gemini", "settings.json"), "mcpServers", ["mcpServers"]),
      ];
  }
}

/** Reads a host file's text, or undefined when it does not exist. */
export async function readHostText(path: string): Promise<string | undefined> {
  try {
    return await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) return undefined;
    throw error;
  }
}

/** Parses a host file into plain data; errors name the file, line and column. */
export function parseHostText(text: string, format: HostFormat, path: string): Record<string, unknown> {
  try {
    if (format === "codex") return parseToml(text).data;
    const value = nodeValue(parseJsonc(text));
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      throw new TypeError("the top level is not an object");
    }
    return value as Record<string, unknown>;
  } catch (error) {
    if (error instanceof JsoncError) throw new SyntaxError(`${path}:${error.message}`, { cause: error });
    if (error instanceof TomlError) throw new SyntaxError(`${path}: ${error.message}`, { cause: error });
    throw new SyntaxError(`${path}: ${(error as Error).message}`, { cause: error });
  }
}

/** Detects a file's format from its content: TOML `[mcp_servers…]`, VS Code `servers`, else `mcpServers`. */
export function detectLocation(path: string, text: string, cwd: string): HostLocation {
  const base = { host: "file" as const, scope: "project" as const, path, project: dirname(dirname(path)) };
  if (path.endsWith(".toml") || /^\s*\[mcp_servers[.\]]/m.test(text)) {
    return { ...base, format: "codex", serversPath: ["mcp_servers"] };
  }
  let data: Record<string, unknown> = {};
  try {
    data = parseHostText(text, "mcpServers", path);
  } catch {
    // reported when the file is read for real
  }
  const isObject = (v: unknown) => typeof v === "object" && v !== null && !Array.isArray(v);
  if (!isObject(data.mcpServers) && isObject(data.servers)) {
    return { ...base, format: "vscode", serversPath: ["servers"] };
  }
  if (!isObject(data.mcpServers) && isObject(data.mcp_servers)) {
    return { ...base, format: "codex", serversPath: ["mcp_servers"] };
  }
  // ~/.claude.json: the user scope; the project's local scope is read as well by readLocations.
  const projects = data.projects as Record<string, unknown> | undefined;
  if (
    isObject(projects) && isObject((projects as Record<string, Record<string, unknown>>)[cwd]?.mcpServers)
  ) {
    return { ...base, host: "file", scope: "user", format: "mcpServers", serversPath: ["mcpServers"] };
  }
  return { ...base, format: "mcpServers", serversPath: ["mcpServers"] };
}

/** Which `${…}` forms a host expands in its values. */
interface Dialect {
  /** `${env:NAME}` (VS Code, Cursor, Windsurf). */
  envColon: boolean;
  /** `${NAME}` (Claude Code, Gemini; `${NAME:-default}` in Claude Code). */
  braces: boolean;
  /** `$NAME` (Gemini). */
  bare: boolean;
  /** `${input:ID}` (VS Code). */
  input: boolean;
}

function dialectOf(location: HostLocation): Dialect {
  const none = { envColon: false, braces: false, bare: false, input: false };
  switch (location.host) {
    case "claude-desktop":
    case "codex":
      return none;
    case "claude-code":
      return { ...none, braces: true };
    case "gemini":
      return { ...none, braces: true, bare: true };
    case "vscode":
      return { ...none, envColon: true, input: true };
    case "cursor":
    case "windsurf":
      return { ...none, envColon: true };
    case "file":
      // A file of unknown origin: every form a host uses means a variable there.
      return { envColon: true, braces: true, bare: false, input: location.format === "vscode" };
  }
}

/** An environment variable name for a VS Code input id or another free-form name. */
export function variableName(text: string): string {
  const name = text.replace(/[^A-Za-z0-9]+/g, "_").replace(/^_+|_+$/g, "").toUpperCase();
  return /^[0-9]/.test(name) || name === "" ? `V_${name}` : name;
}

/** Escapes `$` where mcphub would read it as the start of a reference. */
export function escapeLiteral(text: string): string {
  return text.replace(/\$(?=[${])/g, "$$$$");
}

interface Converted {
  value: string;
  variables: string[];
  notes: string[];
  references: Record<string, string>;
}

/** Rewrites a host value's variable references as mcphub `${NAME}` references; the rest stays literal. */
function convertValue(text: string, dialect: Dialect, location: HostLocation, home: string): Converted {
  const variables: string[] = [];
  const notes: string[] = [];
  const references: Record<string, string> = {};
  const pattern = /\$\{([^}]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g;
  let value = "";
  let last = 0;
  for (const match of text.matchAll(pattern)) {
    const [whole, inner, bare] = match;
    let replacement: string | undefined;
    if (bare !== undefined) {
      if (dialect.bare) replacement = `\${${bare}}`, variables.push(bare);
    } else if (inner !== undefined) {
      const colon = /^(env|input):(.+)$/.exec(inner);
      if (colon && colon[1] === "env" && dialect.envColon) {
        replacement = `\${${colon[2]}}`;
        variables.push(colon[2]!);
      } else if (colon && colon[1] === "input" && dialect.input) {
        const name = variableName(colon[2]!);
        replacement = `\${${name}}`;
        variables.push(name);
        notes.push(`\${input:${colon[2]}} became \${${name}}`);
      } else if (inner === "workspaceFolder" && location.project && (dialect.envColon || dialect.input)) {
        replacement = escapeLiteral(location.project);
        if (location.scope === "user") notes.push(`\${workspaceFolder} became ${location.project}`);
      } else if (inner === "userHome" && (dialect.envColon || dialect.input)) {
        replacement = escapeLiteral(home);
      } else if (dialect.braces) {
        const m = /^([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?$/.exec(inner);
        if (m) {
          replacement = `\${${m[1]}}`;
          variables.push(m[1]!);
          if (m[2] !== undefined) notes.push(`the default of \${${inner}} was dropped: set ${m[1]}`);
        }
      }
    }
    if (replacement === undefined) continue;
    const name = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$/.exec(replacement)?.[1];
    if (name !== undefined) references[name] = whole;
    value += escapeLiteral(text.slice(last, match.index)) + replacement;
    last = match.index! + whole.length;
  }
  value += escapeLiteral(text.slice(last));
  return { value, variables, notes, references };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.map(String) : [];
}

function stringMap(value: unknown): Record<string, string> {
  if (!isRecord(value)) return {};
  const out: Record<string, string> = {};
  for (const [key, v] of Object.entries(value)) if (v !== null && v !== undefined) out[key] = String(v);
  return out;
}

/** Reads one server entry of a host file into the neutral shape. */
function readEntry(
  name: string,
  entry: Record<string, unknown>,
  location: HostLocation,
  home: string,
): HostServer {
  const dialect = dialectOf(location);
  const server: HostServer = {
    name,
    location,
    enabled: entry.disabled !== true && entry.enabled !== false,
    args: [],
    env: {},
    headers: {},
    variables: [],
    references: {},
    notes: [],
  };
  const convert = (text: string) => {
    const result = convertValue(text, dialect, location, home);
    server.variables.push(...result.variables);
    server.notes.push(...result.notes);
    Object.assign(server.references, result.references);
    return result.value;
  };
  const type = typeof entry.type === "string"
    ? entry.type
    : typeof entry.transport === "string"
    ? entry.transport
    : undefined;
  const httpUrl = typeof entry.httpUrl === "string" ? entry.httpUrl : undefined;
  const url = httpUrl ??
    (typeof entry.url === "string"
      ? entry.url
      : typeof entry.serverUrl === "string"
      ? entry.serverUrl
      : undefined);
  if (typeof entry.command === "string") {
    server.command = convert(entry.command);
    server.args = strings(entry.args).map(convert);
    for (const [key, value] of Object.entries(stringMap(entry.env))) server.env[key] = convert(value);
    if (typeof entry.cwd === "string") {
      server.cwd = convert(entry.cwd);
      // The host resolves a relative cwd against the project it runs in; mcphub would use its own.
      if (!isAbsolute(server.cwd) && !/^[~$]/.test(server.cwd) && location.project) {
        server.notes.push(`cwd ${server.cwd} is now ${resolve(location.project, server.cwd)}`);
        server.cwd = escapeLiteral(resolve(location.project, server.cwd));
      }
    }
    if (entry.envFile !== undefined) {
      server.notes.push(`envFile ${entry.envFile} is not read: put its variables in env`);
    }
  } else if (url !== undefined) {
    server.url = convert(url);
    // Gemini: `url` is SSE and `httpUrl` Streamable HTTP; elsewhere `type`/`transport` says so.
    if (type === "sse" || (location.host === "gemini" && httpUrl === undefined)) server.transport = "sse";
    for (const [key, value] of Object.entries(stringMap(entry.headers))) server.headers[key] = convert(value);
    // Codex: http_headers are literal, env_http_headers and bearer_token_env_var name variables.
    for (const [key, value] of Object.entries(stringMap(entry.http_headers))) {
      server.headers[key] = escapeLiteral(value);
    }
    for (const [key, value] of Object.entries(stringMap(entry.env_http_headers))) {
      server.headers[key] = `\${${value}}`;
      server.variables.push(value);
    }
    if (typeof entry.bearer_token_env_var === "string") {
      server.headers.Authorization = `Bearer \${${entry.bearer_token_env_var}}`;
      server.variables.push(entry.bearer_token_env_var);
    }
    if (entry.oauth !== undefined || entry.auth !== undefined) {
      server.notes.push("OAuth settings are not carried over: mcphub sends the headers you configure");
    }
  } else {
    server.notes.push('neither "command" nor a URL: not imported');
  }
  server.variables = [...new Set(server.variables)];
  return server;
}

/** Reads the servers of one location from the file's parsed data. */
export function readServers(
  data: Record<string, unknown>,
  location: HostLocation,
  home: string,
): HostServer[] {
  let node: unknown = data;
  for (const key of location.serversPath) node = isRecord(node) ? node[key] : undefined;
  if (!isRecord(node)) return [];
  return Object.entries(node).flatMap(([name, entry]) =>
    isRecord(entry) ? [readEntry(name, entry, location, home)] : []
  );
}

/** Reads every location of a host (or a path) that exists. */
export async function readLocations(locations: readonly HostLocation[], home: string): Promise<HostFile[]> {
  const files: HostFile[] = [];
  const texts = new Map<string, string | undefined>();
  for (const location of locations) {
    if (!texts.has(location.path)) texts.set(location.path, await readHostText(location.path));
    const text = texts.get(location.path);
    if (text === undefined) continue;
    try {
      const data = parseHostText(text, location.format, location.path);
      let node: unknown = data;
      for (const key of location.serversPath) node = isRecord(node) ? node[key] : undefined;
      // ~/.claude.json always exists once Claude Code ran; a scope without servers is not a config.
      if (location.serversPath.length > 1 && node === undefined) continue;
      files.push({ location, servers: readServers(data, location, home) });
    } catch (error) {
      files.push({ location, servers: [], error: (error as Error).message });
    }
  }
  return files;
}

/** The locations a `--from` source names: a host, or a file path (its format detected). */
export async function sourceLocations(source: string, env: HostEnvironment): Promise<HostLocation[]> {
  if ((HOSTS as readonly string[]).includes(source)) return hostLocations(source as HostName, env);
  const path = resolve(env.cwd, source.startsWith("~/") ? join(env.home, source.slice(2)) : source);
  const text = await readHostText(path);
  if (text === undefined) {
    throw new RangeError(
      `"${source}" is neither a host (${HOSTS.join(", ")}, all) nor a file that exists (${path})`,
    );
  }
  const location = detectLocation(path, text, env.cwd);
  if (location.scope === "user" && location.format === "mcpServers") {
    // A ~/.claude.json given by path: its user scope and this project's local scope.
    return [location, {
      ...location,
      scope: "local",
      serversPath: ["projects", env.cwd, "mcpServers"],
      project: env.cwd,
    }];
  }
  return [location];
}

/**
 * True when a host entry starts mcphub itself: a program named mcphub, or `… mcp serve` from an entry
 * named mcphub or with mcphub in its arguments (`deno run … /path/to/mcphub/main.ts mcp serve`).
 */
export function pointsAtMcphub(server: Pick<HostServer, "name" | "command" | "args">): boolean {
  if (!server.command) return false;
  const program = basename(server.command.replaceAll("\\", "/")).toLowerCase();
  if (/^mcphub(?:-[a-z0-9_-]+)?(?:\.exe)?$/.test(program)) return true;
  const serve = server.args.some((arg, i) => arg === "mcp" && server.args[i + 1] === "serve");
  return serve && (server.name.toLowerCase() === "mcphub" || server.args.some((arg) => /mcphub/i.test(arg)));
}

/** A short label for a location: `claude-code (user, ~/.claude.json)`. */
export function locationLabel(location: HostLocation, home: string): string {
  const shown = location.path.startsWith(home + "/")
    ? `~/${location.path.slice(home.length + 1)}`
    : location.path;
  return location.host === "file" ? shown : `${location.host} (${location.scope}, ${shown})`;
}

/** Parses a host file's servers node (for edits): the object keys found in its servers mapping. */
export function serverKeys(text: string, location: HostLocation): string[] {
  if (location.format === "codex") {
    const servers = parseToml(text).data.mcp_servers;
    return isRecord(servers) ? Object.keys(servers) : [];
  }
  const node = findNode(parseJsonc(text), location.serversPath);
  return node?.kind === "object" ? node.props.map((prop) => prop.key) : [];
}
