/**
 * One executable per platform: `deno compile` of main.ts into `dist/mcphub-<target>[.exe]`, plus
 * `dist/SHA256SUMS` (the `sha256sum -c` format) for what this run built.
 *
 * Usage: deno run -A scripts/compile.ts [--target T]... [--output DIR] [--config PATH [--db PATH]
 *        [--agent NAME]] [--dry-run]
 *
 * - Release build (no `--config`): every target by default, with {@linkcode RELEASE_PERMISSIONS}.
 * - Locked build (`--config PATH`): the host target by default, with the permission set derived from
 *   that config (`mcphub permissions`), and `--config PATH --db STORE` baked in as the binary's
 *   first arguments, so it serves that config and nothing else it is not allowed to touch.
 *
 * `deno compile` downloads its runtime (denort) for each target on first use. An offline builder
 * supplies it with `DENORT_BIN=/path/to/denort` (Deno reads it for whatever target it builds, so
 * with DENORT_BIN set one target is built: the host by default). When the runtime cannot be had,
 * this exits with code 3 and a line `mcphub compile: runtime unavailable: …`.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import { basename, join, resolve } from "node:path";
import { loadConfig } from "../src/config/mod.ts";
import { derivePermissions, whichCommand } from "../src/cli/permissions.ts";
import { defaultStorePath } from "../src/store/mod.ts";

/** Repository root, with a trailing slash. */
const ROOT = fileURLToPath(new URL("../", import.meta.url));

/** Every target a release ships. */
export const TARGETS = [
  "x86_64-unknown-linux-gnu",
  "aarch64-unknown-linux-gnu",
  "x86_64-apple-darwin",
  "aarch64-apple-darwin",
  "x86_64-pc-windows-msvc",
] as const;

/** One of {@linkcode TARGETS}. */
export type Target = typeof TARGETS[number];

/**
 * The release binary's permissions. The config, the store, the servers' commands and the remote
 * servers' addresses are all chosen at run time (`--config`, `$MCPHUB_CONFIG`, XDG directories), so
 * read, write, run and net cannot be narrowed when building for everyone; `--allow-env` because every
 * server inherits the whole environment. Never `--allow-ffi` (the store is the built-in node:sqlite)
 * nor `--allow-sys` (nothing asks for OS information); `--no-prompt` so a missing permission fails
 * at once instead of prompting on a terminal. A locked build narrows all of these to one config.
 */
export const RELEASE_PERMISSIONS = [
  "--allow-run",
  "--allow-read",
  "--allow-write",
  "--allow-net",
  "--allow-env",
  "--no-prompt",
] as const;

/** What to build. */
export interface CompileOptions {
  /** @default every target; the host only for a locked build or when DENORT_BIN is set */
  targets?: readonly Target[];
  /** @default `<repo>/dist` */
  outputDir?: string;
  /** A locked build: the derived flags and the arguments baked in before the user's. */
  locked?: { flags: readonly string[]; config: string; store: string };
}

/** One `deno compile` invocation. */
export interface BuildPlan {
  target: Target;
  /** The binary's path. */
  output: string;
  /** Arguments after `deno`. */
  args: string[];
}

/** The binary's file name for a target. */
export function binaryName(target: Target): string {
  return `mcphub-${target}${target.includes("windows") ? ".exe" : ""}`;
}

/** The host's target, when it is one we ship. */
export function hostTarget(): Target | undefined {
  return (TARGETS as readonly string[]).includes(Deno.build.target) ? Deno.build.target as Target : undefined;
}

/** Modules started as Web Workers, embedded with `--include` (a static import graph does not reach them). */
export const WORKER_MODULES = ["src/resolver/index_worker_main.ts", "src/resolver/index_worker.ts"] as const;

