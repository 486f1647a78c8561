/**
 * Installs Prometheus (`prometheus` and `promtool`, Debian's `prometheus` package) for the metrics tests
 * (tests/observability/), once: on Linux with apt-get, as root or through sudo, after one `apt-get
 * update`. Elsewhere, or without apt-get, it says so; under `CI=true` on Linux a Prometheus that cannot
 * be installed fails the setup (the tests must not skip there).
 *
 * Run alone with `deno run -A scripts/setup_prometheus.ts`; `scripts/setup_test_servers.ts` runs it.
 *
 * @module
 */

/** True when `command --version` runs. */
async function runs(command: string): Promise<boolean> {
  try {
    const { success } = await new Deno.Command(command, {
      args: ["--version"],
      stdout: "null",
      stderr: "null",
    })
      .output();
    return success;
  } catch {
    return false;
  }
}

async function run(command: string, args: string[]): Promise<boolean> {
  try {
    const { success } = await new Deno.Command(command, {
      args,
      stdout: "inherit",
      stderr: "inherit",
      env: { DEBIAN_FRONTEND: "noninteractive" },
    }).output();
    return success;
  } catch {
    return false;
  }
}

/**
 * Makes sure `prometheus` and `promtool` are on PATH. Returns true when they are; false (with a reason
 * on stderr) when they cannot be installed here.
 */
export async function ensurePrometheus(): Promise<boolean> {
  if (await runs("prometheus") && await runs("promtool")) return true;
  if (Deno.build.os !== "linux") {
    console.error(
      `mcphub: Prometheus is not installed; the metrics tests need it (Linux: apt-get install prometheus)`,
    );
    return false;
  }
  const root = Deno.uid() === 0;
  const sudo = !root && await runs("sudo");
  if (!root && !sudo) {
    console.error(
      "mcphub: Prometheus is not installed and apt-get needs root (no sudo): apt-get install prometheus",
    );
    return false;
  }
  const apt = (args: string[]) => root ? run("apt-get", args) : run("sudo", ["-n", "apt-get", ...args]);
  console.error("mcphub: installing Prometheus for the metrics tests (apt-get install prometheus)…");
  const ok = await apt(["update", "-qq"]) &&
    await apt(["install", "-y", "-qq", "--no-install-recommends", "prometheus"]);
  if (!ok || !(await runs("prometheus")) || !(await runs("promtool"))) {
    console.error("mcphub: installing Prometheus with apt-get failed");
    return false;
  }
  return true;
}

if (import.meta.main) {
  const ok = await ensurePrometheus();
  if (!ok && Deno.env.get("CI") === "true" && Deno.build.os === "linux") Deno.exit(1);
}
