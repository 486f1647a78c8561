/**
 * Hot reload: watches the config file and applies each valid edit to the running hub
 * ({@linkcode Hub.reconfigure}); an invalid edit keeps the running config, is logged with its
 * `file:line:col`, and shows as `config_error` in `list_servers` until a valid edit.
 *
 * The file's directory is watched, not the file: editors and `editConfig` replace the file by renaming
 * a temp file over it, which a watch on the old file would not see. When the store sits in that
 * directory, the file is polled instead (`stat`, which opens nothing): `Deno.watchFs` opens every file
 * that changes in a watched directory, and closing that descriptor drops this process's POSIX locks
 * on it, SQLite's included; another process closing the store then deletes the WAL under the gateway,
 * which from then on neither sees other processes' writes (an approval) nor shares its own.
 *
 * @module
 */
import { basename, dirname, resolve } from "node:path";
import type { Config } from "../config/mod.ts";
import type { Hub, ReloadSummary } from "../hub/hub.ts";

/** Options of {@linkcode ConfigReloader}. */
export interface ConfigReloaderOptions {
  hub: Hub;
  /** The config file (absolute, or relative to the process's cwd). */
  path: string;
  /** Reads and validates the file again (the same way it was loaded at start). */
  load: () => Promise<Config>;
  log: (line: string) => void;
  /** Watch the file's directory; false = reload only when {@linkcode ConfigReloader.reload} is called. @default true */
  watch?: boolean;
  /** Quiet time after the last file event before reloading (an editor's write is several events). @default 150 */
  debounceMs?: number;
  /**
   * Files this process holds SQLite locks on (the store): when one is in the config file's directory,
   * the config file is polled every {@link ConfigReloaderOptions.pollMs} instead of watched.
   */
  keepOut?: readonly string[];
  /** @default {@link CONFIG_POLL_MS} */
  pollMs?: number;
}

/** How often a config file that shares its directory with the store is polled for changes, in ms. */
export const CONFIG_POLL_MS = 500;

/** Watches one config file and reloads the hub from it. */
export class ConfigReloader {
  #options: ConfigReloaderOptions;
  #watcher?: Deno.FsWatcher;
  #poller?: ReturnType<typeof setInterval>;
  #timer?: ReturnType<typeof setTimeout>;
  #queue: Promise<void> = Promise.resolve();
  #pending = 0;
  #closed = false;

  constructor(options: ConfigReloaderOptions) {
    this.#options = options;
    if (options.watch ?? true) this.#watch();
  }

  /** Paths whose events mean the config changed: the file, and the file behind it when it is a symlink. */
  #targets(): Set<string> {
    const file = resolve(this.#options.path);
    const targets = new Set([file]);
    try {
      targets.add(Deno.realPathSync(file));
    } catch {
      // missing right now (between an editor's delete and write): the path itself is enough
    }
    return targets;
  }

  #watch(): void {
    const targets = this.#targets();
    const dirs = [...new Set([...targets].map((t) => dirname(t)))];
    const names = new Set([...targets].map((t) => basename(t)));
    if ((this.#options.keepOut ?? []).some((f) => dirs.includes(dirname(resolve(f))))) {
      this.#poll([...targets]);
      return;
    }
    try {
      this.#watcher = Deno.watchFs(dirs, { recursive: false });
    } catch (error) {
      this.#options.log(
        `warning: cannot watch ${this.#options.path} for changes (${
          (error as Error).message
        }); send SIGHUP to reload it`,
      );
      return;
    }
    const watcher = this.#watcher;
    (async () => {
      for await (const event of watcher) {
        // Same directory, so the name decides; a rename event carries both the temp file and the target.
        if (event.paths.some((p) => names.has(basename(p)) && dirs.includes(dirname(p)))) this.#schedule();
      }
    })().catch((error) => {
      if (!this.#closed) {
        this.#options.log(
          `warning: watching ${this.#options.path} stopped (${
            (error as Error).message
          }); send SIGHUP to reload it`,
        );
      }
    });
  }

  /** Watches `targets` by `stat` alone: inode, size and modification time. */
  #poll(targets: readonly string[]): void {
    const state = () =>
      targets.map((t) => {
        try {
          const s = Deno.statSync(t);
          return `${s.ino}:${s.size}:${s.mtime?.getTime()}`;
        } catch {
          return "missing";
        }
      }).join("|");
    let last = state();
    this.#poller = setInterval(() => {
      const now = state();
      if (now === last) return;
      last = now;
      this.#schedule();
    }, this.#options.pollMs ?? CONFIG_POLL_MS);
  }

  #schedule(): void {
    if (this.#closed) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.reload("file changed");
    }, this.#options.debounceMs ?? 150);
  }

  /**
   * Reads the file and applies it. Reloads run one at a time; a request made while one runs is merged
   * into one more reload after it. Never rejects.
   */
  reload(reason: string): Promise<void> {
    if (this.#closed) return Promise.resolve();
    if (this.#pending > 0) return this.#queue;
    this.#pending++;
    this.#queue = this.#queue.then(async () => {
      this.#pending--;
      if (!this.#closed) await this.#reload(reason);
    });
    return this.#queue;
  }

  async #reload(reason: string): Promise<void> {
    const { hub, log } = this.#options;
    let next: Config;
    try {
      next = await this.#options.load();
    } catch (error) {
      const message = (error as Error).message;
      hub.rejectConfig(message);
      log(
        `config not reloaded (${reason}); the running config stays in effect:\n  ${
          message.replaceAll("\n", "\n  ")
        }`,
      );
      return;
    }
    const hadError = hub.configError !== undefined;
    if (!hadError && JSON.stringify(next) === JSON.stringify(hub.config)) {
      if (reason !== "file changed") log(`config reloaded (${reason}): no change`);
      return;
    }
    let applied: { summary: ReloadSummary; done: Promise<void> };
    try {
      applied = hub.reconfigure(next);
    } catch (error) {
      const message = `${this.#options.path}: ${(error as Error).message}`;
      hub.rejectConfig(message);
      log(`config not reloaded (${reason}); the running config stays in effect:\n  ${message}`);
      return;
    }
    log(`config reloaded (${reason}): ${describe(applied.summary)}`);
    await applied.done;
  }

  /** Stops watching; a reload under way finishes. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    clearInterval(this.#poller);
    try {
      this.#watcher?.close();
    } catch {
      // already closed
    }
  }
}

/** `added a; reconnected b; stopped c` or `settings only`. */
function describe(summary: ReloadSummary): string {
  const parts: string[] = [];
  if (summary.added.length) parts.push(`started ${summary.added.join(", ")}`);
  if (summary.changed.length) parts.push(`reconnected ${summary.changed.join(", ")}`);
  if (summary.removed.length) parts.push(`stopped ${summary.removed.join(", ")}`);
  return parts.length ? parts.join("; ") : "no server changed; settings apply from the next request";
}
