/**
 * `mcphub init`, `add`, `remove`, `enable` and `disable`: creating and editing mcphub.yaml from the
 * command line. Every edit goes through `editConfig` (validated, atomic, `.bak`, comments kept); the
 * helpers here are shared with `pin`/`unpin`.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { dirname, extname, isAbsolute, relative, resolve } from "node:path";
import { type Document, isMap, isScalar, isSeq, type Node, type Pair, parseDocument, YAMLMap } from "yaml";
import { type Command, type CommandContext, parseCommandArgs, UsageError } from "./command.ts";
import { DERIVED_COMMENT, deriveDescriptions } from "./derive.ts";
import {
  ConfigError,
  defaultConfigPath,
  editConfig,
  findConfigPath,
  type LoadOptions,
  userConfigDir,
} from "../config/mod.ts";

/** What `mcphub init` writes (YAML); also the start of a file created by `mcphub add`. */
export const STARTER_CONFIG = `# mcphub configuration, created by \`mcphub init\`.
# Edit it by hand, or with \`mcphub add\`, \`remove\`, \`enable\`, \`disable\` and \`pin\`: they keep
# your comments and leave a timestamped .bak next to this file.
version: 1

# auto: every tool, named server__tool, while their definitions fit expose_budget (20000 tokens,
#   ~10% of a typical context); past it, the meta-tools plus the pins and the most-used tools.
# all: agents see every tool of every server. lazy: the meta-tools (search_tools, resolve_tool,
#   call_tool, …) plus the pins.
expose: auto

# Tools listed even in lazy mode: "server", "server__*" or "server__tool" (\`mcphub pin --top 5\`).
pin: []

# Larger tool results are spooled locally and paged with get_result (B, KB, MB, GB; "0" = no limit).
response_budget: 32KB

# Downstream MCP servers. \${VAR} expands from the environment when the gateway starts.
servers:
  # github:
  #   command: npx
  #   args: [-y, "@modelcontextprotocol/server-github"]
  #   env:
  #     GITHUB_PERSONAL_ACCESS_TOKEN: \${GITHUB_TOKEN}
  #   description: GitHub issues, pull requests and repository files
  #   use_when: ["reading or changing GitHub issues and pull requests"]
  # docs:
  #   url: https://example.com/mcp
  #   headers:
  #     Authorization: Bearer \${DOCS_TOKEN}
`;

/** What `mcphub init` writes when the path ends in `.json` (JSON has no comments). */
const STARTER_JSON = `${
  JSON.stringify({ version: 1, expose: "auto", pin: [], response_budget: "32KB", servers: {} }, null, 2)
}\n`;

/** A config file to edit: the path handed to `editConfig` and the one shown to the user. */
export interface ConfigTarget {
  /** Absolute. */
  path: string;
  /** As the user gave it, else relative to the working directory when inside it. */
  display: string;
  /** False when the file does not exist yet (only {@linkcode targetConfig} with `create`). */
  exists: boolean;
}

/** The load options of a command: its environment and working directory. */
export function loadOptions(ctx: CommandContext): LoadOptions {
  return { env: ctx.env, cwd: ctx.cwd };
}

function explicitConfig(ctx: CommandContext): string | undefined {
  return ctx.global.config || ctx.env.get("MCPHUB_CONFIG") || undefined;
}

function shown(path: string, cwd: string): string {
  const rel = relative(cwd, path);
  return rel && !rel.startsWith("..") && !isAbsolute(rel) ? rel : path;
}

function fileKind(path: string): "file" | "other" | "missing" {
  try {
    return Deno.statSync(path).isFile ? "file" : "other";
  } catch (error) {
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) return "missing";
    throw error;
  }
}

function initHint(ctx: CommandContext, explicit: string | undefined): string {
  if (explicit !== undefined) return `create it with: mcphub --config ${explicit} init`;
  const where = defaultConfigPath(loadOptions(ctx));
  return `create one with: mcphub init${where ? ` (writes ${where})` : ""}`;
}

/**
 * The config file a command edits: `--config`, `$MCPHUB_CONFIG`, else the lookup order. With `create`, a
 * missing file is returned (`exists: false`) at the explicit path or the `init` default.
 *
 * @throws {ConfigError} when there is no file (and not `create`), saying how to create one
 */
