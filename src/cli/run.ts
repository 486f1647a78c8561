/**
 * The CLI's entry: `mcp serve` starts loading only what it needs (an agent host waits for its
 * `initialize` answer); any other command loads every command (`mod.ts`).
 *
 * @module
 */
import { type CommandContext, UsageError } from "./command.ts";
import { splitGlobals, withFlagHint } from "./globals.ts";

/** Runs the CLI; resolves to the exit code. Never calls Deno.exit. */
export async function runCli(
  args: readonly string[],
  base: Omit<CommandContext, "args" | "global">,
): Promise<number> {
  let parsed: ReturnType<typeof splitGlobals>;
  try {
    parsed = splitGlobals(args);
  } catch {
    parsed = { global: { json: false }, rest: [], version: false, help: true };
  }
  const { global, rest, help } = parsed;
  if (help || rest[0] !== "mcp" || rest[1] !== "serve") {
    const { runAnyCommand } = await import("./mod.ts");
    return await runAnyCommand(args, base);
  }
  // What runAnyCommand does for `mcp serve`, without loading the other commands.
  if (!global.config && base.env.get("MCPHUB_CONFIG")) global.config = base.env.get("MCPHUB_CONFIG");
  if (!global.db && base.env.get("MCPHUB_DB")) global.db = base.env.get("MCPHUB_DB");
  const { serveCommand } = await import("./serve.ts");
  try {
    return await serveCommand.run({ ...base, args: rest.slice(2), global }) ?? 0;
  } catch (error) {
    if (error instanceof UsageError) {
      let help = serveCommand.help;
      if (error.command !== undefined && error.command !== serveCommand.name) {
        const { COMMANDS, mainHelp } = await import("./mod.ts");
        help = COMMANDS.find((c) => c.name === error.command)?.help ?? mainHelp();
      }
      base.err(`error: ${withFlagHint(error.message, help)}\n\n${help}`);
      return 2;
    }
    base.err(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}