/** The `deno compile` invocations for `options`. Pure. */
export function planBuilds(options: CompileOptions): BuildPlan[] {
  const outputDir = options.outputDir ?? join(ROOT, "dist");
  const targets = options.targets ?? TARGETS;
  const permissions = options.locked ? [...options.locked.flags, "--no-prompt"] : [...RELEASE_PERMISSIONS];
  const baked = options.locked ? ["--config", options.locked.config, "--db", options.locked.store] : [];
  return targets.map((target) => {
    const output = join(outputDir, binaryName(target));
    return {
      target,
      output,
      args: [
        "compile",
        ...permissions,
        "--target",
        target,
        "--output",
        output,
        // Started with new Worker(), which deno compile does not follow: the large-catalog index worker.
        ...WORKER_MODULES.flatMap((module) => ["--include", join(ROOT, module)]),
        join(ROOT, "main.ts"),
        ...baked,
      ],
    };
  });
}

/** Deno could not get denort for a target: no network to its download host and no DENORT_BIN. */
export function isRuntimeUnavailable(stderr: string): boolean {
  return /Setting up base binary|dl\.deno\.land|denort/i.test(stderr) &&
    /error sending request|dns error|failed to lookup|Connect|timed out|Could not find denort|404/i.test(
      stderr,
    );
}

const USAGE = `Usage: deno run -A scripts/compile.ts [--target T]... [--output DIR]
                                     [--config PATH [--db PATH] [--agent NAME]] [--dry-run]

Builds dist/mcphub-<target>[.exe] with deno compile, and dist/SHA256SUMS.
  --target T     ${TARGETS.join(", ")}, host, or all
                 (default: all; host for --config or when DENORT_BIN is set)
  --output DIR   Where the binaries go (default: dist/)
  --config PATH  A locked build: the permissions derived from this config (mcphub permissions),
                 with --config PATH --db STORE baked in
  --db PATH      The locked build's store (default: $MCPHUB_DB, else the XDG default)
  --agent NAME   Lock to this agent's servers (run it as mcp serve --agent NAME)
  --dry-run      Print the deno compile commands only
Environment: DENORT_BIN=/path/to/denort supplies the runtime offline (one target per build).
`;

class UsageError extends Error {
  override name = "UsageError";
}

function parseTargets(values: string[] | undefined, defaultHost: boolean): Target[] | undefined {
  if (!values || values.length === 0) {
    if (!defaultHost) return undefined;
    const host = hostTarget();
    if (!host) {
      throw new UsageError(`This host (${Deno.build.target}) is not a target we ship; pass --target`);
    }
    return [host];
  }
  const out: Target[] = [];
  for (const value of values) {
    if (value === "all") out.push(...TARGETS);
    else if (value === "host") out.push(...parseTargets([], true)!);
    else if ((TARGETS as readonly string[]).includes(value)) out.push(value as Target);
    else throw new UsageError(`Unknown target "${value}"; use one of ${TARGETS.join(", ")}, host or all`);
  }
  return [...new Set(out)];
}

