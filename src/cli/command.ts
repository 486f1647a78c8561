/**
 * What every CLI command gets and returns. Commands print through the context
 * (never `console.log`): `mcp serve` owns stdout for the protocol.
 *
 * @module
 */

/** Global flags, parsed before the command. */
export interface GlobalOptions {
  /** `--config PATH`, else `$MCPHUB_CONFIG`. */
  config?: string;
  /** `--db PATH`, else `$MCPHUB_DB`. */
  db?: string;
  /** `--json`: machine-readable output where a command has a table. */
  json: boolean;
}

/** Everything a command may touch; tests pass their own. */
export interface CommandContext {
  /** Arguments after the command name (global flags already removed). */
  args: string[];
  global: GlobalOptions;
  env: { get(key: string): string | undefined; toObject(): Record<string, string> };
  cwd: string;
  /** Writes to stdout (a command's result). */
  out(text: string): void;
  /** Writes to stderr (diagnostics). */
  err(text: string): void;
  /** Aborted on SIGINT/SIGTERM. */
  signal: AbortSignal;
  /** Whether stderr is a terminal (progress lines go there only then). @default Deno.stderr.isTerminal() */
  stderrIsTerminal?: boolean;
}

/** One subcommand: one file in src/cli/. */
export interface Command {
  name: string;
  aliases?: string[];
  /** One line for `mcphub --help`. */
  summary: string;
  /** Full help text for `mcphub help NAME` and usage errors. */
  help: string;
  /** Resolves to the exit code (0 when omitted). */
  run(ctx: CommandContext): Promise<number | void>;
}

/** Bad flags or arguments: the CLI prints the command's help and exits 2. */
export class UsageError extends Error {
  override name = "UsageError";
  readonly exitCode = 2;
  constructor(message: string, readonly command?: string, options?: ErrorOptions) {
    super(message, options);
  }
}

/** Runs `parse` (a strict `parseArgs`), turning its errors into a {@linkcode UsageError} of `command`. */
export function parseCommandArgs<T>(command: string, parse: () => T, hint = ""): T {
  try {
    return parse();
  } catch (error) {
    // Node's own advice on "-" arguments names a form that does not fit ours: keep the first sentence.
    const message = (error as Error).message.replace(/\. To specify a positional argument.*$/s, "");
    throw new UsageError(`${message}${hint}`, command, { cause: error });
  }
}
