/**
 * Comment-preserving, validated, atomic edits of mcphub.yaml (for `add`, `pin`, `enable`, …).
 *
 * @module
 */
import { basename, dirname, extname, join, resolve } from "node:path";
import { type Document, parseDocument } from "yaml";
import type { Config } from "./types.ts";
import { ConfigError } from "./errors.ts";
import { defaultConfig, type LoadOptions, readConfigText } from "./parse.ts";

/** Mode of a config file created by an edit: it may hold secrets. */
const NEW_FILE_MODE = 0o600;

/** `YYYYMMDD-HHMMSS` in UTC. */
function timestamp(date: Date): string {
  const pad = (value: number) => String(value).padStart(2, "0");
  return `${date.getUTCFullYear()}${pad(date.getUTCMonth() + 1)}${pad(date.getUTCDate())}-` +
    `${pad(date.getUTCHours())}${pad(date.getUTCMinutes())}${pad(date.getUTCSeconds())}`;
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

/** `<path>.<YYYYMMDD-HHMMSS>.bak`, with `-2`, `-3`, … when that second already has one. */
async function backupPath(path: string): Promise<string> {
  const stem = `${path}.${timestamp(new Date())}`;
  let candidate = `${stem}.bak`;
  for (let n = 2; await exists(candidate); n++) candidate = `${stem}-${n}.bak`;
  return candidate;
}

/** How many `.bak` copies of a config file an edit keeps; older ones are removed. */
export const KEEP_BACKUPS = 5;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Removes all but the newest {@linkcode KEEP_BACKUPS} `<file>.<YYYYMMDD-HHMMSS>[-N].bak` copies. */
async function pruneBackups(file: string): Promise<void> {
  const pattern = new RegExp(`^${escapeRegExp(basename(file))}\\.(\\d{8}-\\d{6})(?:-(\\d+))?\\.bak$`);
  const found: { name: string; stamp: string; n: number }[] = [];
  for await (const entry of Deno.readDir(dirname(file))) {
    const match = entry.isFile ? pattern.exec(entry.name) : null;
    if (match) found.push({ name: entry.name, stamp: match[1]!, n: Number(match[2] ?? 1) });
  }
  found.sort((a, b) => a.stamp < b.stamp ? -1 : a.stamp > b.stamp ? 1 : a.n - b.n);
  for (const old of found.slice(0, Math.max(0, found.length - KEEP_BACKUPS))) {
    await Deno.remove(join(dirname(file), old.name)).catch(() => {});
  }
}

/** The file behind a symlink, so the edit replaces the target and keeps the link. */
async function target(path: string): Promise<string> {
  try {
    return await Deno.realPath(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return path;
    throw error;
  }
}

/** Options of {@linkcode editConfig}. */
export interface EditOptions extends LoadOptions {
  /** Validate and return the new text without writing anything. @default false */
  dryRun?: boolean;
}

/** What {@linkcode editConfig} did: the configs before and after, and the new text. */
export interface EditResult {
  before: Config;
  after: Config;
  /** The file's new content (written unless `dryRun`). */
  text: string;
}

/**
 * Replaces the file at `path` atomically with `text` (temp file in the same directory + rename), after
 * copying the old file, when there is one, to `<path>.<YYYYMMDD-HHMMSS>.bak` (UTC). The old file's mode is
 * kept; a new file gets `mode`. A symlink is followed: the link stays and its target is replaced.
 *
 * @returns the backup's path, or undefined when there was no file
 */
export async function replaceFile(
  path: string,
  text: string,
  options: { mode?: number } = {},
): Promise<string | undefined> {
  const file = await target(path);
  let mode = options.mode ?? NEW_FILE_MODE;
  let existed = true;
  try {
    mode = (await Deno.stat(file)).mode ?? mode;
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    existed = false;
  }
  const dir = dirname(file);
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  const temp = join(dir, `.${basename(file)}.${crypto.randomUUID().slice(0, 8)}.tmp`);
  let backup: string | undefined;
  try {
    await Deno.writeTextFile(temp, text, { createNew: true, mode: mode & 0o777 });
    await Deno.chmod(temp, mode & 0o777);
    if (existed) {
      backup = await backupPath(file);
      await Deno.copyFile(file, backup);
      await Deno.chmod(backup, mode & 0o777);
    }
    await Deno.rename(temp, file);
  } catch (error) {
    await Deno.remove(temp).catch(() => {});
    throw error;
  }
  if (existed) await pruneBackups(file);
  return backup;
}

/**
 * Edits the config file at `path`: parses it keeping comments and key order, calls `edit`, validates
 * the result, then replaces the file atomically (temp file + rename) after copying the old one to
 * `<path>.<YYYYMMDD-HHMMSS>.bak` (UTC), keeping the newest {@linkcode KEEP_BACKUPS}. The file mode is
 * kept (0600 for a new file). A missing file
 * starts empty. `.json` files are written back as JSON. With `dryRun`, nothing is written.
 *
 * Validation covers structure only: `${VAR}`s are left as written, so an edit never needs (or reads)
 * secrets, and the returned configs hold the unexpanded strings.
 *
 * @param path the config file; relative to `options.cwd`, shown in messages as given
 * @param edit changes the document in place
 * @throws {ConfigError} when the file or the edited document is invalid; nothing is written then
 */
export async function editConfig(
  path: string,
  edit: (doc: Document) => void,
  options: EditOptions,
): Promise<EditResult> {
  const { dryRun, ...load } = options;
  const validateOptions: LoadOptions = { ...load, agent: undefined };
  const file = await target(resolve(options.cwd, path));
  let text: string | undefined;
  let mode = NEW_FILE_MODE;
  try {
    text = await Deno.readTextFile(file);
    mode = (await Deno.stat(file)).mode ?? NEW_FILE_MODE;
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) {
      throw new ConfigError(path, { detail: `cannot read the config file: ${(error as Error).message}` }, {
        cause: error,
      });
    }
  }
  const before = text === undefined
    ? { ...defaultConfig(), path: resolve(options.cwd, path) }
    : readConfigText(text, path, validateOptions, { expand: false });

  const doc = parseDocument(text ?? "");
  edit(doc);
  const json = extname(file).toLowerCase() === ".json";
  // No folding and no padding inside [ ] / { }: untouched lines come back as people usually write them.
  const newText = json
    ? `${JSON.stringify(doc.toJSON() ?? {}, null, 2)}\n`
    : doc.toString({ lineWidth: 0, flowCollectionPadding: false });
  let after: Config;
  try {
    after = readConfigText(newText, path, validateOptions, { expand: false });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    throw new ConfigError(
      path,
      error.problems.map((problem) => ({ ...problem, detail: `after the edit: ${problem.detail}` })),
      { cause: error },
    );
  }

  if (!dryRun) await replaceFile(file, newText, { mode });
  return { before, after, text: newText };
}
