/**
 * `mcphub doctor`: checks the config (which file, the lookup order, warnings), the store (mode, integrity,
 * size, retention), every server (connect, initialize time, tools, stderr, and the fix for the common
 * failures), the permission flags a compiled binary would need, and which host configs start mcphub.
 * Exit 0 when healthy, 1 when anything is broken.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { DatabaseSync } from "node:sqlite";
import { dirname, join, resolve } from "node:path";
import { isMap, parseDocument } from "yaml";
import { type Command, type CommandContext, parseCommandArgs, UsageError } from "./command.ts";
import {
  type Config,
  CONFIG_NAMES,
  ConfigError,
  defaultConfig,
  type LoadOptions,
  parseConfig,
  type ServerConfig,
  userConfigDir,
} from "../config/mod.ts";
import { DEFAULT_RESTART_POLICY } from "../downstream/mod.ts";
import { Hub } from "../hub/mod.ts";
import { pgStoreMigrations } from "../gateway/mod.ts";
import { isPostgresUrl, pgpassPassword, PgStore, redactDbUrl } from "../store/mod.ts";
import { RETENTION_MS } from "../spool/mod.ts";
import { storeLocation, storePath } from "./host.ts";
import { VERSION } from "./version.ts";
import { derivePermissions, whichCommand } from "./permissions.ts";
import { hostEnvironment } from "./import.ts";
import { scanHosts } from "./hosts.ts";
import { checkHostEntries, GUI_PATH, type HostEntryCheck } from "./host_check.ts";
import { locationLabel } from "./host_configs.ts";
import type { HostLocation } from "./host_configs.ts";

/** A one-shot check connects once: no restarts. */
const ONE_SHOT = { ...DEFAULT_RESTART_POLICY, maxFailures: 0 };

/** Lines of a failed server's stderr shown. */
const STDERR_LINES = 10;

/** One candidate of the config lookup. */
interface Candidate {
  path: string;
  /** Why it is looked at: `--config`, `$MCPHUB_CONFIG`, `working directory`, `user config directory`. */
  source: string;
  exists: boolean;
}

/** What doctor found about one server. */
export interface ServerCheck {
  name: string;
  /** `connected`, `failed`, `disabled`. */
  state: string;
  kind: string;
  target: string;
  /** Spawn/dial + initialize + tools/list, in ms. */
  connect_ms?: number;
  tools?: number;
  /** `command_not_found`, `missing_variable`, `unauthorized`, `timeout`, `exited`, `not_permitted`, `other`. */
  problem?: string;
  error?: string;
  fix?: string;
  stderr_tail?: string;
  /** Tools not mounted because their definition exceeds the limits (a warning: the server works). */
  rejected?: { name: string; reason: string }[];
  /** Tools whose metadata carries known prompt-injection markers (a warning: review them). */
  flagged?: { tool: string; markers: string[] }[];
}

interface ConfigCheck {
  file: string | null;
  lookup: Candidate[];
  warnings: string[];
  error?: string;
}

interface StoreCheck {
  path: string;
  /** A shared PostgreSQL store (path is its URL without the password). */
  postgres?: boolean;
  exists: boolean;
  mode?: string;
  bytes?: number;
  integrity?: string;
  retention: string;
  warnings: string[];
  error?: string;
}

