/**
 * Connection progress for one-shot commands (`list`, `search`, `describe`): one
 * stderr line, rewritten in place as servers connect and cleared before the
 * command prints its result. Only when stderr is a terminal: pipes, files and
 * tests see nothing.
 *
 * @module
 */
import type { Hub } from "../hub/mod.ts";
import type { CommandContext } from "./command.ts";

/** Carriage return + erase line. */
const CLEAR = "\r\x1b[K";

function mark(state: string): string {
  if (state === "connected") return "✓";
  if (state === "connecting") return "…";
  return "✗";
}

function columns(): number {
  try {
    // A pseudo-terminal without a size reports 0 columns.
    const { columns } = Deno.consoleSize();
    return columns >= 20 ? columns : 80;
  } catch {
    return 80;
  }
}

/** At most `width` characters, ending in "…" when cut. */
function clip(text: string, width: number): string {
  const chars = [...text];
  return chars.length <= width ? text : chars.slice(0, Math.max(0, width - 1)).join("") + "…";
}

/** The progress line: `connecting 3 servers… everything ✓ memory ✓ filesystem …`. */
export function progressLine(
  servers: readonly { name: string; state: string }[],
  elapsedMs: number,
): string {
  const seconds = Math.floor(elapsedMs / 1000);
  const head = `connecting ${servers.length} server${servers.length === 1 ? "" : "s"}` +
    `${seconds > 0 ? ` (${seconds}s)` : ""}…`;
  return [head, ...servers.map((s) => `${s.name} ${mark(s.state)}`)].join(" ");
}

/**
 * Shows connection progress for `hub` on a terminal, from now until the returned function is
 * called (which clears the line). Reads the hub's states only; does nothing when stderr is not a
 * terminal or no server is enabled.
 */
export function showConnectProgress(hub: Hub, ctx: CommandContext): () => void {
  const enabled = () => hub.servers().filter((s) => s.state !== "disabled");
  if (!(ctx.stderrIsTerminal ?? Deno.stderr.isTerminal()) || enabled().length === 0) return () => {};
  const started = Date.now();
  const render = () => ctx.err(CLEAR + clip(progressLine(enabled(), Date.now() - started), columns() - 1));
  render();
  const unsubscribe = hub.onChange(render);
  const timer = setInterval(render, 1000);
  let stopped = false;
  return () => {
    if (stopped) return;
    stopped = true;
    unsubscribe();
    clearInterval(timer);
    ctx.err(CLEAR);
  };
}
