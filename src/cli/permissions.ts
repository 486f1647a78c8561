/**
 * `mcphub permissions`: the Deno permission flags that the gateway needs for one
 * config and no more, for `deno run` and for a locked `deno task compile --config`.
 *
 * What the gateway touches, measured under Deno 2.9 (see docs/security.md, "Permissions and binaries"):
 * - it starts each stdio server's `command` (`--allow-run`). Deno resolves a listed name on the
 *   gateway's PATH when it starts, but a spawned name on the child's PATH (a server's `env.PATH`),
 *   so the list holds the name and the path it resolves to here; a path command is listed resolved
 *   against the server's `cwd` (where Deno resolves it); a `cwd` itself needs no permission;
 * - it reads the config file and, for edits (`.bak`, temp file + rename), reads and writes the
 *   config's directory; it opens the SQLite store (`node:sqlite`, with its `-wal`/`-shm`
 *   siblings) and creates its directory: read and write on the store's directory;
 * - it connects to each remote server's `host:port` (and listens on `--listen`);
 * - it reads the whole environment, which every child inherits (`--allow-env`).
 * Module loading (the source, the npm cache) needs no permission; no `--allow-ffi`
 * (node:sqlite is built in) and no `--allow-sys`.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { dirname, join, posix, resolve, win32 } from "node:path";
import { type Config, type ListenAddress, parseListen, type ServerConfig } from "../config/mod.ts";
import { type Command, type CommandContext, parseCommandArgs, UsageError } from "./command.ts";
import { loadContextConfig, storeLocation, storePath } from "./host.ts";
import { isPostgresUrl, openStore } from "../store/mod.ts";
import { authMigrations, AuthStore } from "../auth/mod.ts";

/** Resolves a bare command name to a path, as Deno does; undefined when not found. */
export type Which = (command: string, searchPath?: string) => string | undefined;

/** Options of {@linkcode derivePermissions}. */
export interface PermissionOptions {
  /** The store file (`--db`); `":memory:"` for none. Relative paths resolve against `cwd`. */
  storePath: string;
  /** Only the servers of this agent (`agents:` in the config). */
  agent?: string;
  /** Resolves a bare command on PATH (the server's own `env.PATH` when it sets one). */
  which: Which;
  /** The gateway's working directory: relative command paths, `cwd`s and `storePath` resolve here. */
  cwd: string;
  /** `mcp serve --listen HOST:PORT`. */
  listen?: string;
  /** @default the `deno` OS name of this process, for path separators */
  os?: typeof Deno.build.os;
  /** A shared PostgreSQL store (`postgres://…`): its host and port join `--allow-net`. */
  storeUrl?: string;
  /** URLs a remote server's OAuth needs besides its own (authorization server, token endpoint), from the store. */
  authUrls?: (server: ServerConfig) => string[];
  /**
   * The program code mode's sandbox runs as (this runtime, or the compiled mcphub itself): allowed to run
   * when `code_mode` is on for the gateway or the agent. @default Deno.execPath()
   */
  execPath?: string;
}

/** The permission set of one gateway: the flags, and the lists they are made of. */
export interface Permissions {
  /** `--allow-run=…`, `--allow-read=…`, `--allow-write=…`, `--allow-net=…`, `--allow-env`; empty lists are left out. */
  flags: string[];
  /** Programs: bare names and absolute paths. */
  run: string[];
  /** Absolute paths (directories cover what is under them). */
  read: string[];
  write: string[];
  /** `host:port` entries. */
  net: string[];
  /** Things the user should know about this set (a command not on PATH, a broad directory). */
  notes: string[];
}

/** Environment variable prefixes that Deno refuses to pass to a child unless `--allow-run` is unrestricted. */
export const LINKER_ENV_PREFIXES = ["LD_", "DYLD_"] as const;

/** Names in `env` that a gateway with a restricted `--allow-run` cannot pass to its servers. */
export function linkerEnvNames(env: Record<string, string>): string[] {
  return Object.keys(env).filter((name) => LINKER_ENV_PREFIXES.some((prefix) => name.startsWith(prefix)))
    .sort();
}

function isPath(command: string, os: typeof Deno.build.os): boolean {
  return command.includes("/") || (os === "windows" && command.includes("\\"));
}

