/**
 * The global flags (`--config`, `--db`, `--json`, `--version`, `--help`) pulled out of the arguments, and the
 * "did you mean" hint for an unknown option. Shared by the light entry (`run.ts`) and every command (`mod.ts`).
 *
 * @module
 */
import { type GlobalOptions, UsageError } from "./command.ts";
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
