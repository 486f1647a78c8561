/**
 * Checks a host's mcphub entry the way the host starts it: a host launched from the desktop (Claude Desktop,
 * Cursor, VS Code from the dock) gives its servers only the entry's own `env` and a minimal PATH, not your
 * shell's. The entry's command must resolve there, and every server of the config it loads must find its
 * `${VAR}`s and its command there. Nothing is started: the check is static and fast.
 *
 * @module
 */
import { isAbsolute } from "node:path";
import { ConfigError, findConfigPath, parseConfig } from "../config/mod.ts";
import {
  type HostEnvironment,
  type HostFile,
  hostLocations,
  HOSTS,
  type HostServer,
  pointsAtMcphub,
  readLocations,
} from "./host_configs.ts";
import { whichCommand } from "./permissions.ts";
import { shimArgs } from "./hosts.ts";

/** The PATH a host started from the desktop has at most (macOS launchd's default). */
export const GUI_PATH = "/usr/bin:/bin:/usr/sbin:/sbin";

/** What doctor found about one host entry that starts mcphub. */
export interface HostEntryCheck {
  host: string;
  scope: string;
  path: string;
  /** The entry's name in the host file. */
  entry: string;
  /** What would fail where the host starts mcphub; empty when everything would start. */
  problems: string[];
}

function executable(path: string): boolean {
  try {
    const info = Deno.statSync(path);
    return info.isFile && (Deno.build.os === "windows" || ((info.mode ?? 0o111) & 0o111) !== 0);
  } catch {
    return false;
  }
}

/** The value of `--name VALUE` or `--name=VALUE` in `args`. */
function flag(args: readonly string[], name: string): string | undefined {
  for (let i = 0; i < args.length; i++) {
    if (args[i] === name) return args[i + 1];
    if (args[i]!.startsWith(`${name}=`)) return args[i]!.slice(name.length + 1);
  }
  return undefined;
}

/**
 * The variables the host gives mcphub: HOME, the minimal PATH, and the entry's `env` (a value the host fills in
 * itself, as `${env:X}` or `${input:Y}`, counts as set).
 */
function entryVariables(server: HostServer, home: string): Map<string, string> {
  const vars = new Map<string, string>([["HOME", home], ["PATH", GUI_PATH]]);
  for (const [key, value] of Object.entries(server.env)) {
    vars.set(
      key,
      /\$\{/.test(value.replaceAll("$$", "")) ? "(set by the host)" : value.replaceAll("$$", "$"),
    );
  }
  return vars;
}

/** Problems of one host entry that starts mcphub, as the host would start it. */
export function checkEntry(server: HostServer, home: string): string[] {
  const host = server.location.host === "file" ? server.location.path : server.location.host;
  const vars = entryVariables(server, home);
  const path = vars.get("PATH")!;
  const problems: string[] = [];
  const command = server.command!;
  const found = isAbsolute(command)
    ? (executable(command) ? command : undefined)
    : whichCommand(command, { PATH: path });
  if (found === undefined) {
    problems.push(
      isAbsolute(command)
        ? `${command} does not exist or is not executable: run mcphub hosts use ${host} again`
        : `"${command}" is not on the PATH a host started from the desktop has (${path}): it fails with ` +
          `"spawn ${command} ENOENT"; mcphub hosts use ${host} writes the absolute path`,
    );
    return problems;
  }
  if (shimArgs(found) !== undefined && whichCommand("deno", { PATH: path }) === undefined) {
    problems.push(
      `${found} runs a bare "deno", which is not on that PATH (${path}): mcphub hosts use ${host} writes ` +
        "deno's absolute path instead",
    );
  }
  const env = { get: (key: string) => vars.get(key), toObject: () => Object.fromEntries(vars) };
  // A host starts its servers from a directory of its own: no project's mcphub.yaml is found there.
  const cwd = "/";
  let file: string | undefined;
  try {
    file = findConfigPath(flag(server.args, "--config"), { env, cwd, home });
  } catch (error) {
    problems.push(`its config: ${(error as Error).message}`);
    return problems;
  }
  if (file === undefined) return problems;
  let text: string;
  try {
    text = Deno.readTextFileSync(file);
  } catch (error) {
    problems.push(`cannot read ${file}: ${(error as Error).message}`);
    return problems;
  }
  const agent = flag(server.args, "--agent");
  let config;
  try {
    config = parseConfig(text, file, { env, cwd, home, agent, serverErrors: "fail-server" });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    problems.push(`${file}: ${error.message}`);
    return problems;
  }
  for (const s of config.servers) {
    if (!s.enabled) continue;
    if (s.loadError !== undefined) {
      const unset = [...s.loadError.matchAll(/environment variable ([A-Za-z_][A-Za-z0-9_]*) is not set/g)]
        .map((m) => m[1]!);
      problems.push(
        unset.length
          ? `server ${s.name} would fail: ${unset.join(", ")} ${
            unset.length > 1 ? "are" : "is"
          } not set in ` +
            `the entry's env (mcphub hosts use ${host} sets the values this host's file holds; else add ` +
            `${unset.length > 1 ? "them" : "it"} to the entry's "env")`
          : `server ${s.name} would fail: ${s.loadError}`,
      );
      continue;
    }
    if (s.command === undefined) continue;
    const serverPath = s.env?.PATH ?? path;
    const resolved = isAbsolute(s.command)
      ? (executable(s.command) ? s.command : undefined)
      : whichCommand(s.command, { PATH: serverPath });
    if (resolved === undefined) {
      problems.push(
        `server ${s.name} would fail: "${s.command}" is not on the PATH mcphub gets there (${serverPath}); ` +
          `set servers.${s.name}.command to its full path, or PATH in the entry's env`,
      );
    }
  }
  return problems;
}

/** Every host entry that starts mcphub, checked as its host would start it. */
export async function checkHostEntries(env: HostEnvironment): Promise<HostEntryCheck[]> {
  const files: HostFile[] = [];
  for (const host of HOSTS) files.push(...await readLocations(hostLocations(host, env), env.home));
  return files.flatMap((file) =>
    file.servers.filter(pointsAtMcphub).map((server) => ({
      host: file.location.host,
      scope: file.location.scope,
      path: file.location.path,
      entry: server.name,
      problems: checkEntry(server, env.home),
    }))
  );
}
