/**
 * mcphub.yaml: finding, loading, validating, `${VAR}` expansion and comment-preserving edits.
 *
 * `${VAR}` expands from the environment in `command`, `args`, `env` values, `cwd`, `url` and `headers`
 * values (not in descriptions or hints, which agents read). `$$` is a literal `$`, so `$${VAR}` is the
 * literal text `${VAR}`. An unset variable is an error naming it; values never appear in messages.
 * Variables of disabled servers, and of servers outside the `--agent`'s scope, are never read.
 *
 * `light.ts` is this API without parsing held text and editing, and so without the `yaml` package.
 *
 * @module
 */
export * from "./light.ts";
export { parseConfig } from "./parse.ts";
export { editConfig, type EditOptions, type EditResult, replaceFile } from "./edit.ts";
