/**
 * Running the pinned conformance suite (@modelcontextprotocol/conformance, tests/servers/package.json):
 * where it is, running a command to its end, and whether a private network namespace (`unshare -n`,
 * loopback only) is available here: the suite's servers and clients bind every interface.
 */
import { ROOT } from "./helpers.ts";
import { namespaceMissing } from "./_system.ts";

/** The suite's entry script. */
export const SUITE = `${ROOT}tests/servers/node_modules/@modelcontextprotocol/conformance/dist/index.js`;

/**
 * The next suite's entry script: 0.2.0-alpha.12 under the alias `conformance-next`
 * (tests/servers/package.json), with the 2026-07-28 (stateless) server scenarios and each revision's
 * frozen requirements (`server --requirements 2025-11-25` or `2026-07-28`).
 */
export const SUITE_NEXT = `${ROOT}tests/servers/node_modules/conformance-next/dist/index.js`;

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

/**
 * Why the suite cannot run in a private network namespace here (with what to install), or undefined.
 * Installing iproute2 is the test setup's job (scripts/setup_system.ts).
 */
export async function namespaceUnavailable(): Promise<string | undefined> {
  try {
    await Deno.stat(SUITE);
    await Deno.stat(SUITE_NEXT);
  } catch {
    return "the conformance suite is not installed; run `deno task setup`";
  }
  return await namespaceMissing();
}