function inScope(config: Config, agent: string | undefined): ServerConfig[] {
  const enabled = config.servers.filter((server) => server.enabled);
  if (agent === undefined) return enabled;
  const found = config.agents.find((candidate) => candidate.name === agent);
  if (!found) {
    const defined = config.agents.length
      ? `defined agents: ${config.agents.map((a) => a.name).join(", ")}`
      : "no agents are defined";
    throw new RangeError(`Cannot derive permissions: unknown agent "${agent}"; ${defined}`);
  }
  if (found.servers === undefined) return enabled;
  const names = new Set(found.servers);
  return enabled.filter((server) => names.has(server.name));
}

/** `host:port` of a URL, with the scheme's default port (Deno checks `--allow-net` against it). */
function netEntry(url: string): string {
  const parsed = new URL(url);
  const port = parsed.port || (parsed.protocol === "https:" ? "443" : "80");
  return `${parsed.hostname}:${port}`;
}

/** `host:port` of a PostgreSQL URL (default port 5432; a socket directory host is no network address). */
function pgEntry(url: string): string {
  const parsed = new URL(url.replace(/^postgres(ql)?:/i, "http:"));
  return `${decodeURIComponent(parsed.hostname) || "localhost"}:${parsed.port || "5432"}`;
}

function listenEntry(listen: string): string {
  let address: ListenAddress;
  try {
    address = parseListen(listen);
  } catch {
    throw new RangeError(`Cannot derive permissions: --listen "${listen}" is not HOST:PORT`);
  }
  return `${address.hostname.includes(":") ? `[${address.hostname}]` : address.hostname}:${address.port}`;
}

type PathApi = typeof posix;

function within(path: string, dir: string, api: PathApi): boolean {
  const rel = api.relative(dir, path);
  return rel === "" || (!rel.startsWith("..") && !api.isAbsolute(rel));
}

/** Sorted, deduplicated, and without paths under another entry. */
function outermost(paths: string[], api: PathApi): string[] {
  const unique = [...new Set(paths)].sort();
  return unique.filter((path) => !unique.some((other) => other !== path && within(path, other, api)));
}

function checkListItem(kind: string, value: string): string {
  // Deno splits permission lists on commas and has no escape for one.
  if (value.includes(",")) {
    throw new RangeError(
      `Cannot derive permissions: the ${kind} "${value}" contains a comma, which a Deno permission flag ` +
        "cannot express; rename or move it",
    );
  }
  return value;
}

/**
 * Derives the least Deno permission set for a gateway serving `config` (optionally as one agent).
 * Pure apart from `options.which`.
 *
 * @param config a loaded config; `config.path` is its file (absent: no config access is granted)
 * @throws {RangeError} for an unknown agent, a bad `listen`, or a path Deno's flags cannot express
 */