function exists(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

function lookupOrder(ctx: CommandContext, options: LoadOptions): Candidate[] {
  const explicit = ctx.global.config;
  const fromEnv = ctx.env.get("MCPHUB_CONFIG");
  const at = (path: string, source: string) => {
    const absolute = resolve(ctx.cwd, path);
    return { path: absolute, source, exists: exists(absolute) };
  };
  if (explicit !== undefined) return [at(explicit, "--config")];
  if (fromEnv) return [at(fromEnv, "$MCPHUB_CONFIG")];
  const dirs: [string, string][] = [[ctx.cwd, "working directory"]];
  const user = userConfigDir(options);
  if (user !== undefined) dirs.push([user, "user config directory"]);
  return dirs.flatMap(([dir, source]) => CONFIG_NAMES.map((name) => at(join(dir, name), source)));
}

const UNSET = /^environment variable ([A-Za-z_][A-Za-z0-9_]*) is not set$/;

/**
 * Loads the config the way `mcp serve` would. Servers whose `${VAR}`s are unset are reported (and loaded
 * disabled, so the others can still be checked); any other problem makes the config broken.
 */
async function checkConfig(
  ctx: CommandContext,
): Promise<{ check: ConfigCheck; config: Config; missing: Map<string, string[]> }> {
  const options: LoadOptions = { env: ctx.env, cwd: ctx.cwd };
  const lookup = lookupOrder(ctx, options);
  const found = lookup.find((c) => c.exists);
  const check: ConfigCheck = { file: found?.path ?? null, lookup, warnings: [] };
  const missing = new Map<string, string[]>();
  if (!found) {
    if (ctx.global.config !== undefined || ctx.env.get("MCPHUB_CONFIG")) {
      check.error = `${lookup[0]!.path} (${lookup[0]!.source}) does not exist; create it with ` +
        `mcphub init --config ${lookup[0]!.path}, or import your hosts' servers: mcphub init --from all`;
    } else {
      check.warnings.push(
        "no mcphub.yaml found: mcp serve runs with no servers; create one with mcphub init --from all " +
          "(imports your hosts' servers) or mcphub init",
      );
    }
    return { check, config: defaultConfig(), missing };
  }
  for (const other of lookup.filter((c) => c.exists && c !== found)) {
    check.warnings.push(`${other.path} also exists and is not used (${found.path} is found first)`);
  }
  const text = await Deno.readTextFile(found.path);
  let config: Config;
  try {
    config = parseConfig(text, found.path, options);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    const others = error.problems.filter((p) =>
      !(UNSET.test(p.detail) && /^servers\.[^.]+\./.test(p.keyPath ?? ""))
    );
    if (others.length) {
      check.error = error.message;
      return { check, config: defaultConfig(), missing };
    }
    for (const problem of error.problems) {
      const server = problem.keyPath!.split(".")[1]!;
      const variable = UNSET.exec(problem.detail)![1]!;
      const list = missing.get(server) ?? [];
      if (!list.includes(variable)) list.push(variable);
      missing.set(server, list);
    }
    // Load again with those servers disabled: their variables are then not read, the rest is checked.
    const doc = parseDocument(text);
    const servers = doc.get("servers");
    for (const name of missing.keys()) {
      const node = isMap(servers) ? servers.get(name, true) : undefined;
      if (isMap(node)) node.set("enabled", false);
    }
    config = parseConfig(String(doc), found.path, options);
  }
  const mode = Deno.statSync(found.path).mode;
  if (Deno.build.os !== "windows" && mode !== null && (mode & 0o077) !== 0) {
    check.warnings.push(
      `${found.path} is readable by other users (mode ${(mode & 0o777).toString(8).padStart(4, "0")}); ` +
        `it may hold secrets: chmod 600 ${found.path}`,
    );
  }
  const home = ctx.env.get("HOME");
  if (home !== undefined && dirname(found.path) === resolve(home)) {
    check.warnings.push(
      "the config is directly in your home directory: a binary built for it (deno task compile --config) " +
        "gets read and write access to all of it; move it to ~/.config/mcphub/",
    );
  }
  if (config.servers.length === 0) {
    check.warnings.push("no servers are configured: mcphub init --from all imports your hosts' servers");
  }
  return { check, config, missing };
}

/** A shared PostgreSQL store: reachable, which migrations ran, how much it holds; nothing is changed. */
async function checkPgStore(
  url: string,
  retention: string,
  env: CommandContext["env"],
): Promise<StoreCheck> {
  const check: StoreCheck = {
    path: redactDbUrl(url),
    postgres: true,
    exists: false,
    retention,
    warnings: [],
  };
  const params = (() => {
    try {
      return new URL(url.replace(/^postgres(ql)?:/i, "http:"));
    } catch {
      return undefined;
    }
  })();
  const host = params ? decodeURIComponent(params.hostname) : "";
  const local = host === "" || host === "localhost" || host.startsWith("127.") || host === "[::1]" ||
    host.startsWith("/");
  if (params && !local && !params.searchParams.has("sslmode")) {
    check.warnings.push(
      `no sslmode in the URL: the connection to ${host} may be unencrypted; add ?sslmode=require (or verify-full)`,
    );
  }
  const store = new PgStore(url, {
    max: 1,
    connectTimeoutS: 5,
    breakerMs: 0,
    password: pgpassPassword(url, env),
  });
  try {
    const rows = await store.all(
      `SELECT (SELECT COUNT(*) FROM information_schema.tables WHERE table_name = 'schema_migrations') AS has`,
    );
    check.exists = true;
    if (Number(rows[0]?.has ?? 0) === 0) {
      check.integrity = "no mcphub tables yet";
      check.warnings.push(
        "not set up yet: mcp serve creates the tables on first start (or mcphub store migrate)",
      );
      return check;
    }
    const applied = await store.all("SELECT id FROM schema_migrations ORDER BY id");
    const ids = new Set(applied.map((r) => String(r.id)));
    const pending = pgStoreMigrations.filter((m) => !ids.has(m.id)).map((m) => m.id);
    check.integrity = pending.length ? `migrations pending: ${pending.join(", ")}` : "schema up to date";
    if (pending.length) {
      check.warnings.push(`pending migrations (${pending.join(", ")}): mcp serve applies them`);
    }
    const size = await store.all(
      "SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) AS bytes FROM pg_class c " +
        "WHERE c.relname IN ('spool_chunks', 'spool_results', 'calls', 'tool_cache', 'tool_pins')",
    );
    check.bytes = Number(size[0]?.bytes ?? 0);
  } catch (error) {
    check.error = `cannot reach it: ${
      (error as Error).message
    }; check the URL, that the server runs and that it accepts this user (pg_hba.conf)`;
  } finally {
    await store.close();
  }
  return check;
}

async function checkStore(ctx: CommandContext, config: Config): Promise<StoreCheck> {
  const location = storeLocation(ctx, config);
  const retention = `stored results are kept ${RETENTION_MS / 3_600_000} h; call records ${
    config.record ? "are kept until you delete the store (record: true)" : "are not recorded (record: false)"
  }`;
  if (isPostgresUrl(location)) return await checkPgStore(location, retention, ctx.env);
  const path = resolve(ctx.cwd, location);
  const check: StoreCheck = { path, exists: exists(path), retention, warnings: [] };
  if (!check.exists) {
    check.warnings.push("not created yet: mcp serve creates it on first start");
    return check;
  }
  const stat = Deno.statSync(path);
  if (stat.mode !== null) {
    check.mode = (stat.mode & 0o777).toString(8).padStart(4, "0");
    if (Deno.build.os !== "windows" && (stat.mode & 0o077) !== 0) {
      check.warnings.push(
        `readable by other users (mode ${check.mode}); results may hold private data: chmod 600 ${path}`,
      );
    }
  }
  check.bytes = [path, `${path}-wal`, `${path}-shm`].reduce((sum, file) => {
    try {
      return sum + Deno.statSync(file).size;
    } catch {
      return sum;
    }
  }, 0);
  const damaged = (detail: string) =>
    `integrity check failed: ${detail.slice(0, 500)}; move ${path} away (mcphub creates a new one; stored ` +
    "results and call history are lost) or restore it from a backup";
  let db: DatabaseSync;
  try {
    db = new DatabaseSync(path, { readOnly: true });
  } catch (error) {
    check.error = `cannot open it: ${(error as Error).message}; check its permissions, or pass --db PATH`;
    return check;
  }
  try {
    const rows = db.prepare("PRAGMA integrity_check").all() as { integrity_check: string }[];
    check.integrity = rows.map((row) => row.integrity_check).join("; ");
    if (check.integrity !== "ok") check.error = damaged(check.integrity);
  } catch (error) {
    // A header or page so broken that the check itself stops: damaged as well.
    check.integrity = (error as Error).message;
    check.error = damaged(check.integrity);
  } finally {
    db.close();
  }
  return check;
}

/** The problem kind and the exact fix for a server that failed to connect. */
function diagnose(
  server: ServerConfig,
  error: string,
  timeoutMs: number,
  status?: number | "unreachable",
): { problem: string; fix: string } {
  const key = `servers.${server.name}`;
  if (status === 401 || (status === undefined && /\b401\b|unauthori[sz]ed/i.test(error))) {
    return {
      problem: "unauthorized",
      fix: `the server refused the request (HTTP 401): set ${key}.headers.Authorization, e.g. ` +
        '"Bearer ${TOKEN}", export that variable, and check the token has not expired or been revoked',
    };
  }
  if (status === 403) {
    return {
      problem: "forbidden",
      fix: "the server refused access (HTTP 403): check the token's scopes and that your account may use it",
    };
  }
  if (status === 404) {
    return {
      problem: "not_found",
      fix: `nothing at ${key}.url (HTTP 404): check the path (often /mcp, or /sse with transport: sse)`,
    };
  }
  if (status === "unreachable") {
    return {
      problem: "unreachable",
      fix: `nothing answers at ${key}.url: check the address and that the server is running`,
    };
  }
  if (/was not found; check servers\./.test(error)) {
    return {
      problem: "command_not_found",
      fix: `"${server.command}" is not on the PATH mcphub runs with: install it, or set ${key}.command to ` +
        "its full path (hosts start mcphub with their own, often shorter, PATH)",
    };
  }
  if (/not permitted/.test(error)) return { problem: "not_permitted", fix: error };
  if (/within connect_timeout/.test(error)) {
    return {
      problem: "timeout",
      fix:
        `no answer to initialize within connect_timeout (${timeoutMs} ms): run the command by hand to see ` +
        "what it waits for (a first npx/uvx run downloads the package), or raise connect_timeout in mcphub.yaml",
    };
  }
  if (/exited during start-up/.test(error)) {
    return {
      problem: "exited",
      fix: server.command
        ? `the server exited before answering: read its stderr above, or run it by hand: ${server.command} ${
          server.args.join(" ")
        }`.trimEnd()
        : "the server exited before answering",
    };
  }
  if (
    /ECONNREFUSED|Connection refused|fetch failed|error sending request|dns error|failed to lookup/i.test(
      error,
    )
  ) {
    return {
      problem: "unreachable",
      fix: `nothing answers at ${key}.url: check the address and that the server is running`,
    };
  }
  return {
    problem: "other",
    fix: server.command
      ? `run it by hand to see why: ${server.command} ${server.args.join(" ")}`.trimEnd()
      : `check ${key}.url and transport`,
  };
}

/**
 * The HTTP status a remote answers an `initialize` POST with (the SDK's errors do not always carry it), or
 * `"unreachable"`; undefined when it answered 2xx or the probe itself timed out.
 */
async function probeStatus(
  server: ServerConfig,
  timeoutMs: number,
): Promise<number | "unreachable" | undefined> {
  const sse = server.transport === "sse";
  const initialize = {
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "mcphub-doctor", version: VERSION },
    },
  };
  try {
    const response = await fetch(server.url!, {
      method: sse ? "GET" : "POST",
      headers: {
        accept: sse ? "text/event-stream" : "application/json, text/event-stream",
        ...(sse ? {} : { "content-type": "application/json" }),
        ...server.headers,
      },
      body: sse ? undefined : JSON.stringify(initialize),
      signal: AbortSignal.timeout(timeoutMs),
    });
    await response.body?.cancel();
    return response.ok ? undefined : response.status;
  } catch (error) {
    return (error as Error).name === "TimeoutError" ? undefined : "unreachable";
  }
}

