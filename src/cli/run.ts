/**
 * The CLI's entry: `mcp serve` starts loading only what it needs (an agent host waits for its
 * `initialize` answer); any other command loads every command (`mod.ts`).
 *
 * @module
 */
import { type CommandContext, type GlobalOptions, UsageError } from "./command.ts";
import { suggest } from "./suggest.ts";

/** Pulls the global flags out of `args`, wherever they appear before a `--`. */
export function splitGlobals(
  args: readonly string[],
): { global: GlobalOptions; rest: string[]; version: boolean; help: boolean } {
  const global: GlobalOptions = { json: false };
  const rest: string[] = [];
  let version = false;
  let help = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") {
      rest.push(...args.slice(i));
      break;
    }
    const eq = arg.indexOf("=");
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    if (flag === "--config" || flag === "--db") {
      const value = eq > 0 ? arg.slice(eq + 1) : args[++i];
      if (value === undefined || value === "") throw new UsageError(`${flag} needs a path`);
      global[flag === "--config" ? "config" : "db"] = value;
    } else if (arg === "--json") global.json = true;
    else if (arg === "--version" || arg === "-V") version = true;
    else if (arg === "--help" || arg === "-h") help = true;
    else rest.push(arg);
  }
  return { global, rest, version, help };
}

/** Flags named in a help text, plus the global ones. */
function knownFlags(help: string): string[] {
  const named = help.match(/(?<![\w-])--[a-z][a-z-]*/g) ?? [];
  return [...new Set([...named, ...GLOBAL_FLAGS])];
}

const GLOBAL_FLAGS = ["--config", "--db", "--json", "--version", "--help"];

/** An unknown-option message with "did you mean --x?" added when a known flag is close. */
/** @internal */
export function withFlagHint(message: string, help: string): string {
  const match = /^Unknown option '(--?[^'=]+)'/.exec(message) ??
    /^unknown option "(--?[^"=]+)"/.exec(message);
  if (!match || message.includes("did you mean")) return message;
  const near = suggest(match[1]!, knownFlags(help));
  if (!near) return message;
  const at = match.index + match[0].length;
  return `${message.slice(0, at)}; did you mean ${near}?${message.slice(at)}`;
}

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
