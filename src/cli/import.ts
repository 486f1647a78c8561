/**
 * `mcphub init --from SOURCE`: imports the servers configured in MCP hosts (Claude Desktop, Claude Code,
 * Cursor, VS Code, Windsurf, Codex, Gemini CLI) or in a file into mcphub.yaml. Literal secrets become
 * `${VAR}` references (the variables to export are listed), names are normalised to mcphub's rules, and
 * duplicates are merged when identical and suffixed when not.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { type Document, isMap, parseDocument, stringify } from "yaml";
import { type Command, type CommandContext, parseCommandArgs, UsageError } from "./command.ts";
import {
  appendServer,
  type ConfigTarget,
  ensureServers,
  initCommand as plainInitCommand,
  loadOptions,
  RELOAD_NOTE,
  targetConfig,
} from "./config_commands.ts";
import { deriveDescriptions } from "./derive.ts";
import {
  ConfigError,
  editConfig,
  MAX_NAME_LENGTH,
  NAME_PATTERN,
  parseConfig,
  RESERVED_SERVER_NAME,
} from "../config/mod.ts";
import {
  type HostEnvironment,
  type HostFile,
  hostLocations,
  type HostName,
  HOSTS,
  type HostServer,
  locationLabel,
  pointsAtMcphub,
  readLocations,
  sourceLocations,
  variableName,
} from "./host_configs.ts";

/** The host environment of a command: HOME, the OS, the working directory. */
export function hostEnvironment(ctx: CommandContext): HostEnvironment {
  const home = ctx.env.get("HOME") ?? ctx.env.get("USERPROFILE");
  if (!home) throw new ReferenceError("Cannot find host configs: HOME is not set");
  return { home, cwd: ctx.cwd, os: Deno.build.os, env: ctx.env };
}

// ---- names ----

/** A host's server name made valid for mcphub: letters, digits, `_`, `-`; no `__`; not `mcphub`. */
export function normaliseName(name: string): string {
  let out = name.replace(/[^A-Za-z0-9_-]+/g, "-").replace(/_{2,}/g, "_").replace(/^[^A-Za-z0-9]+/, "")
    .replace(/-{2,}/g, "-");
  out = out.slice(0, MAX_NAME_LENGTH).replace(/[-_]+$/, "");
  if (out === "") out = "server";
  if (out.toLowerCase() === RESERVED_SERVER_NAME) out = `${out}-server`;
  return NAME_PATTERN.test(out) ? out : "server";
}

// ---- secrets ----

/** Names of variables, headers, query parameters and flags whose values are secrets. */
const SECRET_NAME =
  /token|secret|passw(or)?d|pwd|api[-_]?key|apikey|access[-_]?key|private[-_]?key|credential|auth|cookie|session|bearer|(^|[-_])pat$/i;
/** Values that are credentials whatever their name (GitHub, OpenAI/Anthropic, Slack, GitLab, AWS, Google, JWT). */
const SECRET_VALUE =
  /^(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}|sk-[\w-]{16,}|xox[abprs]-[\w-]{10,}|glpat-[\w-]{20,}|AKIA[0-9A-Z]{16}|AIza[\w-]{35}|eyJ[\w-]+\.[\w-]+\.[\w-]+)$/;

/** A variable the user must export for an imported server. */
export interface ImportVariable {
  name: string;
  /** Where the value is now: `mcpServers.github.env.GITHUB_TOKEN in ~/…/claude_desktop_config.json`. */
  from: string;
  /** The environment already holds this exact value. */
  set: boolean;
}

function looksSecret(name: string, value: string): boolean {
  if (value === "" || value.includes("${")) return false;
  if (SECRET_VALUE.test(value)) return true;
  if (!SECRET_NAME.test(name)) return false;
  // Paths, URLs, booleans and numbers under a secret-looking name are settings, not secrets.
  return !/^(?:[/~.]|[A-Za-z]:\\|https?:\/\/)/.test(value) &&
    !/^(?:true|false|\d+|yes|no|on|off)$/i.test(value);
}

/** Turns literal secrets into `${VAR}`s, remembering each variable and where its value is now. */
class SecretPlan {
  readonly variables: ImportVariable[] = [];
  #values = new Map<string, string>();
  constructor(readonly env: { get(key: string): string | undefined }) {}