async function sha256(path: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", await Deno.readFile(path));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

function shellLine(args: readonly string[]): string {
  return args.map((a) => /^[A-Za-z0-9_\-=,./:@%+]+$/.test(a) ? a : `'${a.replaceAll("'", `'\\''`)}'`).join(
    " ",
  );
}

/** The derived flags of a locked build, and the absolute config and store paths to bake in. */
async function lockedPermissions(
  configPath: string,
  db: string | undefined,
  agent: string | undefined,
): Promise<NonNullable<CompileOptions["locked"]>> {
  const cwd = Deno.cwd();
  const config = await loadConfig(configPath, { env: Deno.env, cwd, agent });
  const store = resolve(cwd, db ?? Deno.env.get("MCPHUB_DB") ?? defaultStorePath(Deno.env));
  const env = Deno.env.toObject();
  const permissions = derivePermissions(config, {
    storePath: store,
    agent,
    cwd,
    which: (command, searchPath) => whichCommand(command, { ...env, PATH: searchPath ?? env.PATH }),
  });
  for (const note of permissions.notes) console.error(`mcphub compile: note: ${note}`);
  return { flags: permissions.flags, config: config.path!, store };
}

/** Runs the script; resolves to the exit code (0 built, 1 failed, 2 usage, 3 runtime unavailable). */
export async function main(args: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        target: { type: "string", multiple: true },
        output: { type: "string" },
        config: { type: "string" },
        db: { type: "string" },
        agent: { type: "string" },
        "dry-run": { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    console.error(`error: ${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const denortBin = Deno.env.get("DENORT_BIN");
  let options: CompileOptions;
  try {
    if ((values.db || values.agent) && !values.config) throw new UsageError("--db and --agent need --config");
    const targets = parseTargets(values.target, values.config !== undefined || Boolean(denortBin));
    if (denortBin && targets && targets.length > 1) {
      throw new UsageError(
        `DENORT_BIN (${denortBin}) is the runtime of one target, but ${targets.length} targets were asked ` +
          "for; pass the --target it belongs to",
      );
    }
    options = { targets, outputDir: values.output ? resolve(values.output) : undefined };
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`error: ${error.message}\n\n${USAGE}`);
    return 2;
  }
  if (values.config !== undefined) {
    try {
      options.locked = await lockedPermissions(values.config, values.db, values.agent);
    } catch (error) {
      console.error(`error: ${(error as Error).message}`);
      return 1;
    }
    const host = hostTarget();
    if ((options.targets ?? []).some((target) => target !== host)) {
      console.error(
        "mcphub compile: note: a locked build carries this machine's paths (config, store, commands on PATH); " +
          "it is meant for this machine",
      );
    }
  }
  const plans = planBuilds(options);
  if (values["dry-run"]) {
    for (const plan of plans) console.log(shellLine([Deno.execPath(), ...plan.args]));
    return 0;
  }
  const built: string[] = [];
  for (const plan of plans) {
    console.error(`mcphub compile: ${basename(plan.output)}${options.locked ? " (locked)" : ""}`);
    const result = await new Deno.Command(Deno.execPath(), {
      args: plan.args,
      cwd: ROOT,
      stdout: "inherit",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(result.stderr);
    await Deno.stderr.write(result.stderr);
    if (result.code !== 0) {
      if (isRuntimeUnavailable(stderr)) {
        console.error(
          `mcphub compile: runtime unavailable: deno compile could not get denort for ${plan.target} ` +
            "(it downloads it from dl.deno.land on first use); set DENORT_BIN to a denort binary for " +
            "that target and pass --target, or build where that host is reachable",
        );
        return 3;
      }
      console.error(`mcphub compile: deno compile for ${plan.target} failed with exit code ${result.code}`);
      return 1;
    }
    built.push(plan.output);
    if (plan.target === hostTarget()) {
      // A DENORT_BIN that is not denort (e.g. the full deno binary) builds a file that is just deno.
      const version = await new Deno.Command(plan.output, { args: ["--version"], stdin: "null" }).output();
      const text = new TextDecoder().decode(version.stdout);
      if (version.code !== 0 || !text.startsWith("mcphub ")) {
        console.error(
          `mcphub compile: ${plan.output} does not answer --version as mcphub (got "${text.trim()}"); ` +
            `${denortBin ? `DENORT_BIN=${denortBin} is not a denort runtime` : "the build is broken"}`,
        );
        return 1;
      }
      console.error(`mcphub compile: ${text.trim()}`);
    }
  }
  const dir = options.outputDir ?? join(ROOT, "dist");
  const lines = [];
  for (const path of built.sort()) lines.push(`${await sha256(path)}  ${basename(path)}\n`);
  await Deno.writeTextFile(join(dir, "SHA256SUMS"), lines.join(""));
  console.error(`mcphub compile: wrote ${join(dir, "SHA256SUMS")}`);
  return 0;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
