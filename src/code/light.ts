/**
 * Code mode's names, and the room itself on its first use: what `mcp serve` needs before it answers the
 * host's `initialize` (start-up time; the sandbox, the declarations and `run_code` load with the first
 * `run_code` call or declarations read). `mod.ts` is all of it.
 *
 * @module
 */
export { RUN_CODE, TYPES_URI } from "./names.ts";

let loading: Promise<typeof import("./mod.ts")> | undefined;

/** The whole room, loaded once, on the first call. */
export function loadCode(): Promise<typeof import("./mod.ts")> {
  return loading ??= import("./mod.ts");
}

/** Ends the spare sandbox (a gateway closing); nothing to end when code mode never loaded. */
export async function closeSandboxes(): Promise<void> {
  if (loading) await (await loading).closeSandboxes();
}
