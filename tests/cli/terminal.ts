/**
 * For tests that need a terminal: script(1) runs a command on a pseudo-terminal.
 *
 * @module
 */

/** True when script(1) from util-linux is available (Linux). */
export function hasScript(): boolean {
  if (Deno.build.os !== "linux") return false;
  try {
    return new Deno.Command("script", { args: ["--version"], stdout: "null", stderr: "null" }).outputSync()
      .success;
  } catch {
    return false;
  }
}
