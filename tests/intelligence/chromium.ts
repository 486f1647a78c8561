/**
 * Headless Chromium for the HTML report tests: finds the browser (installing it is the test setup's job:
 * scripts/setup_system.ts) and runs it in its own process group so every browser process is killed
 * afterwards.
 *
 * @module
 */
import { CHROMIUM_MISSING, findChromium } from "../_system.ts";
import { until } from "../helpers.ts";

let found: Promise<{ bin: string } | { skip: string }> | undefined;

/** The browser command; or why there is none, with what to install. */
export function chromium(): Promise<{ bin: string } | { skip: string }> {
  return found ??= (async () => {
    const bin = await findChromium();
    return bin ? { bin } : { skip: CHROMIUM_MISSING };
  })();
}

/** Pids whose process group is `pgid` (Linux /proc). */
export function processGroup(pgid: number): number[] {
  const out: number[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const stat = Deno.readTextFileSync(`/proc/${entry.name}/stat`);
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) === pgid && fields[0] !== "Z") out.push(Number(entry.name));
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

/**
 * Waits until no process of group `pgid` is left (SIGKILL was sent to it: each process ends when the
 * kernel next runs it, which takes a while on a loaded machine). Fails at until's deadline, naming the
 * survivors: a process that escaped the group kill never ends.
 */
export async function groupEnds(pgid: number): Promise<void> {
  await until(
    "the browser's process group to end",
    () => Promise.resolve(processGroup(pgid).length ? undefined : true),
  ).catch(() => {
    throw new Error(`a browser process outlived its run: ${processGroup(pgid).join(", ")}`);
  });
}

/** Options of {@linkcode runChromium}. */
export interface RunChromiumOptions {
  /** `prefers-color-scheme` the page sees. @default "light" */
  scheme?: "light" | "dark";
  /** Viewport size. @default [1100, 1400] */
  size?: [number, number];
  /** Kill the browser after this long. @default 60000 */
  timeoutMs?: number;
}

/**
 * Runs headless Chromium on `url` with `args` (`--dump-dom`, `--screenshot=PATH`),
 * `--no-sandbox` (tests run as root) and a temp profile; returns stdout.
 * The browser runs in its own process group, killed whatever happens.
 */
export async function runChromium(
  bin: string,
  url: string,
  args: string[],
  options: RunChromiumOptions = {},
): Promise<{ stdout: string; pgid: number }> {
  const profile = await Deno.makeTempDir({ prefix: "mcphub-chromium-" });
  const [width, height] = options.size ?? [1100, 1400];
  const scheme = (options.scheme ?? "light") === "dark" ? 0 : 1;
  // setsid: the browser and its zygote, renderer and GPU processes share one new group.
  const child = new Deno.Command("setsid", {
    args: [
      bin,
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--no-first-run",
      "--disable-extensions",
      "--disable-background-networking",
      "--hide-scrollbars",
      `--user-data-dir=${profile}`,
      `--window-size=${width},${height}`,
      `--blink-settings=preferredColorScheme=${scheme}`,
      ...args,
      url,
    ],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const pgid = child.pid;
  const kill = () => {
    try {
      Deno.kill(-pgid, "SIGKILL");
    } catch {
      // the group is already gone
    }
  };
  const timer = setTimeout(kill, options.timeoutMs ?? 60_000);
  try {
    const { code, stdout, stderr } = await child.output();
    if (code !== 0) {
      throw new Error(`chromium exited with ${code}: ${new TextDecoder().decode(stderr).slice(-2000)}`);
    }
    return { stdout: new TextDecoder().decode(stdout), pgid };
  } finally {
    clearTimeout(timer);
    kill();
    await Deno.remove(profile, { recursive: true }).catch(() => {});
  }
}
