/**
 * Rate-limited logging: a misbehaving server cannot flood the gateway's stderr. Lines of one shape
 * (the text with quoted strings and numbers blanked) pass a few times per window; the rest are counted
 * and summed up once the window ends: `… 1,203 more like this in the last 10 s: <first line>`.
 *
 * @module
 */

/** Length of one rate-limit window. */
export const LOG_WINDOW_MS = 10_000;
/** Lines of one shape logged per window before the rest are counted. */
export const LOG_BURST = 5;
/** Characters of a line kept as its shape key. */
const KEY_CHARS = 200;

interface Window {
  started: number;
  passed: number;
  dropped: number;
  sample: string;
}

/** The shape of a log line: quoted strings and digit runs blanked, cut to a bound. */
export function lineShape(line: string): string {
  return line.slice(0, 4 * KEY_CHARS).replace(/"(?:[^"\\\n]|\\.){0,400}"/g, '""').replace(/\d+/g, "#")
    .slice(0, KEY_CHARS);
}

/** Wraps `log` with per-shape rate limiting. `flush()` writes the pending counts (on close). */
export function rateLimitedLog(
  log: (line: string) => void,
  options: { windowMs?: number; burst?: number; clock?: () => number } = {},
): { log: (line: string) => void; flush: () => void } {
  const windowMs = options.windowMs ?? LOG_WINDOW_MS;
  const burst = options.burst ?? LOG_BURST;
  const clock = options.clock ?? Date.now;
  const windows = new Map<string, Window>();
  let timer: ReturnType<typeof setTimeout> | undefined;

  const summary = (w: Window) =>
    `… ${w.dropped.toLocaleString("en-US")} more like this in the last ${
      Math.round(windowMs / 1000)
    } s: ${w.sample}`;

  const sweep = () => {
    timer = undefined;
    const now = clock();
    for (const [key, w] of windows) {
      if (now - w.started < windowMs) continue;
      if (w.dropped > 0) log(summary(w));
      windows.delete(key);
    }
    schedule();
  };
  const schedule = () => {
    if (timer !== undefined || ![...windows.values()].some((w) => w.dropped > 0)) return;
    timer = setTimeout(sweep, windowMs);
    Deno.unrefTimer(timer);
  };

  return {
    log(line: string) {
      const key = lineShape(line);
      const now = clock();
      let w = windows.get(key);
      if (w && now - w.started >= windowMs) {
        if (w.dropped > 0) log(summary(w));
        windows.delete(key);
        w = undefined;
      }
      if (!w) {
        if (windows.size > 1000) windows.clear();
        w = { started: now, passed: 0, dropped: 0, sample: line.slice(0, 300) };
        windows.set(key, w);
      }
      if (w.passed < burst) {
        w.passed++;
        log(line);
        return;
      }
      w.dropped++;
      // A summary is due: the sweep's timer is set (a storm's lines do not look for one each).
      if (timer === undefined) schedule();
    },
    flush() {
      clearTimeout(timer);
      timer = undefined;
      for (const w of windows.values()) if (w.dropped > 0) log(summary(w));
      windows.clear();
    },
  };
}