export function targetConfig(ctx: CommandContext, options: { create?: boolean } = {}): ConfigTarget {
  const explicit = explicitConfig(ctx);
  const load = loadOptions(ctx);
  if (explicit !== undefined) {
    const path = resolve(ctx.cwd, explicit);
    const kind = fileKind(path);
    if (kind === "file" || (kind === "missing" && options.create)) {
      return { path, display: explicit, exists: kind === "file" };
    }
    throw new ConfigError(explicit, {
      detail: kind === "missing"
        ? `config file not found; ${initHint(ctx, explicit)}`
        : "config path is not a file; check --config or $MCPHUB_CONFIG",
    });
  }
  const found = findConfigPath(undefined, load);
  if (found !== undefined) return { path: found, display: shown(found, ctx.cwd), exists: true };
  const fallback = defaultConfigPath(load);
  if (options.create && fallback !== undefined) {
    return { path: fallback, display: shown(fallback, ctx.cwd), exists: false };
  }
  const dirs = [ctx.cwd, userConfigDir(load)].filter((dir) => dir !== undefined).join(" and ");
  throw new ConfigError("", {
    detail: `no config file found (looked for mcphub.yaml, mcphub.yml and mcphub.json in ${dirs}); ` +
      initHint(ctx, undefined),
  });
}

/** Said on stderr after a config edit was written. */
export const RELOAD_NOTE =
  "mcphub: a running gateway (mcphub mcp serve) picks up this change by itself, no restart needed\n";

/** Thrown inside an edit to leave the file alone; never escapes {@linkcode editDocument}. */
class Unchanged extends Error {
  override name = "Unchanged";
}

/**
 * Runs `edit` on the parsed, validated config through `editConfig`. `edit` returns false when it changed
 * nothing; the file is then not written (no `.bak` either).
 *
 * @returns whether the file was written
 * @throws {ConfigError} when the file, or the edited document, is invalid; nothing is written then
 */
export async function editDocument(
  ctx: CommandContext,
  target: ConfigTarget,
  edit: (doc: Document) => boolean,
): Promise<boolean> {
  try {
    await editConfig(target.display, (doc) => {
      if (!edit(doc)) throw new Unchanged();
    }, loadOptions(ctx));
    // A file just created has no gateway running on it yet.
    if (target.exists) ctx.err(RELOAD_NOTE);
    return true;
  } catch (error) {
    if (error instanceof Unchanged) return false;
    throw error;
  }
}

/** The text of a scalar key, or undefined for any other key. */
export function keyText(pair: Pair): string | undefined {
  return isScalar(pair.key) ? String(pair.key.value) : undefined;
}

/** The pair under `key` in `map`. */
export function findPair(map: YAMLMap, key: string): Pair | undefined {
  return map.items.find((pair) => keyText(pair) === key);
}

/** True for a missing value, `~`, `null` or nothing after the colon. */
export function isEmptyValue(node: unknown): boolean {
  return node === null || node === undefined || (isScalar(node) && node.value === null);
}

/** The top-level mapping; an empty document gets one. */
export function rootMap(doc: Document): YAMLMap {
  if (isEmptyValue(doc.contents)) doc.contents = new YAMLMap();
  if (!isMap(doc.contents)) throw new TypeError("Cannot edit the config: its top level is not a mapping");
  return doc.contents;
}

/** Strings of a list node; anything else reads as no strings. */
export function stringItems(node: unknown): string[] {
  if (!isSeq(node)) return [];
  return node.items.flatMap((item) => isScalar(item) && typeof item.value === "string" ? [item.value] : []);
}

/** The `servers:` mapping, or undefined when there are none. */
export function serversMap(doc: Document): YAMLMap | undefined {
  const value = findPair(rootMap(doc), "servers")?.value;
  return isMap(value) ? value : undefined;
}

/** The configured server names, in file order. */
export function serverNames(doc: Document): string[] {
  return (serversMap(doc)?.items ?? []).flatMap((pair) => keyText(pair) ?? []);
}

function serverNode(doc: Document, name: string, display: string): YAMLMap {
  const servers = serversMap(doc);
  const pair = servers && findPair(servers, name);
  if (!pair) {
    const names = serverNames(doc);
    throw new ReferenceError(
      `No server named "${name}" in ${display}; ` +
        (names.length ? `configured: ${names.join(", ")}` : "no servers are configured"),
    );
  }
  if (!isMap(pair.value)) {
    throw new TypeError(`Cannot edit server "${name}" in ${display}: its value is not a mapping`);
  }
  return pair.value;
}