  /** The reference for `value`, named `preferred` unless that name holds another value. */
  reference(preferred: string, fallback: string, value: string, from: string): string {
    for (const name of [variableName(preferred), variableName(fallback)]) {
      const known = this.#values.get(name);
      if (known === value) return `\${${name}}`;
      if (known === undefined) return this.#add(name, value, from);
    }
    for (let n = 2;; n++) {
      const name = `${variableName(fallback)}_${n}`;
      const known = this.#values.get(name);
      if (known === value) return `\${${name}}`;
      if (known === undefined) return this.#add(name, value, from);
    }
  }

  #add(name: string, value: string, from: string): string {
    this.#values.set(name, value);
    this.variables.push({ name, from, set: this.env.get(name) === value });
    return `\${${name}}`;
  }
}

/** The literal text of an imported value (mcphub syntax: `$$` is `$`), when it holds no reference. */
function literalOf(value: string): string | undefined {
  return /\$\{/.test(value.replaceAll("$$", "")) ? undefined : value.replaceAll("$$", "$");
}

function escape(text: string): string {
  return text.replace(/\$(?=[${])/g, "$$$$");
}

function secure(
  server: HostServer,
  name: string,
  plan: SecretPlan,
  home: string,
): { entry: Record<string, unknown>; secrets: number } {
  let secrets = 0;
  const where = (key: string) =>
    `${[...server.location.serversPath, server.name, key].join(".")} in ${
      locationLabel(server.location, home)
    }`;
  const prefix = name.toUpperCase().replace(/-/g, "_");
  /** `detect`: the name that says whether it is a secret; `preferred`: the variable's name when free. */
  const swap = (value: string, detect: string, key: string, preferred: string) => {
    const literal = literalOf(value);
    if (literal === undefined || !looksSecret(detect, literal)) return value;
    secrets++;
    return plan.reference(preferred, `${prefix}_${detect}`, literal, where(key));
  };
  const entry: Record<string, unknown> = {};
  if (server.command !== undefined) {
    entry.command = server.command;
    const args = [...server.args];
    for (let i = 0; i < args.length; i++) {
      const flag = /^(--?[A-Za-z][\w-]*)=(.*)$/.exec(args[i]!);
      if (flag) {
        const swapped = swap(flag[2]!, flag[1]!.replace(/^-+/, ""), `args[${i}]`, `${prefix}_${flag[1]}`);
        args[i] = `${flag[1]}=${swapped}`;
      } else if (i > 0 && /^--?[A-Za-z][\w-]*$/.test(args[i - 1]!) && SECRET_NAME.test(args[i - 1]!)) {
        args[i] = swap(args[i]!, args[i - 1]!.replace(/^-+/, ""), `args[${i}]`, `${prefix}_${args[i - 1]}`);
      } else {
        const literal = literalOf(args[i]!);
        if (literal !== undefined && SECRET_VALUE.test(literal)) {
          secrets++;
          args[i] = plan.reference(`${prefix}_SECRET`, `${prefix}_SECRET`, literal, where(`args[${i}]`));
        }
      }
    }
    if (args.length) entry.args = args;
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(server.env)) {
      env[key] = swap(value, key, `env.${key}`, key);
    }
    if (Object.keys(env).length) entry.env = env;
    if (server.cwd !== undefined) entry.cwd = server.cwd;
  } else {
    entry.url = secureUrl(server.url!, (param, value) => swap(value, param, "url", `${prefix}_${param}`));
    if (server.transport === "sse") entry.transport = "sse";
    const headers: Record<string, string> = {};
    for (const [key, value] of Object.entries(server.headers)) {
      const scheme = /^(Bearer|Basic|Token|Bot)\s+(.+)$/i.exec(value);
      if (/^(proxy-)?authorization$/i.test(key) && scheme) {
        headers[key] = `${scheme[1]} ${swap(scheme[2]!, "token", `headers.${key}`, `${prefix}_TOKEN`)}`;
      } else {
        headers[key] = swap(value, key, `headers.${key}`, `${prefix}_${key}`);
      }
    }
    if (Object.keys(headers).length) entry.headers = headers;
  }
  if (!server.enabled) entry.enabled = false;
  return { entry, secrets };
}

function secureUrl(url: string, swap: (param: string, value: string) => string): string {
  const query = url.indexOf("?");
  if (query === -1) return url;
  const hash = url.indexOf("#", query);
  const end = hash === -1 ? url.length : hash;
  const params = url.slice(query + 1, end).split("&").map((pair) => {
    const eq = pair.indexOf("=");
    if (eq <= 0) return pair;
    const key = decodeURIComponent(pair.slice(0, eq));
    const value = decodeURIComponent(pair.slice(eq + 1));
    const swapped = swap(key, escape(value));
    return swapped === escape(value) ? pair : `${pair.slice(0, eq)}=${swapped}`;
  });
  return `${url.slice(0, query)}?${params.join("&")}${url.slice(end)}`;
}

// ---- planning ----

/** What happened to one host server. */
export interface ImportOutcome {
  /** `claude-desktop (user, ~/…)`. */
  source: string;
  /** The name in the host file. */
  hostName: string;
  /** The name in mcphub.yaml (absent when skipped). */
  name?: string;
  action: "added" | "merged" | "exists" | "skipped";
  /** Why renamed, merged or skipped. */
  reason?: string;
  notes: string[];
}

/** The connection fields of an entry, for "same server" comparisons. */
function identity(entry: Record<string, unknown>): string {
  const pick: Record<string, unknown> = {};
  for (const key of ["command", "args", "env", "cwd", "url", "transport", "headers"]) {
    const value = entry[key];
    if (value === undefined || (Array.isArray(value) && !value.length)) continue;
    if (typeof value === "object" && !Array.isArray(value) && !Object.keys(value as object).length) continue;
    if (key === "transport" && value === "http") continue;
    pick[key] = typeof value === "object" && !Array.isArray(value)
      ? Object.fromEntries(
        Object.entries(value as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)),
      )
      : value;
  }
  return JSON.stringify(pick);
}