export function derivePermissions(config: Config, options: PermissionOptions): Permissions {
  const os = options.os ?? Deno.build.os;
  // The target's path rules, so that the result depends on the options only.
  const path = os === "windows" ? win32 : posix;
  const servers = inScope(config, options.agent);
  const run: string[] = [];
  const net: string[] = [];
  const notes: string[] = [];
  for (const server of servers) {
    if (server.loadError !== undefined) {
      // It cannot start as configured; fixing its entry changes the set, so derive again then.
      notes.push(`server "${server.name}" is left out until its entry is fixed: ${server.loadError}`);
      continue;
    }
    if (server.url !== undefined) {
      net.push(checkListItem("address", netEntry(server.url)));
      const authUrls = options.authUrls?.(server) ?? [];
      for (const url of authUrls) net.push(checkListItem("address", netEntry(url)));
      if (server.oauth && authUrls.length === 0) {
        notes.push(
          `server "${server.name}" uses OAuth but has no login in the store yet: if its authorization server ` +
            `is on another host, run \`mcphub auth login ${server.name}\` first and derive the flags again`,
        );
      }
      continue;
    }
    const command = server.command!;
    if (isPath(command, os)) {
      // Deno resolves a relative program against the child's working directory.
      run.push(checkListItem("command", path.resolve(options.cwd, server.cwd ?? ".", command)));
      continue;
    }
    run.push(checkListItem("command", command));
    const found = options.which(command, server.env.PATH);
    if (found !== undefined) run.push(checkListItem("command", found));
    else {
      notes.push(
        `server "${server.name}": "${command}" is not on PATH here; it is allowed by name only, ` +
          "so it must be on PATH when the gateway starts",
      );
    }
    const linker = linkerEnvNames(server.env);
    if (linker.length) {
      notes.push(
        `server "${server.name}" sets ${linker.join(", ")} in env: Deno starts a child with LD_*/DYLD_* ` +
          "variables only under an unrestricted --allow-run, so this server will fail under this set",
      );
    }
  }
  // Code mode starts its sandbox (a process with no permissions at all) from this same program.
  const agent = options.agent === undefined ? undefined : config.agents.find((a) => a.name === options.agent);
  const codeMode = config.codeMode ||
    (options.agent === undefined ? config.agents.some((a) => a.codeMode === true) : agent?.codeMode === true);
  if (codeMode) run.push(checkListItem("program", options.execPath ?? Deno.execPath()));
  if (options.listen !== undefined) net.push(checkListItem("address", listenEntry(options.listen)));
  if (options.storeUrl !== undefined) net.push(checkListItem("address", pgEntry(options.storeUrl)));

  const dirs: string[] = [];
  if (config.path !== undefined) {
    const configDir = path.dirname(path.resolve(options.cwd, config.path));
    dirs.push(checkListItem("config directory", configDir));
    if (configDir === path.dirname(configDir)) {
      notes.push(`the config is in the root directory ${configDir}: move it into a directory of its own`);
    }
  }
  if (options.storePath !== ":memory:") {
    dirs.push(checkListItem("store directory", path.dirname(path.resolve(options.cwd, options.storePath))));
  }
  const read = outermost(dirs, path);
  const write = outermost(dirs, path);
  const runList = [...new Set(run)].sort();
  const netList = [...new Set(net)].sort();
  const flags: string[] = [];
  if (runList.length) flags.push(`--allow-run=${runList.join(",")}`);
  if (read.length) flags.push(`--allow-read=${read.join(",")}`);
  if (write.length) flags.push(`--allow-write=${write.join(",")}`);
  if (netList.length) flags.push(`--allow-net=${netList.join(",")}`);
  // Every child inherits the gateway's whole environment, which Deno.env.toObject() reads.
  flags.push("--allow-env");
  return { flags, run: runList, read, write, net: netList, notes };
}

/**
 * Finds `command` on a PATH the way Deno's `--allow-run` does: the first executable file, the path
 * not canonicalised; on Windows also with each PATHEXT extension.
 */
export function whichCommand(
  command: string,
  env: { PATH?: string; PATHEXT?: string },
  os: typeof Deno.build.os = Deno.build.os,
): string | undefined {
  const windows = os === "windows";
  const extensions = windows
    ? ["", ...(env.PATHEXT ?? ".COM;.EXE;.BAT;.CMD").split(";").filter(Boolean)]
    : [""];
  for (const dir of (env.PATH ?? "").split(windows ? ";" : ":")) {
    if (!dir) continue;
    for (const ext of extensions) {
      const candidate = join(dir, command + ext);
      try {
        const info = Deno.statSync(candidate);
        if (info.isFile && (windows || ((info.mode ?? 0o111) & 0o111) !== 0)) return candidate;
      } catch {
        // not here (or not visible to this process)
      }
    }
  }
  return undefined;
}