/** Connects to each server on its own (one hub each, concurrently) and times it. */
async function checkServers(
  ctx: CommandContext,
  config: Config,
  missing: Map<string, string[]>,
  only: string | undefined,
): Promise<ServerCheck[]> {
  const servers = config.servers.filter((s) => only === undefined || s.name === only);
  return await Promise.all(servers.map(async (server): Promise<ServerCheck> => {
    const kind = server.url ? server.transport : "stdio";
    const variables = missing.get(server.name);
    if (variables) {
      return {
        name: server.name,
        state: "failed",
        kind,
        target: server.url ? "(url not expanded)" : [server.command!, ...server.args].join(" "),
        problem: "missing_variable",
        error: `environment variable${variables.length > 1 ? "s" : ""} ${variables.join(", ")} not set`,
        fix: `export ${variables.map((v) => `${v}=…`).join(" ")} where mcphub runs (for a host, in the env ` +
          `of its mcphub entry), or disable the server: mcphub disable ${server.name}`,
      };
    }
    const hub = new Hub({
      config: { ...config, servers: [server], agents: [] },
      env: ctx.env.toObject(),
      version: VERSION,
      restartPolicy: ONE_SHOT,
      log: () => {},
    });
    try {
      const started = performance.now();
      await hub.start();
      const elapsed = Math.round(performance.now() - started);
      const [status] = hub.servers();
      const check: ServerCheck = { name: server.name, state: status!.state, kind, target: status!.target };
      if (status!.state === "disabled") return check;
      check.connect_ms = elapsed;
      if (status!.connected) {
        check.tools = status!.tools;
        if (status!.rejected?.length) check.rejected = status!.rejected;
        if (status!.flagged?.length) check.flagged = status!.flagged;
      } else {
        check.state = "failed";
        check.error = status!.error ?? "not connected";
        const error = check.error;
        const http = server.url && !/within connect_timeout|not permitted/.test(error)
          ? await probeStatus(server, config.connectTimeoutMs)
          : undefined;
        Object.assign(check, diagnose(server, error, config.connectTimeoutMs, http));
        const tail = hub.downstream(server.name)?.stderrTail().trim();
        if (tail) check.stderr_tail = tail.split("\n").slice(-STDERR_LINES).join("\n");
      }
      return check;
    } finally {
      await hub.close();
    }
  }));
}