interface Plan {
  outcomes: ImportOutcome[];
  entries: { name: string; entry: Record<string, unknown> }[];
  variables: ImportVariable[];
}

function sourceTag(server: HostServer): string {
  return server.location.host === "file" ? "file" : server.location.host;
}

/** Decides the name and entry of every host server against the config's existing servers. */
function planImport(
  servers: readonly HostServer[],
  existing: Map<string, string>,
  options: { keepSecrets: boolean; env: CommandContext["env"]; home: string },
): Plan {
  const plan = new SecretPlan(options.env);
  const outcomes: ImportOutcome[] = [];
  const entries: Plan["entries"] = [];
  const taken = new Map(existing);
  const added = new Map<string, string>();
  for (const server of servers) {
    const source = locationLabel(server.location, options.home);
    const outcome: ImportOutcome = {
      source,
      hostName: server.name,
      action: "skipped",
      notes: [...server.notes],
    };
    outcomes.push(outcome);
    if (server.command === undefined && server.url === undefined) {
      outcome.reason = 'no "command" and no URL';
      continue;
    }
    if (pointsAtMcphub(server)) {
      outcome.reason = "it is mcphub itself";
      continue;
    }
    const base = normaliseName(server.name);
    const entry = options.keepSecrets ? rawEntry(server) : secure(server, base, plan, options.home).entry;
    const invalid = entryProblem(base, entry, options.home);
    if (invalid) {
      outcome.reason = `not valid in mcphub.yaml: ${invalid}`;
      continue;
    }
    const id = identity(entry);
    // Same server already there (under this name or, after an earlier import, a suffixed one).
    const same = [...taken].find(([name, other]) =>
      other === id && (name === base || name.startsWith(`${base}-`))
    );
    if (same) {
      outcome.name = same[0];
      outcome.action = added.has(same[0]) ? "merged" : "exists";
      outcome.reason = added.has(same[0])
        ? `identical to the one from ${added.get(same[0])}`
        : "already in the config, identical";
      continue;
    }
    let name = base;
    if (taken.has(name)) {
      const tagged = normaliseName(`${base}-${sourceTag(server)}`);
      name = tagged;
      for (let n = 2; taken.has(name); n++) name = `${tagged}-${n}`;
      outcome.reason = `"${base}" is taken by a different server`;
    } else if (name !== server.name) outcome.reason = `renamed from "${server.name}" to fit mcphub's names`;
    taken.set(name, id);
    added.set(name, source);
    outcome.name = name;
    outcome.action = "added";
    entries.push({ name, entry });
  }
  return { outcomes, entries, variables: options.keepSecrets ? [] : plan.variables };
}