/** Inserts `pair` after the first of `after` present in `map` (else first), with matching spacing. */
export function insertPair(map: YAMLMap, pair: Pair, after: readonly string[]): void {
  let index = 0;
  for (const key of after) {
    const found = map.items.findIndex((item) => keyText(item) === key);
    if (found !== -1) {
      index = found + 1;
      break;
    }
  }
  const next = map.items[index]?.key;
  if (isScalar(pair.key) && isScalar(next) && next.spaceBefore) pair.key.spaceBefore = true;
  map.items.splice(index, 0, pair);
}

/**
 * The `servers:` mapping of the config being edited, created when missing; a file that does not exist
 * yet starts as the commented starter.
 */
export function ensureServers(doc: Document, target: ConfigTarget): YAMLMap {
  if (!target.exists && isEmptyValue(doc.contents)) {
    const starter = parseDocument(STARTER_CONFIG);
    doc.commentBefore = starter.commentBefore;
    doc.contents = starter.contents;
  }
  const root = rootMap(doc);
  if (!findPair(root, "version")) insertPair(root, doc.createPair("version", 1), []);
  let servers = findPair(root, "servers");
  if (!servers) {
    servers = doc.createPair("servers", new YAMLMap());
    if (root.items.length && isScalar(servers.key)) servers.key.spaceBefore = true;
    root.items.push(servers);
  } else if (isEmptyValue(servers.value)) {
    // `servers:` with only commented examples under it: keep the examples above the new entries.
    const map = new YAMLMap();
    map.commentBefore = isScalar(servers.value) ? servers.value.comment : undefined;
    servers.value = map;
  }
  const map = servers.value;
  if (!isMap(map)) {
    throw new TypeError(`Cannot add a server to ${target.display}: servers is not a mapping`);
  }
  if (map.flow && map.items.length === 0) map.flow = false;
  return map;
}

/** Appends a server entry to `servers:`, with `args` and `tags` as flow lists and matching spacing. */
export function appendServer(
  doc: Document,
  map: YAMLMap,
  name: string,
  entry: Record<string, unknown>,
  options: { derivedDescription?: boolean } = {},
): void {
  const node = doc.createNode(entry) as YAMLMap;
  for (const key of ["args", "tags"]) {
    const list = node.get(key, true) as Node | undefined;
    if (isSeq(list)) list.flow = true;
  }
  const description = node.get("description", true) as Node | undefined;
  if (options.derivedDescription && isScalar(description)) description.comment = DERIVED_COMMENT;
  const pair = doc.createPair(name, node);
  const last = map.items.at(-1)?.key;
  if (isScalar(pair.key) && isScalar(last) && last.spaceBefore) pair.key.spaceBefore = true;
  map.items.push(pair);
}

/** Whether a list item (`server`, `server__tool`, `server__*`) belongs to `server`. */
export function refersTo(item: string, server: string): boolean {
  return item === server || item.startsWith(`${server}__`);
}

/** `NAME…`-only commands: positionals and `--help`. */
function namesOnly(command: string, args: string[]) {
  return parseCommandArgs(command, () =>
    parseArgs({
      args,
      options: { help: { type: "boolean", short: "h" } },
      strict: true,
      allowPositionals: true,
    }));
}

function helpOnly(ctx: CommandContext, help: string, values: { help?: unknown }): boolean {
  if (values.help) ctx.out(help);
  return Boolean(values.help);
}

// ---- init ----

const INIT_HELP = `Usage: mcphub init [--config PATH]

Creates a commented starter mcphub.yaml (mode 0600) at --config PATH, else $MCPHUB_CONFIG,
else ~/.config/mcphub/mcphub.yaml ($XDG_CONFIG_HOME/mcphub when set). A path ending in .json
gets a JSON starter. Never overwrites an existing file.
`;

