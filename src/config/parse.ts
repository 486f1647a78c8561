/**
 * Parsing and validating the text of mcphub.yaml into a {@linkcode Config}: with the strict block-YAML
 * reader when the text is in its subset and has no problem, else with `yaml` (which reports every problem).
 *
 * @module
 */
import { LineCounter, parseDocument } from "yaml";
import type { Config } from "./types.ts";
import { ConfigError, type ConfigProblem } from "./errors.ts";
import { type LoadOptions, readConfigFast, readParsedConfig } from "./read.ts";

export { agentServers, defaultConfig, type LoadOptions, unknownAgent } from "./read.ts";

/**
 * Parses and validates config text. Pure apart from `options.env`; for tests and commands that hold the text.
 *
 * @param text YAML or JSON
 * @param file the path shown in messages; `Config.path` is this resolved against `options.cwd`
 * @throws {ConfigError} listing every problem, one per line
 */
export function parseConfig(text: string, file: string, options: LoadOptions): Config {
  return readConfigText(text, file, options, { expand: true });
}

/** {@linkcode parseConfig}, optionally without `${VAR}` expansion (edits must not need secrets). */
export function readConfigText(
  text: string,
  file: string,
  options: LoadOptions,
  { expand }: { expand: boolean },
): Config {
  return readConfigFast(text, file, options, { expand }) ??
    readConfigWithYaml(text, file, options, { expand });
}

/** {@linkcode readConfigText} with `yaml` alone (tests compare it with the block-YAML reader). */
/** @internal */
export function readConfigWithYaml(
  text: string,
  file: string,
  options: LoadOptions,
  { expand }: { expand: boolean },
): Config {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: false });
  if (doc.errors.length > 0) {
    const problems = doc.errors.map((error): ConfigProblem => {
      const { line, col } = lines.linePos(error.pos[0]);
      // An unquoted `${VAR}` inside `[ ]` or `{ }` reads as a flow mapping: say how to write it.
      const source = text.split("\n")[Math.max(line, 1) - 1] ?? "";
      const hint = /\$\{/.test(source) && /[[{]/.test(source.replaceAll(/\$\{/g, ""))
        ? '; quote values that contain "${" inside [ ] or { }'
        : "";
      return { line: Math.max(line, 1), column: col, detail: `invalid YAML: ${error.message}${hint}` };
    });
    throw new ConfigError(file, problems, { cause: doc.errors[0] });
  }
  return readParsedConfig(doc, lines, file, { ...options, expand });
}