/** Why mcphub would reject this entry (structure only: variables are not read), or undefined. */
function entryProblem(name: string, entry: Record<string, unknown>, home: string): string | undefined {
  try {
    parseConfig(stringify({ version: 1, servers: { [name]: entry } }), "import", {
      env: { get: () => undefined },
      cwd: home,
      home,
    });
    return undefined;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    const problems = error.problems.filter((p) => !/^environment variable \S+ is not set$/.test(p.detail));
    return problems.length
      ? problems.map((p) => `${p.keyPath?.replace(`servers.${name}.`, "") ?? ""}: ${p.detail}`).join("; ")
      : undefined;
  }
}

/** The entry with the host's values as they are (`--keep-secrets`). */
function rawEntry(server: HostServer): Record<string, unknown> {
  const entry: Record<string, unknown> = {};
  if (server.command !== undefined) {
    entry.command = server.command;
    if (server.args.length) entry.args = server.args;
    if (Object.keys(server.env).length) entry.env = server.env;
    if (server.cwd !== undefined) entry.cwd = server.cwd;
  } else {
    entry.url = server.url;
    if (server.transport === "sse") entry.transport = "sse";
    if (Object.keys(server.headers).length) entry.headers = server.headers;
  }
  if (!server.enabled) entry.enabled = false;
  return entry;
}

function existingServers(doc: Document): Map<string, string> {
  const json = doc.toJSON() as { servers?: Record<string, Record<string, unknown>> } | null;
  const map = new Map<string, string>();
  for (const [name, entry] of Object.entries(json?.servers ?? {})) {
    if (entry && typeof entry === "object") map.set(name, identity(entry));
  }
  return map;
}

// ---- the command ----

const HELP = `Usage: mcphub init [--config PATH]
       mcphub init --from SOURCE [--from SOURCE]… [--dry-run] [--keep-secrets] [--no-describe] [--config PATH]

Without --from: creates a commented starter mcphub.yaml (mode 0600) at --config PATH, else
$MCPHUB_CONFIG, else ~/.config/mcphub/mcphub.yaml ($XDG_CONFIG_HOME/mcphub when set). A path
ending in .json gets a JSON starter. Never overwrites an existing file.

With --from: imports the servers an MCP host already has into mcphub.yaml (created when
missing; an existing one is edited: comments kept, a timestamped .bak left beside it).
SOURCE is a host, a file path (its format is detected from its content), or "all":
  claude-desktop  claude_desktop_config.json (macOS ~/Library/Application Support/Claude/,
                  Windows %APPDATA%\\Claude\\, Linux ~/.config/Claude/)
  claude-code     ~/.claude.json (user scope, and this project's local scope), ./.mcp.json
  cursor          ~/.cursor/mcp.json, ./.cursor/mcp.json
  vscode          the user profile's mcp.json, ./.vscode/mcp.json ("servers", "inputs")
  windsurf        ~/.codeium/windsurf/mcp_config.json
  codex           ~/.codex/config.toml ($CODEX_HOME), ./.codex/config.toml ([mcp_servers.NAME])
  gemini          ~/.gemini/settings.json, ./.gemini/settings.json
  all             every host config found
Literal secrets (tokens, keys, passwords in env, headers, URL queries and --token-like
arguments) are written as \${VAR} references; the variables to export are listed at the
end. Host variable forms (\${env:X}, \${input:Y}, $X) become \${X}. Names are normalised
(letters, digits, "_", "-"); a server already imported or found twice identical is merged,
a different one with a taken name gets a suffix (-cursor, -2). Entries that start mcphub
itself are skipped.

Options:
  --from SOURCE    Host name, file path or "all"; repeatable
  --dry-run        Print the resulting mcphub.yaml and the report; write nothing
  --keep-secrets   Copy secret values literally instead of \${VAR} references
  --no-describe    Do not connect to the new servers for their descriptions (by default each
                   is asked once, with the host's own values, bounded by connect_timeout; its
                   initialize title or first sentence of instructions is written, marked
                   "# derived from the server's initialize result; edit to replace")
`;