async function runInit(ctx: CommandContext): Promise<number> {
  const { values, positionals } = namesOnly("init", ctx.args);
  if (helpOnly(ctx, INIT_HELP, values)) return 0;
  if (positionals.length) {
    throw new UsageError(`init takes no arguments, got "${positionals[0]}"; use --config PATH`, "init");
  }
  const explicit = explicitConfig(ctx);
  const load = loadOptions(ctx);
  const chosen = explicit ?? defaultConfigPath(load);
  if (chosen === undefined) {
    throw new ReferenceError("Cannot tell where to create mcphub.yaml: HOME is not set; pass --config PATH");
  }
  const path = resolve(ctx.cwd, chosen);
  const display = explicit ?? shown(path, ctx.cwd);
  if (fileKind(path) !== "missing") {
    ctx.err(`error: ${display} already exists; edit it (or mcphub add/pin), or move it away to start over\n`);
    return 1;
  }
  // A sibling mcphub.yml/json in the same directory would be shadowed by the new file.
  const found = explicit === undefined ? findConfigPath(undefined, load) : undefined;
  if (found !== undefined && dirname(found) === dirname(path)) {
    ctx.err(`error: ${shown(found, ctx.cwd)} already exists; edit it instead\n`);
    return 1;
  }
  await Deno.mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const text = extname(path).toLowerCase() === ".json" ? STARTER_JSON : STARTER_CONFIG;
  try {
    await Deno.writeTextFile(path, text, { createNew: true, mode: 0o600 });
  } catch (error) {
    if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
    ctx.err(`error: ${display} already exists; edit it, or move it away to start over\n`);
    return 1;
  }
  if (Deno.build.os !== "windows") await Deno.chmod(path, 0o600);
  ctx.out(
    `created ${display}\nnext: mcphub add NAME -- COMMAND [ARGS…]  or  mcphub add NAME --url URL\n`,
  );
  if (found !== undefined) ctx.err(`note: ${shown(found, ctx.cwd)} is found first while it exists\n`);
  return 0;
}

/** `mcphub init`. */
export const initCommand: Command = {
  name: "init",
  summary: "Create a commented starter mcphub.yaml",
  help: INIT_HELP,
  run: runInit,
};

// ---- add ----

const ADD_HELP = `Usage: mcphub add NAME [options] -- COMMAND [ARGS…]
       mcphub add NAME --url URL [--transport http|sse] [--header K=V]… [options]

Adds a server to mcphub.yaml: stdio when a command follows "--", remote with --url.
Options go before "--"; everything after it is the server's command and its arguments:
  mcphub add github --env 'GITHUB_TOKEN=\${GITHUB_TOKEN}' -- npx -y @modelcontextprotocol/server-github
Creates the config (as \`mcphub init\` would) when there is none. Refuses an existing NAME.
Without --description, connects once (bounded by connect_timeout) and writes the server's
own description (its initialize result's title, else the first sentence of its instructions),
marked "# derived from the server's initialize result; edit to replace".

Options:
  --url U              Remote server endpoint (instead of a command).
  --transport T        http (default) or sse; with --url.
  --header K=V         HTTP header; repeatable; with --url.
  --env K=V            Environment variable for the command; repeatable. \${VAR} expands at start.
  --cwd D              Working directory of the command (~ expands).
  --description D      What the server is for (shown to agents).
  --no-describe        Do not connect to derive a description.
  --tag T              Tag; repeatable.
  --use-when H         One-line hint for when to use it; repeatable (at most 8).
  --disabled           Add it with enabled: false.
`;

function keyValues(command: string, flag: string, values: string[] | undefined): Record<string, string> {
  const result: Record<string, string> = {};
  for (const value of values ?? []) {
    const eq = value.indexOf("=");
    if (eq <= 0) throw new UsageError(`--${flag} expects KEY=VALUE, got "${value}"`, command);
    result[value.slice(0, eq)] = value.slice(eq + 1);
  }
  return result;
}

/** The server entry `add` writes, keys in the usual order. */
function serverEntry(
  values: Record<string, string | boolean | string[] | undefined>,
  command: string[],
): Record<string, unknown> {
  const entry: Record<string, unknown> = {};
  const list = (key: string) => values[key] as string[] | undefined;
  if (command.length) {
    entry.command = command[0];
    if (command.length > 1) entry.args = command.slice(1);
    if (list("env")?.length) entry.env = keyValues("add", "env", list("env"));
    if (values.cwd !== undefined) entry.cwd = values.cwd;
  } else {
    entry.url = values.url;
    if (values.transport !== undefined) entry.transport = values.transport;
    if (list("header")?.length) entry.headers = keyValues("add", "header", list("header"));
  }
  if (values.description !== undefined) entry.description = values.description;
  if (list("tag")?.length) entry.tags = list("tag");
  if (list("use-when")?.length) entry.use_when = list("use-when");
  if (values.disabled) entry.enabled = false;
  return entry;
}

