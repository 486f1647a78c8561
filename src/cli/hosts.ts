/**
 * `mcphub hosts`: the MCP host configs found and whether each points at mcphub; `mcphub hosts use HOST`
 * writes the mcphub entry into a host's config (atomic, `.bak`, comments kept) and, with `--move`,
 * removes the servers mcphub.yaml already has so the host does not run them twice.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { basename, dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseDocument } from "yaml";
import { type Command, type CommandContext, parseCommandArgs, UsageError } from "./command.ts";
import { defaultConfigPath, findConfigPath, replaceFile } from "../config/mod.ts";
import { loadOptions } from "./config_commands.ts";
import {
  detectLocation,
  type HostEnvironment,
  type HostFile,
  type HostLocation,
  hostLocations,
  type HostName,
  HOSTS,
  type HostServer,
  locationLabel,
  parseHostText,
  pointsAtMcphub,
  readHostText,
  readLocations,
  readServers,
} from "./host_configs.ts";
import { findNode, nodeValue, parseJsonc, removeProperty, setProperty } from "./jsonc.ts";
import { parseToml, tomlValue } from "./toml.ts";
import { whichCommand } from "./permissions.ts";
import { hostEnvironment } from "./import.ts";
import { formatTable } from "./table.ts";

/** The entry a host needs to start mcphub. */
export interface McphubEntry {
  command: string;
  args: string[];
  /** Variables the host sets for mcphub: the values of the secrets mcphub.yaml reads. */
  env?: Record<string, string>;
}

/**
 * The program and arguments of a `deno install` shim that runs a bare `deno` (`exec deno run … 'file:///…'
 * "$@"`), which a host started without the shell's PATH cannot find; undefined for anything else.
 */
export function shimArgs(path: string): string[] | undefined {
  let text: string;
  try {
    if (Deno.statSync(path).size > 4096) return undefined;
    text = Deno.readTextFileSync(path);
  } catch {
    return undefined;
  }
  const line = /^exec deno (.+) "\$@"\s*$/m.exec(text);
  if (!text.startsWith("#!") || !line) return undefined;
  const words: string[] = [];
  for (const m of line[1]!.matchAll(/'([^']*)'|(\S+)/g)) words.push(m[1] ?? m[2]!);
  return words;
}

/**
 * How a host should start this mcphub, by absolute paths (a host started from a GUI has a PATH of
 * `/usr/bin:/bin` at most): this binary when compiled; else the `mcphub` on PATH (a `deno install` shim
 * that runs a bare `deno` becomes this deno with the shim's arguments); else, from source, this deno with
 * `run -A <main.ts>`. With `--config` (and `--db`) when the config is not where mcphub looks by default,
 * because hosts start servers from a directory of their own.
 */
export function mcphubEntry(ctx: CommandContext, agent?: string): McphubEntry {
  const env = ctx.env.toObject();
  const exec = Deno.execPath();
  let command = exec;
  const prefix: string[] = [];
  if (!/^mcphub/i.test(basename(exec))) {
    const installed = whichCommand("mcphub", env);
    const shim = installed === undefined ? undefined : shimArgs(installed);
    if (shim !== undefined) prefix.push(...shim);
    else if (installed !== undefined) command = resolve(ctx.cwd, installed);
    else prefix.push("run", "-A", fileURLToPath(new URL("../../main.ts", import.meta.url)));
  }
  const args = [...prefix];
  const load = loadOptions(ctx);
  const config = findConfigPath(ctx.global.config, load);
  if (config !== undefined && config !== defaultConfigPath(load)) args.push("--config", config);
  if (ctx.global.db !== undefined) args.push("--db", resolve(ctx.cwd, ctx.global.db));
  args.push("mcp", "serve");
  if (agent !== undefined) args.push("--agent", agent);
  return { command, args };
}

// ---- listing ----

interface HostReport {
  host: string;
  scope: string;
  path: string;
  servers: string[];
  /** Names of the entries that start mcphub. */
  mcphub: string[];
  error?: string;
}