async function gather(
  sources: readonly string[],
  env: HostEnvironment,
  ctx: CommandContext,
): Promise<{ files: HostFile[]; problems: string[] }> {
  const files: HostFile[] = [];
  const problems: string[] = [];
  for (const source of sources) {
    const all = source === "all";
    const hosts: (HostName | string)[] = all ? [...HOSTS] : [source];
    let found = 0;
    let seen = 0;
    for (const host of hosts) {
      const locations = (HOSTS as readonly string[]).includes(host)
        ? hostLocations(host as HostName, env)
        : await sourceLocations(host, env);
      for (const file of await readLocations(locations, env.home)) {
        seen++;
        if (
          files.some((f) =>
            f.location.path === file.location.path &&
            f.location.serversPath.join("\0") === file.location.serversPath.join("\0")
          )
        ) continue;
        if (file.error) {
          const message = `cannot read ${file.location.path}: ${
            file.error.replace(`${file.location.path}:`, "line ")
          }`;
          if (all) ctx.err(`mcphub: warning: ${message}; skipped\n`);
          else problems.push(message);
          continue;
        }
        files.push(file);
        found++;
      }
      if (!all && seen === 0 && (HOSTS as readonly string[]).includes(host)) {
        const paths = [...new Set(hostLocations(host as HostName, env).map((l) => l.path))];
        problems.push(`no ${host} config found (looked at ${paths.join(", ")})`);
      }
    }
    if (all && found === 0) {
      problems.push("no host config found (looked for every host: see mcphub init --help)");
    }
  }
  return { files, problems };
}

async function runImport(ctx: CommandContext): Promise<number> {
  const { values, positionals } = parseCommandArgs("init", () =>
    parseArgs({
      args: ctx.args,
      options: {
        from: { type: "string", multiple: true },
        "dry-run": { type: "boolean" },
        "keep-secrets": { type: "boolean" },
        "no-describe": { type: "boolean" },
      },
      strict: true,
      allowPositionals: true,
    }));
  if (positionals.length) throw new UsageError(`init takes no arguments, got "${positionals[0]}"`, "init");
  const sources = values.from ?? [];
  if (sources.some((s) => s === "")) throw new UsageError("--from needs a host name, a path or all", "init");
  const env = hostEnvironment(ctx);
  const { files, problems } = await gather(sources, env, ctx);
  if (problems.length) {
    for (const problem of problems) ctx.err(`error: ${problem}\n`);
    ctx.err("nothing was written\n");
    return 1;
  }
  const servers = files.flatMap((file) => file.servers);
  const target: ConfigTarget = targetConfig(ctx, { create: true });
  let plan: Plan | undefined;
  const dryRun = Boolean(values["dry-run"]);
  const planOptions = { keepSecrets: Boolean(values["keep-secrets"]), env: ctx.env, home: env.home };
  // Descriptions the new servers give themselves, asked with the host's own values (its secrets included).
  let derived = new Map<string, string>();
  if (!dryRun && !values["no-describe"]) {
    const existing = target.exists
      ? existingServers(parseDocument(await Deno.readTextFile(target.path)))
      : new Map();
    const draft = planImport(servers, existing, planOptions);
    derived = await deriveDescriptions(
      ctx,
      draft.entries.filter(({ entry }) => entry.description === undefined).flatMap(({ name }) => {
        const outcome = draft.outcomes.find((o) => o.name === name && o.action === "added")!;
        const server = servers.find((s) =>
          s.name === outcome.hostName && locationLabel(s.location, env.home) === outcome.source
        );
        return server ? [{ name, entry: rawEntry(server) }] : [];
      }),
    );
  }
  let text: string | undefined;
  try {
    const result = await editConfig(target.display, (doc) => {
      plan = planImport(servers, target.exists ? existingServers(doc) : new Map(), planOptions);
      if (!plan.entries.length) throw new NothingToAdd();
      const map = ensureServers(doc, target);
      if (!isMap(map)) throw new TypeError("servers is not a mapping");
      for (const { name, entry } of plan.entries) {
        const description = entry.description === undefined ? derived.get(name) : undefined;
        if (description !== undefined) {
          entry.description = description;
          plan.outcomes.find((o) => o.name === name)?.notes.push(
            `description (from the server): ${description}`,
          );
        }
        appendServer(doc, map, name, entry, { derivedDescription: description !== undefined });
      }
    }, { ...loadOptions(ctx), dryRun });
    text = result.text;
  } catch (error) {
    if (!(error instanceof NothingToAdd)) throw error;
  }
  if (dryRun && text !== undefined) ctx.out(text + (text.endsWith("\n") ? "" : "\n") + "\n");
  report(ctx, plan!, { target, dryRun, files, home: env.home, written: text !== undefined });
  return 0;
}