function checkAddFlags(values: Record<string, unknown>, command: string[]): void {
  const has = (key: string) => values[key] !== undefined && (values[key] as unknown[]).length !== 0;
  if (command.length && values.url !== undefined) {
    throw new UsageError("Give either a command or --url, not both", "add");
  }
  if (!command.length && values.url === undefined) {
    throw new UsageError("Give the server's command after NAME, or --url URL for a remote server", "add");
  }
  if (values.url === undefined) {
    for (const flag of ["transport", "header"]) {
      if (has(flag)) throw new UsageError(`--${flag} is only for remote servers (with --url)`, "add");
    }
  } else {
    for (const flag of ["env", "cwd"]) {
      if (has(flag)) throw new UsageError(`--${flag} is only for stdio servers (with a command)`, "add");
    }
    if (values.transport !== undefined && values.transport !== "http" && values.transport !== "sse") {
      throw new UsageError(`--transport must be http or sse, got "${values.transport}"`, "add");
    }
  }
}

async function runAdd(ctx: CommandContext): Promise<number> {
  const { values, positionals } = parseCommandArgs(
    "add",
    () =>
      parseArgs({
        args: ctx.args,
        strict: true,
        allowPositionals: true,
        options: {
          url: { type: "string" },
          transport: { type: "string" },
          env: { type: "string", multiple: true },
          header: { type: "string", multiple: true },
          tag: { type: "string", multiple: true },
          "use-when": { type: "string", multiple: true },
          cwd: { type: "string" },
          description: { type: "string" },
          "no-describe": { type: "boolean" },
          disabled: { type: "boolean" },
          help: { type: "boolean", short: "h" },
        },
      }),
    '; put the options first and the server command after "--": mcphub add NAME [options] -- COMMAND ARGS…',
  );
  if (helpOnly(ctx, ADD_HELP, values)) return 0;
  const [name, ...command] = positionals;
  if (name === undefined || name === "") throw new UsageError("add needs a server NAME", "add");
  if (command.length && !ctx.args.includes("--")) {
    throw new UsageError(
      `put "--" before the server's command: mcphub add ${name} [options] -- ${command.join(" ")}`,
      "add",
    );
  }
  checkAddFlags(values, command);
  let entry = serverEntry(values, command);
  const target = targetConfig(ctx, { create: true });
  const exists = (doc: Document) => {
    const map = serversMap(doc);
    return map !== undefined && findPair(map, name) !== undefined;
  };
  const refuse = () =>
    new RangeError(
      `Server "${name}" already exists in ${target.display}; remove it first (mcphub remove ${name}) or edit the file`,
    );
  // Refused before connecting for a description.
  if (target.exists && exists(parseDocument(await Deno.readTextFile(target.path)))) throw refuse();
  let derived = false;
  if (entry.description === undefined && !values.disabled && !values["no-describe"]) {
    const text = (await deriveDescriptions(ctx, [{ name, entry }])).get(name);
    if (text !== undefined) {
      entry = serverEntry({ ...values, description: text }, command);
      derived = true;
    }
  }
  await editDocument(ctx, target, (doc) => {
    const map = ensureServers(doc, target);
    if (findPair(map, name)) throw refuse();
    appendServer(doc, map, name, entry, { derivedDescription: derived });
    return true;
  });
  ctx.out(
    target.exists
      ? `added server "${name}" to ${target.display}\n`
      : `created ${target.display} with server "${name}"\n`,
  );
  if (derived) ctx.out(`description (from the server): ${entry.description}\n`);
  return 0;
}

/** `mcphub add`. */
export const addCommand: Command = {
  name: "add",
  summary: "Add a server to mcphub.yaml (stdio command or --url)",
  help: ADD_HELP,
  run: runAdd,
};

// ---- remove ----