/** Every host config that exists, with its servers and which of them start mcphub. */
export async function scanHosts(env: HostEnvironment): Promise<HostReport[]> {
  const reports: HostReport[] = [];
  for (const host of HOSTS) {
    for (const file of await readLocations(hostLocations(host, env), env.home)) reports.push(toReport(file));
  }
  return reports;
}

function toReport(file: HostFile): HostReport {
  return {
    host: file.location.host,
    scope: file.location.scope,
    path: file.location.path,
    servers: file.servers.map((s) => s.name),
    mcphub: file.servers.filter(pointsAtMcphub).map((s) => s.name),
    ...(file.error ? { error: file.error } : {}),
  };
}

// ---- editing ----

function isPlainEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** The host file's text with `mcphub` set to `entry` (unchanged text when it already is). */
function withEntry(text: string, location: HostLocation, entry: Record<string, unknown>): string {
  if (location.format === "codex") return withTomlEntry(text, entry as unknown as McphubEntry);
  const path = [...location.serversPath, "mcphub"];
  const current = text.trim() ? findNode(parseJsonc(text), path) : undefined;
  if (current && isPlainEqual(nodeValue(current), entry)) return text;
  return setProperty(text, path, entry);
}

/** Lines of a TOML table without the comments and blank lines that lead into the next table. */
function tableLines(lines: readonly string[], header: number, end: number): [number, number] {
  let stop = end;
  while (stop - 1 > header && /^\s*(#.*)?$/.test(lines[stop - 1]!)) stop--;
  return [header, stop];
}

function withTomlEntry(text: string, entry: McphubEntry): string {
  const { data, tables } = parseToml(text);
  const servers = (data.mcp_servers ?? {}) as Record<string, Record<string, unknown>>;
  const current = servers.mcphub;
  if (
    current && current.command === entry.command && isPlainEqual(current.args ?? [], entry.args) &&
    isPlainEqual(current.env ?? {}, entry.env ?? {})
  ) {
    return text;
  }
  const block = [
    "[mcp_servers.mcphub]",
    `command = ${tomlValue(entry.command)}`,
    `args = ${tomlValue(entry.args)}`,
  ];
  if (entry.env && Object.keys(entry.env).length) {
    const key = (k: string) => /^[A-Za-z0-9_-]+$/.test(k) ? k : JSON.stringify(k);
    block.push(
      `env = { ${Object.entries(entry.env).map(([k, v]) => `${key(k)} = ${tomlValue(v)}`).join(", ")} }`,
    );
  }
  const own = tables.filter((t) => t.path[0] === "mcp_servers" && t.path[1] === "mcphub");
  if (current && !own.length) {
    throw new TypeError(
      "Cannot edit: mcp_servers.mcphub is not written as a [mcp_servers.mcphub] table; edit it by hand",
    );
  }
  const lines = text.split("\n");
  if (own.length) {
    const [start, end] = tableLines(lines, own[0]!.headerLine, own[0]!.endLine);
    const rest = removeTables(lines, own.slice(1));
    return [...rest.slice(0, start), ...block, ...rest.slice(end)].join("\n");
  }
  const trimmed = text.replace(/\s*$/, "");
  return `${trimmed}${trimmed ? "\n\n" : ""}${block.join("\n")}\n`;
}

/** Removes tables (later ones first, so earlier line numbers stay right). */
function removeTables(
  lines: readonly string[],
  tables: readonly { headerLine: number; endLine: number }[],
): string[] {
  const out = [...lines];
  for (const table of [...tables].sort((a, b) => b.headerLine - a.headerLine)) {
    let [start, end] = tableLines(out, table.headerLine, table.endLine);
    // The comments just above a header are the table's, and so is one blank line that set it apart.
    while (start > 0 && /^\s*#/.test(out[start - 1]!)) start--;
    if (start > 0 && /^\s*$/.test(out[start - 1]!)) start--;
    out.splice(start, end - start);
  }
  return out;
}

function withoutServer(text: string, location: HostLocation, name: string): string | undefined {
  if (location.format !== "codex") return removeProperty(text, [...location.serversPath, name]);
  const { tables } = parseToml(text);
  const own = tables.filter((t) => t.path[0] === "mcp_servers" && t.path[1] === name);
  if (!own.length) return undefined;
  return removeTables(text.split("\n"), own).join("\n");
}

/** The servers of mcphub.yaml as written (no `${VAR}` expansion), to tell which host entries it has. */
async function configServers(ctx: CommandContext): Promise<Record<string, Record<string, unknown>>> {
  const path = findConfigPath(ctx.global.config, loadOptions(ctx));
  if (path === undefined) return {};
  const json = parseDocument(await Deno.readTextFile(path)).toJSON() as {
    servers?: Record<string, Record<string, unknown>>;
  } | null;
  return json?.servers ?? {};
}

/** Whether mcphub.yaml has this host server: same command and arguments, or same URL. */
function imported(server: HostServer, config: Record<string, Record<string, unknown>>): string | undefined {
  for (const [name, entry] of Object.entries(config)) {
    if (!entry || typeof entry !== "object") continue;
    const args = Array.isArray(entry.args) ? entry.args.map(String) : [];
    if (
      server.command !== undefined && entry.command === server.command &&
      args.length === server.args.length &&
      args.every((arg, i) => valueMatches(arg, server.args[i]!))
    ) {
      return name;
    }
    if (server.url !== undefined && typeof entry.url === "string" && sameUrl(entry.url, server.url)) {
      return name;
    }
  }
  return undefined;
}

/** Whether a config value matches a host value; a `${VAR}` in the config stands for any text (a secret). */
function valueMatches(config: string, host: string): boolean {
  if (config === host) return true;
  const parts = config.split(/\$\{[A-Za-z_][A-Za-z0-9_]*\}/).map((part) =>
    part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
  );
  return parts.length > 1 && new RegExp(`^${parts.join("[\\s\\S]*")}$`).test(host);
}

function sameUrl(a: string, b: string): boolean {
  const strip = (url: string) => url.split("?")[0]!.replace(/\/+$/, "");
  return strip(a) === strip(b);
}

// ---- secrets ----

/** One variable mcphub.yaml reads for an imported server, with what the host file holds for it. */
interface Secret {
  variable: string;
  /** The host server's name. */
  server: string;
  /** The value to set in the mcphub entry's env (a literal, or a reference in the host's own syntax). */
  value?: string;
  /** The value is written in the host file (not read by the host from its environment). */
  literal: boolean;
}

/** What the host value holds for each `${VAR}` of the config value (mcphub syntax on both sides). */
function captures(config: string, host: string): Map<string, string> | undefined {
  const names: string[] = [];
  let pattern = "";
  let last = 0;
  for (const m of config.matchAll(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g)) {
    pattern += escapeRegExp(config.slice(last, m.index)) + (m[1] === undefined ? "\\$\\$" : "([\\s\\S]*?)");
    if (m[1] !== undefined) names.push(m[1]);
    last = m.index! + m[0].length;
  }
  if (!names.length) return undefined;
  const found = new RegExp(`^${pattern}${escapeRegExp(config.slice(last))}$`).exec(host);
  if (!found) return undefined;
  return new Map(names.map((name, i) => [name, found[i + 1]!]));
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Pairs of (mcphub.yaml value, host value) of one imported server. */
function valuePairs(entry: Record<string, unknown>, server: HostServer): [string, string | undefined][] {
  const pairs: [string, string | undefined][] = [];
  const add = (config: unknown, host: string | undefined) => {
    if (typeof config === "string") pairs.push([config, host]);
  };
  add(entry.command, server.command);
  add(entry.url, server.url);
  add(entry.cwd, server.cwd);
  if (Array.isArray(entry.args)) entry.args.forEach((arg, i) => add(arg, server.args[i]));
  for (const [field, host] of [["env", server.env], ["headers", server.headers]] as const) {
    const map = entry[field];
    if (map && typeof map === "object" && !Array.isArray(map)) {
      for (const [key, value] of Object.entries(map)) add(value, host[key]);
    }
  }
  return pairs;
}

/** The variables each imported server reads and what the host file holds for them. */
function secretsOf(matches: readonly { server: HostServer; entry: Record<string, unknown> }[]): Secret[] {
  const secrets: Secret[] = [];
  for (const { server, entry } of matches) {
    for (const [config, host] of valuePairs(entry, server)) {
      if (host === undefined) continue;
      for (const [variable, held] of captures(config, host) ?? []) {
        if (secrets.some((s) => s.server === server.name && s.variable === variable)) continue;
        const reference = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$/.exec(held);
        if (!/\$\{/.test(held.replaceAll("$$", ""))) {
          secrets.push({ variable, server: server.name, value: held.replaceAll("$$", "$"), literal: true });
        } else if (reference) {
          // The host fills it in itself (its environment, an input): the entry passes the host's reference on.
          const value = server.references[reference[1]!];
          secrets.push({ variable, server: server.name, value, literal: false });
        }
      }
    }
  }
  return secrets;
}

/** The env of the mcphub entry already in the host file (values as written). */
function currentEntryEnv(data: Record<string, unknown>, location: HostLocation): Record<string, string> {
  let node: unknown = data;
  for (const key of [...location.serversPath, "mcphub", "env"]) {
    node = node && typeof node === "object" ? (node as Record<string, unknown>)[key] : undefined;
  }
  if (!node || typeof node !== "object" || Array.isArray(node)) return {};
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, String(v)]));
}

const HELP = `Usage: mcphub hosts [--json]
       mcphub hosts use HOST [--project] [--move] [--no-secrets] [--agent NAME] [--dry-run]

Without "use": lists the MCP host configs found on this machine and in this project
(${HOSTS.join(", ")}), their servers, and which entries already start mcphub.

hosts use HOST writes an "mcphub" entry into HOST's config so the host starts the gateway:
the user-level file (all projects), or with --project the project's file (.mcp.json,
.cursor/mcp.json, .vscode/mcp.json, .gemini/settings.json, .codex/config.toml). HOST may
also be a path. The edit is atomic, leaves a timestamped .bak, keeps comments (JSONC, TOML)
and the order of everything else, and changes nothing when the entry is already there.
The entry runs "mcphub mcp serve" by absolute path (a host started from the desktop has a
PATH of /usr/bin:/bin at most): this binary, the mcphub on your PATH, or deno run -A main.ts
from source; with --config when your mcphub.yaml is not in ~/.config/mcphub. The secrets
mcphub.yaml reads (\${VAR}) for the servers it imported from this file are set in the
entry's "env" from the values this file already holds, so those servers keep working where
the host starts mcphub, and the .bak is never the only copy of a secret.

Options:
  --project      Edit the project's file instead of the user's
  --move         Also remove the host's servers that mcphub.yaml already has (same command and
                 arguments, or same URL), so they do not run twice; others are kept and listed
  --no-secrets   Do not copy secret values into the entry's env; --move then keeps (and names)
                 the servers whose secrets would be left only in the .bak
  --agent NAME   Start mcphub scoped to this agent (mcp serve --agent NAME)
  --dry-run      Print the new file; write nothing
  --json         (list) the same as JSON
`;

async function runList(ctx: CommandContext, json: boolean): Promise<number> {
  const env = hostEnvironment(ctx);
  const reports = await scanHosts(env);
  if (json) {
    ctx.out(JSON.stringify({ hosts: reports }, null, 2) + "\n");
    return 0;
  }
  if (!reports.length) {
    ctx.out(`No MCP host config found (looked for ${HOSTS.join(", ")}).\n`);
    return 0;
  }
  ctx.out(formatTable(
    ["HOST", "SCOPE", "MCPHUB", "SERVERS", "FILE"],
    reports.map((r) => [
      r.host,
      r.scope,
      r.error ? "unreadable" : r.mcphub.length ? `yes (${r.mcphub.join(",")})` : "no",
      r.error ? "-" : `${r.servers.filter((s) => !r.mcphub.includes(s)).length}`,
      locationLabel({ host: "file", path: r.path } as HostLocation, env.home),
    ]),
  ));
  for (const r of reports) {
    const others = r.servers.filter((s) => !r.mcphub.includes(s));
    if (r.error) ctx.out(`${r.host} ${r.scope}: ${r.error}\n`);
    else if (others.length) ctx.out(`${r.host} ${r.scope}: ${others.join(", ")}\n`);
  }
  const pending = reports.filter((r) => !r.error && !r.mcphub.length);
  if (pending.length) {
    ctx.out(`\nnext: mcphub init --from ${pending[0]!.host}, then mcphub hosts use ${pending[0]!.host}\n`);
  }
  return 0;
}

async function targetLocation(
  ctx: CommandContext,
  host: string,
  project: boolean,
  env: HostEnvironment,
): Promise<HostLocation> {
  if ((HOSTS as readonly string[]).includes(host)) {
    const locations = hostLocations(host as HostName, env);
    const wanted = locations.find((l) => l.scope === (project ? "project" : "user"));
    if (!wanted) {
      throw new UsageError(`${host} has no project-level config; use it without --project`, "hosts");
    }
    if (!project && !(await exists(dirname(wanted.path)))) {
      throw new ReferenceError(
        `${host} does not seem to be installed: ${dirname(wanted.path)} does not exist; ` +
          "install it first, or give the config file's path",
      );
    }
    return wanted;
  }
  const path = resolve(ctx.cwd, host);
  const text = await readHostText(path);
  if (text === undefined) {
    throw new UsageError(`"${host}" is neither a host (${HOSTS.join(", ")}) nor a file that exists`, "hosts");
  }
  return detectLocation(path, text, ctx.cwd);
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

async function runUse(
  ctx: CommandContext,
  host: string,
  options: { project: boolean; move: boolean; agent?: string; dryRun: boolean; noSecrets: boolean },
): Promise<number> {
  const env = hostEnvironment(ctx);
  const location = await targetLocation(ctx, host, options.project, env);
  const label = locationLabel(location, env.home);
  const before = (await readHostText(location.path)) ?? "";
  const data = before.trim() ? parseHostText(before, location.format, location.path) : {};
  const servers = readServers(data, location, env.home);
  const config = await configServers(ctx);
  const matches = servers.flatMap((server) => {
    const name = pointsAtMcphub(server) ? undefined : imported(server, config);
    return name === undefined ? [] : [{ server, name, entry: config[name]! }];
  });
  // The secrets mcphub.yaml reads for these servers go into the entry's env: the host file held them
  // already, and without them the servers fail where the host starts mcphub (and live only in the .bak).
  const existing = currentEntryEnv(data, location);
  const carried: Record<string, string> = {};
  const carriedFrom = new Map<string, string[]>();
  /** Host server -> why its secrets cannot be carried (kept on --move). */
  const stranded = new Map<string, string[]>();
  const strand = (server: string, why: string) => stranded.set(server, [...stranded.get(server) ?? [], why]);
  for (const secret of secretsOf(matches)) {
    if (secret.value === undefined) continue;
    const taken = carried[secret.variable];
    if (taken !== undefined && taken !== secret.value) {
      strand(
        secret.server,
        `${secret.variable} differs from the one carried for ${
          carriedFrom.get(secret.variable)!.join(", ")
        } (mcphub.yaml reads one ${secret.variable} for both: rename it in one of them)`,
      );
      continue;
    }
    if (options.noSecrets && secret.literal) {
      if (existing[secret.variable] !== secret.value) {
        strand(secret.server, `${secret.variable} (--no-secrets)`);
      }
      continue;
    }
    carried[secret.variable] = secret.value;
    carriedFrom.set(secret.variable, [
      ...new Set([...carriedFrom.get(secret.variable) ?? [], secret.server]),
    ]);
  }
  const mcphub = mcphubEntry(ctx, options.agent);
  const entryEnv = { ...existing, ...carried };
  if (Object.keys(entryEnv).length) mcphub.env = entryEnv;
  const entry: Record<string, unknown> = location.format === "vscode"
    ? { type: "stdio", ...mcphub }
    : { ...mcphub };
  const lines: string[] = [];
  let text = before;
  const other = servers.find((s) => s.name !== "mcphub" && pointsAtMcphub(s));
  if (other) lines.push(`${label} already starts mcphub as "${other.name}"; left as it is`);
  else {
    text = withEntry(before, location, entry);
    lines.push(text === before ? `${label} already points at mcphub` : `${label}: mcphub entry written`);
    const names = Object.keys(carried).sort();
    if (names.length) {
      lines.push(
        `  env: ${
          names.map((n) => `${n} (${carriedFrom.get(n)!.join(", ")})`).join(", ")
        } set for mcphub, from this file's own values`,
      );
    }
  }
  for (const [server, why] of stranded) {
    if (!options.move) {
      lines.push(`  warning: ${server} needs ${why.join(", ")}: set it in the mcphub entry's env`);
    }
  }
  if (options.move) {
    for (const server of servers) {
      if (pointsAtMcphub(server)) continue;
      const match = matches.find((m) => m.server === server);
      if (!match) {
        lines.push(`  kept ${server.name}: not in mcphub.yaml (mcphub init --from ${host} imports it)`);
        continue;
      }
      const why = stranded.get(server.name);
      if (why) {
        lines.push(
          `  kept ${server.name}: its secret ${why.join(", ")} would be left only in the .bak; set it in ` +
            "the mcphub entry's env (or run without --no-secrets), then --move again",
        );
        continue;
      }
      const next = withoutServer(text, location, server.name);
      if (next === undefined) {
        lines.push(`  kept ${server.name}: not written as its own table; remove it by hand`);
        continue;
      }
      text = next;
      lines.push(`  removed ${server.name} (mcphub.yaml has it as "${match.name}")`);
    }
  }
  // What we write must read back (a broken host file would take every server of that host down).
  parseHostText(text, location.format, location.path);
  if (options.dryRun) {
    ctx.out(text.endsWith("\n") ? text : `${text}\n`);
    lines.push("dry run: nothing was written");
  } else if (text !== before) {
    const backup = await replaceFile(location.path, text);
    lines.push(backup ? `backup: ${backup}` : `created ${location.path}`);
    lines.push(`restart ${location.host === "file" ? "the host" : location.host} to pick it up`);
  } else lines.push("nothing changed");
  ctx.out(lines.join("\n") + "\n");
  return 0;
}

/** `mcphub hosts` and `mcphub hosts use HOST`. */
export const hostsCommand: Command = {
  name: "hosts",
  summary: "List the MCP host configs found; `hosts use HOST` points a host at mcphub",
  help: HELP,
  async run(ctx) {
    const { values, positionals } = parseCommandArgs("hosts", () =>
      parseArgs({
        args: ctx.args,
        options: {
          json: { type: "boolean" },
          project: { type: "boolean" },
          move: { type: "boolean" },
          agent: { type: "string" },
          "dry-run": { type: "boolean" },
          "no-secrets": { type: "boolean" },
        },
        strict: true,
        allowPositionals: true,
      }));
    if (positionals.length === 0) {
      for (const flag of ["project", "move", "agent", "dry-run", "no-secrets"] as const) {
        if (values[flag] !== undefined) throw new UsageError(`--${flag} goes with hosts use HOST`, "hosts");
      }
      return await runList(ctx, Boolean(values.json || ctx.global.json));
    }
    if (positionals[0] !== "use") {
      throw new UsageError(
        `unknown hosts subcommand "${positionals[0]}"; did you mean "hosts use"?`,
        "hosts",
      );
    }
    if (positionals.length !== 2) {
      throw new UsageError("hosts use needs one HOST (or a config file path)", "hosts");
    }
    return await runUse(ctx, positionals[1]!, {
      project: Boolean(values.project),
      move: Boolean(values.move),
      agent: values.agent,
      dryRun: Boolean(values["dry-run"]),
      noSecrets: Boolean(values["no-secrets"]),
    });
  },
};