class NothingToAdd extends Error {
  override name = "NothingToAdd";
}

function report(
  ctx: CommandContext,
  plan: Plan,
  options: { target: ConfigTarget; dryRun: boolean; files: HostFile[]; home: string; written: boolean },
): void {
  const { target, dryRun } = options;
  const lines: string[] = [];
  lines.push(
    `read: ${
      options.files.map((f) => `${locationLabel(f.location, options.home)} (${f.servers.length})`).join(", ")
    }`,
  );
  for (const o of plan.outcomes) {
    const tail = o.reason ? `: ${o.reason}` : "";
    const label = { added: "added", merged: "merged", exists: "kept", skipped: "skipped" }[o.action];
    lines.push(`  ${label.padEnd(8)} ${o.name ?? o.hostName}  from ${o.source}${tail}`);
    for (const note of o.notes) lines.push(`           note: ${note}`);
  }
  const added = plan.outcomes.filter((o) => o.action === "added").length;
  if (!options.written) lines.push(`nothing to add to ${target.display}`);
  else if (dryRun) {
    lines.push(`dry run: ${added} server(s) would be added to ${target.display}; nothing was written`);
  } else lines.push(`${target.exists ? "updated" : "created"} ${target.display}: ${added} server(s) added`);
  const needed = plan.variables.filter((v) => !v.set);
  if (plan.variables.length) {
    lines.push("");
    lines.push(
      "Secrets were not copied. Export these variables where mcphub runs (the values are in the host files):",
    );
    for (const v of plan.variables) {
      lines.push(`  ${v.name}${v.set ? "  (already set here)" : ""}  <- ${v.from}`);
    }
    lines.push(
      "  mcphub hosts use HOST sets them in that host's mcphub entry, from the values its file holds",
    );
    if (needed.length) {
      lines.push(`  e.g. export ${needed[0]!.name}=...   (or --keep-secrets to copy the values)`);
    }
  }
  const referenced = new Set<string>();
  for (const { entry } of plan.entries) {
    for (const m of JSON.stringify(entry).matchAll(/(?<!\$)\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g)) {
      referenced.add(m[1]!);
    }
  }
  const unset = [...referenced].filter((name) =>
    !plan.variables.some((v) => v.name === name) && ctx.env.get(name) === undefined
  );
  if (unset.length) lines.push(`Referenced by the host config and not set here: ${unset.sort().join(", ")}`);
  if (options.written && !dryRun) {
    lines.push("");
    lines.push(
      "next: mcphub doctor   (checks every server), then mcphub hosts use HOST (points the host at mcphub)",
    );
  }
  ctx.out(lines.join("\n") + "\n");
  if (options.written && !dryRun && target.exists) ctx.err(RELOAD_NOTE);
}

/** `mcphub init`, with `--from` for imports. */
export const initCommand: Command = {
  name: "init",
  summary: "Create mcphub.yaml, or import your hosts' servers with --from (claude-desktop, cursor, …)",
  help: HELP,
  run(ctx) {
    const wantsImport = ctx.args.some((arg) => arg === "--from" || arg.startsWith("--from="));
    if (wantsImport) return runImport(ctx);
    if (ctx.args.some((arg) => arg === "--dry-run" || arg === "--keep-secrets" || arg === "--no-describe")) {
      throw new UsageError("--dry-run, --keep-secrets and --no-describe go with --from SOURCE", "init");
    }
    return plainInitCommand.run(ctx);
  },
};
