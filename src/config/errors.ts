/**
 * The one error type of the config module: every message names the file, the
 * line and column, and the key path, so the user can go straight to the fix.
 *
 * @module
 */

/** One thing wrong with a config file. */
export interface ConfigProblem {
  /** 1-based; absent when the problem is about the file as a whole. */
  line?: number;
  /** 1-based. */
  column?: number;
  /** Dotted path of the offending key, e.g. `servers.github.env.TOKEN` or `pin[2]`. */
  keyPath?: string;
  /** What is wrong and what would be valid. Never contains the value of an environment variable. */
  detail: string;
}

/** Formats one problem as `<file>:<line>:<column>: <key.path>: <detail>`, leaving out the parts it lacks. */
export function formatProblem(file: string, problem: ConfigProblem): string {
  let where = file;
  if (problem.line !== undefined) {
    where += `${where ? ":" : ""}${problem.line}`;
    if (problem.column !== undefined) where += `:${problem.column}`;
  }
  const parts = [where, problem.keyPath, problem.detail].filter((part) => part);
  return parts.join(": ");
}

/**
 * A config file that cannot be found, read, parsed or validated. The message holds every problem found,
 * one per line, sorted by position; `line`, `column` and `keyPath` are those of the first.
 */
export class ConfigError extends Error {
  override name = "ConfigError";
  /** The path as the user gave it (or as found by lookup). */
  readonly file: string;
  readonly line?: number;
  readonly column?: number;
  readonly keyPath?: string;
  /** Every problem found, first one first. */
  readonly problems: readonly ConfigProblem[];

  /**
   * @param file the path shown in messages
   * @param problems one problem or several (at least one)
   */
  constructor(file: string, problems: ConfigProblem | readonly ConfigProblem[], options?: ErrorOptions) {
    const list = Array.isArray(problems) ? [...problems] : [problems as ConfigProblem];
    if (list.length === 0) list.push({ detail: "invalid config" });
    super(list.map((problem) => formatProblem(file, problem)).join("\n"), options);
    this.file = file;
    this.problems = list;
    const [first] = list;
    if (first.line !== undefined) this.line = first.line;
    if (first.column !== undefined) this.column = first.column;
    if (first.keyPath !== undefined) this.keyPath = first.keyPath;
  }
}
