/**
 * The system programs some tests need (PostgreSQL's server, a headless Chromium, iproute2's `ip` with
 * util-linux's `unshare`): how to find each, and what a test does without one. Installing them is the test
 * setup's job (scripts/setup_system.ts, run by `deno task test`), never a test's. Without one, a test is
 * ignored and says on stderr what to install; under `CI=true` on Linux it is not ignored: it runs and fails
 * at {@linkcode assertPresent}, so a CI run without the dependency is red, not green and testing less.
 *
 * @module
 */
import { existsSync } from "node:fs";

/** True under CI (`CI=true` or `CI=1`). */
export const CI = ["true", "1"].includes((Deno.env.get("CI") ?? "").toLowerCase());

/** Where a dependency is missing it is required (CI on Linux, where scripts/setup_system.ts installs it). */
export const STRICT = CI && Deno.build.os === "linux";

/** PostgreSQL's bin directory (initdb, pg_ctl, psql) of Debian's newest installed server, if any. */
export function pgBinDir(): string | undefined {
  try {
    const versions = [...Deno.readDirSync("/usr/lib/postgresql")].map((e) => e.name).filter((n) =>
      /^\d+$/.test(n)
    )
      .sort((a, b) => Number(b) - Number(a));
    for (const v of versions) {
      if (existsSync(`/usr/lib/postgresql/${v}/bin/initdb`)) return `/usr/lib/postgresql/${v}/bin`;
    }
  } catch {
    // not installed
  }
  return undefined;
}

/** Why PostgreSQL's server cannot be used here, with what to install; undefined when it can. */
export function postgresMissing(): string | undefined {
  return pgBinDir()
    ? undefined
    : "PostgreSQL's server is not installed (no /usr/lib/postgresql/*/bin/initdb): " +
      "install Debian's postgresql package (apt-get install postgresql; `deno task test` does it through " +
      "scripts/setup_system.ts)";
}

async function runs(command: string, args: string[]): Promise<boolean> {
  try {
    const { success } = await new Deno.Command(command, {
      args,
      stdin: "null",
      stdout: "null",
      stderr: "null",
      signal: AbortSignal.timeout(120_000),
    }).output();
    return success;
  } catch {
    return false;
  }
}

const BROWSERS = ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"];

/** The headless browser command (MCPHUB_CHROMIUM, else the first of the usual names that starts). */
export async function findChromium(): Promise<string | undefined> {
  const fromEnv = Deno.env.get("MCPHUB_CHROMIUM");
  for (const name of fromEnv ? [fromEnv] : BROWSERS) {
    if (await runs(name, ["--headless", "--no-sandbox", "--version"])) return name;
  }
  return undefined;
}

/** What to install when no browser is found. */
export const CHROMIUM_MISSING = `no headless browser found (${BROWSERS.join(", ")} or MCPHUB_CHROMIUM): ` +
  "install Debian's chromium package (apt-get install chromium; `deno task test` does it through " +
  "scripts/setup_system.ts)";

/** Why a private network namespace (`unshare -n`, loopback up with `ip`) cannot be made, with what to install. */
export async function namespaceMissing(): Promise<string | undefined> {
  if (Deno.build.os !== "linux") return "network namespaces need Linux";
  if (!await runs("unshare", ["--version"])) {
    return "unshare is not installed: install Debian's util-linux package (apt-get install util-linux)";
  }
  if (!await runs("ip", ["-V"])) {
    return "ip is not installed: install Debian's iproute2 package (apt-get install iproute2; `deno task test` " +
      "does it through scripts/setup_system.ts)";
  }
  if (!await runs("unshare", ["-n", "sh", "-c", "ip link set lo up"])) {
    return "cannot create a private network namespace here (unshare -n needs root or user namespaces)";
  }
  return undefined;
}

/**
 * Whether a test that needs `what` is ignored: not when it is there (`missing` undefined), nor when
 * {@linkcode STRICT} (it runs and fails); otherwise yes, saying on stderr what to install.
 */
export function ignoreWithout(what: string, missing: string | undefined): boolean {
  if (missing === undefined || STRICT) return false;
  console.error(`ignored: ${what}: ${missing}`);
  return true;
}

/** Throws when the dependency is missing (the test runs under CI=true without it: a failure, not a pass). */
export function assertPresent(what: string, missing: string | undefined): void {
  if (missing !== undefined) throw new Error(`${what} cannot run under CI=true: ${missing}`);
}
