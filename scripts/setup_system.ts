/**
 * Installs the system programs some tests need, explicitly, before the tests run (`deno task test` runs it,
 * and so does CI's .ci/run through that task): PostgreSQL's server (Debian's `postgresql`), a headless
 * Chromium (`chromium`) and iproute2's `ip` (`iproute2`, for the conformance suites' private network
 * namespace). Tests never install anything: without one of these they are ignored and say what to install
 * (tests/_system.ts), except under `CI=true` on Linux, where they fail.
 *
 * On Linux as root with apt-get, what is missing is installed (one `apt-get update`, then one
 * `apt-get install`). Elsewhere it prints what is missing. Exit code: 1 when something is still missing
 * under `CI=true` on Linux (the run must not go on testing less), else 0.
 *
 * Usage: deno run -A scripts/setup_system.ts [--check] (`--check` installs nothing, only reports)
 *
 * @module
 */
import {
  CHROMIUM_MISSING,
  findChromium,
  namespaceMissing,
  postgresMissing,
  STRICT,
} from "../tests/_system.ts";

/** A system dependency: its Debian package and why it is missing here (undefined: present). */
interface Dependency {
  what: string;
  pkg: string;
  missing(): Promise<string | undefined>;
}

const DEPENDENCIES: Dependency[] = [
  { what: "PostgreSQL server", pkg: "postgresql", missing: () => Promise.resolve(postgresMissing()) },
  {
    what: "headless Chromium",
    pkg: "chromium",
    missing: async () => await findChromium() ? undefined : CHROMIUM_MISSING,
  },
  { what: "ip (network namespaces)", pkg: "iproute2", missing: () => namespaceMissing() },
];

async function apt(args: string[]): Promise<boolean> {
  console.error(`setup_system: apt-get ${args.join(" ")}`);
  try {
    const { success } = await new Deno.Command("apt-get", {
      args,
      env: { DEBIAN_FRONTEND: "noninteractive" },
      stdin: "null",
      stdout: "inherit",
      stderr: "inherit",
    }).output();
    return success;
  } catch {
    return false;
  }
}

/** What is missing after installing (unless `check`); prints each finding. */
export async function setupSystem(check = false): Promise<string[]> {
  const missing = async () => {
    const out: { dep: Dependency; why: string }[] = [];
    for (const dep of DEPENDENCIES) {
      const why = await dep.missing();
      if (why) out.push({ dep, why });
    }
    return out;
  };
  let absent = await missing();
  const canApt = Deno.build.os === "linux" && Deno.uid?.() === 0;
  if (absent.length && canApt && !check) {
    const pkgs = absent.map((a) => a.dep.pkg);
    if (await apt(["update", "-qq"])) await apt(["install", "-y", "-qq", "--no-install-recommends", ...pkgs]);
    absent = await missing();
  }
  for (const { dep, why } of absent) console.error(`setup_system: missing ${dep.what}: ${why}`);
  if (!absent.length) console.error(`setup_system: ${DEPENDENCIES.map((d) => d.what).join(", ")}: present`);
  return absent.map((a) => a.dep.pkg);
}

if (import.meta.main) {
  const absent = await setupSystem(Deno.args.includes("--check"));
  if (absent.length && STRICT) {
    console.error(
      `setup_system: CI=true and ${absent.join(", ")} missing: failing the run instead of ignoring tests`,
    );
    Deno.exit(1);
  }
}
