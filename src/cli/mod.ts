/**
 * The command line: global flags, command dispatch, help, and the mapping from
 * errors to exit codes (usage 2, failure 1).
 *
 * @module
 */
import { type Command, type CommandContext, UsageError } from "./command.ts";
import { serveCommand } from "./serve.ts";
import { connectCommand } from "./connect.ts";
import { listCommand } from "./list.ts";
import { statsCommand } from "./stats.ts";
import { permissionsCommand } from "./permissions.ts";
import { describeCommand, searchCommand } from "./discover.ts";
import { pinCommand, unpinCommand } from "./pin.ts";
import { addCommand, disableCommand, enableCommand, removeCommand } from "./config_commands.ts";
import { initCommand } from "./import.ts";
import { hostsCommand } from "./hosts.ts";
import { doctorCommand } from "./doctor.ts";
import { VERSION } from "./version.ts";
import { approveCommand, toolsChangesCommand } from "./approve.ts";
import { storeMigrateCommand } from "./store_migrate.ts";
import { suggest } from "./suggest.ts";
import { splitGlobals, withFlagHint } from "./globals.ts";
import { authLoginCommand, authLogoutCommand, authStatusCommand } from "./auth.ts";

export { type Command, type CommandContext, type GlobalOptions, UsageError } from "./command.ts";
export { VERSION } from "./version.ts";
export { HOST_SNIPPET } from "./serve.ts";
export { splitGlobals } from "./globals.ts";

/** Every command, in help order. */
export const COMMANDS: readonly Command[] = [
  serveCommand,
  connectCommand,
  listCommand,
  searchCommand,
  describeCommand,
  statsCommand,
  initCommand,
  addCommand,
  removeCommand,
  enableCommand,
  disableCommand,
  pinCommand,
  unpinCommand,
  permissionsCommand,
  hostsCommand,
  doctorCommand,
  approveCommand,
  toolsChangesCommand,
  storeMigrateCommand,
  authLoginCommand,
  authStatusCommand,
  authLogoutCommand,
];

function findCommand(words: readonly string[]): { command: Command; used: number } | undefined {
  for (const command of COMMANDS) {
    const names = [command.name, ...(command.aliases ?? [])];
    for (const name of names) {
      const parts = name.split(" ");
      if (parts.every((p, i) => words[i] === p)) return { command, used: parts.length };
    }
  }
  return undefined;
}

/** The commands a partial name such as `mcp` stands for (`mcp serve`), when it is no command itself. */
function commandGroup(words: readonly string[]): Command[] {
  if (words.length === 0) return [];
  const prefix = words.join(" ") + " ";
  return COMMANDS.filter((c) => c.name.startsWith(prefix));
}

/** `unknown command "x"`, with the closest command name when one is close. */
function unknownCommand(words: readonly string[]): UsageError {
  const names = COMMANDS.flatMap((c) => [c.name, ...(c.aliases ?? [])]);
  const twoWords = words.length > 1 ? `${words[0]} ${words[1]}` : undefined;
  const asTwo = twoWords && words[0] === "mcp" ? suggest(twoWords, names) : undefined;
  const typed = asTwo ? twoWords! : words[0]!;
  const match = asTwo ?? (commandGroup(words.slice(0, 1)).length ? undefined : suggest(typed, [
    ...names.filter((n) => !n.includes(" ")),
    "help",
  ])) ?? (words[0] === "mcp" ? "mcp serve" : undefined);
  return new UsageError(`unknown command "${typed}"${match ? `; did you mean \`${match}\`?` : ""}`);
}

/** `mcphub --version` text. */
export function versionText(): string {
  return `mcphub ${VERSION} (deno ${Deno.version.deno}, ${Deno.build.target})`;
}

/** The top-level help. */
export function mainHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return `mcphub ${VERSION}: one bounded, lossless, searchable MCP gateway in front of all your MCP servers

Usage: mcphub [--config PATH] [--db PATH] [--json] <command> [options]

Commands:
${COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join("\n")}
  ${"help".padEnd(width)}  Show help for a command: mcphub help <command>

Global options:
  --config PATH   Config file (env MCPHUB_CONFIG; default ./mcphub.yaml, then ~/.config/mcphub/)
  --db PATH|URL   Store: a file, or postgres://… shared by replicas (env MCPHUB_DB; config store:;
                  default ~/.local/share/mcphub/mcphub.db)
  --json          Machine-readable output where a command prints a table
  --version, -V   Print the version
  --help, -h      Print this help
`;
}

/**
 * {@linkcode runCli} for every command (what it loads when the command is not `mcp serve`). @internal
 */
export async function runAnyCommand(
  args: readonly string[],
  base: Omit<CommandContext, "args" | "global">,
): Promise<number> {
  let commandName: string | undefined;
  try {
    const { global, rest, version, help } = splitGlobals(args);
    if (!global.config && base.env.get("MCPHUB_CONFIG")) global.config = base.env.get("MCPHUB_CONFIG");
    if (!global.db && base.env.get("MCPHUB_DB")) global.db = base.env.get("MCPHUB_DB");
    if (version && rest.length === 0) {
      base.out(versionText() + "\n");
      return 0;
    }
    if (rest.length === 0) {
      (help ? base.out : base.err)(mainHelp());
      return help ? 0 : 2;
    }
    if (rest[0] === "help") {
      const words = rest.slice(1);
      const target = findCommand(words);
      const group = target ? [] : commandGroup(words);
      if (words.length > 0 && !target && group.length === 0) throw unknownCommand(words);
      base.out(
        target ? target.command.help : group.length ? group.map((c) => c.help).join("\n") : mainHelp(),
      );
      return 0;
    }
    if (rest[0]!.startsWith("-") && rest[0] !== "-") {
      throw new UsageError(withFlagHint(`unknown option "${rest[0]!.split("=")[0]}"`, mainHelp()));
    }
    const found = findCommand(rest);
    if (!found && help && commandGroup(rest).length) {
      base.out(commandGroup(rest).map((c) => c.help).join("\n"));
      return 0;
    }
    if (!found) throw unknownCommand(rest);
    commandName = found.command.name;
    if (help) {
      base.out(found.command.help);
      return 0;
    }
    const code = await found.command.run({ ...base, args: rest.slice(found.used), global });
    return code ?? 0;
  } catch (error) {
    if (error instanceof UsageError) {
      const command = COMMANDS.find((c) => c.name === (error.command ?? commandName));
      const help = command ? command.help : mainHelp();
      base.err(`error: ${withFlagHint(error.message, help)}\n\n${help}`);
      return 2;
    }
    base.err(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}
