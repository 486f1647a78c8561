/**
 * A temp HOME with a project directory, for tests of `init --from`, `hosts` and `doctor`: no real host
 * config is read or written. Host fixture files (tests/fixtures/hosts/) are installed where each host
 * keeps them on Linux.
 *
 * @module
 */
import { dirname, join } from "node:path";
import { ROOT, runCliHere, sandboxEnv } from "../helpers.ts";

/** The fixture host files. */
export const HOST_FIXTURES = `${ROOT}tests/fixtures/hosts/`;

/** One CLI run. */
export interface Run {
  code: number;
  out: string;
  err: string;
}

/** A temp HOME; the working directory is `$HOME/project`. */
export interface HostSandbox extends AsyncDisposable {
  home: string;
  project: string;
  /** `$HOME/.config/mcphub/mcphub.yaml`, where init writes. */
  config: string;
  env: Map<string, string>;
  run(...args: string[]): Promise<Run>;
  /** Copies a fixture to a path under HOME (`~/…`) or the project (`./…`), `__PROJECT__` replaced. */
  install(fixture: string, to: string): Promise<string>;
  backups(dir: string): Promise<string[]>;
}

/** Where each host's fixture goes (Linux paths). */
export const PLACES: Record<string, [string, string][]> = {
  "claude-desktop": [["claude_desktop_config.json", "~/.config/Claude/claude_desktop_config.json"]],
  "claude-code": [["claude.json", "~/.claude.json"], ["mcp.json", "./.mcp.json"]],
  cursor: [["cursor_mcp.json", "~/.cursor/mcp.json"]],
  vscode: [["vscode_mcp.jsonc", "./.vscode/mcp.json"]],
  windsurf: [["windsurf_mcp_config.json", "~/.codeium/windsurf/mcp_config.json"]],
  codex: [["codex_config.toml", "~/.codex/config.toml"]],
  gemini: [["gemini_settings.json", "~/.gemini/settings.json"]],
};

/** Creates the sandbox; `env` adds variables (PATH is the test's own unless given). */
export async function hostSandbox(env: Record<string, string> = {}): Promise<HostSandbox> {
  const home = await Deno.realPath(await Deno.makeTempDir({ prefix: "mcphub_hosts_" }));
  const project = join(home, "project");
  await Deno.mkdir(project);
  // The CLI sandbox's environment (tests/helpers.ts): XDG_* under this HOME, the real Deno cache.
  const vars = new Map<string, string>(Object.entries({ ...sandboxEnv(home), ...env }));
  const resolvePlace = (to: string) =>
    to.startsWith("~/") ? join(home, to.slice(2)) : join(project, to.slice(2));
  return {
    home,
    project,
    config: join(home, ".config", "mcphub", "mcphub.yaml"),
    env: vars,
    run: (...args) => runCliHere(args, { env: Object.fromEntries(vars), cwd: project }),
    async install(fixture, to) {
      const path = resolvePlace(to);
      await Deno.mkdir(dirname(path), { recursive: true });
      const text = await Deno.readTextFile(HOST_FIXTURES + fixture);
      await Deno.writeTextFile(path, text.replaceAll("__PROJECT__", project));
      return path;
    },
    async backups(dir) {
      const names: string[] = [];
      for await (const entry of Deno.readDir(dir)) if (entry.name.endsWith(".bak")) names.push(entry.name);
      return names.sort();
    },
    [Symbol.asyncDispose]: () => Deno.remove(home, { recursive: true }),
  };
}

/** Installs every fixture of `host`. */
export async function installHost(box: HostSandbox, host: string): Promise<string[]> {
  const paths: string[] = [];
  for (const [fixture, to] of PLACES[host]!) paths.push(await box.install(fixture, to));
  return paths;
}