/** A flag as one word of a POSIX shell (Windows shells: quoted only when it has a space). */
function shellWord(word: string): string {
  if (Deno.build.os === "windows") return /\s/.test(word) ? `"${word}"` : word;
  return /^[A-Za-z0-9_\-=,./:@%+]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

const HELP =
  `Usage: mcphub permissions [--agent NAME] [--listen HOST:PORT] [--json] [--config PATH] [--db PATH]

Prints the Deno permission flags that the gateway needs for this mcphub.yaml and
no more, on one line:
  --allow-run=   the enabled servers' commands: the bare name, and the path it has
                 on PATH now (a path command: that path)
  --allow-read=  the config's directory (the file, its .bak copies and the temp file
                 of an atomic edit) and the store's directory
  --allow-write= the same two directories
  --allow-net=   HOST:PORT of every remote server, of the authorization servers
                 their logins use (from the store), and of --listen
  --allow-env    the whole environment: every server inherits it
Never -A, --allow-ffi or --allow-sys. With --agent NAME, only that agent's servers.

Use them with the same --config and --db:
  deno run --no-prompt $(mcphub permissions --config C --db D) main.ts --config C --db D mcp serve
or build a binary locked to them: deno task compile --config C
Notes (a command not on PATH, LD_*/DYLD_* variables, a broad directory) go to stderr.

Options:
  --agent NAME        Only the servers of this agent
  --listen HOST:PORT  Also allow the address mcp serve --listen would use
  --json              {config, store, agent, flags, run, read, write, net, notes}
`;

/** The authorization servers and token endpoints stored logins use, per server; none when there is no store yet. */
async function storedAuthUrls(path: string): Promise<(server: ServerConfig) => string[]> {
  try {
    await Deno.stat(path);
  } catch {
    return () => [];
  }
  const db = openStore(path, { migrations: authMigrations });
  try {
    const records = new AuthStore(db).list();
    return (server) =>
      records.filter((r) => r.server === server.name && r.url === server.url).flatMap((r) => {
        const discovery = r.discovery as
          | { authorizationServerUrl?: unknown; authorizationServerMetadata?: { token_endpoint?: unknown } }
          | undefined;
        return [discovery?.authorizationServerUrl, discovery?.authorizationServerMetadata?.token_endpoint]
          .filter((u): u is string => typeof u === "string" && URL.canParse(u));
      });
  } finally {
    db.close();
  }
}

/** `permissions`. */
export const permissionsCommand: Command = {
  name: "permissions",
  summary: "Print the least Deno permission flags the gateway needs for this config",
  help: HELP,
  async run(ctx: CommandContext): Promise<number> {
    const { values } = parseCommandArgs("permissions", () =>
      parseArgs({
        args: ctx.args,
        options: { agent: { type: "string" }, listen: { type: "string" }, json: { type: "boolean" } },
        strict: true,
        allowPositionals: false,
      }));
    const config = await loadContextConfig(ctx, values.agent);
    if (config.path === undefined) {
      throw new Error(
        "Cannot derive permissions: no mcphub.yaml was found; pass --config PATH (the flags are " +
          "derived from one config file)",
      );
    }
    const store = resolve(ctx.cwd, storePath(ctx, config));
    const location = storeLocation(ctx, config);
    const env = ctx.env.toObject();
    let permissions: Permissions;
    try {
      permissions = derivePermissions(config, {
        storePath: store,
        storeUrl: isPostgresUrl(location) ? location : undefined,
        authUrls: await storedAuthUrls(store),
        agent: values.agent,
        listen: values.listen ?? config.listen,
        cwd: ctx.cwd,
        which: (command, searchPath) => whichCommand(command, { ...env, PATH: searchPath ?? env.PATH }),
      });
    } catch (error) {
      if (error instanceof RangeError && values.listen !== undefined && /--listen/.test(error.message)) {
        throw new UsageError(error.message, "permissions", { cause: error });
      }
      throw error;
    }
    const notes = [...permissions.notes];
    const home = env.HOME ?? env.USERPROFILE;
    if (home !== undefined && dirname(config.path) === resolve(home)) {
      notes.push(
        `the config is in your home directory, so read and write access to all of ${home} is granted ` +
          "(edits write a .bak and a temp file beside it); keep mcphub.yaml in a directory of its own, " +
          "such as ~/.config/mcphub/",
      );
    }
    const linker = linkerEnvNames(env);
    if (linker.length && permissions.run.length) {
      notes.push(
        `this environment sets ${linker.join(", ")}: Deno starts children with LD_*/DYLD_* variables ` +
          "only under an unrestricted --allow-run, so unset them for the gateway",
      );
    }
    if (values.json || ctx.global.json) {
      const { flags, run, read, write, net } = permissions;
      ctx.out(
        JSON.stringify(
          { config: config.path, store, agent: values.agent ?? null, flags, run, read, write, net, notes },
          null,
          2,
        ) + "\n",
      );
    } else {
      ctx.out(permissions.flags.map(shellWord).join(" ") + "\n");
    }
    for (const note of notes) ctx.err(`mcphub: note: ${note}\n`);
    return 0;
  },
};
