/**
 * Running the pinned conformance suite (@modelcontextprotocol/conformance, tests/servers/package.json):
 * where it is, running a command to its end, and whether a private network namespace (`unshare -n`,
 * loopback only) is available here: the suite's servers and clients bind every interface.
 */
import { ROOT } from "./helpers.ts";

/** The suite's entry script. */
export const SUITE = `${ROOT}tests/servers/node_modules/@modelcontextprotocol/conformance/dist/index.js`;

/** Runs a command to its end: exit code and stdout + stderr (-1 and the error when it cannot start). */
export async function run(
  command: string,
  args: string[],
  options: Deno.CommandOptions = {},
): Promise<{ code: number; text: string }> {
  try {
    const out = await new Deno.Command(command, { args, stdin: "null", ...options }).output();
    const dec = new TextDecoder();
    return { code: out.code, text: dec.decode(out.stdout) + dec.decode(out.stderr) };
  } catch (error) {
    return { code: -1, text: (error as Error).message };
  }
}

/** Why the suite cannot run in a private network namespace here, or undefined; installs iproute2 when `ip` is missing. */
export async function namespaceUnavailable(): Promise<string | undefined> {
  if (Deno.build.os !== "linux") return "network namespaces need Linux";
  try {
    await Deno.stat(SUITE);
  } catch {
    return "the conformance suite is not installed; run `deno task setup`";
  }
  if ((await run("unshare", ["--version"])).code !== 0) return "unshare (util-linux) is not installed";
  if ((await run("ip", ["-V"])).code !== 0) {
    const update = await run("apt-get", ["update", "-qq"]);
    const install = update.code === 0
      ? await run("apt-get", ["install", "-y", "-qq", "iproute2"], {
        env: { DEBIAN_FRONTEND: "noninteractive" },
      })
      : update;
    if (install.code !== 0) {
      return `ip is missing and installing iproute2 failed: ${install.text.slice(-300)}`;
    }
  }
  const probe = await run("unshare", ["-n", "sh", "-c", "ip link set lo up"]);
  if (probe.code !== 0) return `cannot create a private network namespace: ${probe.text.trim()}`;
  return undefined;
}
