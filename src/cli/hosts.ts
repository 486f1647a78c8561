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
}

/**
 * How a host should start this mcphub: `mcphub` when it is on PATH, else this binary, else `deno run -A
 * <main.ts>`; with `--config` (and `--db`) when the config is not where mcphub looks by default, because
 * hosts start servers from a directory of their own.
 */
export function mcphubEntry(ctx: CommandContext, agent?: string): McphubEntry {
  const env = ctx.env.toObject();
  const exec = Deno.execPath();
  let command: string;
  const prefix: string[] = [];
  if (whichCommand("mcphub", env) !== undefined) command = "mcphub";
  else if (/^mcphub/i.test(basename(exec))) command = exec;
  else {
    command = exec;
    prefix.push("run", "-A", fileURLToPath(new URL("../../main.ts", import.meta.url)));
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
  if (current && current.command === entry.command && isPlainEqual(current.args ?? [], entry.args)) {
    return text;
  }
  const block = [
    "[mcp_servers.mcphub]",
    `command = ${tomlValue(entry.command)}`,
    `args = ${tomlValue(entry.args)}`,
  ];
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

const HELP = `Usage: mcphub hosts [--json]
       mcphub hosts use HOST [--project] [--move] [--agent NAME] [--dry-run]

Without "use": lists the MCP host configs found on this machine and in this project
(${HOSTS.join(", ")}), their servers, and which entries already start mcphub.

hosts use HOST writes an "mcphub" entry into HOST's config so the host starts the gateway:
the user-level file (all projects), or with --project the project's file (.mcp.json,
.cursor/mcp.json, .vscode/mcp.json, .gemini/settings.json, .codex/config.toml). HOST may
also be a path. The edit is atomic, leaves a timestamped .bak, keeps comments (JSONC, TOML)
and the order of everything else, and changes nothing when the entry is already there.
The entry runs "mcphub mcp serve" (this binary, or deno run -A main.ts from source), with
--config when your mcphub.yaml is not in ~/.config/mcphub.

Options:
  --project      Edit the project's file instead of the user's
  --move         Also remove the host's servers that mcphub.yaml already has (same command and
                 arguments, or same URL), so they do not run twice; others are kept and listed
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
  options: { project: boolean; move: boolean; agent?: string; dryRun: boolean },
): Promise<number> {
  const env = hostEnvironment(ctx);
  const location = await targetLocation(ctx, host, options.project, env);
  const label = locationLabel(location, env.home);
  const before = (await readHostText(location.path)) ?? "";
  const data = before.trim() ? parseHostText(before, location.format, location.path) : {};
  const servers = readServers(data, location, env.home);
  const mcphub = mcphubEntry(ctx, options.agent);
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
  }
  if (options.move) {
    const config = await configServers(ctx);
    for (const server of servers) {
      if (pointsAtMcphub(server)) continue;
      const match = imported(server, config);
      if (!match) {
        lines.push(`  kept ${server.name}: not in mcphub.yaml (mcphub init --from ${host} imports it)`);
        continue;
      }
      const next = withoutServer(text, location, server.name);
      if (next === undefined) {
        lines.push(`  kept ${server.name}: not written as its own table; remove it by hand`);
        continue;
      }
      text = next;
      lines.push(`  removed ${server.name} (mcphub.yaml has it as "${match}")`);
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
        },
        strict: true,
        allowPositionals: true,
      }));
    if (positionals.length === 0) {
      for (const flag of ["project", "move", "agent", "dry-run"] as const) {
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
    });
  },
};