const REMOVE_HELP = `Usage: mcphub remove NAME…   (alias: rm)

Removes servers from mcphub.yaml, with the pins and agent entries that name them
(pin, agents.*.servers, agents.*.tools, agents.*.pin), so the file stays valid.
`;

/** Removes the items of a string list that refer to `server`; returns the removed ones. */
function dropReferences(node: unknown, server: string, exact: boolean): string[] {
  if (!isSeq(node)) return [];
  const removed: string[] = [];
  node.items = node.items.filter((item) => {
    const text = isScalar(item) && typeof item.value === "string" ? item.value : undefined;
    const hit = text !== undefined && (exact ? text === server : refersTo(text, server));
    if (hit) removed.push(text);
    return !hit;
  });
  return removed;
}

async function runRemove(ctx: CommandContext): Promise<number> {
  const { values, positionals } = namesOnly("remove", ctx.args);
  if (helpOnly(ctx, REMOVE_HELP, values)) return 0;
  if (positionals.length === 0) throw new UsageError("remove needs at least one server NAME", "remove");
  const target = targetConfig(ctx);
  const references: string[] = [];
  await editDocument(ctx, target, (doc) => {
    const root = rootMap(doc);
    for (const name of positionals) {
      serverNode(doc, name, target.display);
      const map = serversMap(doc)!;
      map.items = map.items.filter((pair) => keyText(pair) !== name);
      for (const pin of dropReferences(findPair(root, "pin")?.value, name, false)) {
        references.push(`pin ${pin}`);
      }
      const agents = findPair(root, "agents")?.value;
      for (const agent of isMap(agents) ? agents.items : []) {
        if (!isMap(agent.value)) continue;
        for (const [key, exact] of [["servers", true], ["tools", false], ["pin", false]] as const) {
          for (const item of dropReferences(findPair(agent.value, key)?.value, name, exact)) {
            references.push(`agents.${keyText(agent)}.${key} ${item}`);
          }
        }
      }
    }
    return true;
  });
  ctx.out(`removed: ${positionals.join(", ")} (from ${target.display})\n`);
  if (references.length) ctx.out(`also removed: ${references.join(", ")}\n`);
  return 0;
}

/** `mcphub remove` / `rm`. */
export const removeCommand: Command = {
  name: "remove",
  aliases: ["rm"],
  summary: "Remove a server from mcphub.yaml",
  help: REMOVE_HELP,
  run: runRemove,
};

// ---- enable / disable ----

function toggleCommand(enable: boolean): Command {
  const name = enable ? "enable" : "disable";
  const help = `Usage: mcphub ${name} NAME…

${enable ? "Enables" : "Disables"} servers in mcphub.yaml (enabled: ${enable}). A disabled server is not
started and its \${VAR}s are not read.
`;
  return {
    name,
    summary: `${enable ? "Enable" : "Disable"} a server in mcphub.yaml`,
    help,
    async run(ctx) {
      const { values, positionals } = namesOnly(name, ctx.args);
      if (helpOnly(ctx, help, values)) return 0;
      if (positionals.length === 0) throw new UsageError(`${name} needs at least one server NAME`, name);
      const target = targetConfig(ctx);
      const changed: string[] = [];
      const already: string[] = [];
      await editDocument(ctx, target, (doc) => {
        for (const server of positionals) {
          const node = serverNode(doc, server, target.display);
          const pair = findPair(node, "enabled");
          const current = pair && isScalar(pair.value) ? pair.value.value !== false : true;
          if (current === enable || changed.includes(server)) {
            if (!changed.includes(server) && !already.includes(server)) already.push(server);
            continue;
          }
          if (pair && isScalar(pair.value)) pair.value.value = enable;
          else if (pair) pair.value = doc.createNode(enable);
          else node.items.push(doc.createPair("enabled", enable));
          changed.push(server);
        }
        return changed.length > 0;
      });
      if (changed.length) ctx.out(`${name}d: ${changed.join(", ")}\n`);
      if (already.length) {
        ctx.out(`${changed.length ? "" : "nothing changed; "}already ${name}d: ${already.join(", ")}\n`);
      }
      return 0;
    },
  };
}

/** `mcphub enable`. */
export const enableCommand: Command = toggleCommand(true);

/** `mcphub disable`. */
export const disableCommand: Command = toggleCommand(false);
