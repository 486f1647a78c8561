/**
 * Installs the pinned real MCP servers that the tests and benchmarks start
 * (tests/servers/package.json + package-lock.json) with `npm ci`, once.
 *
 * @module
 */
import { fileURLToPath } from "node:url";

const dir = fileURLToPath(new URL("../tests/servers/", import.meta.url));
const lock = await Deno.readTextFile(`${dir}package-lock.json`);
const stamp = `${dir}node_modules/.mcphub-lock`;

let installed = "";
try {
  installed = await Deno.readTextFile(stamp);
} catch {
  // not installed yet
}

if (installed !== lock) {
  console.error("mcphub: installing the pinned test servers (npm ci in tests/servers)…");
  const npm = Deno.build.os === "windows" ? "npm.cmd" : "npm";
  const { code } = await new Deno.Command(npm, {
    args: ["ci", "--no-audit", "--no-fund", "--loglevel=error"],
    cwd: dir,
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  if (code !== 0) {
    console.error(`error: npm ci in ${dir} failed with exit code ${code}`);
    Deno.exit(1);
  }
  await Deno.writeTextFile(stamp, lock);
}

// The metrics tests scrape with a real Prometheus (Debian's package); under CI on Linux it must be there.
const { ensurePrometheus } = await import("./setup_prometheus.ts");
if (!await ensurePrometheus() && Deno.env.get("CI") === "true" && Deno.build.os === "linux") {
  console.error("error: Prometheus is required under CI (tests/observability/)");
  Deno.exit(1);
}