const HELP = `Usage: mcphub doctor [--server NAME] [--json] [--config PATH] [--db PATH]

Checks everything mcp serve depends on and says what to fix:
  config       the file used, the lookup order, warnings (shadowed files, mode, no servers)
  store        path, mode, size, PRAGMA integrity_check, how long results and records are kept
  servers      each enabled server: connects (bounded by connect_timeout), initialize time,
               tool count; for a failure the stderr tail and the fix (command not found,
               missing variable, 401 from a remote, timeout, exited, unreachable); warnings
               for tools not mounted (definition limits) and for injection markers
  permissions  the Deno flags a binary locked to this config needs (mcphub permissions)
  hosts        which MCP host configs start mcphub, and each such entry checked the way the
               host starts it (only its own env and PATH=/usr/bin:/bin:/usr/sbin:/sbin): its
               command resolves, and every server of its config finds its \${VAR}s and command
Exit status 0 when nothing is broken, 1 otherwise (warnings do not fail). --json for CI.

Options:
  --server NAME  Check only this server (config and store are still checked)
  --json         {ok, config, store, servers, permissions, hosts}
`;

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** `doctor`. */
export const doctorCommand: Command = {
  name: "doctor",
  summary: "Check the config, store, every server and the host configs; exit 1 when something is broken",
  help: HELP,
  async run(ctx) {
    const { values } = parseCommandArgs("doctor", () =>
      parseArgs({
        args: ctx.args,
        options: {
          server: { type: "string" },
          json: { type: "boolean" },
        },
        strict: true,
        allowPositionals: false,
      }));
    const { check: config, config: loaded, missing } = await checkConfig(ctx);
    if (
      values.server !== undefined && !config.error && !loaded.servers.some((s) => s.name === values.server)
    ) {
      const names = loaded.servers.map((s) => s.name);
      throw new UsageError(
        `no server named "${values.server}"; ${
          names.length ? `configured: ${names.join(", ")}` : "none are configured"
        }`,
        "doctor",
      );
    }
    const store = await checkStore(ctx, loaded);
    const servers = config.error ? [] : await checkServers(ctx, loaded, missing, values.server);
    const env = ctx.env.toObject();
    let permissions: { flags: string[]; notes: string[] } | { error: string } | null = null;
    if (loaded.path !== undefined) {
      try {
        const { flags, notes } = derivePermissions(loaded, {
          storePath: resolve(ctx.cwd, storePath(ctx, loaded)),
          storeUrl: isPostgresUrl(storeLocation(ctx, loaded)) ? storeLocation(ctx, loaded) : undefined,
          cwd: ctx.cwd,
          which: (command, searchPath) => whichCommand(command, { ...env, PATH: searchPath ?? env.PATH }),
        });
        if (missing.size) {
          notes.push(`left out until their variables are set: ${[...missing.keys()].join(", ")}`);
        }
        permissions = { flags, notes };
      } catch (error) {
        permissions = { error: (error as Error).message };
      }
    }
    let hosts: {
      host: string;
      scope: string;
      path: string;
      mcphub: boolean;
      error?: string;
      /** Each entry that starts mcphub, checked as the host starts it (its env, a minimal PATH). */
      entries?: { entry: string; problems: string[] }[];
    }[] = [];
    let home: string | undefined;
    try {
      const hostEnv = hostEnvironment(ctx);
      home = hostEnv.home;
      const entries: HostEntryCheck[] = await checkHostEntries(hostEnv);
      hosts = (await scanHosts(hostEnv)).map((r) => {
        const own = entries.filter((e) => e.path === r.path && e.scope === r.scope);
        return {
          host: r.host,
          scope: r.scope,
          path: r.path,
          mcphub: r.mcphub.length > 0,
          ...(r.error ? { error: r.error } : {}),
          ...(own.length ? { entries: own.map((e) => ({ entry: e.entry, problems: e.problems })) } : {}),
        };
      });
    } catch {
      // no HOME: no host configs to look at
    }
    const failed = servers.filter((s) => s.state === "failed");
    const hostsFailing = hosts.filter((h) => h.entries?.some((e) => e.problems.length));
    const ok = !config.error && !store.error && failed.length === 0 && hostsFailing.length === 0;
    if (values.json || ctx.global.json) {
      ctx.out(JSON.stringify({ ok, config, store, servers, permissions, hosts }, null, 2) + "\n");
      return ok ? 0 : 1;
    }
    const out: string[] = [];
    const mark = (bad: boolean) => bad ? "BROKEN" : "ok";
    const used = config.lookup.find((c) => c.exists);
    out.push(
      `config       ${mark(Boolean(config.error))}  ${config.file ?? "(none: embedded default)"}${
        used ? ` (${used.source})` : ""
      }`,
    );
    out.push(`  looked at: ${config.lookup.map((c) => `${c.path}${c.exists ? " *" : ""}`).join(", ")}`);
    if (config.error) out.push(...config.error.split("\n").map((line) => `  error: ${line}`));
    for (const warning of config.warnings) out.push(`  warning: ${warning}`);
    out.push(
      `store        ${mark(Boolean(store.error))}  ${store.path}${
        store.exists && store.postgres
          ? ` (PostgreSQL, ${size(store.bytes ?? 0)}, ${store.integrity})`
          : store.exists
          ? ` (mode ${store.mode ?? "?"}, ${size(store.bytes ?? 0)}, integrity ${
            store.integrity ?? "not checked"
          })`
          : ""
      }`,
    );
    out.push(`  retention: ${store.retention}`);
    if (store.error) out.push(`  error: ${store.error}`);
    for (const warning of store.warnings) out.push(`  warning: ${warning}`);
    if (!config.error) {
      const connected = servers.filter((s) => s.state === "connected").length;
      const enabled = servers.filter((s) => s.state !== "disabled").length;
      out.push(`servers      ${mark(failed.length > 0)}  ${connected} of ${enabled} enabled connected`);
      for (const s of servers) {
        if (s.state === "connected") {
          out.push(`  ok      ${s.name}  ${s.connect_ms} ms, ${s.tools} tools  (${s.kind}: ${s.target})`);
          for (const r of s.rejected ?? []) {
            out.push(`          warning: tool "${r.name}" ${r.reason}`);
          }
          for (const f of s.flagged ?? []) {
            out.push(
              `          warning: tool "${f.tool}" carries injection markers (${f.markers.join(", ")}): ` +
                `review it with mcphub describe ${s.name}__${f.tool}`,
            );
          }
        } else if (s.state === "disabled") out.push(`  off     ${s.name}  disabled`);
        else {
          out.push(`  FAILED  ${s.name}  ${s.problem}: ${s.error}  (${s.kind}: ${s.target})`);
          out.push(`          fix: ${s.fix}`);
          if (s.stderr_tail) out.push(`          stderr:\n${s.stderr_tail.replace(/^/gm, "            ")}`);
        }
      }
    }
    if (permissions && "flags" in permissions) {
      out.push(`permissions  ${permissions.flags.join(" ")}`);
      for (const note of permissions.notes) out.push(`  note: ${note}`);
    } else if (permissions) out.push(`permissions  cannot derive: ${permissions.error}`);
    if (hosts.length) {
      out.push("hosts");
      for (const h of hosts) {
        const label = locationLabel({ host: "file", path: h.path } as HostLocation, home ?? "");
        const state = h.error
          ? `unreadable: ${h.error}`
          : h.mcphub
          ? "starts mcphub"
          : `does not start mcphub (mcphub hosts use ${h.host}${h.scope === "user" ? "" : " --project"})`;
        out.push(`  ${h.host} (${h.scope}, ${label}): ${state}`);
        for (const e of h.entries ?? []) {
          if (!e.problems.length) continue;
          out.push(`    BROKEN  "${e.entry}" as ${h.host} starts it (its env, PATH=${GUI_PATH}):`);
          for (const problem of e.problems) out.push(`      ${problem}`);
        }
      }
    } else out.push("hosts        no MCP host config found");
    const problems = [
      ...(config.error ? ["config"] : []),
      ...(store.error ? ["store"] : []),
      ...failed.map((s) => `server ${s.name}`),
      ...hostsFailing.map((h) => `host ${h.host} (${h.scope})`),
    ];
    out.push(ok ? "\nhealthy" : `\nbroken: ${problems.join(", ")}`);
    ctx.out(out.join("\n") + "\n");
    return ok ? 0 : 1;
  },
};
